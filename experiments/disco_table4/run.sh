#!/usr/bin/env bash
# DISCO Table 4 (seed 003 §5.1) on the synthetic world, offline: the gain of DISCO augmentation over
# the un-augmented base, for two base sets, on a robustness average and an OOD average.
#   bash experiments/disco_table4/run.sh
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/disco_table4). Registers the training sets
# disco_t4b_{counterfactuals,augmented,train} and disco_t4u_{...} (conf/data/train_sets/disco_*.yaml,
# gitignored). Writes experiments/disco_table4/{report/,results.md,results.csv,disco_report_*.md}.
# SMOKE=1: a tiny end-to-end check of every command (300 pairs, short training; tables go to the
# scratch folder, nothing in the experiment folder is touched).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"          # cd to the root, offline flags, QUIET_TRAIN, fresh_scratch
fresh_scratch disco_table4
S="$R"
T0=$SECONDS
stamp() { echo "== [$((SECONDS - T0)) s] $*"; }

N_TRAIN=6000                         # each base set: 6,000 pairs (as disco_table3)
GEN_SIZE=(pipeline.disco_source.max_per_label=null)
TRAIN_SIZE=()
SEEDS=1,2,3
OUT="$HERE"
if [ "${SMOKE:-0}" = 1 ]; then
    N_TRAIN=300
    GEN_SIZE=(pipeline.disco_source.max_per_label=10 model.max_epochs=2 pipeline.disco_teacher.max_epochs=1
              pipeline.generator_lm.train.steps=20 pipeline.generator_lm.n_documents=200)
    TRAIN_SIZE=(model.max_epochs=1)
    SEEDS=1
    OUT="$S/smoke_out"; mkdir -p "$OUT"
fi
QUIET_GEN=(trainer.enable_progress_bar=false generator.runner.progress=false)
# every stage of the DISCO demo except training the fill-in LM (reused from the first run)
STAGES='pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,augment,disco_report]'

stamp "1/5 base 1 (SNLI-subset stand-in): counterfactuals of every synthetic_biased pair; trains the classifier,"
echo "   the teacher (unbiased world train split) and the fill-in LM; registers disco_t4b_{counterfactuals,augmented,train}"
nliforge-generate pipeline=disco experiment=demo world.n_train="$N_TRAIN" "${QUIET_GEN[@]}" \
    'data/train_sets=[synthetic_biased]' pipeline.disco_source.select=all "${GEN_SIZE[@]}" \
    pipeline.augment.name=disco_t4b hydra.run.dir="$S/disco_b"

stamp "2/5 base 2 (WANLI stand-in): counterfactuals of every pair of the unbiased synthetic train split,"
echo "   same teacher and fill-in LM; registers disco_t4u_{counterfactuals,augmented,train}"
nliforge-generate pipeline=disco experiment=demo world.n_train="$N_TRAIN" "${QUIET_GEN[@]}" \
    'data/train_sets=[synthetic]' "pipeline.disco_teacher.run_dirs=[$S/disco_b/teacher]" \
    generator.model="$S/disco_b/generator_lm" "$STAGES" \
    pipeline.disco_source.select=all "${GEN_SIZE[@]}" \
    pipeline.augment.name=disco_t4u hydra.run.dir="$S/disco_u"

stamp "3/5 training: each base and its augmented set (D^b ∪ D^s ∪ D^c), 3 seeds each (12 jobs)"
# robustness sets: the three challenge splits; OOD stand-ins: the four stress sets and LI-TS derived
# from the test split (suite synthetic_stress, which also holds the plain test split)
nliforge-train -m 'data/train_sets=[synthetic_biased],[disco_t4b_train],[synthetic],[disco_t4u_train]' \
    world.n_train="$N_TRAIN" suite=synthetic_stress \
    '+data/eval_sets@suite.sets.synthetic_challenge_negation=synthetic_challenge_negation' \
    '+data/eval_sets@suite.sets.synthetic_challenge_overlap=synthetic_challenge_overlap' \
    '+data/eval_sets@suite.sets.synthetic_challenge_length=synthetic_challenge_length' \
    seed="$SEEDS" callbacks=none "${QUIET_TRAIN[@]}" "${TRAIN_SIZE[@]}" hydra.sweep.dir="$S/sweep"

stamp "4/5 report (mean ± std per training set and eval set)"
nliforge-report sweep="$S/sweep" out="$OUT/report" \
    'sets=[synthetic_test,synthetic_challenge_negation,synthetic_challenge_overlap,synthetic_challenge_length,synthetic_stress_word_overlap,synthetic_stress_negation,synthetic_stress_length_mismatch,synthetic_stress_spelling,synthetic_st,synthetic_li_ts]'

stamp "5/5 Table 4: per-seed gains (augmented minus base) on the robustness and OOD averages"
python3 "$HERE/table4.py" "$S" "$OUT"
cp "$S/disco_b/disco_report.md" "$OUT/disco_report_base1_biased.md"
cp "$S/disco_u/disco_report.md" "$OUT/disco_report_base2_unbiased.md"
stamp "done: $OUT/results.md"
