#!/usr/bin/env bash
# World calibration: hypothesis-only accuracy of the tiny model on worlds of
# different artifact strengths, scored on the in-distribution test of `train_biased` (see README.md).
#   bash experiments/world_calibration/run.sh            # grid (1 seed) + presets and anchor (3 seeds)
#   PHASE=grid bash experiments/world_calibration/run.sh # only the grid;  PHASE=confirm: only presets
#   PHASE=world1 bash experiments/world_calibration/run.sh   # the two calibrated presets again on world seed 1
# Measured here (2 CPU cores shared with other jobs, OMP_NUM_THREADS=1): one run (3 epochs on 6000
# hypotheses + the suite) 26-42 s, a world build ~5 s; PHASE=grid (5 runs) 162 s, PHASE=confirm
# (3 worlds x 3 seeds) 270 s; the whole script ~7 min.
# Scratch in $NLIFORGE_EXP (default /tmp/nliforge_exp/world_calibration); results.csv and results.md
# are written next to this script.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
PHASE="${PHASE:-all}"
# a partial phase keeps what the other phase left (the table needs both); FRESH=1 empties it anyway
if [ "$PHASE" = all ]; then FRESH="${FRESH:-1}"; else FRESH="${FRESH:-0}"; fi
scratch world_calibration
N_TRAIN=6000 N_HELDOUT=1500
PY=(python -m nliforge.train)   # the installed (editable) checkout's code, checked by common.sh

# measure NAME "SEEDS" WORLD_OVERRIDES...: build the world, write its held-out biased test, train the
# hypothesis-only tiny model once per seed; each run's metrics.csv lands in $R/NAME/s<seed>/.
measure() {
    local name=$1 seeds=$2; shift 2
    local world=(world.n_train=$((N_TRAIN + N_HELDOUT)) "$@")
    mkdir -p "$R/$name"
    python -m experiments.world_calibration.heldout "$R/$name" "$N_HELDOUT" "${world[@]}"
    for seed in $seeds; do
        if [ -f "$R/$name/s$seed/metrics.csv" ]; then continue; fi
        # conf/experiment/world_calibration.yaml: the demo's tiny model, hypothesis only, 3 epochs, metrics only
        "${PY[@]}" experiment=world_calibration "${world[@]}" data.train_sets.synthetic_biased.limit=$N_TRAIN seed="$seed" \
            "+suite.sets.heldout_biased={name:heldout_biased,loader:jsonl,path:$R/$name/heldout_biased.jsonl,num_classes:3}" \
            hydra.run.dir="$R/$name/s$seed" > "$R/$name/s$seed.log" 2>&1
        stamp "$name seed $seed: $(grep '^.*,heldout_biased,acc,' "$R/$name/s$seed/metrics.csv" | cut -d, -f5)"
    done
}

strength() { echo world.strengths.negation="$1" world.strengths.overlap="$1" world.strengths.length="$1"; }

if [ "$PHASE" = all ] || [ "$PHASE" = grid ]; then
    for s in 0.0 0.2 0.4 0.6 0.8; do
        # shellcheck disable=SC2046
        measure "grid_s$s" 0 $(strength "$s")
    done
fi
if [ "$PHASE" = world1 ]; then   # the presets hold on a second world (its own sentences and draws)
    measure preset_snli_calibrated_world1 "0 1 2" world=snli_calibrated world.seed=1
    measure preset_mnli_calibrated_world1 "0 1 2" world=mnli_calibrated world.seed=1
elif [ "$PHASE" != grid ]; then
    measure preset_strong "0 1 2" world=strong         # = default.yaml (s = 0.8), the anchor
    measure preset_snli_calibrated "0 1 2" world=snli_calibrated
    measure preset_mnli_calibrated "0 1 2" world=mnli_calibrated
fi
python -m experiments.world_calibration.table "$R" "$HERE"
stamp "done: $HERE/results.md"
