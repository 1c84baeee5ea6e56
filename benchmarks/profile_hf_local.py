"""Where `hf_local`'s time goes: the model's forward passes (prefill, decode) against everything else
(sampling, stop checks, cache row selection, Python), for the prompts of `local_generation.py`.

    python benchmarks/profile_hf_local.py [--prompts 16] [--max-tokens 48] [--batch-size 16] [--dtype float32]

Offline, CPU. Shares are fractions of one run's wall time, so they hold on a loaded machine better
than absolute times do; the absolute tokens/s are printed too. Results: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch

from local_generation import make_requests
from nliforge.generation.backends.hf_local import HFLocal
from nliforge.generation.types import Response


def timed_forward(lm, totals: dict[str, float]) -> None:
    """Wrap `lm.forward` so each call's time is added to totals['prefill' | 'decode'] by its width."""
    inner = lm.forward

    def forward(*args, **kwargs):
        width = kwargs["input_ids"].shape[1]
        start = time.perf_counter()
        out = inner(*args, **kwargs)
        totals["prefill" if width > 1 else "decode"] += time.perf_counter() - start
        totals["calls_" + ("prefill" if width > 1 else "decode")] += 1
        return out

    lm.forward = forward


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    args = ap.parse_args(argv)
    backend = HFLocal("smollm2-135m-instruct", batch_size=args.batch_size, dtype=args.dtype)
    totals: dict[str, float] = defaultdict(float)
    timed_forward(backend._lm, totals)
    requests = make_requests(args.prompts, args.max_tokens)
    backend.generate_batch(requests[:2])  # warm-up: first-call allocations
    totals.clear()
    start = time.perf_counter()
    answers = [a for i in range(0, len(requests), args.batch_size)
               for a in backend.generate_batch(requests[i:i + args.batch_size])]
    wall = time.perf_counter() - start
    tokens = sum(a.completion_tokens for a in answers if isinstance(a, Response))
    other = wall - totals["prefill"] - totals["decode"]
    print(f"torch threads {torch.get_num_threads()}, dtype {args.dtype}, {len(requests)} prompts, batch {args.batch_size}")
    print(f"wall {wall:.1f} s, {tokens} tokens, {tokens / wall:.1f} tokens/s")
    for name in ("prefill", "decode"):
        print(f"{name:8s} {totals[name]:6.1f} s  {100 * totals[name] / wall:5.1f}%  ({int(totals['calls_' + name])} calls)")
    print(f"other    {other:6.1f} s  {100 * other / wall:5.1f}%  (sampling, stop checks, cache row selection, Python)")


if __name__ == "__main__":
    main()
