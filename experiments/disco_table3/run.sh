#!/usr/bin/env bash
# DISCO offline with no oracle: teacher-filtered counterfactuals against a same-size floor and ceiling,
# with and without the teacher filter, on a calibrated world, 2 world seeds x 3 training seeds.
#   bash experiments/disco_table3/run.sh     # tables -> experiments/disco_table3/results.md (+ .csv, counts.json)
# ~19 min on one CPU core (2026-11-26, the other core busy; up to ~40 under heavier load). WORLD (snli_calibrated), WORLD_SEEDS (0 1), SEEDS (1,2,3), N_TRAIN (4000) override.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/disco_table3); FRESH=0 keeps finished steps and rows.
# OUT (this folder) takes the tables; UNIT (run: world seed x training seed; world: the world seeds) the unit.
# Who knows what (README): the task classifier (data map) and the teacher are trained on D0 = D^b; the fill-in LM
# on D0's pairs without their labels. Nothing here knows the world's true labels.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
scratch disco_table3
N_TRAIN="${N_TRAIN:-4000}"          # D0 = D^b: this many pairs of the biased split
PER_LABEL="${PER_LABEL:-null}"      # ambiguous pairs per label (null: the whole ambiguous third)
TEACHER_EPOCHS="${TEACHER_EPOCHS:-8}"   # the teacher: D0 again, trained longer than the task classifier (3)
DELTA="${DELTA:-0.25}"              # the teacher filter keeps Δ > this (the paper's and PRIOR_ART's 0.25)
OUT="${OUT:-$HERE}"; UNIT="${UNIT:-run}"; mkdir -p "$OUT"
for ws in $WORLD_SEEDS; do
    W="$R/world$ws"; mkdir -p "$W"
    # conf/experiment/disco_table3.yaml, conf/generate_experiment/disco_disco_table3.yaml: the demo's DISCO with
    # the teacher on D0 and the fill-in LM on D0 without labels
    GEN=(pipeline=disco experiment=disco_table3 world="$WORLD" world.seed="$ws" world.n_train="$N_TRAIN"
         pipeline.disco_teacher.max_epochs="$TEACHER_EPOCHS" pipeline.disco_source.max_per_label="$PER_LABEL")
    stamp "world $ws: DISCO generation with the teacher filter (Δ > $DELTA)"
    logged "$W/gen_filter.log" nliforge-generate "${GEN[@]}" pipeline.teacher_filter.threshold="$DELTA" \
        pipeline.augment.name="exp_dc_filter_w$ws" hydra.run.dir="$W/gen_filter"
    stamp "world $ws: the same phrases without the teacher filter (Δ > -1 keeps every spliced pair with its target label)"
    mkdir -p "$W/gen_nofilter"
    cp "$W/gen_filter/llm_cache.sqlite" "$W/gen_nofilter/llm_cache.sqlite"   # the same prompts: answered from the cache
    logged "$W/gen_nofilter.log" nliforge-generate "${GEN[@]}" pipeline.augment.name="exp_dc_nofilter_w$ws" \
        pipeline.classifier.run_dir="$W/gen_filter/classifier" "pipeline.disco_teacher.run_dirs=[$W/gen_filter/teacher]" \
        stand_in.generator.model="$W/gen_filter/generator_lm" pipeline.teacher_filter.threshold=-1.0 \
        'pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,augment]' \
        hydra.run.dir="$W/gen_nofilter"
    N_ADD=$(for v in filter nofilter; do count_lines "$W/gen_$v/augment/counterfactuals.jsonl"; done | sort -n | head -1)
    N_ADD=$(( N_ADD < N_TRAIN ? N_ADD : N_TRAIN ))   # the ceiling draws N from the unbiased split of |D0| pairs
    echo "$N_ADD" > "$W/n_add"
    [ "$N_ADD" -gt 0 ] || { echo "$0: world $ws: N = 0 (no counterfactual in some variant); nothing to add, stopping" >&2; exit 1; }
    stamp "world $ws: N_ADD = $N_ADD counterfactuals added by every row (the smaller D^c)"
    # every arm from the same D0 (common.sh train_arm): floor = D0 + N biased, ceiling = D0 + N unbiased, D0 + D^c cut to N
    train_arm "$ws" 1_d0 d0 --n-train "$N_TRAIN"
    train_arm "$ws" 2_floor floor --n-train "$N_TRAIN" --n "$N_ADD"
    train_arm "$ws" 9_ceiling ceiling --n-train "$N_TRAIN" --n "$N_ADD"
    for v in filter nofilter; do
        set_name="exp_dc_${v}_w${ws}_counterfactuals"
        row=$([ "$v" = filter ] && echo 3_filter || echo 4_nofilter)
        train_arm "$ws" "$row" treatment --n-train "$N_TRAIN" --n "$N_ADD" --w "$set_name"
    done
done
stamp "tables"
python -m experiments.controls_table --scratch "$R" --out "$OUT/results.md" --unit "$UNIT" \
    --row 1_d0="D0 = D^b" --row 2_floor="floor: D0 + N biased" --row 3_filter="D0 + D^c (teacher filter)" \
    --row 4_nofilter="D0 + D^c, no teacher filter" --row 9_ceiling="ceiling: D0 + N unbiased" \
    --floor 2_floor --ceiling 9_ceiling --compare 3_filter:4_nofilter --compare 3_filter:1_d0 \
    --title "DISCO offline, no oracle, on $WORLD: $N_TRAIN pairs of D0 + N added" \
    --note "N per world seed (the smaller D^c): $(for ws in $WORLD_SEEDS; do printf 'world %s: %s; ' "$ws" "$(cat "$R/world$ws/n_add")"; done)"
python -m experiments.wanli_generated.counts "$R" "$OUT/counts.json"
for ws in $WORLD_SEEDS; do cp "$R/world$ws/gen_filter/disco_report.md" "$OUT/disco_report_world$ws.md"; done
stamp "done: $OUT/results.md"
