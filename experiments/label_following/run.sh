#!/usr/bin/env bash
# Label-following in the synthetic world (README): the judge, the calibration ladder on world 9 (stop at the first
# rung whose corrected share is >= 0.60), the chosen recipe on worlds 0-4 (MLE, then unlikelihood if time allows),
# then the tables. The offline generator runs apart (OFFLINE=1 here runs it after the rest).
#   bash experiments/label_following/run.sh          # -> results.md, samples.md, calibration.md
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/label_following), kept between runs (every step resumable).
# WORLD_SEEDS (default "0 1 2 3 4"); UL=0 skips the unlikelihood arm. One thread per process.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORLD_SEEDS="${WORLD_SEEDS:-0 1 2 3 4}"
source "$HERE/../common.sh"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
FRESH=0 scratch label_following
STEPS=(python -m experiments.label_following.steps)
LADDER=("e3 3 2 128" "e10 10 2 128" "e30 30 2 128" "big_e10 10 4 256" "big_e30 30 4 256")

stamp "judge (once) and world 9's held-out pairs"
"${STEPS[@]}" judge --scratch "$R" --world-seed 9
calibration="$HERE/calibration.md"
printf '%s\n' "# Calibration on world 9 (README ladder; every attempt)" "" \
    "| attempt | epochs | layers | n_embd | kept | raw % | corrected % | passes | train CPU-min | steps | final loss |" \
    "|---|---|---|---|---|---|---|---|---|---|---|" > "$calibration"
chosen=""
for rung in "${LADDER[@]}"; do
    read -r name epochs layers embd <<< "$rung"
    stamp "calibration $name: $epochs epochs, $layers layers, n_embd $embd"
    "${STEPS[@]}" trained --scratch "$R" --world-seed 9 --name "calib_$name" --epochs "$epochs" --n-layer "$layers" --n-embd "$embd"
    python -m nliforge.analyze label-following "$R/world9/calib_$name/dataset.jsonl" --judge "$R/judge" \
        --heldout "$R/world9/heldout.jsonl" --out "$R/measure_calib/$name" > "$R/measure_calib_$name.log"
    python - "$R" "$name" "$epochs" "$layers" "$embd" >> "$calibration" <<'EOF'
import json, sys
r, name, epochs, layers, embd = sys.argv[1:]
row = json.load(open(f"{r}/measure_calib/{name}/label_following.json"))["per_world"][0]
cost = json.load(open(f"{r}/world9/calib_{name}/cost.json"))
ok = row["corrected"] >= 0.60
print(f"| {name} | {epochs} | {layers} | {embd} | {row['n']} | {100 * row['raw']:.1f} | {100 * row['corrected']:.1f} | "
      f"{'yes' if ok else 'no'} | {cost['train_cpu_s'] / 60:.1f} | {cost['steps']} | {cost['final_loss']:.3f} |")
open(f"{r}/measure_calib/{name}/verdict", "w").write("pass" if ok else "fail")
EOF
    tail -1 "$calibration"
    pass=$(cat "$R/measure_calib/$name/verdict")
    if [ "$pass" = pass ]; then chosen="$rung"; break; fi
done
if [ -z "$chosen" ]; then stamp "no rung passed on world 9: the trained generator is not measured on worlds 0-4"; exit 0; fi
read -r name epochs layers embd <<< "$chosen"
stamp "recipe: $name; worlds $WORLD_SEEDS"
for ws in $WORLD_SEEDS; do
    "${STEPS[@]}" judge --scratch "$R" --world-seed "$ws"
    "${STEPS[@]}" trained --scratch "$R" --world-seed "$ws" --name trained_mle --epochs "$epochs" --n-layer "$layers" --n-embd "$embd"
    stamp "world $ws: trained_mle done"
done
if [ "${UL:-1}" = 1 ]; then
    for ws in $WORLD_SEEDS; do
        "${STEPS[@]}" trained --scratch "$R" --world-seed "$ws" --name trained_ul --epochs "$epochs" --n-layer "$layers" --n-embd "$embd" --lam 0.5
        stamp "world $ws: trained_ul done"
    done
fi
if [ "${OFFLINE:-0}" = 1 ]; then
    for ws in $WORLD_SEEDS; do "${STEPS[@]}" offline --scratch "$R" --world-seed "$ws"; done
fi
python -m experiments.label_following.tables "$R" "$HERE" --worlds $WORLD_SEEDS
stamp "done: $HERE/results.md"
