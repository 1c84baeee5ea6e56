#!/usr/bin/env bash
# DISCO Tables 3 and 5 on the synthetic world, offline: the one command of this experiment.
#   bash experiments/disco_table3/run.sh
# Scratch outputs go to $NLIFORGE_EXP (default /tmp/nliforge_exp/disco_table3); the tables are
# written into experiments/disco_table3/report*. About 15 minutes on 2 idle CPU cores.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SCRATCH="${NLIFORGE_EXP:-/tmp/nliforge_exp/disco_table3}"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cd "$ROOT"
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
QUIET=(trainer.enable_progress_bar=false generator.runner.progress=false)

echo "== 1/4 counterfactuals of every D^b pair (registers disco_synth_{counterfactuals,augmented,train})"
nliforge-generate pipeline=disco experiment=demo pipeline.disco_source.select=all \
    pipeline.disco_source.max_per_label=null pipeline.augment.name=disco_synth "${QUIET[@]}" \
    hydra.run.dir="$SCRATCH/disco_all"

echo "== 2/4 the held-out paired test set, from the world's test split, with the same models"
nliforge-generate pipeline=disco experiment=demo hydra.run.dir="$SCRATCH/disco_test_cf" "${QUIET[@]}" \
    pipeline.classifier.run_dir="$SCRATCH/disco_all/classifier" \
    "pipeline.disco_teacher.run_dirs=[$SCRATCH/disco_all/teacher]" \
    generator.model="$SCRATCH/disco_all/generator_lm" pipeline.disco_source.select=all \
    pipeline.disco_source.max_per_label=null pipeline.disco_source.set=synthetic_test \
    'pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,disco_report]'

echo "== 3/4 Table 3 / Table 5 rows: 3 training sets x 3 seeds"
nliforge-train -m 'data/train_sets=[synthetic_biased],[disco_synth_train],[disco_synth_counterfactuals]' \
    world.n_train=6000 suite=synthetic '+data/eval_sets@suite.sets.synthetic_test_cf=counterfactual_pairs' \
    suite.sets.synthetic_test_cf.name=synthetic_test_cf \
    suite.sets.synthetic_test_cf.base.path="$SCRATCH/disco_test_cf/dataset.jsonl" \
    seed=1,2,3 logger=none save_model=false trainer.enable_progress_bar=false hydra.sweep.dir="$SCRATCH/sweep"

echo "== 4/4 reports"
nliforge-report sweep="$SCRATCH/sweep" out="$HERE/report"
nliforge-report sweep="$SCRATCH/sweep" metric=delta_s 'sets=[synthetic_test_cf]' out="$HERE/report_delta_s"
nliforge-report sweep="$SCRATCH/sweep" metric=acc_cf 'sets=[synthetic_test_cf]' out="$HERE/report_acc_cf"
cp "$SCRATCH/disco_all/disco_report.md" "$HERE/disco_report_all.md"
echo "done: $HERE/report/report.md"
