#!/usr/bin/env bash
# WANLI App. A on the synthetic world, offline: does estimated max variability of a held-out
# example (Eq. 1, from the epoch checkpoints of a model that never saw it) correlate with its
# true variability (cartography, from a model that trained on it)? The one command:
#   bash experiments/max_variability/run.sh                 # world seed 0
#   WORLD_SEED=1 bash experiments/max_variability/run.sh    # world seed 1 -> experiments/max_variability/world1/
# Scratch outputs go to $NLIFORGE_EXP (default /tmp/nliforge_exp/max_variability); results.csv,
# results.md and scatter_seed1.png are written next to this script. Registers the training sets
# exp_maxvar_d / exp_maxvar_h in conf/data/train_sets/ (machine-local, gitignored).
# About 6 minutes on 2 CPU cores.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/../common.sh"   # ROOT, the installed nliforge checked to be this checkout, offline flags, cd ROOT
WORLD_SEED="${WORLD_SEED:-0}"   # the world (at least two); world 0 writes next to this script,
                                # any other into world<seed>/ here
if [ "$WORLD_SEED" = 0 ]; then OUT="$HERE"; else OUT="$HERE/world$WORLD_SEED"; mkdir -p "$OUT"; fi
SCRATCH="${NLIFORGE_EXP:-/tmp/nliforge_exp/max_variability}_w$WORLD_SEED"
N_TRAIN="${N_TRAIN:-6000}"      # world training split: D = N_TRAIN - N_HELDOUT, H = N_HELDOUT
N_HELDOUT="${N_HELDOUT:-1000}"
EPOCHS="${EPOCHS:-5}"
SEEDS="${SEEDS:-1 2 3}"
export OMP_NUM_THREADS=1
rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
start=$SECONDS

echo "== 1/3 split the world's training split into D and H, register exp_maxvar_{d,h}"
python -m experiments.max_variability.split "$SCRATCH" "$N_TRAIN" "$N_HELDOUT" "$WORLD_SEED"

# conf/experiment/max_variability.yaml: every epoch checkpoint, the final model (ClassifierRun.epoch_probs, the
# WANLI variability stage's code path, loads it, then each checkpoint's weights into it), dynamics, no logger
COMMON=(experiment=max_variability world.n_train="$N_TRAIN" world.seed="$WORLD_SEED" model.max_epochs="$EPOCHS")
echo "== 2/3 per seed: model A on D (H held out), model B on D + H (combine=augment)"
for s in $SEEDS; do
    nliforge-train 'data/train_sets=[exp_maxvar_d]' seed="$s" "${COMMON[@]}" \
        hydra.run.dir="$SCRATCH/seed$s/a" > "$SCRATCH/seed$s.a.log" 2>&1
    nliforge-train 'data/train_sets=[exp_maxvar_d,exp_maxvar_h]' data.combine=augment seed="$s" "${COMMON[@]}" \
        hydra.run.dir="$SCRATCH/seed$s/b" > "$SCRATCH/seed$s.b.log" 2>&1
    echo "   seed $s trained ($((SECONDS - start)) s)"
done

echo "== 3/3 correlation over H"
python -m experiments.max_variability.analyze "$SCRATCH" "$OUT" $SEEDS
echo "done in $((SECONDS - start)) s: $OUT/results.md"
