#!/usr/bin/env bash
# Experiment 6 (issue 8): generated-and-reviewed WANLI-style data vs the biased base, alone, + and ◇,
# on the synthetic world, offline: the one command of this experiment.
#   bash experiments/wanli_generated/run.sh
# Scratch outputs go to $NLIFORGE_EXP (default /tmp/nliforge_exp/wanli_generated); the tables are written
# into experiments/wanli_generated/report/. Registers data/train_sets=[exp_wanli_reviewed]
# (conf/data/train_sets/exp_wanli_reviewed.yaml, gitignored, pointing into the scratch folder).
# ONLY_DATA=1 stops after the reviewed set is registered (experiments/combined/run.sh uses this).
#   bash experiments/wanli_generated/run.sh review=teacher   # reviewer = the WANLI run's classifier on D0;
#        scratch .../wanli_generated_review_teacher, tables -> report_review_teacher/
# review=annotator (the default; also REVIEW=...) reviews with the annotators' stand-in (step 1), trained on
# the world's unbiased split: it knows the true labels, standing in for people (common.sh).
# NB (issue 22 audit): the generator LM of step 2 (the demo's stand-in) is trained on the unbiased split too.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
review_choice "$@"
if [ "$REVIEW" = annotator ]; then SUFFIX=""; else SUFFIX="_review_$REVIEW"; fi
SCRATCH="${NLIFORGE_EXP:-/tmp/nliforge_exp/wanli_generated$SUFFIX}"
OUT="$HERE/report$SUFFIX"
N_TRAIN="${N_TRAIN:-8000}"          # D0 = synthetic_biased with this many pairs (the demo has 20,000; reduced for time)
EPOCHS="${EPOCHS:-5}"               # training rows: tiny model, its recipe's 5 epochs
THRESHOLD="${THRESHOLD:-0.8}"       # teacher review: keep p(argmax) >= this
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# FRESH=1 (default) starts from nothing; FRESH=0 keeps finished steps (teacher, generation stages) and
# redoes the rest: the review (e.g. with another THRESHOLD) and every training job.
[ "${FRESH:-1}" = 1 ] && rm -rf "$SCRATCH"
mkdir -p "$SCRATCH"; rm -rf "$SCRATCH/sweep"
T0=$SECONDS
stamp() { echo "== [$((SECONDS - T0)) s] $*"; }

# $SCRATCH/teacher is the annotators' stand-in (the folder keeps its old name: experiments/combined reuses it
# as DISCO's teacher); with review=teacher it is trained only for that (ONLY_DATA=1).
if [ "$REVIEW" = annotator ] || [ "${ONLY_DATA:-0}" = 1 ]; then
    stamp "1/6 the annotators' stand-in: the demo's recipe (20,000 pairs, 5 epochs) on the UNBIASED world split"
    [ -f "$SCRATCH/teacher/model/config.json" ] || nliforge-train experiment=demo 'data/train_sets=[synthetic]' seed=0 \
        callbacks=none logger=none trainer.enable_progress_bar=false hydra.run.dir="$SCRATCH/teacher"
fi

stamp "2/6 WANLI generation (offline demo models; classifier on D0 for 5 epochs; every seed above the 0.75 quantile, no cap)"
nliforge-generate pipeline=wanli experiment=demo world.n_train="$N_TRAIN" model.max_epochs=5 pipeline.seeds.max_per_label=null \
    trainer.enable_progress_bar=false generator.runner.progress=false hydra.run.dir="$SCRATCH/wanli"

REVIEWER=$(reviewer_dir "$SCRATCH/wanli" "$SCRATCH/teacher")
stamp "3/6 review=$REVIEW ($REVIEWER), then the automatic aggregate -> data/train_sets=[exp_wanli_reviewed]"
nliforge-review teacher run="$SCRATCH/wanli" teacher.model_dir="$REVIEWER" teacher.threshold="$THRESHOLD"
nliforge-review aggregate run="$SCRATCH/wanli" aggregate.mode=automatic aggregate.name=exp_wanli_reviewed \
    aggregate.reviewer="$(reviewer_id "$REVIEWER")"
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
nliforge-report sweep="$SCRATCH/sweep" out="$OUT" \
    "in_domain={synthetic_biased:$ID,exp_wanli_reviewed:$ID,synthetic_biased+exp_wanli_reviewed:$ID,synthetic_biased_rep_exp_wanli_reviewed:$ID}"
python - "$SCRATCH" "$HERE/data_counts$SUFFIX.json" <<'PY'
import json, sys, pathlib
s, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
man = json.loads((s / "wanli/manifest.json").read_text())
rep = json.loads((s / "wanli/review/review_report.json").read_text())
out.write_text(json.dumps({"generation_manifest_stages": man.get("stages", man),
                                                   "review_report": rep}, indent=1, default=str) + "\n")
PY
stamp "done: $OUT/report.md"
