#!/usr/bin/env bash
# experiments/real_effects (criteria in README.md): E4 (data-map thirds), E2 (human counterfactuals as a dose) and
# E3 (DISCO with SmolLM2) on 5 worlds, one run folder per world x arm, resumable: a finished run (its <folder>.done)
# is kept, so a re-run skips it. E1 (HANS augmentation) is the study experiments/hans_augmentation, not a step here.
#   NLIFORGE_DATA_DIR=/path/to/real NLIFORGE_EXP=/work/runs/real_effects nohup bash experiments/real_effects/run.sh e4_3ep &
# Steps: the worlds (worlds.py, registered in the user data home); e4: per world the data map (the world's mnli set
# trained 3 epochs, folder diag/w<k>/mnli_3ep), its thirds (e4_sets.py), then the arms ambiguous, random, easy;
# e4_3ep: the same thirds trained 3 epochs (E4's second attempt); e2: human revisions as a dose against as many MNLI
# pairs (e2_sets.py, 7 arms per world, 3 epochs; E2_ARMS picks some of them); e3_teacher (once, before e3): DISCO's
# teacher; e3: per world the DISCO run with SmolLM2 on E2's originals (resumed where it stopped), e3_sets.py, the
# arms disco, human_at, mnli_at (3 epochs). WORLDS (1 2 3 4 5), THREADS (1). Wall time per run in <folder>.done.
# Two processes may share the work only with disjoint WORLDS (or disjoint E2_ARMS of one world).
set -euo pipefail
[ $# -gt 0 ] || { echo "$0: name the steps: e4, e4_3ep, e2, e3_teacher or e3" >&2; exit 2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"
: "${NLIFORGE_DATA_DIR:?set NLIFORGE_DATA_DIR to the folder of the real data files (nliforge-data check)}"
export NLIFORGE_DATA_DIR OMP_NUM_THREADS="${THREADS:-1}" MKL_NUM_THREADS="${THREADS:-1}"
FRESH=0 scratch real_effects
WORLDS="${WORLDS:-1 2 3 4 5}"
STEPS=("$@")
# the settings of every run (README.md "Settings")
SETTINGS=(experiment=real_text_datamap model.max_epochs=1 model.batch_size=8 num_threads="${THREADS:-1}" seed=1)

# one run: FOLDER TRAIN_SET SUITE [OVERRIDES...]; skipped when FOLDER.done exists (written after it finished)
one() {
    local name=$1 dir="$R/$1" set=$2 suite=$3 t0=$SECONDS; shift 3
    if [ -f "$dir.done" ]; then stamp "$name: done before, kept"; return; fi
    stamp "$name"
    mkdir -p "$(dirname "$dir")"; rm -rf "$dir"
    logged "$dir.log" nliforge-train "${SETTINGS[@]}" "data/train_sets=[$set]" suite="$suite" "$@" hydra.run.dir="$dir"
    echo "rc=0 wall=$((SECONDS - t0)) end=$(date -u +%FT%TZ)" > "$dir.done"
}

# E3's teacher, R1's recipe (experiments/real_text/run_r1.sh): MiniLM on the MNLI training part, 2 epochs, seed 0
e3_teacher() {
    local dir="$R/e3/teacher" t0=$SECONDS
    if [ -f "$dir.done" ]; then stamp "e3/teacher: done before, kept"; return; fi
    stamp "e3/teacher"
    mkdir -p "$R/e3"; rm -rf "$dir"
    logged "$dir.log" nliforge-train experiment=real_text_cad 'data/train_sets=[mnli_dev_train_part]' model.max_epochs=2 \
        seed=0 save_model=true logger=csv trainer.enable_progress_bar=false num_threads="${THREADS:-1}" hydra.run.dir="$dir"
    echo "rc=0 wall=$((SECONDS - t0)) end=$(date -u +%FT%TZ)" > "$dir.done"
}

# E3's DISCO run of world $1 (README "E3 criteria"); no .done: the generation runtime resumes its folder
e3_disco() {
    local dir="$R/e3/w$1/generate" t0=$SECONDS
    if [ -f "$dir.done" ]; then stamp "e3/w$1/generate: done before, kept"; return; fi
    [ -f "$R/e3/teacher.done" ] || { echo "$0: E3 needs its teacher first: run.sh e3_teacher" >&2; exit 2; }
    stamp "e3/w$1/generate"
    mkdir -p "$(dirname "$dir")"
    logged "$dir.log" nliforge-generate pipeline=disco experiment=real_text_cad suite=none generator=smollm2 \
        "data/train_sets=[exp_real_effects_w${1}_e2_base]" input="exp_real_effects_w${1}_e2_base" \
        pipeline.disco_source.select=all pipeline.disco_source.max_per_label=null pipeline.disco_generate.n=3 \
        "pipeline.disco_teacher.run_dirs=[$R/e3/teacher]" pipeline.augment.name="exp_real_effects_w${1}_e3" \
        num_threads="${THREADS:-1}" trainer.enable_progress_bar=false generator.runner.progress=false hydra.run.dir="$dir"
    echo "rc=0 wall=$((SECONDS - t0)) end=$(date -u +%FT%TZ)" > "$dir.done"
}

stamp "the worlds"
python -m experiments.real_effects.worlds "$R"
for step in "${STEPS[@]}"; do
    for w in $WORLDS; do
        case "$step" in
            e4) # the map: the world's mnli set trained 3 epochs (README, E4's map amendment); its folder keeps the
                # name diag/ it had when E1's second attempt ran the same set at 3 epochs, so finished maps are kept
                one "diag/w$w/mnli_3ep" "exp_real_effects_w${w}_mnli" "exp_real_effects_w$w" model.max_epochs=3
                python -m experiments.real_effects.e4_sets "$R" "$w"
                for arm in ambiguous random easy; do
                    one "e4/w$w/$arm" "exp_real_effects_w${w}_e4_$arm" "exp_real_effects_w${w}_e4"
                done ;;
            e4_3ep) # E4's second attempt (README, "E4 at 3 epochs"): the same map and thirds, each arm 3 epochs
                one "diag/w$w/mnli_3ep" "exp_real_effects_w${w}_mnli" "exp_real_effects_w$w" model.max_epochs=3
                python -m experiments.real_effects.e4_sets "$R" "$w"
                for arm in ambiguous random easy; do
                    one "e4_3ep/w$w/$arm" "exp_real_effects_w${w}_e4_$arm" "exp_real_effects_w${w}_e4" model.max_epochs=3
                done ;;
            e2) # README "E2 criteria": the sets of every world (once), then per world base and each dose's pair of arms
                [ -n "${E2_SETS:-}" ] || { python -m experiments.real_effects.e2_sets "$R"; E2_SETS=1; }
                for arm in ${E2_ARMS:-base human_333 mnli_333 human_666 mnli_666 human_1332 mnli_1332}; do
                    one "e2/w$w/$arm" "exp_real_effects_w${w}_e2_$arm" exp_real_effects_e2 model.max_epochs=3
                done ;;
            e3_teacher) if [ "$w" = "${WORLDS%% *}" ]; then e3_teacher; fi ;;   # once, whatever WORLDS
            e3) [ -n "${E2_SETS:-}" ] || { python -m experiments.real_effects.e2_sets "$R"; E2_SETS=1; }
                e3_disco "$w"
                python -m experiments.real_effects.e3_sets "$R" "$w"
                for arm in disco human_at mnli_at; do
                    one "e3/w$w/$arm" "exp_real_effects_w${w}_e3_$arm" exp_real_effects_e2 model.max_epochs=3
                done ;;
            *) echo "$0: unknown step '$step'; expected e4, e4_3ep, e2, e3_teacher or e3 (E1: experiments/hans_augmentation)" >&2; exit 2 ;;
        esac
    done
done
stamp "done"
