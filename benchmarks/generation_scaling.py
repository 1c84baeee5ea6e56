"""Generation past one machine: requests/s of the exactly-once runner against 1, 2 and 4 bounded endpoints in
one run (`generator.base_url` a list), and with 1, 2 and 4 shards (`shard=k/n`, one process and one endpoint
each, as a Slurm array with one server per node), against the ideal.

Every endpoint is the local OpenAI-compatible server (`nliforge.generation.stand_in.server`) in its own
process with `--latency` seconds per answer and `--slots` answers at once, so one endpoint allows at most
slots / latency requests/s (16 / 0.1 s = 160/s): the ideal for n endpoints or n shards is n times that.
Requests: ~120-word prompts, max_tokens 60, n=1, distinct seeds, a fresh SQLite cache per run. For n
endpoints one runner keeps `slots` requests in flight per endpoint; for n shards, n processes start
together, each runs its shard's requests (the shard rule on the cache key) against its own endpoint, and
the time is the slowest shard's. Rounds alternate; medians are reported. Goal: >= 0.9 of ideal up to 4
endpoints.

    python benchmarks/generation_scaling.py                  # 5 s of work per endpoint, 3 rounds
    python benchmarks/generation_scaling.py --quick          # smoke size (numbers mean little)
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from generation_throughput import make_requests

from nliforge.generation.backends.endpoints import Endpoints
from nliforge.generation.backends.openai_api import OpenAICompletions
from nliforge.generation.cache import ResponseCache
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.shard import Shard, sharding

MODEL = "local-model"
COUNTS = (1, 2, 4)


def start_servers(n: int, latency: float, slots: int) -> tuple[list[subprocess.Popen], list[str]]:
    procs, urls = [], []
    for _ in range(n):
        proc = subprocess.Popen([sys.executable, "-m", "nliforge.generation.stand_in.server", "--port", "0",
                                 "--latency", str(latency), "--max-concurrency", str(slots)],
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        urls.append(proc.stdout.readline().strip())
    return procs, urls


def backend(urls: list[str], slots: int):
    one = [OpenAICompletions(MODEL, base_url=u, api_key_env=None, timeout_s=60) for u in urls]
    return one[0] if len(one) == 1 else Endpoints(one, urls, [slots] * len(urls))


def timed_run(urls: list[str], slots: int, n_requests: int, shard: Shard | None = None, seed: int = 0) -> tuple[float, int]:
    """(seconds, requests sent) of one runner over `n_requests` (only the shard's, with `shard`)."""
    requests = make_requests(n_requests, seed)
    with tempfile.TemporaryDirectory() as tmp, ResponseCache(Path(tmp) / "c.sqlite") as cache, sharding(shard):
        start = time.perf_counter()
        run_requests(backend(urls, slots), requests, cache, "bench",
                     RunnerSettings(concurrency=slots, progress=False, max_retries=3))
        seconds = time.perf_counter() - start
        return seconds, cache.ledger("bench")["sent"]


def _warm(_: int) -> int:
    import openai  # noqa: F401 - the client's import, before the clock starts

    return 0


def _shard_worker(args) -> tuple[float, int]:
    url, slots, n_requests, k, n, seed, start_at = args
    time.sleep(max(0.0, start_at - time.time()))   # every shard starts at the same moment
    return timed_run([url], slots, n_requests, Shard(k, n), seed)


def sharded(urls: list[str], slots: int, n_requests: int, n: int, seed: int) -> float:
    """Requests/s of n shard processes, each against its own endpoint: all requests / the slowest shard."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(n) as pool:
        pool.map(_warm, range(n))                   # the workers are up (imports done) before the clock starts
        start_at = time.time() + 1.0
        out = pool.map(_shard_worker, [(urls[k], slots, n_requests, k, n, seed, start_at) for k in range(n)])
    assert sum(sent for _, sent in out) >= n_requests, out
    return n_requests / max(seconds for seconds, _ in out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--slots", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=5.0, help="ideal seconds of work per run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seconds, args.rounds = 0.5, 1
    bound = args.slots / args.latency
    procs, urls = start_servers(max(COUNTS), args.latency, args.slots)
    rates: dict[tuple[str, int], list[float]] = {}
    try:
        timed_run(urls, args.slots, 4 * args.slots, seed=999)   # warm-up: imports, connections, the servers
        for r in range(args.rounds):
            for n in COUNTS:
                n_req = int(bound * n * args.seconds)
                seconds, _ = timed_run(urls[:n], args.slots, n_req, seed=100 * r + n)
                rates.setdefault(("endpoints", n), []).append(n_req / seconds)
                rates.setdefault(("shards", n), []).append(sharded(urls, args.slots, n_req, n, 100 * r + 50 + n))
                print(f"round {r}: {n} endpoints {rates['endpoints', n][-1]:.1f} req/s, {n} shards "
                      f"{rates['shards', n][-1]:.1f} req/s (ideal {n * bound:g})", flush=True)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
    print(f"median of {args.rounds} round(s); each endpoint {args.slots} slots x {args.latency:g} s = {bound:g} req/s")
    print(f"{'setting':<14}{'req/s':>10}{'ideal':>10}{'ratio':>8}")
    for (kind, n), values in rates.items():
        rate = statistics.median(values)
        print(f"{f'{n} {kind}':<14}{rate:>10.1f}{n * bound:>10.1f}{rate / (n * bound):>8.2f}")


if __name__ == "__main__":
    main()
