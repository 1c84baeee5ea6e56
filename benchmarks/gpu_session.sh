#!/usr/bin/env bash
# The GPU measurements, one part per device call of at most 8 minutes (benchmarks/gpu_session.py):
#   bash benchmarks/gpu_session.sh headline # trainer=gpu, preset=gpu_graphs from a cold and a warm compile cache,
#                                           # preset=gpu_fast, the fused HF Trainer; dynamics on; 2 rounds; the
#                                           # 5-epoch WANLI headline line (about 7.5 minutes on an H200)
#   bash benchmarks/gpu_session.sh main     # trainer=gpu, + dynamics, preset=gpu_fast, HF Trainer (fused), 2 rounds
#   bash benchmarks/gpu_session.sh graphs   # the CUDA-graphs variant (widths rounded to 32) beside the HF Trainer
#   bash benchmarks/gpu_session.sh diag     # old plain trainer=gpu and the halves of its defaults, with profiles
#   SMOKE=1 bash benchmarks/gpu_session.sh headline   # the same on this CPU: tiny model, a few steps (~2-4 min)
# Further options go to gpu_session.py (--rounds, --budget-s, --model). $OUT (default benchmarks/out/gpu_session)
# gets at most 6 files: session.txt, session.json, session_<part>.log, gpu.txt, lscpu.txt and rounds.tar.gz
# (every round's JSON and log), as a device call brings back at most 8 files.
#
# On a device machine without network: build wheels here first (they travel with the working tree,
# `.whl/` is git-ignored locally via .git/info/exclude; pass it in the run's carry list):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#     -d .whl transformers==5.24.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 hydra-core==1.3.8 \
#     omegaconf==2.3.1 antlr4-python3-runtime==4.9.3
# The device's own torch (CUDA build) and lightning are used as they are.
set -euo pipefail
case "${1:-}" in headline|main|graphs|diag) ;;
    *) echo "usage: [SMOKE=1] bash benchmarks/gpu_session.sh headline|main|graphs|diag [gpu_session.py options]" >&2; exit 2 ;;
esac
part="$1"; shift
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export OUT="${OUT:-benchmarks/out/gpu_session}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
work="$(mktemp -d /tmp/gpu_session.XXXXXX)"
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$OUT/gpu.txt" 2>&1 || true
lscpu > "$OUT/lscpu.txt" 2>&1 || true
smoke=()
if [ "${SMOKE:-0}" = 1 ]; then smoke=(--device cpu --model tiny --budget-s 900); fi
pack() {   # every round's JSON and log in one file; the summaries beside it
    cp "$work"/session.txt "$work"/session.json "$OUT"/ 2>/dev/null || true
    tar -czf "$OUT/rounds.tar.gz" -C "$work" . 2>/dev/null || true
}
trap pack EXIT
trap 'exit 143' TERM INT
python3 benchmarks/gpu_session.py --parts "$part" --out-dir "$work" "${smoke[@]}" "$@" 2>&1 | tee "$OUT/session_$part.log"
grep -h "^RoBERTa-large x\|^tiny x" "$work/session.txt" 2>/dev/null || true
