#!/usr/bin/env bash
# The GPU measurements of issue 9, in calls that each fit a 10-minute device command.
#   bash benchmarks/gpu_session.sh diag     # ~9 min on an H100: where plain trainer=gpu loses
#   bash benchmarks/gpu_session.sh fast     # ~9 min on an H100: the compiled presets vs the HF Trainer
# Results (JSON, logs, profiles with per-step host-value counts) go to $OUT (default benchmarks/out).
#
# On a device machine without network: build wheels here first (they travel with the working tree,
# `.whl/` is git-ignored locally via .git/info/exclude; pass it in the run's carry list):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     -d .whl transformers==5.23.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
# The device's own torch (CUDA build) and lightning are used as they are.
set -euo pipefail
case "${1:-}" in diag|fast) ;; *) echo "usage: bash benchmarks/gpu_session.sh diag|fast" >&2; exit 2 ;; esac
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT="${OUT:-benchmarks/out}"
mkdir -p "$OUT"
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1 || true
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
case "${1:-}" in
  diag)   # the alignment and fused-optimiser halves of the 223 -> 392 ex/s gain, with profiles
    python3 benchmarks/gpu_throughput.py --model roberta-large --rounds 3 --warmup 30 --steps 100 \
      --contenders nliforge nliforge+pad8 nliforge+fusedonly nliforge+fused hf_A_maxlen hf_B_best \
      --profile-steps 5 --out "$OUT/large_diag_$stamp.json" 2>&1 | tee "$OUT/large_diag_$stamp.log" ;;
  fast)   # the preset against the HF Trainer at its best (fused AdamW), more steps for compile warm-up
    python3 benchmarks/gpu_throughput.py --model roberta-large --rounds 1 --warmup 60 --steps 200 \
      --contenders nliforge+compile nliforge+graphs32 hf_B_best \
      --out "$OUT/large_fast_$stamp.json" 2>&1 | tee "$OUT/large_fast_$stamp.log" ;;
esac
