#!/usr/bin/env bash
# Experiment 9 (issue 8): WANLI-style generation -> DISCO counterfactuals -> conditional z-filtering,
# composed through the one data model, against each part alone. Offline, on the synthetic world:
#   bash experiments/combined/run.sh
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/combined). Reuses experiment 6's scratch
# ($E6_SCRATCH, default /tmp/nliforge_exp/wanli_generated) when it holds the reviewed WANLI set W, and
# its D0 and D0 + W training jobs when they are there; otherwise builds W first (bash
# experiments/wanli_generated/run.sh with ONLY_DATA=1) and trains those rows here.
# Registers exp_comb_* training sets (conf/data/train_sets/exp_comb_*.yaml, gitignored). Each step is one
# nliforge-generate command over the data model: DISCO takes W by input=, the z-filter runs take W and the
# DISCO run folders by input= (pipeline=zfilter), with D0 as the seed set.
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

stamp "3/7 DISCO(W): counterfactuals of the reviewed WANLI set (input=W; same LM and teacher; registers exp_comb_disco_w_*)"
nliforge-generate pipeline=disco experiment=demo world.n_train="$N_TRAIN" "${QUIET[@]}" input="$W" \
    pipeline.classifier.run_dir="$E6/wanli/classifier" "pipeline.disco_teacher.run_dirs=[$E6/teacher]" \
    stand_in.generator.model="$SCRATCH/disco_d0/generator_lm" \
    'pipeline.stages=[classifier,disco_teacher,disco_source,spans,disco_prompts,disco_generate,splice,disco_heuristics,teacher_filter,augment,disco_report]' \
    pipeline.disco_source.select=all pipeline.disco_source.max_per_label="$DISCO_CAP" \
    pipeline.augment.name=exp_comb_disco_w hydra.run.dir="$SCRATCH/disco_w"

stamp "4/7 z-filtering given D0: Z(W | D0) and Z(W ∪ DISCO(W) ∪ DISCO(D0) | D0) (input= the file and the two run folders)"
ZF=(pipeline=zfilter world.n_train="$N_TRAIN" pipeline.zfilter_seed.set=synthetic_biased pipeline.zfilter.k=20
    pipeline.zfilter.batch_size=500)
nliforge-generate "${ZF[@]}" input="$W" register.name=exp_comb_zw hydra.run.dir="$SCRATCH/z_w"
nliforge-generate "${ZF[@]}" "input=[$W,$SCRATCH/disco_w,$SCRATCH/disco_d0]" register.name=exp_comb_zall \
    hydra.run.dir="$SCRATCH/z_all"

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
UNION='synthetic_biased,exp_wanli_reviewed,exp_comb_disco_w_counterfactuals,exp_comb_disco_d0_counterfactuals'
ROWS='[synthetic_biased,exp_comb_disco_d0_counterfactuals],[synthetic_biased,exp_comb_zw],[synthetic_biased,exp_comb_zall]'
[ "${UNION_ROW:-0}" = 1 ] && ROWS="$ROWS,[$UNION]"
nliforge-train -m "data/train_sets=$ROWS" "${COMMON[@]}" hydra.sweep.dir="$SCRATCH/sweep/5_new"

stamp "7/7 report"
ID='[synthetic_dev,synthetic_test,synthetic_test_2class]'
IN_DOMAIN="synthetic_biased:$ID,synthetic_biased+exp_wanli_reviewed:$ID,synthetic_biased+exp_comb_disco_d0_counterfactuals:$ID,synthetic_biased+exp_comb_zw:$ID,synthetic_biased+exp_comb_zall:$ID"
[ "${UNION_ROW:-0}" = 1 ] && IN_DOMAIN="$IN_DOMAIN,${UNION//,/+}:$ID"
nliforge-report sweep="$SCRATCH/sweep" out="$HERE/report" \
    "in_domain={$IN_DOMAIN}"
python - "$SCRATCH" "$HERE" "$W" <<'PY'
import json, sys, pathlib
s, here, w = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
n = lambda p: sum(1 for line in open(p) if line.strip())
m = {k: json.loads((s / k / "manifest.json").read_text()) for k in ("z_w", "z_all")}
sizes = {"W (exp_wanli_reviewed)": n(w),
         "DISCO(D0) counterfactuals": n(s / "disco_d0/augment/counterfactuals.jsonl"),
         "DISCO(W) counterfactuals": n(s / "disco_w/augment/counterfactuals.jsonl"),
         "Z(W | D0)": m["z_w"]["final"]["count"],
         "W ∪ DISCO(W) ∪ DISCO(D0), unfiltered": m["z_all"]["stages"]["input"]["count_out"],
         "Z(W ∪ DISCO(W) ∪ DISCO(D0) | D0)": m["z_all"]["final"]["count"]}
z = {k: {key: v for key, v in m[k]["stages"]["zfilter"]["extra"].items() if key != "report"} for k in m}
(here / "sizes.json").write_text(json.dumps({"added_set_sizes": sizes, "zfilter": z}, indent=1) + "\n")
for f in ("disco_d0", "disco_w"):
    src = s / f / "disco_report.md"
    if src.is_file():
        (here / f"disco_report_{f}.md").write_text(src.read_text())
print(json.dumps(sizes, indent=1))
PY
stamp "done: $HERE/report/report.md"
