#!/usr/bin/env bash
# Z-Aug Tables 2-4 stand-in (cross-entropy vs product of experts, base vs + unbiased pairs) on the
# synthetic world, offline: the one command of this experiment.
#   bash experiments/zaug_tables/run.sh
# 12 jobs (7 min 14 s measured on 2 idle CPU cores, 2026-11-24 re-run; formerly said ~25 min); scratch in $NLIFORGE_EXP (default /tmp/nliforge_exp/zaug_tables);
# report.{md,csv,png} are written into this folder. LR=2e-3 (the default here) reproduces the committed
# table, measured with the tiny model's former default; LR=1e-3 runs today's default.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
fresh_scratch zaug_tables
W=(world.n_train=6000 suite=synthetic seed=1,2,3 "model.optimizer.lr=${LR:-2e-3}" "${QUIET_TRAIN[@]}")
P=(data.train_sets.synthetic_biased.name=synthetic_biased_poe model.poe.enabled=true)
nliforge-train -m 'data/train_sets=[synthetic_biased]' "${W[@]}" hydra.sweep.dir="$R/ce_base"
nliforge-train -m 'data/train_sets=[synthetic_biased,synthetic]' data.train_sets.synthetic.limit=1500 \
    data.combine=augment "${W[@]}" hydra.sweep.dir="$R/ce_zaug"
nliforge-train -m 'data/train_sets=[synthetic_biased]' "${P[@]}" "${W[@]}" hydra.sweep.dir="$R/poe_base"
nliforge-train -m 'data/train_sets=[synthetic_biased,synthetic]' data.train_sets.synthetic.limit=1500 \
    "${P[@]}" "${W[@]}" hydra.sweep.dir="$R/poe_zaug"
nliforge-report sweep="$R" out="$HERE"
echo "done: $HERE/report.md"
