#!/usr/bin/env bash
# Real text (R2, R3; criteria in README.md): MiniLM on real MNLI dev-matched / SNLI (Kaushik et al.) pairs.
#   NLIFORGE_DATA_DIR=/path/to/real bash experiments/real_text/run.sh   # -> results.md, results.csv, data_map_mccoy.png
# Arms (3 training seeds each, sequential): r2b and r2a (hypothesis-only on snli_cad_original /
# mnli_dev_train_part), r3 (full input, mnli_dev_train_part, training dynamics), r2d (hypothesis-only and full input on the
# z-filtered training part and on a same-size random subset of it, limit_seed = the training seed).
# ARMS (default all, in this order) picks arms; SEEDS (1 2 3); THREADS (default: 1 when the load average is
# above the core count, else 2, as the README's settings). About 20 min per full-input seed on 2 loaded cores.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_text); FRESH=0 keeps finished runs (their metrics.csv).
# Registers the z-filtered set as data/train_sets=exp_real_text_zf (in the user data home, $NLIFORGE_HOME/conf).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
source "$HERE/lib.sh"
scratch real_text
SEEDS="${SEEDS:-1 2 3}"
ARMS="${ARMS:-r2b r3 r2a r2d_hyp r2d_full}"   # the cheap arm (1,666 short hypotheses) first
if [ -z "${THREADS:-}" ]; then
    load=$(cut -d' ' -f1 /proc/loadavg)
    THREADS=$(awk -v l="$load" -v n="$(nproc)" 'BEGIN { print (l > n) ? 1 : 2 }')
fi
stamp "threads: $THREADS (load $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores)"
# with conf/experiment/real_text_datamap.yaml (or real_text_hyponly.yaml, which extends it): the CSV logger, no
# saved model, no progress bar
COMMON=(num_threads="$THREADS")

zfilter() {   # R2d: unconditional Z(input), the pipeline's defaults (k 20, batch 1,000)
    local registered
    registered=$(python -c 'from nliforge.data.registry import find_set_yaml; print(find_set_yaml("exp_real_text_zf", "train_sets") or "")')
    [ -f "$R/zfilter/dataset.jsonl" ] && [ -n "$registered" ] && return
    stamp "z-filtering mnli_dev_train_part"
    rm -rf "$R/zfilter"
    logged "$R/zfilter.log" nliforge-generate pipeline=zfilter input=mnli_dev_train_part \
        register.name=exp_real_text_zf hydra.run.dir="$R/zfilter"
}

for arm in $ARMS; do
    for s in $SEEDS; do
        case "$arm" in
            r3) run r3 "$s" experiment=real_text_datamap ;;
            r2a) run r2a "$s" experiment=real_text_hyponly ;;
            r2b) run r2b "$s" experiment=real_text_hyponly 'data/train_sets=[snli_cad_original]' ;;
            r2d_hyp | r2d_full)
                zfilter
                N=$(count_lines "$R/zfilter/dataset.jsonl")
                if [ "$arm" = r2d_hyp ]; then EXP=experiment=real_text_hyponly; else EXP=experiment=real_text_datamap; fi
                run "${arm}_zf" "$s" "$EXP" 'data/train_sets=[exp_real_text_zf]'
                run "${arm}_random" "$s" "$EXP" +data.train_sets.mnli_dev_train_part.limit="$N" \
                    +data.train_sets.mnli_dev_train_part.limit_seed="$s" ;;
            *) echo "$0: unknown arm '$arm' in ARMS; expected r3 r2a r2b r2d_hyp r2d_full" >&2; exit 2 ;;
        esac
    done
done

stamp "analysis"
python -m experiments.real_text.analysis "$R" "$HERE"
stamp "done: $HERE/results.md"
