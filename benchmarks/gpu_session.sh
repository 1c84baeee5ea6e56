#!/usr/bin/env bash
# The GPU measurements, one part per device call of at most 8 minutes (benchmarks/gpu_session.py):
#   bash benchmarks/gpu_session.sh main     # trainer=gpu, + dynamics, preset=gpu_fast, HF Trainer (fused), 2 rounds
#   bash benchmarks/gpu_session.sh graphs   # the CUDA-graphs variant (widths rounded to 32) beside the HF Trainer
#   bash benchmarks/gpu_session.sh diag     # old plain trainer=gpu and the halves of its defaults, with profiles
# Further options go to gpu_session.py (--rounds, --budget-s, --model). Everything (per-round JSON and
# logs, nvidia-smi, session.json, session.txt) goes to $OUT (default benchmarks/out/gpu_session).
#
# On a device machine without network: build wheels here first (they travel with the working tree,
# `.whl/` is git-ignored locally via .git/info/exclude; pass it in the run's carry list):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     -d .whl transformers==5.23.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
# The device's own torch (CUDA build) and lightning are used as they are.
set -euo pipefail
case "${1:-}" in main|graphs|diag) ;; *) echo "usage: bash benchmarks/gpu_session.sh main|graphs|diag [gpu_session.py options]" >&2; exit 2 ;; esac
part="$1"; shift
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export OUT="${OUT:-benchmarks/out/gpu_session}"
mkdir -p "$OUT"
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1 || true
python3 benchmarks/gpu_session.py --parts "$part" --out-dir "$OUT" "$@" 2>&1 | tee "$OUT/session_$part.log"
