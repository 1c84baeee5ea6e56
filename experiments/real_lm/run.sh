#!/usr/bin/env bash
# Issue 22: every real-LM run of the summary table on the calibrated preset, 2 world seeds, then the pooled
# tables. Each step is one of the two scripts with the settings its README states before its run:
#   item 6 with 300 prompts (WANLI, W 6-8% of D0); item 5 (Z-Aug generators); item 6 with every seed (W near
#   the paper's 27% of D0), reviewed by the annotators' stand-in and then by the D0 classifier (review=teacher,
#   in the same scratch, so the same SmolLM2 generations).
#   bash experiments/real_lm/run.sh     # offline, CPU; 2-3 h (the steps took 9-33 min each here, several at once)
# Scratch: $EXP_ROOT (default /tmp/nliforge_exp)/real_lm_*. The strong-world tables (wanli_table.md,
# zaug_table.md: the stress case) come from the two scripts with their defaults and are not rerun here.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXP_ROOT="${EXP_ROOT:-/tmp/nliforge_exp}"
export RL_WORLD=snli_calibrated
for w in 0 1; do
    echo "== world $w: item 6, 300 prompts"
    RL_WORLD_SEED=$w NLIFORGE_EXP="$EXP_ROOT/real_lm_wanli_${RL_WORLD}_w$w" bash "$HERE/wanli_run.sh"
    echo "== world $w: item 5"
    RL_WORLD_SEED=$w NLIFORGE_EXP="$EXP_ROOT/real_lm_zaug_${RL_WORLD}_w$w" bash "$HERE/zaug_run.sh"
    all="$EXP_ROOT/real_lm_wanli_${RL_WORLD}_w${w}_seeds_all"
    echo "== world $w: item 6, every seed, review=annotator"
    PER_LABEL=null RL_WORLD_SEED=$w NLIFORGE_EXP="$all" bash "$HERE/wanli_run.sh"
    echo "== world $w: item 6, every seed, review=teacher (the same generations)"
    PER_LABEL=null REVIEW=teacher FRESH=0 RL_WORLD_SEED=$w NLIFORGE_EXP="$all" bash "$HERE/wanli_run.sh"
done
cd "$HERE/../.."   # the checkout root: the pooled tables run as a module of the experiments package
python -m experiments.real_lm.pooled
python -m experiments.real_lm.pooled --tag _seeds_all --items wanli
python -m experiments.real_lm.pooled --tag _seeds_all --items wanli --review teacher
