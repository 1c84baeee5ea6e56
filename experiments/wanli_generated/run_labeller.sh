#!/usr/bin/env bash
# The WANLI mechanism test, redesigned (issue 39; README "The mechanism test, redesigned"): a labeller trained on
# D0 + K artifact-free pairs (the ceiling's own data, K = N) labels W (the full recipe) and G (every parsed pair,
# no filter); arms of equal N: floor, D0 + W, D0 + random generated pairs, ceiling (= D0 + the labeller's K pairs).
#   WORLD_SEEDS="0 1 2 3 4" bash experiments/wanli_generated/run_labeller.sh   # -> results_labeller.md/.csv, gates_labeller.md
#   GATES_ONLY=1 ...   stops each world after the gates (generation, labeller, review, the floor row)
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/wanli_labeller); FRESH=0 keeps finished steps and rows
# (resumable); TABLES=0 stops before the tables. N_CAP (1000) caps N = K. One thread (OMP_NUM_THREADS=1).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
if [ "${TABLES_ONLY:-0}" = 1 ]; then FRESH=0; fi
scratch wanli_labeller
N_TRAIN="${N_TRAIN:-4000}"
N_CAP="${N_CAP:-1000}"
for ws in $WORLD_SEEDS; do
    if [ "${TABLES_ONLY:-0}" = 1 ]; then break; fi
    W="$R/world$ws"; mkdir -p "$W"
    WORLD_ARGS=(world="$WORLD" world.seed="$ws")
    GEN=(pipeline=wanli experiment=wanli_generated "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN")
    SHARED=(pipeline.classifier.run_dir="$W/gen_full/classifier" stand_in.generator.model="$W/gen_full/generator_lm")
    if [ ! -f "$W/gen_full/dataset.jsonl" ]; then
        stamp "world $ws: generation, full recipe (ambiguous seeds; heuristics; top half by max variability)"
        logged "$W/gen_full.log" nliforge-generate "${GEN[@]}" hydra.run.dir="$W/gen_full"
    fi
    if [ ! -f "$W/gen_nofilter/dataset.jsonl" ]; then
        stamp "world $ws: generation, no filter (the same classifier, LM and seeds)"
        logged "$W/gen_nofilter.log" nliforge-generate "${GEN[@]}" "${SHARED[@]}" \
            "pipeline.stages=[classifier,seeds,exemplars,prompts,generate,parse]" hydra.run.dir="$W/gen_nofilter"
    fi
    N_ADD=$( (echo "$N_CAP"; for v in full nofilter; do count_lines "$W/gen_$v/dataset.jsonl"; done) | sort -n | head -1)
    [ "$N_ADD" -gt 0 ] || { echo "$0: world $ws: N = 0 (a generated set is empty); stopping" >&2; exit 1; }
    echo "$N_ADD" > "$W/n_add"
    stamp "world $ws: N = K = $N_ADD"
    # the labeller: exactly the ceiling arm's data (D0 + K artifact-free pairs), training seed 1, saved
    if [ ! -f "$W/labeller/model/config.json" ]; then
        stamp "world $ws: the labeller (D0 + $N_ADD artifact-free pairs)"
        arm_args ceiling --n-train "$N_TRAIN" --n "$N_ADD"
        logged "$W/labeller.log" nliforge-train "${ARM_ARGS[@]}" "${WORLD_ARGS[@]}" seed=1 suite=synthetic callbacks=none \
            logger=csv trainer.enable_progress_bar=false hydra.run.dir="$W/labeller"
    fi
    stamp "world $ws: labelling W and G (threshold 0: every pair labelled, none dropped)"
    for v in full nofilter; do
        if [ -f "$W/gen_$v/review/reviewed.jsonl" ] && [ -f "$W/agg_$v.done" ]; then continue; fi
        logged "$W/review_$v.log" nliforge-review teacher run="$W/gen_$v" teacher.model_dir="$W/labeller" teacher.threshold=0
        logged "$W/review_${v}_agg.log" nliforge-review aggregate run="$W/gen_$v" aggregate.mode=automatic \
            aggregate.name="exp_wl_${v}_w$ws" aggregate.reviewer="$(reviewer_id "$W/labeller")"
        touch "$W/agg_$v.done"
    done
    train_arm "$ws" 2_floor floor --n-train "$N_TRAIN" --n "$N_ADD"
    python -m experiments.wanli_generated.gates_labeller "$R" "$HERE/gates_labeller.md"
    if [ "${GATES_ONLY:-0}" = 1 ]; then stamp "world $ws: gates done (GATES_ONLY=1)"; continue; fi
    train_arm "$ws" 3_full treatment --n-train "$N_TRAIN" --n "$N_ADD" --w "exp_wl_full_w$ws"
    train_arm "$ws" 4_random treatment --n-train "$N_TRAIN" --n "$N_ADD" --w "exp_wl_nofilter_w$ws"
    train_arm "$ws" 9_ceiling ceiling --n-train "$N_TRAIN" --n "$N_ADD"
    python -m experiments.wanli_generated.gates_labeller "$R" "$HERE/gates_labeller.md"
done
if [ "${GATES_ONLY:-0}" = 1 ] || [ "${TABLES:-1}" = 0 ]; then stamp "done (no tables)"; exit 0; fi
stamp "tables"
python -m experiments.wanli_generated.gates_labeller "$R" "$HERE/gates_labeller.md"
# the runs' per-unit accuracies -> results_labeller.csv (world_unit's own table, ungated, stays in the scratch);
# then results_labeller.md / _check.md from the committed files alone: L1-L3 "not tested (gate …)" where G1 or the
# manipulation check failed
python -m experiments.world_unit --scratch "$R" --out "$R/results_labeller_ungated.md" --csv "$HERE/results_labeller.csv" \
    --row 2_floor --row 3_full --row 4_random --row 9_ceiling \
    --claim L1=3_full:2_floor --claim L2=3_full:4_random --claim L3=3_full:9_ceiling
python -m experiments.wanli_generated.results_labeller
stamp "done: $HERE/results_labeller.md"
