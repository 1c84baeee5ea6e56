#!/usr/bin/env bash
# WANLI offline with no oracle: generated and reviewed W against a same-size floor and ceiling, with
# the mechanism's ablations, on a calibrated world, 2 world seeds x 3 training seeds.
#   bash experiments/wanli_generated/run.sh     # tables -> experiments/wanli_generated/results.md (+ .csv, counts.json)
# ~40 min on one CPU core. WORLD (snli_calibrated), WORLD_SEEDS (0 1), SEEDS (1,2,3), N_TRAIN (4000) override.
#   TRAIN=0 VARIANTS="full randseeds" bash experiments/wanli_generated/run.sh   # generation and review only -> seeds_diagnosis.md
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/wanli_generated); FRESH=0 keeps finished steps and rows.
# TABLES=0 stops before the tables; TABLES_ONLY=1 (with FRESH=0) writes only the tables of WORLD_SEEDS.
# The mechanism test (README): MECHANISM_ONLY=1 THRESHOLD=0 N_ANNOT=800 WORLD_SEEDS="0 1 2 3 4" (tables ->
# results_mechanism.md/.csv).
# Who knows what (README): the generator LM is trained on D0's pairs WITHOUT their labels; the classifier behind
# the data map and max variability on D0; only the annotators' stand-in (people) knows the true labels, and the
# review=teacher row replaces it by the D0 classifier, so that nothing in that row knows them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
if [ "${TABLES_ONLY:-0}" = 1 ]; then FRESH=0; fi   # the tables read the scratch; never empty it then
scratch wanli_generated
N_TRAIN="${N_TRAIN:-4000}"          # D0 = this many pairs of the biased split
N_ANNOT="${N_ANNOT:-10000}"         # the annotators' stand-in: this many UNBIASED pairs (people know the labels)
THRESHOLD="${THRESHOLD:-0.8}"       # review: keep a pair when the reviewer's p(argmax) >= this
# VARIANTS (default all four) and TRAIN=0 (stop after the review: the H2 diagnosis, no rows) for a partial run
read -r -a VARIANTS <<< "${VARIANTS:-full randseeds randkeep nofilter}"
has_variant() { [[ " ${VARIANTS[*]} " == *" $1 "* ]]; }
for ws in $WORLD_SEEDS; do
    if [ "${TABLES_ONLY:-0}" = 1 ]; then break; fi
    W="$R/world$ws"; mkdir -p "$W"
    WORLD_ARGS=(world="$WORLD" world.seed="$ws")
    # a world generated and reviewed before (FRESH=0 after a stop: $W/n_add written) goes straight to training
    if [ -f "$W/n_add" ]; then N_ADD=$(cat "$W/n_add"); stamp "world $ws: generated and reviewed before, N_ADD = $N_ADD"; else
    stamp "world $ws: the annotators' stand-in ($N_ANNOT unbiased pairs, 5 epochs)"
    # conf/experiment/wanli_generated_annotator.yaml: the tiny model on the unbiased split, no logger
    # a finished model is kept; ckpt_path=last resumes one stopped part-way (from the start if no checkpoint yet)
    [ -f "$W/annotator/model/config.json" ] || logged "$W/annotator.log" nliforge-train experiment=wanli_generated_annotator \
        "${WORLD_ARGS[@]}" world.n_train="$N_ANNOT" hydra.run.dir="$W/annotator" ckpt_path=last
    # conf/experiment/wanli_generated.yaml and conf/generate_experiment/wanli_wanli_generated.yaml: the demo's
    # classifier (5 epochs on D0) and generation, every seed above the quantile, the LM on D0 without labels
    GEN=(pipeline=wanli experiment=wanli_generated "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN")
    SHARED=(pipeline.classifier.run_dir="$W/gen_full/classifier" stand_in.generator.model="$W/gen_full/generator_lm")
    REST=(seeds exemplars prompts generate parse)
    stamp "world $ws: generation, full (seeds above the 0.75 variability quantile; heuristics; top half by max variability)"
    logged "$W/gen_full.log" nliforge-generate "${GEN[@]}" hydra.run.dir="$W/gen_full"
    stamp "world $ws: ablations (the same classifier and LM): random seeds; random half kept; no filters"
    # random seeds: as many per label as the full variant chose, drawn at random from all of D0
    PER_LABEL=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['stages']['seeds']['count_out'] // 3)" "$W/gen_full/manifest.json")
    has_variant randseeds && logged "$W/gen_randseeds.log" nliforge-generate "${GEN[@]}" "${SHARED[@]}" pipeline.seeds.quantile=0.0 \
        pipeline.seeds.max_per_label="$PER_LABEL" \
        "pipeline.stages=[classifier,$(IFS=,; echo "${REST[*]}"),heuristics,variability]" hydra.run.dir="$W/gen_randseeds"
    has_variant randkeep && logged "$W/gen_randkeep.log" nliforge-generate "${GEN[@]}" "${SHARED[@]}" pipeline.variability.select=random \
        "pipeline.stages=[classifier,$(IFS=,; echo "${REST[*]}"),heuristics,variability]" hydra.run.dir="$W/gen_randkeep"
    has_variant nofilter && logged "$W/gen_nofilter.log" nliforge-generate "${GEN[@]}" "${SHARED[@]}" \
        "pipeline.stages=[classifier,$(IFS=,; echo "${REST[*]}")]" hydra.run.dir="$W/gen_nofilter"
    stamp "world $ws: review (annotators' stand-in for each variant; the D0 classifier for the full one)"
    for v in "${VARIANTS[@]}"; do
        logged "$W/review_$v.log" nliforge-review teacher run="$W/gen_$v" teacher.model_dir="$W/annotator" teacher.threshold="$THRESHOLD"
        logged "$W/review_${v}_agg.log" nliforge-review aggregate run="$W/gen_$v" aggregate.mode=automatic aggregate.name="exp_wg_${v}_w$ws" \
            aggregate.reviewer="$(reviewer_id "$W/annotator")"
    done
    if [ "${TRAIN:-1}" = 0 ]; then continue; fi
    mkdir -p "$W/gen_teacher"
    logged "$W/review_teacher.log" nliforge-review teacher run="$W/gen_teacher" items="$W/gen_full/dataset.jsonl" teacher.model_dir="$W/gen_full/classifier" \
        teacher.threshold="$THRESHOLD"
    logged "$W/review_teacher_agg.log" nliforge-review aggregate run="$W/gen_teacher" items="$W/gen_full/dataset.jsonl" aggregate.mode=automatic \
        aggregate.name="exp_wg_teacher_w$ws" aggregate.reviewer="$(reviewer_id "$W/gen_full/classifier")"
    # every W is cut to the size of the smallest one (a seeded random subset), so one floor and one ceiling fit all
    N_ADD=$(for v in "${VARIANTS[@]}" teacher; do count_lines "$W/gen_$v/review/reviewed.jsonl"; done | sort -n | head -1)
    N_ADD=$(( N_ADD < N_TRAIN ? N_ADD : N_TRAIN ))   # the ceiling draws N from the unbiased split of |D0| pairs
    echo "$N_ADD" > "$W/n_add"
    fi
    [ "$N_ADD" -gt 0 ] || { echo "$0: world $ws: N = 0 (no reviewed pair in some variant); nothing to add, stopping" >&2; exit 1; }
    stamp "world $ws: N_ADD = $N_ADD pairs added by every row (the smallest reviewed W)"
    # every arm from the same D0 (common.sh train_arm): floor = D0 + N biased, ceiling = D0 + N unbiased, D0 + W cut to N
    # MECHANISM_ONLY=1: only the rows M1-M4 compare (the floor and the four variants); D0, the ceiling and the
    # review=teacher row are not trained (the mechanism test's time on 2 cores)
    if [ "${MECHANISM_ONLY:-0}" = 1 ]; then TRAINED=("${VARIANTS[@]}"); else TRAINED=("${VARIANTS[@]}" teacher); fi
    [ "${MECHANISM_ONLY:-0}" = 1 ] || train_arm "$ws" 1_d0 d0 --n-train "$N_TRAIN"
    train_arm "$ws" 2_floor floor --n-train "$N_TRAIN" --n "$N_ADD"
    [ "${MECHANISM_ONLY:-0}" = 1 ] || train_arm "$ws" 9_ceiling ceiling --n-train "$N_TRAIN" --n "$N_ADD"
    i=3
    for v in "${TRAINED[@]}"; do
        set_name="exp_wg_${v}_w$ws"
        train_arm "$ws" "${i}_$v" treatment --n-train "$N_TRAIN" --n "$N_ADD" --w "$set_name"
        i=$((i + 1))
    done
done
if [ "${TRAIN:-1}" = 0 ]; then
    python -m experiments.wanli_generated.seeds_diagnosis "$R" "$HERE/seeds_diagnosis.md"
    stamp "done (TRAIN=0: no rows): $HERE/seeds_diagnosis.md"
    exit 0
fi
# TABLES=0: stop before the tables (two halves of the worlds run side by side on one scratch with FRESH=0;
# then `TABLES_ONLY=1 WORLD_SEEDS="0 1 2 3 4"` writes the tables over all of them)
if [ "${TABLES:-1}" = 0 ]; then stamp "done (TABLES=0: no tables)"; exit 0; fi
stamp "tables"
# the mechanism test's family (README): the five rows and M1-M4, one-sided, Holm over the four
MECHANISM_ARGS=(--row 2_floor --row 3_full --row 4_randseeds --row 5_randkeep --row 6_nofilter
                --claim M1=3_full:2_floor --claim M2=3_full:4_randseeds --claim M3=3_full:5_randkeep --claim M4=3_full:6_nofilter)
if [ "${MECHANISM_ONLY:-0}" = 1 ]; then   # no ceiling: the world-unit table of M1-M4 and every unit's accuracy
    OUT="${RESULTS:-results_mechanism}"
    python -m experiments.world_unit --scratch "$R" --out "$HERE/$OUT.md" --csv "$HERE/$OUT.csv" "${MECHANISM_ARGS[@]}"
    python -m experiments.wanli_generated.counts "$R" "$HERE/counts${OUT#results}.json"
    python -m experiments.wanli_generated.seeds_diagnosis "$R" "$HERE/seeds_diagnosis${OUT#results}.md"
    stamp "done: $HERE/$OUT.md"
    exit 0
fi
# RESULTS: the stem of the tables' files (default results: results.md/.csv, world_unit.md, counts.json,
# seeds_diagnosis.md); the mechanism test writes results_mechanism*, beside the earlier attempt's files
OUT="${RESULTS:-results}"
SUFFIX="${OUT#results}"
python -m experiments.controls_table --scratch "$R" --out "$HERE/$OUT.md" \
    --row 1_d0="D0" --row 2_floor="floor: D0 + N biased" --row 3_full="D0 + W (WANLI)" \
    --row 4_randseeds="D0 + W, random seeds" --row 5_randkeep="D0 + W, random half kept" \
    --row 6_nofilter="D0 + W, no filters" --row 7_teacher="D0 + W, review=teacher" \
    --row 9_ceiling="ceiling: D0 + N unbiased" --floor 2_floor --ceiling 9_ceiling \
    --compare 3_full:4_randseeds --compare 3_full:5_randkeep --compare 3_full:6_nofilter --compare 3_full:1_d0 \
    --title "WANLI offline, no oracle, on $WORLD: $N_TRAIN pairs of D0 + N added" \
    --note "N per world seed (the smallest reviewed W): $(for ws in $WORLD_SEEDS; do printf 'world %s: %s; ' "$ws" "$(cat "$R/world$ws/n_add")"; done)"
# the world as the unit (training seeds averaged within a world), Holm over M1-M4 (README, the mechanism test)
python -m experiments.world_unit --scratch "$R" --out "$HERE/world_unit$SUFFIX.md" "${MECHANISM_ARGS[@]}"
python -m experiments.wanli_generated.counts "$R" "$HERE/counts$SUFFIX.json"
python -m experiments.wanli_generated.seeds_diagnosis "$R" "$HERE/seeds_diagnosis$SUFFIX.md"
stamp "done: $HERE/$OUT.md"
