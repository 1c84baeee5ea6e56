# Sourced by experiments/*/run.sh (after HERE is set): the repository root as the working folder,
# the offline flags, and the scratch folder of an experiment.
ROOT="$(cd "$HERE/../.." && pwd)"
# The installed nliforge must be this checkout's (`pip install -e .`): its configs ship in the package and
# registered sets go to the user data home, so nothing else is needed; another checkout's code is refused.
INSTALLED="$(python -c 'import nliforge, pathlib; print(pathlib.Path(nliforge.__file__).resolve().parents[1])' 2>/dev/null || true)"
if [ "$INSTALLED" != "$ROOT/src" ]; then
    echo "$0: the installed nliforge is ${INSTALLED:-missing}, not this checkout ($ROOT/src); run: pip install -e '$ROOT'" >&2
    exit 2
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false WANDB_MODE=offline
# The CPU kernel paths of torch, oneDNN and MKL, pinned as the Makefile pins them (docs/reproducibility.md):
# set before any python starts, since torch reads them when it is imported. NLIFORGE_KERNEL_PIN=0: not pinned.
if [ "$(uname -m)" = x86_64 ] && [ "${NLIFORGE_KERNEL_PIN:-1}" != 0 ]; then
    export ATEN_CPU_CAPABILITY="${ATEN_CPU_CAPABILITY:-avx2}" ONEDNN_MAX_CPU_ISA="${ONEDNN_MAX_CPU_ISA:-AVX2}" \
        MKL_CBWR="${MKL_CBWR:-COMPATIBLE}"
fi
cd "$ROOT"
# Training overrides that change no number: no logger, no saved model, no progress bar.
QUIET_TRAIN=(logger=none save_model=false trainer.enable_progress_bar=false)

# fresh_scratch NAME: set R to $NLIFORGE_EXP (default /tmp/nliforge_exp/NAME) and empty it.
fresh_scratch() {
    R="${NLIFORGE_EXP:-/tmp/nliforge_exp/$1}"
    rm -rf "$R" && mkdir -p "$R"
}

# scratch NAME: like fresh_scratch, but FRESH=0 keeps what is there (finished steps are skipped by the
# scripts that check for them); also starts the clock of `stamp`.
scratch() {
    R="${NLIFORGE_EXP:-/tmp/nliforge_exp/$1}"
    if [ "${FRESH:-1}" = 1 ]; then rm -rf "$R"; fi
    mkdir -p "$R"
    T0=$SECONDS
}

# stamp MESSAGE: one progress line with the seconds since `scratch`.
stamp() { echo "== [$((SECONDS - ${T0:-0})) s] $*"; }

# link_oracle NAME: with ORACLE=<an nliforge-train folder>, use it as $R/NAME instead of training one.
link_oracle() {
    if [ -n "${ORACLE:-}" ] && [ ! -e "$R/$1" ]; then ln -s "$(cd "$ORACLE" && pwd)" "$R/$1"; fi
}

# WANLI's review: who labels the generated pairs. Only the stand-in for the people who review
# WANLI's pairs may know the world's true labels, because people do; every other model is trained on the
# base data only.
#   annotator (default)  the annotators' stand-in: a classifier trained on the world's UNBIASED split
#                        (it labels by the world's rules, as crowdworkers label by the language's)
#   teacher              the pipeline's own task classifier (<run>/classifier), trained on D0 = the biased
#                        base set: a reviewer that knows nothing the paper's set-up lacks
# review_choice ARGS...: set REVIEW from a `review=annotator|teacher` argument of run.sh, else from the
# REVIEW variable, else annotator; anything else stops the script with a one-line error.
review_choice() {
    local a
    for a in "$@"; do
        case "$a" in
            review=*) REVIEW="${a#review=}" ;;
            *) echo "$0: unknown argument '$a'; expected review=annotator or review=teacher" >&2; exit 2 ;;
        esac
    done
    REVIEW="${REVIEW:-annotator}"
    case "$REVIEW" in
        annotator | teacher) ;;
        *) echo "$0: review=$REVIEW; expected annotator (the people's stand-in, knows the true labels) or teacher (the task classifier trained on D0)" >&2
           exit 2 ;;
    esac
}

# reviewer_dir RUN ANNOTATOR_DIR: the model folder `nliforge-review teacher` uses under $REVIEW:
# ANNOTATOR_DIR for annotator, RUN/classifier (the WANLI run's classifier on D0) for teacher.
reviewer_dir() {
    if [ "$REVIEW" = teacher ]; then echo "$1/classifier"; else echo "$2"; fi
}

# reviewer_id DIR: the annotator id `nliforge-review teacher` records for DIR (teacher:<real folder name>,
# symlinks resolved, as the review code does), for `aggregate.reviewer=`.
reviewer_id() {
    echo "teacher:$(basename "$(cd "$1" && pwd -P)")"
}

# ---- oracle-free experiments: calibrated worlds, several world seeds, same-size controls ----
# WORLD: the world preset (conf/world/; snli_calibrated: hypothesis-only accuracy ~67%, as SNLI's);
# WORLD_SEEDS: the worlds (each its own sentences and artifacts' draws); SEEDS (train_row's default
# 1,2,3, left unset here: real_lm/zaug_run.sh has its own SEEDS): training seeds per row.
WORLD="${WORLD:-snli_calibrated}"
WORLD_SEEDS="${WORLD_SEEDS:-0 1}"

# train_row WS ROW OVERRIDES...: one row (every training seed) on world seed WS into
# $R/world$WS/sweep/ROW (the layout experiments/controls_table.py reads); skipped when every seed of it
# has its metrics.csv already, so a re-run resumes. Log: $R/world$WS/ROW.log.
train_row() {
    local ws=$1 row=$2; shift 2
    local dir="$R/world$ws/sweep/$row" want seeds="${SEEDS:-1,2,3}"
    want=$(echo "$seeds" | tr ',' '\n' | grep -c .)
    if [ "$(find "$dir" -path '*/[0-9]*/metrics.csv' 2>/dev/null | wc -l)" -ge "$want" ]; then
        stamp "world $ws, $row: done before, kept"; return; fi
    stamp "world $ws, $row"
    mkdir -p "$R/world$ws"; rm -rf "$dir"
    nliforge-train -m "$@" world="$WORLD" world.seed="$ws" seed="$seeds" suite=synthetic callbacks=none \
        "${QUIET_TRAIN[@]}" hydra.sweep.dir="$dir" > "$R/world$ws/$row.log" 2>&1 \
        || { echo "$0: training row $row (world $ws) failed; see $R/world$ws/$row.log" >&2; tail -5 "$R/world$ws/$row.log" >&2; exit 1; }
}

# ---- the arms of a comparison, every one from the same D0 (nliforge.world.arms) ----
# D0 = the biased split of world.n_train pairs; floor = D0 + N more pairs of D0's own distribution (the world's
# train_biased_extra); ceiling = D0 + N unbiased pairs; treatment = D0 + a named set W. A bigger world.n_train is
# not D0 + N: the world draws each split whole for its size, so it would be a fresh D0.
# arm_args ARM --n-train |D0| [--n N | --total M] [--w SET] [--combine replace]: that arm's nliforge-train
# overrides in the array ARM_ARGS (`python -m nliforge.world.arms --help`).
arm_args() {
    local out
    out=$(python -m nliforge.world.arms "$@") || { echo "$0: no overrides for the arm '$*' (nliforge.world.arms)" >&2; exit 2; }
    mapfile -t ARM_ARGS <<< "$out"
}

# train_arm WS ROW ARM ARM_OPTIONS... [-- OVERRIDES...]: train_row of one arm (arm_args ARM ARM_OPTIONS), OVERRIDES added.
train_arm() {
    local ws=$1 row=$2; shift 2
    local opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
    if [ $# -gt 0 ]; then shift; fi
    arm_args "${opts[@]}"
    train_row "$ws" "$row" "${ARM_ARGS[@]}" "$@"
}

# logged LOG COMMAND...: run COMMAND with its output in LOG; on failure say which command failed, show the
# end of LOG and stop the script (set -e alone would stop it silently, the output being in LOG).
logged() {
    local log=$1; shift
    "$@" > "$log" 2>&1 || { echo "$0: failed ($1 ...); the end of $log:" >&2; tail -15 "$log" >&2; exit 1; }
}

# count_lines FILE: its non-blank lines (0 for an empty file; `grep -c` would fail the script there).
count_lines() { awk 'NF' "$1" | wc -l; }
