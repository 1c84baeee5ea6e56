#!/usr/bin/env bash
# Issue 18 item 6: the WANLI pipeline with a real LM (SmolLM2-135M-Instruct in process) on the biased
# world: seeds from D0's data map, exemplars, SmolLM2 overgenerates, heuristics and max variability,
# the annotators' stand-in reviews; then D0, a floor, D0 + W, D0 ◇ W and a ceiling, 3 seeds each.
# Offline, 2 CPU cores: 38 min measured (one thread per process, cores shared with another run).
#   bash experiments/real_lm/wanli_run.sh       # tables -> experiments/real_lm/wanli_table.md (+ .csv per seed)
#   bash experiments/real_lm/wanli_run.sh review=teacher   # reviewer = the WANLI run's classifier on D0 (no
#                                                # model that shapes W knows the true labels); tables -> wanli_table_review_teacher.md
# review=annotator (the default; also REVIEW=...) reviews with the annotators' stand-in, trained on the
# world's unbiased split: the one model here that knows the true labels, standing in for people (common.sh).
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_lm_wanli). Registers the gitignored
# data/train_sets=[exp_real_lm_w<suffix>] (conf/data/train_sets/, pointing into the scratch; one name per world and
# variant, so that runs side by side never train on each other's W).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
# one thread per process: two CPU cores shared by several jobs lose far more to OpenMP oversubscription
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
review_choice "$@"
if [ "$REVIEW" = annotator ]; then SUFFIX=""; else SUFFIX="_review_$REVIEW"; fi
# RL_WORLD / RL_WORLD_SEED (a second world): the committed table is strong, world seed 0 (the default);
# any other world writes wanli_table_<preset>_w<seed>.md
RL_WORLD="${RL_WORLD:-strong}" RL_WORLD_SEED="${RL_WORLD_SEED:-0}"
if [ "$RL_WORLD" != strong ] || [ "$RL_WORLD_SEED" != 0 ]; then SUFFIX="${SUFFIX}_${RL_WORLD}_w$RL_WORLD_SEED"; fi
# PER_LABEL: seeds per intended label (default 100: 300 prompts x 5 samples = 1,500 generations); null = every
# seed above the variability quantile (a quarter of D0); any other value adds _perlabel_<n> (_seeds_all) to the files
PER_LABEL="${PER_LABEL:-100}"
if [ "$PER_LABEL" = null ]; then SUFFIX="${SUFFIX}_seeds_all"; elif [ "$PER_LABEL" != 100 ]; then SUFFIX="${SUFFIX}_perlabel_$PER_LABEL"; fi
WORLD_ARGS=(world="$RL_WORLD" world.seed="$RL_WORLD_SEED")
scratch "real_lm_wanli$SUFFIX"
W_SET="exp_real_lm_w$SUFFIX"
rm -rf "$R/sweep"
N_TRAIN="${N_TRAIN:-4000}"       # D0 = synthetic_biased pairs
EPOCHS="${EPOCHS:-5}"
THRESHOLD="${THRESHOLD:-0.8}"    # the annotators' stand-in keeps a pair when p(argmax) >= this

if [ "$REVIEW" = annotator ]; then
    # ORACLE=<an nliforge-train folder of the same recipe> reuses one (e.g. zaug_run.sh's oracle scorer)
    link_oracle annotator
    stamp "1/5 the annotators' stand-in: the demo recipe on the UNBIASED world split (people know the true labels)"
    # conf/experiment/real_lm_annotator.yaml (zaug_run.sh's oracle scorer is the same recipe)
    [ -f "$R/annotator/model/config.json" ] || nliforge-train experiment=real_lm_annotator "${WORLD_ARGS[@]}" \
        hydra.run.dir="$R/annotator"
else
    stamp "1/5 review=teacher: no annotators' stand-in; the WANLI run's classifier on D0 reviews (step 3)"
fi

# conf/experiment/real_lm_wanli.yaml, conf/generate_experiment/wanli_real_lm_wanli.yaml: the demo's WANLI, classifier 5 epochs
GEN=(pipeline=wanli experiment=real_lm_wanli "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN" pipeline.seeds.max_per_label="$PER_LABEL")
stamp "2/5 WANLI generation with SmolLM2 (the classifier for the data map is trained on D0)"
nliforge-generate "${GEN[@]}" generator=smollm2 hydra.run.dir="$R/wanli_smollm2"
stamp "2b/5 the same with the demo's stand-in LM, for the per-stage drops only (it is trained on world pairs)"
nliforge-generate "${GEN[@]}" hydra.run.dir="$R/wanli_standin"

REVIEWER=$(reviewer_dir "$R/wanli_smollm2" "$R/annotator")
stamp "3/5 review=$REVIEW ($REVIEWER) -> data/train_sets=[$W_SET]"
nliforge-review teacher run="$R/wanli_smollm2" teacher.model_dir="$REVIEWER" teacher.threshold="$THRESHOLD"
nliforge-review aggregate run="$R/wanli_smollm2" aggregate.mode=automatic aggregate.name="$W_SET" \
    aggregate.reviewer="$(reviewer_id "$REVIEWER")"
N_W=$(grep -c . "$R/wanli_smollm2/review/reviewed.jsonl")
stamp "W = $N_W reviewed pairs"

# conf/experiment/real_lm_wanli_rows.yaml: the synthetic suite, metrics only
COMMON=(experiment=real_lm_wanli_rows "${WORLD_ARGS[@]}" model.max_epochs="$EPOCHS" seed=1,2,3)
stamp "4/5 rows (3 seeds each), every one from the same D0 (common.sh arm_args): D0; floor = D0 + |W| biased pairs; D0 + W; D0 ◇ W; ceiling = D0 + |W| unbiased pairs"
arm_args d0 --n-train "$N_TRAIN"
nliforge-train -m "${ARM_ARGS[@]}" "${COMMON[@]}" hydra.sweep.dir="$R/sweep/1_d0"
arm_args floor --n-train "$N_TRAIN" --n "$N_W"
nliforge-train -m "${ARM_ARGS[@]}" "${COMMON[@]}" hydra.sweep.dir="$R/sweep/2_floor"
arm_args treatment --n-train "$N_TRAIN" --w "$W_SET"
nliforge-train -m "${ARM_ARGS[@]}" "${COMMON[@]}" hydra.sweep.dir="$R/sweep/3_plus"
arm_args treatment --n-train "$N_TRAIN" --w "$W_SET" --combine replace
nliforge-train -m "${ARM_ARGS[@]}" "${COMMON[@]}" hydra.sweep.dir="$R/sweep/4_rep"
arm_args ceiling --n-train "$N_TRAIN" --n "$N_W"
nliforge-train -m "${ARM_ARGS[@]}" "${COMMON[@]}" hydra.sweep.dir="$R/sweep/5_ceiling"

stamp "5/5 report"
python -m experiments.real_lm.wanli_table --scratch "$R" --out "$HERE/wanli_table$SUFFIX.md"
stamp "done: $HERE/wanli_table$SUFFIX.md"
