#!/usr/bin/env bash
# Issue 22 item 5: NLI-Set (NLI-Set) with SmolLM2-135M-Instruct as two writers (temperature 0.7 and 0.3)
# and as a per-criterion rubric judge; the explain stage trains the tiny classifier on the validated
# passages (intended labels) and renders attributions. Offline, 2 CPU cores, one thread.
#   bash experiments/nli_set/run.sh     # ~10.5 min here; tables -> experiments/nli_set/results.md, prompt_variants.md
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/nli_set). LIMIT overrides pipeline.statements.limit.
# VARIANTS=0 skips the prompt-variant measurement (Q3).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
scratch nli_set
LIMIT="${LIMIT:-}"
export NLIFORGE_CONFIG_PATH="$HERE"   # experiments/nli_set/pipeline/nli_set.yaml
ARGS=(pipeline=nli_set "hydra.run.dir=$R/run" trainer.enable_progress_bar=false)
[ -n "$LIMIT" ] && ARGS+=("pipeline.statements.limit=$LIMIT")
stamp "long-text pipeline: 2 SmolLM2 writers, SmolLM2 judge (per criterion), explain"
python -m nliforge.generate "${ARGS[@]}"
if [ "${VARIANTS:-1}" = 1 ]; then
    stamp "Q3: prompt variants (ours, ours + layout line, the paper's appendix prompt)"
    python -m experiments.nli_set.prompt_variants --n 3 --cache "$R/variants_cache.sqlite" --out "$HERE/prompt_variants.md"
fi
stamp "tables"
python -m experiments.nli_set.nli_set_table --run "$R/run" --out "$HERE/results.md"
stamp "done: $HERE/results.md"
