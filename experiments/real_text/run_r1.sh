#!/usr/bin/env bash
# R1 (criteria in README.md): counterfactual augmentation on the SNLI pairs of Kaushik et al. (2020).
#   NLIFORGE_DATA_DIR=/path/to/real bash experiments/real_text/run_r1.sh   # -> results_r1r4.md (with R4)
# Steps: the teacher (MiniLM on the MNLI training part); the DISCO run with SmolLM2 (counterfactuals of
# the originals, registered as exp_real_text_r1_counterfactuals in the user data home); then the arms
# orig, human, disco, mnli (3 training seeds each, one thread per run). About 50 min on 2 cores beside R4.
# Scratch: $NLIFORGE_EXP (default /tmp/nliforge_exp/real_text_r1); FRESH=0 keeps finished steps.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
source "$HERE/lib.sh"
scratch real_text_r1
SEEDS="${SEEDS:-1 2 3}"
ARMS="${ARMS:-orig human disco mnli}"
COMMON=(experiment=real_text_cad logger=csv save_model=false trainer.enable_progress_bar=false)

if [ ! -f "$R/teacher/model/config.json" ]; then
    stamp "teacher: MiniLM on mnli_dev_train_part (6,918 pairs, 2 epochs)"
    rm -rf "$R/teacher"
    logged "$R/teacher.log" nliforge-train experiment=real_text_cad 'data/train_sets=[mnli_dev_train_part]' \
        model.max_epochs=2 seed=0 save_model=true logger=csv trainer.enable_progress_bar=false hydra.run.dir="$R/teacher"
fi
if [ ! -f "$R/disco/augment/counterfactuals.jsonl" ]; then
    stamp "DISCO with SmolLM2 on the SNLI originals (the Δ filter's teacher: $R/teacher)"
    logged "$R/disco.log" nliforge-generate pipeline=disco experiment=real_text_cad suite=none generator=smollm2 \
        "pipeline.disco_teacher.run_dirs=[$R/teacher]" trainer.enable_progress_bar=false \
        generator.runner.progress=false hydra.run.dir="$R/disco"
fi
N=$(count_lines "$R/disco/augment/counterfactuals.jsonl")
stamp "N = |D^c| = $N"
if [ "$N" -lt 2 ]; then echo "$0: the DISCO run kept $N counterfactuals; the same-size arms need at least 2" >&2; exit 1; fi
HALF=$((N / 2))
for arm in $ARMS; do
    for s in $SEEDS; do
        case "$arm" in
            orig) run orig "$s" ;;
            disco) run disco "$s" 'data/train_sets=[snli_cad_original,exp_real_text_r1_counterfactuals]' ;;
            human) run human "$s" 'data/train_sets=[snli_cad_original,snli_cad_revised_premise,snli_cad_revised_hypothesis]' \
                       ++data.train_sets.snli_cad_revised_premise.limit="$HALF" ++data.train_sets.snli_cad_revised_premise.limit_seed="$s" \
                       ++data.train_sets.snli_cad_revised_hypothesis.limit="$((N - HALF))" \
                       ++data.train_sets.snli_cad_revised_hypothesis.limit_seed="$s" ;;
            mnli) run mnli "$s" 'data/train_sets=[snli_cad_original,mnli_dev_train_part]' \
                      ++data.train_sets.mnli_dev_train_part.limit="$N" ++data.train_sets.mnli_dev_train_part.limit_seed="$s" ;;
            *) echo "$0: unknown arm '$arm' in ARMS; expected orig human disco mnli" >&2; exit 2 ;;
        esac
    done
done
stamp "analysis (R4 too, where its runs are there)"
python -m experiments.real_text.analysis_r1r4 "$R" "${R%/*}/real_text_r4"
stamp "done: $HERE/results_r1r4.md"
