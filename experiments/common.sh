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
