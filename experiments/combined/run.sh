#!/usr/bin/env bash
# Experiment 9 (issue 8): WANLI-style generation -> DISCO counterfactuals -> conditional z-filtering,
# composed through the one data model, against each part alone. Offline, on the synthetic world:
#   bash experiments/combined/run.sh
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/combined). Reuses experiment 6's scratch
# ($E6_SCRATCH, default /tmp/nliforge_exp/wanli_generated) when it holds the reviewed WANLI set W, and
# its D0 and D0 + W training jobs when they are there; otherwise builds W first (bash
# experiments/wanli_generated/run.sh with ONLY_DATA=1) and trains those rows here.
# Registers exp_comb_* training sets (conf/data/train_sets/exp_comb_*.yaml, gitignored).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SCRATCH="${NLIFORGE_EXP:-/tmp/nliforge_exp/combined}"
E6="${E6_SCRATCH:-/tmp/nliforge_exp/wanli_generated}"
N_TRAIN="${N_TRAIN:-8000}"          # D0 = synthetic_biased with this many pairs (as experiment 6)
EPOCHS="${EPOCHS:-5}"               # as experiment 6
DISCO_CAP="${DISCO_CAP:-600}"       # DISCO sources per label (of D0 and of W)
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cd "$ROOT"
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
T0=$SECONDS
stamp() { echo "== [$((SECONDS - T0)) s] $*"; }

if [ -f "$E6/wanli/review/reviewed.jsonl" ] && [ -f conf/data/train_sets/exp_wanli_reviewed.yaml ] \
   && [ -f "$E6/teacher/model/config.json" ]; then
    stamp "1/7 W: reusing experiment 6's reviewed WANLI set in $E6"
else
    stamp "1/7 W: building experiment 6's data (teacher, WANLI generation, review)"
    ONLY_DATA=1 NLIFORGE_EXP="$E6" N_TRAIN="$N_TRAIN" bash experiments/wanli_generated/run.sh
fi
W="$E6/wanli/review/reviewed.jsonl"

QUIET=(trainer.enable_progress_bar=false generator.runner.progress=false)
stamp "2/7 DISCO(D0): counterfactuals of the base (teacher = experiment 6's reviewer; registers exp_comb_disco_d0_*)"
nliforge-generate pipeline=disco experiment=demo world.n_train="$N_TRAIN" "${QUIET[@]}" \
    pipeline.classifier.run_dir="$E6/wanli/classifier" "pipeline.disco_teacher.run_dirs=[$E6/teacher]" \
    pipeline.disco_source.select=all pipeline.disco_source.max_per_label="$DISCO_CAP" \
    pipeline.augment.name=exp_comb_disco_d0 hydra.run.dir="$SCRATCH/disco_d0"

stamp "3/7 DISCO(W): counterfactuals of the reviewed WANLI set (same LM and teacher; registers exp_comb_disco_w_*)"
nliforge-generate pipeline=disco experiment=demo world.n_train="$N_TRAIN" "${QUIET[@]}" \
    'data/train_sets=[exp_wanli_reviewed]' "pipeline.disco_teacher.run_dirs=[$E6/teacher]" \
    generator.model="$SCRATCH/disco_d0/generator_lm" \
    'pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,augment,disco_report]' \
    pipeline.disco_source.select=all pipeline.disco_source.max_per_label="$DISCO_CAP" \
    pipeline.augment.name=exp_comb_disco_w hydra.run.dir="$SCRATCH/disco_w"

stamp "4/7 z-filtering given D0: Z(W | D0) and Z(W ∪ DISCO(W) ∪ DISCO(D0) | D0) (+ the unfiltered union)"
python experiments/combined/zfilter_step.py --name exp_comb_zw --out "$SCRATCH/z" --world-n-train "$N_TRAIN" "$W"
python experiments/combined/zfilter_step.py --name exp_comb_zall --union-name exp_comb_union --out "$SCRATCH/z" \
    --world-n-train "$N_TRAIN" "$W" "$SCRATCH/disco_w/augment/counterfactuals.jsonl" \
    "$SCRATCH/disco_d0/augment/counterfactuals.jsonl"

COMMON=(world.n_train="$N_TRAIN" model.max_epochs="$EPOCHS" suite=synthetic seed=1,2,3 callbacks=none
        logger=none save_model=false trainer.enable_progress_bar=false data.combine=augment)
stamp "5/7 rows D0 and D0 + W (experiment 6's jobs when present: same configs)"
mkdir -p "$SCRATCH/sweep"
for pair in "1_base:[synthetic_biased]" "3_plus:[synthetic_biased,exp_wanli_reviewed]"; do
    sub="${pair%%:*}" sets="${pair#*:}"
    if [ "$(ls "$E6"/sweep/"$sub"/*/metrics.csv 2>/dev/null | wc -l)" = 3 ]; then
        cp -r "$E6/sweep/$sub" "$SCRATCH/sweep/$sub"; echo "reused $E6/sweep/$sub"
    else
        nliforge-train -m "data/train_sets=$sets" "${COMMON[@]}" hydra.sweep.dir="$SCRATCH/sweep/$sub"
    fi
done
stamp "6/7 rows D0 + DISCO(D0), D0 + Z(W|D0), D0 + Z(all|D0) (3 seeds each; UNION_ROW=1 adds D0 + the unfiltered union)"
ROWS='[synthetic_biased,exp_comb_disco_d0_counterfactuals],[synthetic_biased,exp_comb_zw],[synthetic_biased,exp_comb_zall]'
[ "${UNION_ROW:-0}" = 1 ] && ROWS="$ROWS,[synthetic_biased,exp_comb_union]"
nliforge-train -m "data/train_sets=$ROWS" "${COMMON[@]}" hydra.sweep.dir="$SCRATCH/sweep/5_new"

stamp "7/7 report"
ID='[synthetic_dev,synthetic_test,synthetic_test_2class]'
IN_DOMAIN="synthetic_biased:$ID,synthetic_biased+exp_wanli_reviewed:$ID,synthetic_biased+exp_comb_disco_d0_counterfactuals:$ID,synthetic_biased+exp_comb_zw:$ID,synthetic_biased+exp_comb_zall:$ID"
[ "${UNION_ROW:-0}" = 1 ] && IN_DOMAIN="$IN_DOMAIN,synthetic_biased+exp_comb_union:$ID"
nliforge-report sweep="$SCRATCH/sweep" out="$HERE/report" \
    "in_domain={$IN_DOMAIN}"
python - "$SCRATCH" "$HERE" "$W" <<'PY'
import json, sys, pathlib
s, here, w = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
n = lambda p: sum(1 for line in open(p) if line.strip())
sizes = {"W (exp_wanli_reviewed)": n(w),
         "DISCO(D0) counterfactuals": n(s / "disco_d0/augment/counterfactuals.jsonl"),
         "DISCO(W) counterfactuals": n(s / "disco_w/augment/counterfactuals.jsonl"),
         "Z(W | D0)": n(s / "z/exp_comb_zw.jsonl"),
         "W ∪ DISCO(W) ∪ DISCO(D0), unfiltered": n(s / "z/exp_comb_union.jsonl"),
         "Z(W ∪ DISCO(W) ∪ DISCO(D0) | D0)": n(s / "z/exp_comb_zall.jsonl")}
z = {k: json.loads((s / f"z/{k}.summary.json").read_text()) for k in ("exp_comb_zw", "exp_comb_zall")}
(here / "sizes.json").write_text(json.dumps({"added_set_sizes": sizes, "zfilter": z}, indent=1) + "\n")
for f in ("disco_d0", "disco_w"):
    src = s / f / "disco_report.md"
    if src.is_file():
        (here / f"disco_report_{f}.md").write_text(src.read_text())
print(json.dumps(sizes, indent=1))
PY
stamp "done: $HERE/report/report.md"
