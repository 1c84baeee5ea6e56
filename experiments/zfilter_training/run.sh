#!/usr/bin/env bash
# Z-Aug offline with no oracle: the three z-filtering recipes and PoE against same-size floors and
# ceilings, on a calibrated world, 2 world seeds x 3 training seeds; consistency scored by the teacher and by an
# oracle scorer (a measurement, never a filter); the artifacts measured as the world defines them too.
#   bash experiments/zfilter_training/run.sh   # -> results_{zaug,par_z,seq_z,poe}.md (+ .csv), results_z.md
# ~50 min on one CPU core. WORLD (snli_calibrated), WORLD_SEEDS (0 1), SEEDS (1,2,3), N_TRAIN (4000) override.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/zfilter_training); FRESH=0 keeps finished steps and rows.
# OUT (this folder) takes the tables; UNIT (run: world seed x training seed; world: the world seeds) the unit.
# Who knows what: teacher (tau filter) and both generators are trained on D0; the hypothesis-only expert of PoE on
# D0; the oracle scorer (the unbiased split) only scores samples after the fact.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
scratch zfilter_training
N_TRAIN="${N_TRAIN:-4000}"          # D0 size
N_SAMPLES="${N_SAMPLES:-10000}"     # samples per generator
N_ORACLE="${N_ORACLE:-10000}"       # the oracle scorer: this many unbiased pairs (measurement only)
TAU="${TAU:-0.8}"                   # confidence filter (the paper's 0.95 keeps nothing with the tiny teacher)
OUT="${OUT:-$HERE}"; UNIT="${UNIT:-run}"; mkdir -p "$OUT"
export ZF_BATCH="${ZF_BATCH:-1000}" # Algorithm 1's batch: the first value used, fixed before any result (the paper gives none)
for ws in $WORLD_SEEDS; do
    W="$R/world$ws"; mkdir -p "$W"
    WORLD_ARGS=(world="$WORLD" world.seed="$ws")
    stamp "world $ws: the oracle scorer ($N_ORACLE unbiased pairs; scores samples, filters nothing)"
    # conf/experiment/zfilter_training_oracle.yaml: the tiny model on the unbiased split, no logger
    # a finished model is kept; ckpt_path=last resumes one stopped part-way (from the start if no checkpoint yet)
    [ -f "$W/oracle/model/config.json" ] || logged "$W/oracle.log" nliforge-train experiment=zfilter_training_oracle \
        "${WORLD_ARGS[@]}" world.n_train="$N_ORACLE" hydra.run.dir="$W/oracle" ckpt_path=last
    stamp "world $ws: the zaug pipeline (teacher, generators ul and mle on D0, $N_SAMPLES samples each, tau $TAU, Seq-Z)"
    # conf/experiment/zfilter_training.yaml, conf/generate_experiment/zaug_zfilter_training.yaml: the Z-Aug demo
    [ -f "$W/zaug/dataset.jsonl" ] || logged "$W/pipeline.log" nliforge-generate pipeline=zaug experiment=zfilter_training \
        "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN" pipeline.zaug_sample.n_samples="$N_SAMPLES" pipeline.confidence.tau="$TAU" \
        pipeline.zfilter.batch_size="$ZF_BATCH" hydra.run.dir="$W/zaug"
    stamp "world $ws: the three recipes, z tables, oracle agreement"
    ZF_SUFFIX="_w$ws" logged "$W/recipes.log" python -m experiments.zfilter_training.zfilter_recipes prepare "$W/zaug" "$W" "$(python -c 'from nliforge.utils.home import user_conf_dir; print(user_conf_dir(create=True) / "data" / "train_sets")')" "$W/oracle"
    stamp "world $ws: the hypothesis-only expert for PoE (D0, model.input=hypothesis)"
    # conf/experiment/zfilter_training_hyp_only.yaml: the tiny model on D0, hypothesis only, no logger
    [ -f "$W/hyp_only/model/config.json" ] || logged "$W/hyp_only.log" nliforge-train experiment=zfilter_training_hyp_only \
        "${WORLD_ARGS[@]}" world.n_train="$N_TRAIN" hydra.run.dir="$W/hyp_only" ckpt_path=last
    size() { count_lines "$W/recipes/$1/dataset.jsonl"; }
    N_ZAUG=$(( $(size zaug) - N_TRAIN )); N_PAR=$(size par_z); N_SEQ=$(size seq_z)
    echo "zaug_added=$N_ZAUG par_z=$N_PAR seq_z=$N_SEQ" > "$W/sizes"
    stamp "world $ws: rows (Z-Aug adds $N_ZAUG to D0; Par-Z has $N_PAR pairs, Seq-Z $N_SEQ)"
    # floors and ceilings from the same D0 (common.sh train_arm): Z-Aug's floor = D0 + N biased pairs; Par-Z's and
    # Seq-Z's (M pairs, standing in for D0) = a biased set of M built from D0 (D0 + M - |D0| biased, or an M-subset of D0)
    train_arm "$ws" 01_d0 d0 --n-train "$N_TRAIN"
    if [ "$N_ZAUG" -gt 0 ]; then   # Z-Aug = D0 when no sample passes both filters: then it has no rows
        train_arm "$ws" 02_zaug_floor floor --n-train "$N_TRAIN" --n "$N_ZAUG"
        train_row "$ws" 03_zaug "data/train_sets=[exp_zf_zaug_w$ws]" world.n_train="$N_TRAIN"
        train_arm "$ws" 04_zaug_ceiling ceiling --n-train "$N_TRAIN" --n "$N_ZAUG"
    fi
    train_arm "$ws" 05_par_floor floor --n-train "$N_TRAIN" --total "$N_PAR"
    train_row "$ws" 06_par_z "data/train_sets=[exp_zf_par_z_w$ws]" world.n_train="$N_TRAIN"
    train_row "$ws" 07_par_ceiling 'data/train_sets=[synthetic]' world.n_train="$N_PAR"
    train_arm "$ws" 08_seq_floor floor --n-train "$N_TRAIN" --total "$N_SEQ"
    train_row "$ws" 09_seq_z "data/train_sets=[exp_zf_seq_z_w$ws]" world.n_train="$N_TRAIN"
    train_row "$ws" 10_seq_ceiling 'data/train_sets=[synthetic]' world.n_train="$N_SEQ"
    train_arm "$ws" 11_poe_head d0 --n-train "$N_TRAIN" -- model.poe.enabled=true
    train_arm "$ws" 12_poe_frozen d0 --n-train "$N_TRAIN" -- model.poe.enabled=true model.poe.bias_model="$W/hyp_only"
    train_row "$ws" 13_d0_ceiling 'data/train_sets=[synthetic]' world.n_train="$N_TRAIN"
    train_row "$ws" 14_poe_seq_z "data/train_sets=[exp_zf_seq_z_w$ws]" world.n_train="$N_TRAIN" model.poe.enabled=true \
        model.poe.bias_model="$W/hyp_only"
done
stamp "tables"
T=(python -m experiments.controls_table --scratch "$R" --unit "$UNIT")
NOTE="Sizes per world seed: $(for ws in $WORLD_SEEDS; do printf 'world %s: %s; ' "$ws" "$(cat "$R/world$ws/sizes")"; done)"
grep -q "zaug_added=0 " "$R"/world*/sizes || "${T[@]}" --out "$OUT/results_zaug.md" --row 01_d0="D0" --row 02_zaug_floor="floor: D0 + N biased" \
    --row 03_zaug="Z-Aug: Z(D_G given D0)" --row 04_zaug_ceiling="ceiling: D0 + N unbiased" --floor 02_zaug_floor \
    --ceiling 04_zaug_ceiling --title "Z-Aug (D0 + N z-filtered samples) on $WORLD" --note "$NOTE" > /dev/null
"${T[@]}" --out "$OUT/results_par_z.md" --row 05_par_floor="floor: M biased, from D0" --row 06_par_z="Par-Z: Z(D0) ∪ Z(D_G)" \
    --row 07_par_ceiling="ceiling: M unbiased" --row 01_d0="D0" --floor 05_par_floor --ceiling 07_par_ceiling \
    --title "Par-Z (M pairs) on $WORLD" --note "$NOTE" > /dev/null
"${T[@]}" --out "$OUT/results_seq_z.md" --row 08_seq_floor="floor: M biased, from D0" --row 09_seq_z="Seq-Z: Z(D_G given Z(D0))" \
    --row 10_seq_ceiling="ceiling: M unbiased" --row 14_poe_seq_z="PoE (frozen expert) on Seq-Z" --row 01_d0="D0" \
    --floor 08_seq_floor --ceiling 10_seq_ceiling --title "Seq-Z (M pairs) on $WORLD" --note "$NOTE" > /dev/null
"${T[@]}" --out "$OUT/results_poe.md" --row 01_d0="floor: D0 (plain training)" --row 11_poe_head="PoE, joint bias head" \
    --row 12_poe_frozen="PoE, frozen hypothesis-only expert" --row 13_d0_ceiling="ceiling: as many unbiased pairs" \
    --floor 01_d0 --ceiling 13_d0_ceiling --compare 12_poe_frozen:11_poe_head \
    --title "Product of experts on D0 ($N_TRAIN pairs) on $WORLD" --note "$NOTE" > /dev/null
python -m experiments.zfilter_training.zfilter_recipes zsummary "$R" "$OUT/results_z.md"
stamp "done: $OUT/results_*.md"
