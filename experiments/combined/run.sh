#!/usr/bin/env bash
# WANLI -> DISCO -> conditional z-filtering composed through the one data model (no paper), with no oracle:
# each part and the composition against a same-size floor and ceiling, 2 world seeds x 3 training seeds.
#   bash experiments/combined/run.sh     # -> experiments/combined/results.md (+ .csv), sizes.json; ~25 min on one core
# Needs the scratch folders of experiments/wanli_generated/run.sh ($E6) and experiments/disco_table3/run.sh ($E8)
# for the same WORLD and WORLD_SEEDS (their W, classifier, DISCO teacher, fill-in LM and DISCO(D0)); run those first.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/combined); FRESH=0 keeps finished steps and rows.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
E6="${E6_SCRATCH:-/tmp/nliforge_exp/wanli_generated}"
E8="${E8_SCRATCH:-/tmp/nliforge_exp/disco_table3}"
scratch combined
N_TRAIN="${N_TRAIN:-4000}"          # D0, as in the two source experiments
for ws in $WORLD_SEEDS; do
    W="$R/world$ws"; mkdir -p "$W"
    A="$E6/world$ws"; D="$E8/world$ws"
    for need in "$A/gen_full/review/reviewed.jsonl" "$D/gen_filter/augment/counterfactuals.jsonl" "$D/gen_filter/teacher"; do
        [ -e "$need" ] || { echo "$0: $need is missing: run experiments/wanli_generated/run.sh and experiments/disco_table3/run.sh first (same WORLD, WORLD_SEEDS)" >&2; exit 2; }
    done
    WA=(world="$WORLD" world.seed="$ws" world.n_train="$N_TRAIN")
    REVIEWED="$A/gen_full/review/reviewed.jsonl"
    stamp "world $ws: DISCO(W): counterfactuals of the reviewed WANLI set (DISCO's D0 teacher and fill-in LM)"
    # conf/experiment/combined.yaml, conf/generate_experiment/disco_combined.yaml: the demo's DISCO stages on every
    # pair of W, no model trained here
    logged "$W/disco_w.log" nliforge-generate pipeline=disco experiment=combined "${WA[@]}" input="$REVIEWED" \
        pipeline.classifier.run_dir="$D/gen_filter/classifier" "pipeline.disco_teacher.run_dirs=[$D/gen_filter/teacher]" \
        stand_in.generator.model="$D/gen_filter/generator_lm" pipeline.augment.name="exp_comb_disco_w_w$ws" \
        hydra.run.dir="$W/disco_w"
    PARTS=("$REVIEWED" "$W/disco_w/augment/counterfactuals.jsonl" "$D/gen_filter/augment/counterfactuals.jsonl")
    stamp "world $ws: the union W ∪ DISCO(W) ∪ DISCO(D0), and Z(union | D0) (conditional z-filtering, k 20, batch 1000)"
    logged "$W/union.log" python -m experiments.combined.union "$W/union.jsonl" "exp_comb_union_w$ws" "${PARTS[@]}"
    # the parts registered from their files here, not by the source experiments' names (a later run of those
    # with other settings would re-point them)
    logged "$W/w.log" python -m experiments.combined.union "$W/w.jsonl" "exp_comb_w_w$ws" "${PARTS[0]}"
    logged "$W/disco_d0.log" python -m experiments.combined.union "$W/disco_d0.jsonl" "exp_comb_disco_d0_w$ws" "${PARTS[2]}"
    # conf/generate_experiment/zfilter_combined_zall.yaml: the seed set is the world's biased split
    logged "$W/z_all.log" nliforge-generate pipeline=zfilter experiment=combined_zall "${WA[@]}" \
        "input=[$(IFS=,; echo "${PARTS[*]}")]" register.name="exp_comb_zall_w$ws" hydra.run.dir="$W/z_all"
    N_ADD=$(for f in "${PARTS[0]}" "${PARTS[2]}" "$W/union.jsonl" "$W/z_all/dataset.jsonl"; do count_lines "$f"; done | sort -n | head -1)
    N_ADD=$(( N_ADD < N_TRAIN ? N_ADD : N_TRAIN ))   # the ceiling draws N from the unbiased split of |D0| pairs
    echo "$N_ADD" > "$W/n_add"
    [ "$N_ADD" -gt 0 ] || { echo "$0: world $ws: an added set is empty; nothing to compare" >&2; exit 1; }
    stamp "world $ws: N_ADD = $N_ADD (the smallest added set); rows"
    # every arm from the same D0 (common.sh train_arm): floor = D0 + N biased, ceiling = D0 + N unbiased, D0 + W cut to N
    train_arm "$ws" 1_d0 d0 --n-train "$N_TRAIN"
    train_arm "$ws" 2_floor floor --n-train "$N_TRAIN" --n "$N_ADD"
    train_arm "$ws" 9_ceiling ceiling --n-train "$N_TRAIN" --n "$N_ADD"
    for pair in "3_w:exp_comb_w_w$ws" "4_disco:exp_comb_disco_d0_w$ws" "5_union:exp_comb_union_w$ws" \
                "6_zall:exp_comb_zall_w$ws"; do
        row="${pair%%:*}" set_name="${pair#*:}"
        train_arm "$ws" "$row" treatment --n-train "$N_TRAIN" --n "$N_ADD" --w "$set_name"
    done
done
stamp "tables"
python -m experiments.controls_table --scratch "$R" --out "$HERE/results.md" \
    --row 1_d0="D0" --row 2_floor="floor: D0 + N biased" --row 3_w="D0 + W (WANLI)" --row 4_disco="D0 + DISCO(D0)" \
    --row 5_union="D0 + W ∪ DISCO(W) ∪ DISCO(D0)" --row 6_zall="D0 + Z(union given D0)" --row 9_ceiling="ceiling: D0 + N unbiased" \
    --floor 2_floor --ceiling 9_ceiling --compare 5_union:3_w --compare 5_union:4_disco --compare 6_zall:5_union \
    --title "WANLI → DISCO → z-filter on $WORLD, no oracle: $N_TRAIN pairs of D0 + N added" \
    --note "N per world seed (the smallest added set): $(for ws in $WORLD_SEEDS; do printf 'world %s: %s; ' "$ws" "$(cat "$R/world$ws/n_add")"; done)"
python - "$R" "$HERE/sizes.json" <<'PY'
import json, sys, pathlib
r, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = lambda p: sum(1 for line in open(p) if line.strip())
sizes = {w.name: {"union": n(w / "union.jsonl"), "DISCO(W)": n(w / "disco_w/augment/counterfactuals.jsonl"),
                  "Z(union | D0)": n(w / "z_all/dataset.jsonl"), "N": int((w / "n_add").read_text())}
         for w in sorted(r.glob("world*"))}
out.write_text(json.dumps(sizes, indent=1) + "\n")
PY
stamp "done: $HERE/results.md"
