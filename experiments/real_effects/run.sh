#!/usr/bin/env bash
# experiments/real_effects (criteria in README.md): E1 (HANS augmentation) and E4 (data-map thirds) on 5 worlds,
# one run folder per world x arm, resumable: a finished run (its <folder>.done) is kept, so a re-run skips it.
#   NLIFORGE_DATA_DIR=/path/to/real NLIFORGE_EXP=/work/runs/real_effects nohup bash experiments/real_effects/run.sh e1 e4 &
# Steps: the worlds (worlds.py, registered in the user data home); e1: per world the arms mnli, plus, diamond;
# e4: per world the data map of diag's mnli_3ep run (the E1 mnli set, 3 epochs), its thirds (e4_sets.py), then
# the arms ambiguous, random, easy; e4_3ep: the same thirds trained 3 epochs (E4's second attempt); diag: E1's arms
# at 3 epochs (mnli_3ep, plus_3ep, diamond_3ep); e2: human revisions as a dose against as many MNLI pairs (e2_sets.py,
# 7 arms per world, 3 epochs; E2_ARMS picks some of them). WORLDS (1 2 3 4 5), THREADS (1). Wall time per run in
# <folder>.done. Two processes may share the work only with disjoint WORLDS (or disjoint E2_ARMS of one world).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
: "${NLIFORGE_DATA_DIR:?set NLIFORGE_DATA_DIR to the folder of the real data files (nliforge-data check)}"
export NLIFORGE_DATA_DIR OMP_NUM_THREADS="${THREADS:-1}" MKL_NUM_THREADS="${THREADS:-1}"
FRESH=0 scratch real_effects
WORLDS="${WORLDS:-1 2 3 4 5}"
STEPS=("${@:-e1}")
# the settings of every run (README.md "Settings")
SETTINGS=(experiment=real_text_datamap model.max_epochs=1 model.batch_size=8 num_threads="${THREADS:-1}" seed=1)

# one E? run: FOLDER TRAIN_SET SUITE [OVERRIDES...]; skipped when FOLDER.done exists (written after it finished)
one() {
    local name=$1 dir="$R/$1" set=$2 suite=$3 t0=$SECONDS; shift 3
    if [ -f "$dir.done" ]; then stamp "$name: done before, kept"; return; fi
    stamp "$name"
    mkdir -p "$(dirname "$dir")"; rm -rf "$dir"
    logged "$dir.log" nliforge-train "${SETTINGS[@]}" "data/train_sets=[$set]" suite="$suite" "$@" hydra.run.dir="$dir"
    echo "rc=0 wall=$((SECONDS - t0)) end=$(date -u +%FT%TZ)" > "$dir.done"
}

stamp "the worlds"
python "$HERE/worlds.py" "$R"
for step in "${STEPS[@]}"; do
    for w in $WORLDS; do
        case "$step" in
            e1) for arm in mnli plus diamond; do
                    one "e1/w$w/$arm" "exp_real_effects_w${w}_$arm" "exp_real_effects_w$w"
                done ;;
            e4) # the map: the world's mnli set trained 3 epochs = diag's mnli_3ep (README, E4's map amendment)
                one "diag/w$w/mnli_3ep" "exp_real_effects_w${w}_mnli" "exp_real_effects_w$w" model.max_epochs=3
                python "$HERE/e4_sets.py" "$R" "$w"
                for arm in ambiguous random easy; do
                    one "e4/w$w/$arm" "exp_real_effects_w${w}_e4_$arm" "exp_real_effects_w${w}_e4"
                done ;;
            e4_3ep) # E4's second attempt (README, "E4 at 3 epochs"): the same map and thirds, each arm 3 epochs
                one "diag/w$w/mnli_3ep" "exp_real_effects_w${w}_mnli" "exp_real_effects_w$w" model.max_epochs=3
                python "$HERE/e4_sets.py" "$R" "$w"
                for arm in ambiguous random easy; do
                    one "e4_3ep/w$w/$arm" "exp_real_effects_w${w}_e4_$arm" "exp_real_effects_w${w}_e4" model.max_epochs=3
                done ;;
            e2) # README "E2 criteria": the sets of every world (once), then per world base and each dose's pair of arms
                [ -n "${E2_SETS:-}" ] || { python "$HERE/e2_sets.py" "$R"; E2_SETS=1; }
                for arm in ${E2_ARMS:-base human_333 mnli_333 human_666 mnli_666 human_1332 mnli_1332}; do
                    one "e2/w$w/$arm" "exp_real_effects_w${w}_e2_$arm" exp_real_effects_e2 model.max_epochs=3
                done ;;
            diag) for arm in plus mnli diamond; do   # E1 at 3 epochs (README): the same sets, 3 epochs
                      one "diag/w$w/${arm}_3ep" "exp_real_effects_w${w}_$arm" "exp_real_effects_w$w" model.max_epochs=3
                  done ;;
            *) echo "$0: unknown step '$step'; expected e1, e4, e4_3ep, e2 or diag" >&2; exit 2 ;;
        esac
    done
done
stamp "done"
