#!/usr/bin/env bash
# WANLI Table 3 on the real sets: RoBERTa-large on MultiNLI, WANLI, their combinations, and a
# same-size floor (MultiNLI cut to |WANLI| = 102,885, a seeded random subset), 3 seeds each. Needs the
# training sets in the local HF cache (checked first: a missing one stops the script before any job
# starts, naming it and the command that downloads it) and GPUs; never run on this project's machines.
#   PARTITION=<gpu partition> bash experiments/wanli_table3/run.sh   # SLURM (30 + 3 jobs), -> $R/report
#   bash experiments/wanli_table3/run.sh                             # one local GPU machine, jobs in turn
# R (default multirun_outputs/wanli_table3) is where the sweeps and the report go.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
R="${R:-multirun_outputs/wanli_table3}"
N_WANLI=102885   # WANLI train (alisawuffles/WANLI), the floor's size

python -m experiments.real_data_preflight mnli wanli anli_r1 anli_r2 anli_r3 fever_nli || exit 2

# conf/experiment/wanli_table3.yaml: RoBERTa-large on a GPU, suite wanli_table3
S=(experiment=wanli_table3 seed=1,2,3)
if [ -n "${PARTITION:-}" ]; then S+=(hydra/launcher=slurm_gpu hydra.launcher.partition="$PARTITION"); fi
ANLI='anli_r1,anli_r2,anli_r3'
# floor: MultiNLI of WANLI's size (the paper compares WANLI with all 393k of MultiNLI, 3.8x its size)
nliforge-train -m 'data/train_sets=[mnli]' data.train_sets.mnli.limit=$N_WANLI +data.train_sets.mnli.limit_seed=0 \
    data.train_sets.mnli.name=mnli_n$N_WANLI "${S[@]}" hydra.sweep.dir="$R/0_floor"
# top: MultiNLI and WANLI alone
nliforge-train -m 'data/train_sets=[mnli],[wanli]' "${S[@]}" hydra.sweep.dir="$R/1_single"
# middle: MultiNLI + / ◇ WANLI, ANLI (R1+R2+R3), FEVER-NLI (Tailor has no train-set config); ◇ keeps |MultiNLI|
nliforge-train -m "data/train_sets=[mnli,wanli],[mnli,$ANLI],[mnli,fever_nli]" data.combine=augment,replace \
    "${S[@]}" hydra.sweep.dir="$R/2_combined"
# bottom: ANLI vs WANLI + ANLI
nliforge-train -m "data/train_sets=[$ANLI],[wanli,$ANLI]" data.combine=augment "${S[@]}" hydra.sweep.dir="$R/3_anli"

M='mnli_dev_matched,mnli_dev_mismatched'
IN_DOMAIN="in_domain={mnli:[$M],mnli_n$N_WANLI:[$M],wanli:[wanli_test],mnli+wanli:[$M,wanli_test],mnli_rep_wanli:[$M,wanli_test]"
IN_DOMAIN+=",mnli+anli_r1+anli_r2+anli_r3:[$M,anli_test],mnli_rep_anli_r1_rep_anli_r2_rep_anli_r3:[$M,anli_test]"
IN_DOMAIN+=",mnli+fever_nli:[$M,fever_nli_dev],mnli_rep_fever_nli:[$M,fever_nli_dev],anli_r1+anli_r2+anli_r3:[anli_test]"
IN_DOMAIN+=",wanli+anli_r1+anli_r2+anli_r3:[wanli_test,anli_test]}"
# every row against the same-size floor: paired differences by seed with 95% intervals (README: T1-T3)
nliforge-report sweep="$R" "$IN_DOMAIN" baseline=mnli_n$N_WANLI
