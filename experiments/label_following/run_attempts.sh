#!/usr/bin/env bash
# Label-following attempts 2-5, the whole-instance measurement and the offline generator (README), after run.sh's
# judge and attempt 1's generators (`zaug_ul_e3`, trained here when missing); every step resumable.
#   bash experiments/label_following/run_attempts.sh   # -> results_{guided,lambda1,whole,offline}*.md, units_*.csv
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/label_following). One thread per process; about 40 CPU-minutes
# from attempt 1's generators (the offline generator ~5-11 per world, λ = 1.0 training ~4 per world). Kernels pinned
# (common.sh): every committed table comes out again except the offline generator's, made unpinned (README).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
FRESH=0 scratch label_following
STEPS=(python -m experiments.label_following.steps)
TABLES=(python -m experiments.label_following.tables "$R" "$HERE")
WORLDS="0 1 2 3 4"

"${STEPS[@]}" judge --scratch "$R" --world-seed 9
for ws in 9 $WORLDS; do
    "${STEPS[@]}" judge --scratch "$R" --world-seed "$ws"
    "${STEPS[@]}" trained --scratch "$R" --world-seed "$ws" --name zaug_ul_e3 --epochs 3 --lam 0.5
    for w in 1 2 4; do "${STEPS[@]}" guided --scratch "$R" --world-seed "$ws" --from zaug_ul_e3 --w "$w" --name "guided_w$w"; done
    "${STEPS[@]}" trained --scratch "$R" --world-seed "$ws" --name zaug_ul1_e3 --epochs 3 --lam 1.0
    "${STEPS[@]}" guided --scratch "$R" --world-seed "$ws" --from zaug_ul1_e3 --w 2 --name guided1_w2
    stamp "world $ws: attempts 2-5 done"
done
for ws in $WORLDS; do
    "${STEPS[@]}" whole --scratch "$R" --world-seed "$ws" --from zaug_ul_e3 --name zaug_whole
    "${STEPS[@]}" offline --scratch "$R" --world-seed "$ws"
    stamp "world $ws: whole instances and the offline generator done"
done
G=(--name zaug_ul_e3 --name guided_w1 --name guided_w2 --name guided_w4)
"${TABLES[@]}" "${G[@]}" --worlds 9 --suffix _guided_world9 > /dev/null
"${TABLES[@]}" "${G[@]}" --f2 guided_w1 zaug_ul_e3 --f2 guided_w2 zaug_ul_e3 --f2 guided_w4 zaug_ul_e3 --suffix _guided > /dev/null
"${TABLES[@]}" --name zaug_ul1_e3 --name guided1_w2 --worlds 9 --suffix _lambda1_world9 > /dev/null
"${TABLES[@]}" --name zaug_ul_e3 --name zaug_ul1_e3 --name guided1_w2 --f2 guided1_w2 zaug_ul1_e3 \
    --f2 zaug_ul1_e3 zaug_ul_e3 --suffix _lambda1 > /dev/null
"${TABLES[@]}" --name zaug_whole --suffix _whole > /dev/null
"${TABLES[@]}" --name offline --name zaug_ul_e3 --name guided1_w2 --name zaug_whole --diff zaug_ul_e3 offline \
    --diff guided1_w2 offline --diff zaug_whole offline --suffix _offline > /dev/null
rm -f "$HERE"/samples_guided_world9.md "$HERE"/samples_lambda1_world9.md
stamp "done: $HERE/results_*.md (then python -m experiments.summary)"
