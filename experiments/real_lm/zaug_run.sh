#!/usr/bin/env bash
# Issue 18 item 5: the Z-Aug generator fine-tuned from a real pretrained LM (SmolLM2-135M-Instruct)
# against the generator trained from scratch, with and without the label-consistency unlikelihood,
# 3 seeds. Offline, 2 CPU cores: 16.5 min measured for two seeds (one thread, cores shared).
#   bash experiments/real_lm/zaug_run.sh        # tables -> experiments/real_lm/zaug_table.md
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_lm_zaug). SEEDS, N_TRAIN, N_SAMPLES, STEPS override.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
# one thread per process: two CPU cores shared by several jobs lose far more to OpenMP oversubscription
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# RL_WORLD / RL_WORLD_SEED (a second world): the committed table is strong, world seed 0 (the default);
# any other world writes zaug_table_<preset>_w<seed>.md
RL_WORLD="${RL_WORLD:-strong}" RL_WORLD_SEED="${RL_WORLD_SEED:-0}"
SUFFIX=""
if [ "$RL_WORLD" != strong ] || [ "$RL_WORLD_SEED" != 0 ]; then SUFFIX="_${RL_WORLD}_w$RL_WORLD_SEED"; fi
WORLD_ARGS=(world="$RL_WORLD" world.seed="$RL_WORLD_SEED")
scratch "real_lm_zaug$SUFFIX"
SEEDS="${SEEDS:-0 1 2}"
N_TRAIN="${N_TRAIN:-2000}"      # D0: pairs of the biased world split (the demo's 5000, reduced for SmolLM2 on CPU)
N_SAMPLES="${N_SAMPLES:-200}"   # whole instances sampled per generator
STEPS="${STEPS:-40}"            # SmolLM2 fine-tuning steps of 16 pairs (640 pairs, a third of D0)

stamp "teacher (the paper's set-up: trained on D0, the biased data)"
# conf/experiment/real_lm_zaug_teacher.yaml: the demo's tiny model, 3 epochs, its training set saved
[ -f "$R/teacher/model/config.json" ] || nliforge-train experiment=real_lm_zaug_teacher "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN" \
    hydra.run.dir="$R/teacher"
# conf/experiment/real_lm_zaug.yaml, conf/generate_experiment/zaug_real_lm_zaug.yaml: the demo's Z-Aug up to the confidence filter
COMMON=(pipeline=zaug experiment=real_lm_zaug "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN" pipeline.classifier.run_dir="$R/teacher"
        pipeline.zaug_sample.n_samples="$N_SAMPLES")
for seed in $SEEDS; do
    stamp "seed $seed: from scratch (the demo's tiny GPT-2, 3 epochs of D0), lambda 0.5 and 0"
    [ -f "$R/scratch_s$seed/stages/confidence.jsonl" ] || \
    nliforge-generate "${COMMON[@]}" seed="$seed" pipeline.generator_model.seed="$seed" hydra.run.dir="$R/scratch_s$seed"
    stamp "seed $seed: SmolLM2-135M-Instruct fine-tuned ($STEPS steps), lambda 0.5 and 0"
    [ -f "$R/smollm2_s$seed/stages/confidence.jsonl" ] || \
    nliforge-generate "${COMMON[@]}" generator=causal_unlikelihood generator.train.max_steps="$STEPS" +generator.train.precision=bf16-mixed \
        pipeline.zaug_sample.dtype=auto seed="$seed" \
        pipeline.generator_model.seed="$seed" pipeline.zaug_sample.batch_size=32 hydra.run.dir="$R/smollm2_s$seed"
done
# ORACLE=<an nliforge-train folder of the same recipe> reuses one (e.g. wanli_run.sh's annotator)
link_oracle oracle
stamp "oracle scorer (measurement only, never in a pipeline): the demo recipe on the UNBIASED world split"
# conf/experiment/real_lm_annotator.yaml (wanli_run.sh's annotators' stand-in is the same recipe)
[ -f "$R/oracle/model/config.json" ] || nliforge-train experiment=real_lm_annotator "${WORLD_ARGS[@]}" hydra.run.dir="$R/oracle"
stamp "table"
python -m experiments.real_lm.zaug_table --scratch "$R" --out "$HERE/zaug_table$SUFFIX.md"
stamp "done: $HERE/zaug_table$SUFFIX.md"
