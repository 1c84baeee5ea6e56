"""Exact same-label top-k search (WANLI Stage 1) against the machine's matrix-product rate.

The search of :func:`nliforge.pipelines.wanli.exemplars.same_label_neighbours` is a matrix product per
label (queries x candidates x dim multiply-adds) plus a top-k per row, so its ceiling is the rate
of one large float32 matrix product. This script measures both in the same process:

1. the matmul rate: best of ``--matmul-repeats`` runs of (4096 x dim) @ (dim x 16384) in torch;
2. the search: ``--queries`` seeds (distinct rows) against ``--vectors`` random unit vectors of
   ``--dim`` dimensions, labels drawn uniformly from three; achieved GFLOP/s counts
   2 * Q_l * N_l * dim summed over labels, and the ratio to (1) is the efficiency (target >= 0.70);
3. correctness: ``--check`` queries against brute-force numpy (same-label, self excluded).

Peak memory is the process's peak RSS (resource.getrusage), which includes the embeddings
themselves (vectors x dim x 4 bytes); the search adds one label's candidate copy and a score
buffer of ``--score-budget`` floats.

    python benchmarks/knn.py --quick
    python benchmarks/knn.py --out benchmarks/out/knn.json      # 100k x 400k x 1024, minutes on 2 cores
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

from common import _cpu_snapshot, wait_until_idle, write_summary  # noqa: E402

from nliforge.pipelines.wanli.exemplars import BLOCK, SCORE_BUDGET, same_label_neighbours

LABELS = ("entailment", "neutral", "contradiction")


def matmul_rate(dim: int, repeats: int) -> float:
    """Best GFLOP/s of (4096 x dim) @ (dim x 16384) in float32 over `repeats` runs (one warm-up)."""
    a, b = torch.randn(4096, dim), torch.randn(dim, 16384)
    out = torch.empty(4096, 16384)
    torch.mm(a, b, out=out)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        torch.mm(a, b, out=out)
        best = min(best, time.perf_counter() - t)
    return 2 * 4096 * dim * 16384 / best / 1e9


def make_data(n: int, dim: int, n_queries: int, seed: int):
    """Random unit vectors, uniform labels over three, and distinct query rows."""
    rng = np.random.default_rng(seed)
    emb = rng.standard_normal((n, dim), dtype=np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    labels = np.asarray(LABELS)[rng.integers(0, len(LABELS), n)]
    queries = np.sort(rng.choice(n, size=n_queries, replace=False))
    return emb, labels, queries


def check(emb, labels, queries, result, k: int, n_check: int, seed: int) -> dict:
    """Compare `n_check` random queries with brute force in numpy: the same indices, and the same
    top-k similarities within 1e-5 (indices may legitimately differ between near-equal floats)."""
    rng = np.random.default_rng(seed + 1)
    rows = np.sort(rng.choice(len(queries), size=min(n_check, len(queries)), replace=False))
    sims = emb[queries[rows]] @ emb.T                        # numpy's own BLAS, not torch
    exact = close = 0
    for j, r in enumerate(rows):
        q = queries[r]
        cand = np.flatnonzero((labels == labels[q]) & (np.arange(len(labels)) != q))
        best = cand[np.lexsort((cand, -sims[j, cand]))][:k]
        exact += result.indices[r].tolist() == best.tolist()
        close += bool(np.allclose(result.sims[r], sims[j, best], atol=1e-5))
    return {"checked": len(rows), "same_indices": exact, "same_sims_1e-5": close}


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=100_000)
    p.add_argument("--vectors", type=int, default=400_000)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--score-budget", type=int, default=SCORE_BUDGET, help="floats in the score buffer")
    p.add_argument("--quick", action="store_true", help="2k queries x 8k vectors x 256-d smoke run")
    p.add_argument("--check", type=int, default=200, help="queries checked against brute force")
    p.add_argument("--matmul-repeats", type=int, default=5)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--max-wait", type=float, default=600, help="seconds to wait for an idle machine")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    if args.quick:
        args.queries, args.vectors, args.dim = 2000, 8000, 256
    return args


def run(args: argparse.Namespace) -> dict:
    """Data, idle wait, matmul rate, the timed search and the brute-force check: the summary."""
    t = time.perf_counter()
    emb, labels, queries = make_data(args.vectors, args.dim, args.queries, args.seed)
    print(f"data: {args.vectors} x {args.dim} unit vectors, {args.queries} queries ({time.perf_counter() - t:.1f}s)")
    load = wait_until_idle(args.max_wait)
    rate = matmul_rate(args.dim, args.matmul_repeats)
    print(f"matmul (4096x{args.dim} @ {args.dim}x16384, best of {args.matmul_repeats}): {rate:.1f} GFLOP/s")
    busy0, own0 = _cpu_snapshot()
    t = time.perf_counter()
    result = same_label_neighbours(emb, labels, queries, k=args.k, score_budget=args.score_budget)
    wall = time.perf_counter() - t
    busy1, own1 = _cpu_snapshot()
    n_q = {lab: int(np.sum(labels[queries] == lab)) for lab in LABELS}
    n_c = {lab: int(np.sum(labels == lab)) for lab in LABELS}
    flops = sum(2.0 * n_q[lab] * n_c[lab] * args.dim for lab in LABELS)
    width = {lab: -(-n_c[lab] // BLOCK) * BLOCK for lab in LABELS}
    return {
        "queries": args.queries, "vectors": args.vectors, "dim": args.dim, "k": args.k,
        "threads": torch.get_num_threads(), "score_budget": args.score_budget,
        "query_chunk": {lab: max(1, min(n_q[lab], args.score_budget // width[lab])) for lab in LABELS},
        "search_s": wall, "flops": flops, "achieved_gflops": flops / wall / 1e9, "matmul_gflops": rate,
        "ratio": flops / wall / 1e9 / rate, "skipped": result.n_skipped,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "embeddings_mib": emb.nbytes / 2**20, "load_before": load,
        "other_cpu_during_search": max(0.0, (busy1 - busy0) - (own1 - own0)) / wall / (os.cpu_count() or 1),
        "check": check(emb, labels, queries, result, args.k, args.check, args.seed),
        "python": platform.python_version(), "torch": torch.__version__,
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    s = run(args)
    print(f"search: {s['search_s']:.1f}s for {s['flops'] / 1e12:.2f} TFLOP -> {s['achieved_gflops']:.1f} GFLOP/s = "
          f"{s['ratio']:.2f} of the matmul rate (target >= 0.70)")
    print(f"query chunk per label {s['query_chunk']} (score buffer {args.score_budget} floats = "
          f"{args.score_budget * 4 / 2**20:.0f} MiB); peak RSS {s['peak_rss_mib']:.0f} MiB "
          f"(embeddings {s['embeddings_mib']:.0f} MiB); other processes used "
          f"{s['other_cpu_during_search']:.0%} of the CPU during the search")
    print(f"check vs brute force: {s['check']}")
    if args.out:
        write_summary(s, args.out)
    return 0 if s["check"]["same_sims_1e-5"] == s["check"]["checked"] else 1


if __name__ == "__main__":
    sys.exit(main())
