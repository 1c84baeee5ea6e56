"""Generation throughput: the exactly-once runner vs. a bare async client vs. a sequential client,
all against the local OpenAI-compatible server in its own process (latency 0.1 s, 64 slots).

Contenders, same requests (WANLI-sized prompts of ~120 words, max_tokens 60, n=1, distinct seeds):

* ``runner``      `run_requests` with `OpenAICompletions`, concurrency 64, a fresh SQLite cache,
                  the ledger, retries and the progress bar on: everything a real run pays for.
* ``bare``        the ceiling: the plain `openai.AsyncOpenAI` client (max_retries=0), 64 requests
                  in flight from 64 worker coroutines, answers kept in a list, no cache.
* ``sequential``  the same client, one request at a time; its rate is measured on a few dozen
                  requests and extrapolated (it is latency-bound: ~1 / latency).

The server's 64 slots at 0.1 s latency allow at most 640 requests/s, so bound = min(640, bare).
Targets: runner >= 0.9 x bound, runner >= 30 x sequential. Runner and bare alternate for
`--rounds` rounds; the medians are reported.

    python benchmarks/generation_throughput.py                 # 3000 requests, 3 rounds
    python benchmarks/generation_throughput.py --quick         # smoke test (numbers mean little)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import CONTENT_WORDS, FUNCTION_WORDS, _cpu_snapshot, wait_until_idle, write_summary  # noqa: E402

from nliforge.generation.backends.openai_api import OpenAICompletions
from nliforge.generation.cache import ResponseCache
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.types import GenerationRequest, Sampling

MODEL = "local-model"


def make_requests(n: int, seed: int) -> list[GenerationRequest]:
    import random

    rng = random.Random(seed)
    vocab = FUNCTION_WORDS + CONTENT_WORDS
    out = []
    for i in range(n):
        prompt = " ".join(rng.choice(vocab) for _ in range(120)) + f"\n\n{i}."
        out.append(GenerationRequest(f"b{i}", prompt, Sampling(max_tokens=60), seed=i))
    return out


def start_server(latency: float, slots: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "nliforge.generation.stand_in.server", "--port", "0",
                             "--latency", str(latency), "--max-concurrency", str(slots)],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"the local server did not start (printed {url!r})")
    return proc, url


def run_runner(url: str, requests, concurrency: int, progress: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="nlf_gen_bench_"))
    try:
        cache = ResponseCache(tmp / "llm.sqlite")
        backend = OpenAICompletions(MODEL, base_url=url, api_key_env=None)
        t0 = time.perf_counter()
        out = run_requests(backend, requests, cache, "bench", RunnerSettings(concurrency=concurrency, progress=progress))
        wall = time.perf_counter() - t0
        assert len(out) == len(requests) and len(cache) == len(requests)
        ledger = cache.ledger("bench")
        cache.close()
        return {"wall_s": wall, "requests_per_s": len(requests) / wall, "sent": ledger["sent"],
                "retries": ledger["retries"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _body(req: GenerationRequest) -> dict:
    s = req.sampling
    return {"model": MODEL, "prompt": req.prompt, "n": req.n, "max_tokens": s.max_tokens, "temperature": s.temperature,
            "top_p": s.top_p, "stop": list(s.stop), "presence_penalty": s.presence_penalty,
            "frequency_penalty": s.frequency_penalty, "seed": req.seed}


async def _bare(url: str, requests, in_flight: int) -> float:
    import openai

    client = openai.AsyncOpenAI(api_key="none", base_url=url, max_retries=0, timeout=60)
    queue = list(reversed(requests))
    answers = []

    async def worker():
        while queue:
            r = await client.completions.create(**_body(queue.pop()))
            answers.append(r.choices[0].text)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    wall = time.perf_counter() - t0
    await client.close()
    assert len(answers) == len(requests)
    return wall


def run_bare(url: str, requests, in_flight: int) -> dict:
    wall = asyncio.run(_bare(url, requests, in_flight))
    return {"wall_s": wall, "requests_per_s": len(requests) / wall}


def run_sequential(url: str, requests) -> dict:
    wall = asyncio.run(_bare(url, requests, 1))
    return {"n": len(requests), "wall_s": wall, "requests_per_s": len(requests) / wall}


def measured(fn, *args) -> dict:
    """Run one contender and record how much CPU other processes (not this one) used meanwhile."""
    (busy0, self0), w0 = _cpu_snapshot(), time.perf_counter()
    res = fn(*args)
    (busy1, self1), w1 = _cpu_snapshot(), time.perf_counter()
    res["client_cpu_frac"] = (self1 - self0) / (w1 - w0)
    res["other_cpu_frac"] = ((busy1 - busy0) - (self1 - self0)) / ((w1 - w0) * (os.cpu_count() or 1))
    return res


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-requests", type=int, default=3000)
    ap.add_argument("--n-sequential", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--slots", type=int, default=64, help="server max_concurrency; also the in-flight count")
    ap.add_argument("--progress", action="store_true", help="show the runner's progress bar (on stderr)")
    ap.add_argument("--quick", action="store_true", help="smoke size: 300 requests, 10 sequential, 1 round")
    ap.add_argument("--max-wait", type=float, default=300, help="seconds to wait for an idle machine")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out" / "generation_throughput.json"))
    args = ap.parse_args(argv)
    if args.quick:
        args.n_requests, args.n_sequential, args.rounds = 300, 10, 1
    load = wait_until_idle(args.max_wait)
    print(f"machine load before the run: {load:.0%}", flush=True)
    server, url = start_server(args.latency, args.slots)
    runs: dict[str, list[dict]] = {"runner": [], "bare": []}
    try:
        warm = make_requests(64, seed=99)
        run_bare(url, warm, args.slots)  # warm the server and the client imports
        for r in range(args.rounds):
            order = ["runner", "bare"] if r % 2 == 0 else ["bare", "runner"]
            for name in order:
                reqs = make_requests(args.n_requests, seed=r)
                res = (measured(run_runner, url, reqs, args.slots, args.progress) if name == "runner"
                       else measured(run_bare, url, reqs, args.slots))
                runs[name].append(res)
                print(f"  round {r + 1}/{args.rounds} {name:<7} {res['requests_per_s']:7.1f} req/s "
                      f"({args.n_requests} in {res['wall_s']:.2f}s; client CPU {res['client_cpu_frac']:.0%}, "
                      f"server + other processes {max(res['other_cpu_frac'], 0):.0%} of the machine)", flush=True)
        seq = measured(run_sequential, url, make_requests(args.n_sequential, seed=7))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return report(args, runs, seq)


def report(args, runs: dict, seq: dict) -> dict:
    runner = statistics.median(x["requests_per_s"] for x in runs["runner"])
    bare = statistics.median(x["requests_per_s"] for x in runs["bare"])
    server_bound = args.slots / args.latency
    bound = min(server_bound, bare)
    seq_rate = seq["requests_per_s"]
    lines = [f"{'contender':<12}{'requests/s':>12}",
             f"{'runner':<12}{runner:>12.1f}", f"{'bare':<12}{bare:>12.1f}",
             f"{'sequential':<12}{seq_rate:>12.2f}   (from {seq['n']} requests)",
             f"bound = min({server_bound:.0f}, bare {bare:.1f}) = {bound:.1f} req/s",
             f"runner / bound      = {runner / bound:.2f}  (>= 0.9: {'met' if runner / bound >= 0.9 else 'MISSED'})",
             f"runner / sequential = {runner / seq_rate:.1f}x (>= 30x: {'met' if runner / seq_rate >= 30 else 'MISSED'})"]
    busy = [x for v in runs.values() for x in v if x["other_cpu_frac"] > 0.55]
    if busy:  # the server process alone uses part of the machine; more than that is someone else
        lines.append(f"WARNING: {len(busy)} run(s) saw other processes use > 55% of the machine (server included)")
    table = "\n".join(lines)
    print(f"\nmedian of {args.rounds} round(s), {args.n_requests} requests, server latency {args.latency}s, "
          f"{args.slots} slots\n{table}")
    summary = {"args": vars(args), "table": table, "runner_rps": runner, "bare_rps": bare, "sequential_rps": seq_rate,
               "bound_rps": bound, "ratio_vs_bound": runner / bound, "ratio_vs_sequential": runner / seq_rate,
               "runs": runs, "sequential": seq,
               "env": {"python": sys.version.split()[0], "platform": platform.platform(), "cpu_count": os.cpu_count(),
                       "openai": __import__("openai").__version__, "aiohttp": __import__("aiohttp").__version__}}
    print(f"wrote {write_summary(summary, args.out)}")
    return summary


if __name__ == "__main__":
    main()
