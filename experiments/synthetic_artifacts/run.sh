#!/usr/bin/env bash
# The world check under every later experiment: on each world preset, does a classifier trained on
# the biased split (the floor) fail the challenge splits where a same-size unbiased set (the ceiling) does not?
# Offline, CPU: 3 presets x 2 world seeds x 2 rows x 3 training seeds = 36 jobs of 4,000 pairs, ~20 min on
# one core (~30 s a job).
#   bash experiments/synthetic_artifacts/run.sh     # tables -> experiments/synthetic_artifacts/results_<preset>.md (+ .csv)
# PRESETS, WORLD_SEEDS (0 1), SEEDS (1,2,3), N_TRAIN (4000) override. Scratch: $NLIFORGE_EXP (default
# /tmp/nliforge_exp/synthetic_artifacts); FRESH=0 keeps finished rows.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
scratch synthetic_artifacts
BASE="$R"
N_TRAIN="${N_TRAIN:-4000}"
for WORLD in ${PRESETS:-snli_calibrated mnli_calibrated strong}; do
    R="$BASE/$WORLD"
    for ws in $WORLD_SEEDS; do   # conf/experiment/synthetic_artifacts.yaml: the tiny model
        train_row "$ws" 1_biased 'data/train_sets=[synthetic_biased]' experiment=synthetic_artifacts world.n_train="$N_TRAIN"
        train_row "$ws" 2_unbiased 'data/train_sets=[synthetic]' experiment=synthetic_artifacts world.n_train="$N_TRAIN"
    done
    python -m experiments.controls_table --scratch "$R" --out "$HERE/results_$WORLD.md" \
        --row 1_biased="floor: biased split" --row 2_unbiased="ceiling: unbiased split" \
        --floor 1_biased --ceiling 2_unbiased --title "World check on $WORLD: $N_TRAIN pairs, biased vs unbiased" \
        --note "Tiny model, 5 epochs, lr 1e-3; world seeds $WORLD_SEEDS; training seeds ${SEEDS:-1,2,3}."
done
stamp "done: $HERE/results_*.md"
