#!/usr/bin/env bash
# R5 (criteria in README.md): R2a, R2b, R2c, R3a and R3b again with disjoint parts of the real data as the unit.
#   NLIFORGE_DATA_DIR=/path/to/real bash experiments/real_text/run_parts.sh   # -> results_parts.md, results_parts.csv
# Steps: the parts (parts.py: 5 MNLI and 5 SNLI parts, registered in the user data home); per part and training
# seed: r3 (full input, training dynamics, MNLI part), r2a (hypothesis-only, MNLI part), r2b (hypothesis-only,
# SNLI part); then analysis_parts.py. PARTS (1 2 3 4 5), SEEDS (1 2), ARMS (r2b r2a r3), THREADS (1).
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_text_parts); FRESH=0 keeps finished runs.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
source "$HERE/lib.sh"
scratch real_text_parts
PARTS="${PARTS:-1 2 3 4 5}"
SEEDS="${SEEDS:-1 2}"
ARMS="${ARMS:-r2b r2a r3}"
COMMON=(num_threads="${THREADS:-1}")

stamp "the parts"
python -m experiments.real_text.parts "$R"
for arm in $ARMS; do
    for p in $PARTS; do
        for s in $SEEDS; do
            case "$arm" in
                r3) run "r3_p$p" "$s" experiment=real_text_datamap "data/train_sets=[exp_real_text_mnli_p${p}_train]" \
                        suite="exp_real_text_mnli_p$p" ;;
                r2a) run "r2a_p$p" "$s" experiment=real_text_hyponly "data/train_sets=[exp_real_text_mnli_p${p}_train]" \
                         suite="exp_real_text_mnli_p$p" ;;
                r2b) run "r2b_p$p" "$s" experiment=real_text_hyponly "data/train_sets=[exp_real_text_snli_p${p}_train]" \
                         suite="exp_real_text_snli_p$p" ;;
                *) echo "$0: unknown arm '$arm' in ARMS; expected r2b r2a r3" >&2; exit 2 ;;
            esac
        done
    done
done
stamp "analysis"
python -m experiments.real_text.analysis_parts "$R" "$HERE"
stamp "done: $HERE/results_parts.md"
