#!/usr/bin/env bash
# R4 (criteria in README.md): the WANLI pipeline on real MNLI text with SmolLM2, reviewed by its own classifier.
#   NLIFORGE_DATA_DIR=/path/to/real bash experiments/real_text/run_r4.sh   # -> results_r1r4.md (with R1)
# Steps: D0 and the floor's pool (r4_sets.py, registered in the user data home); the WANLI run (its classifier
# on D0, SmolLM2 generation); the review (that classifier labels every pair, threshold 0) registered as
# exp_real_text_r4_w; then the arms floor and plus (3 training seeds each, one thread per run; ARMS=... d0 adds
# D0 alone). About 50 min on 2 cores beside R1.
# DRAW=k (R5: the draws of R4a; default 1 = R4 itself): D0's permutation seed and the WANLI run's seed are
# k − 1, the sets are registered as exp_real_text_r4_draw<k>_*, the scratch is real_text_r4_draw<k>, and SEEDS
# defaults to 1 (R4: 1 2 3); analysis_draws.py reads every draw.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_text_r4); FRESH=0 keeps finished steps.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
source "$HERE/lib.sh"
DRAW="${DRAW:-1}"
if [ "$DRAW" = 1 ]; then scratch real_text_r4; P=exp_real_text_r4; SEEDS="${SEEDS:-1 2 3}"
else scratch "real_text_r4_draw$DRAW"; P="exp_real_text_r4_draw$DRAW"; SEEDS="${SEEDS:-1}"; fi
ARMS="${ARMS:-floor plus}"
COMMON=(experiment=real_text_wanli logger=csv save_model=false trainer.enable_progress_bar=false)

stamp "D0 and the pool (draw $DRAW)"
python -m experiments.real_text.r4_sets "$R" "$DRAW"
if [ ! -f "$R/wanli/dataset.jsonl" ]; then
    stamp "WANLI with SmolLM2 (the classifier: MiniLM on D0)"
    logged "$R/wanli.log" nliforge-generate pipeline=wanli experiment=real_text_wanli suite=none generator=smollm2 \
        "data/train_sets=[${P}_d0]" seed=$((DRAW - 1)) trainer.enable_progress_bar=false generator.runner.progress=false \
        hydra.run.dir="$R/wanli"
fi
if [ ! -f "$R/wanli/review/reviewed.jsonl" ]; then
    stamp "review: the WANLI run's classifier labels every pair (threshold 0)"
    logged "$R/review.log" nliforge-review teacher run="$R/wanli" teacher.model_dir="$R/wanli/classifier/model" \
        teacher.threshold=0
    logged "$R/aggregate.log" nliforge-review aggregate run="$R/wanli" aggregate.mode=automatic \
        aggregate.name="${P}_w"
fi
N=$(count_lines "$R/wanli/review/reviewed.jsonl")
stamp "N = |W| = $N"
for arm in $ARMS; do
    for s in $SEEDS; do
        case "$arm" in
            d0) run d0 "$s" "data/train_sets=[${P}_d0]" ;;
            floor) run floor "$s" "data/train_sets=[${P}_d0,${P}_pool]" \
                       ++data.train_sets.${P}_pool.limit="$N" data.save_train_set=true ;;
            plus) run plus "$s" "data/train_sets=[${P}_d0,${P}_w]" ;;
            *) echo "$0: unknown arm '$arm' in ARMS; expected floor plus d0" >&2; exit 2 ;;
        esac
    done
done
if [ "$DRAW" = 1 ]; then
    stamp "analysis (R1 too, where its runs are there)"
    python -m experiments.real_text.analysis_r1r4 "${R%/*}/real_text_r1" "$R"
    stamp "done: $HERE/results_r1r4.md"
else
    stamp "analysis of the draws there are"
    python -m experiments.real_text.analysis_draws "${R%/*}" "$HERE"
fi
