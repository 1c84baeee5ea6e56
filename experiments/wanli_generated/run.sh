#!/usr/bin/env bash
# Experiment 6 (issue 8): generated-and-reviewed WANLI-style data vs the biased base, alone, + and ◇,
# on the synthetic world, offline: the one command of this experiment.
#   bash experiments/wanli_generated/run.sh
# Scratch outputs go to $NLIFORGE_EXP (default /tmp/nliforge_exp/wanli_generated); the tables are written
# into experiments/wanli_generated/report/. Registers data/train_sets=[exp_wanli_reviewed]
# (conf/data/train_sets/exp_wanli_reviewed.yaml, gitignored, pointing into the scratch folder).
# ONLY_DATA=1 stops after the reviewed set is registered (experiments/combined/run.sh uses this).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SCRATCH="${NLIFORGE_EXP:-/tmp/nliforge_exp/wanli_generated}"
N_TRAIN="${N_TRAIN:-8000}"          # D0 = synthetic_biased with this many pairs (the demo has 20,000; reduced for time)
EPOCHS="${EPOCHS:-5}"               # training rows: tiny model, its recipe's 5 epochs
THRESHOLD="${THRESHOLD:-0.8}"       # teacher review: keep p(argmax) >= this
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cd "$ROOT"
# FRESH=1 (default) starts from nothing; FRESH=0 keeps finished steps (teacher, generation stages) and
# redoes the rest: the review (e.g. with another THRESHOLD) and every training job.
[ "${FRESH:-1}" = 1 ] && rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"; rm -rf "$SCRATCH/sweep"
T0=$SECONDS
stamp() { echo "== [$((SECONDS - T0)) s] $*"; }

stamp "1/6 teacher (the crowdworkers' stand-in): the demo's recipe (20,000 pairs, 5 epochs) on the UNBIASED world split"
[ -f "$SCRATCH/teacher/model/config.json" ] || nliforge-train experiment=demo 'data/train_sets=[synthetic]' seed=0 \
    callbacks=none logger=none trainer.enable_progress_bar=false hydra.run.dir="$SCRATCH/teacher"

stamp "2/6 WANLI generation (offline demo models; classifier on D0 for 5 epochs; every seed above the 0.75 quantile, no cap)"
nliforge-generate pipeline=wanli experiment=demo world.n_train="$N_TRAIN" model.max_epochs=5 pipeline.seeds.max_per_label=null \
    trainer.enable_progress_bar=false generator.runner.progress=false hydra.run.dir="$SCRATCH/wanli"

stamp "3/6 review: teacher labels, then the automatic aggregate -> data/train_sets=[exp_wanli_reviewed]"
nliforge-review teacher run="$SCRATCH/wanli" teacher.model_dir="$SCRATCH/teacher/model" teacher.threshold="$THRESHOLD"
nliforge-review aggregate run="$SCRATCH/wanli" aggregate.mode=automatic aggregate.name=exp_wanli_reviewed
stamp "data done"
[ "${ONLY_DATA:-0}" = 1 ] && exit 0

COMMON=(world.n_train="$N_TRAIN" model.max_epochs="$EPOCHS" suite=synthetic seed=1,2,3 callbacks=none
        logger=none save_model=false trainer.enable_progress_bar=false)
stamp "4/6 rows: D0 alone, W alone (3 seeds each)"
nliforge-train -m 'data/train_sets=[synthetic_biased]' "${COMMON[@]}" hydra.sweep.dir="$SCRATCH/sweep/1_base"
nliforge-train -m 'data/train_sets=[exp_wanli_reviewed]' "${COMMON[@]}" hydra.sweep.dir="$SCRATCH/sweep/2_w"
stamp "5/6 rows: D0 + W and D0 ◇ W (3 seeds each)"
nliforge-train -m 'data/train_sets=[synthetic_biased,exp_wanli_reviewed]' data.combine=augment "${COMMON[@]}" \
    hydra.sweep.dir="$SCRATCH/sweep/3_plus"
nliforge-train -m 'data/train_sets=[synthetic_biased,exp_wanli_reviewed]' data.combine=replace "${COMMON[@]}" \
    hydra.sweep.dir="$SCRATCH/sweep/4_rep"

stamp "6/6 report"
ID='[synthetic_dev,synthetic_test,synthetic_test_2class]'
nliforge-report sweep="$SCRATCH/sweep" out="$HERE/report" \
    "in_domain={synthetic_biased:$ID,exp_wanli_reviewed:$ID,synthetic_biased+exp_wanli_reviewed:$ID,synthetic_biased_rep_exp_wanli_reviewed:$ID}"
python - "$SCRATCH" "$HERE" <<'PY'
import json, sys, pathlib
s, here = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
man = json.loads((s / "wanli/manifest.json").read_text())
rep = json.loads((s / "wanli/review/review_report.json").read_text())
(here / "data_counts.json").write_text(json.dumps({"generation_manifest_stages": man.get("stages", man),
                                                   "review_report": rep}, indent=1, default=str) + "\n")
PY
stamp "done: $HERE/report/report.md"
