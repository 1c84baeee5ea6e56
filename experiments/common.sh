# Sourced by experiments/*/run.sh (after HERE is set): the repository root as the working folder,
# the offline flags, and the scratch folder of an experiment.
ROOT="$(cd "$HERE/../.." && pwd)"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false WANDB_MODE=offline
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
