"""Exactly-once under SIGKILL: a runner killed at random moments and resumed ends with the cache an
uninterrupted run produces, and never re-sends a request whose answer was already cached."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from nliforge.generation.backends.openai_api import OpenAICompletions
from nliforge.generation.cache import ResponseCache
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.stand_in.responders import input_digest
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.generation.types import GenerationRequest, Sampling, cache_key

N, CONCURRENCY = 300, 8

CHILD = textwrap.dedent("""
    import sys
    import openai  # noqa: F401 - imported before "ready" so kill delays measure running time
    from nliforge.generation.backends.openai_api import OpenAICompletions
    from nliforge.generation.cache import ResponseCache
    from nliforge.generation.runner import RunnerSettings, run_requests
    from nliforge.generation.types import GenerationRequest, Sampling

    base_url, cache_path, n, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    requests = [GenerationRequest(f"q{i}", f"Question {i}: say something about {i % 11}.",
                                  Sampling(max_tokens=20), seed=i) for i in range(n)]
    backend = OpenAICompletions("local-model", base_url=base_url, api_key_env=None, timeout_s=5)
    cache = ResponseCache(cache_path)
    print("ready", flush=True)
    run_requests(backend, requests, cache, "resume", RunnerSettings(
        concurrency=concurrency, progress=False, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=5))
    cache.close()
    print("done", flush=True)
""")


def requests() -> list[GenerationRequest]:
    """The same requests the child builds."""
    return [GenerationRequest(f"q{i}", f"Question {i}: say something about {i % 11}.",
                              Sampling(max_tokens=20), seed=i) for i in range(N)]


def start_server(log, latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "nliforge.generation.stand_in.server", "--port", "0",
                             "--latency", str(latency), "--log", str(log), "--fault-rate", "0.1",
                             "--fault-kinds", "rate_limit,server_error", "--retry-after", "0.01"],
                            stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def answered(log: Path) -> int:
    """Answers the test server has logged so far (its log is one JSON line per event)."""
    return sum('"answered"' in line for line in log.read_text().splitlines()) if log.exists() else 0


def run_child(script, url, cache_path, log: Path, kill_after: int | None) -> bool:
    """Run the child; SIGKILL it once the server has logged `kill_after` more answers (progress, not wall
    time: on a loaded machine a timed kill can land before the first answer). True when it was killed."""
    start = answered(log)
    proc = subprocess.Popen([sys.executable, str(script), url, str(cache_path), str(N), str(CONCURRENCY)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    if kill_after is None:
        assert proc.wait(timeout=600) == 0
        return False
    while proc.poll() is None and answered(log) - start < kill_after:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=30) == -signal.SIGKILL


def cached_keys(path) -> set[str]:
    cache = ResponseCache(path)  # reopening after a kill: WAL recovery, no half-written rows
    try:
        return cache.keys()
    finally:
        cache.close()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sigkill_resume_is_exactly_once(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    log, cache_path = tmp_path / "server.jsonl", tmp_path / "run" / "llm.sqlite"
    server, url = start_server(log, latency=0.05)
    rng = random.Random(1234)
    kills: list[tuple[float, set[str]]] = []
    try:
        for _ in range(15):  # kill until 4 kills landed mid-run (some answers, not all), then let it finish
            if sum(0 < len(keys) < N for _, keys in kills) >= 4:
                break
            if run_child(script, url, cache_path, log, kill_after=rng.randint(5, N // 5)):
                kills.append((time.time(), cached_keys(cache_path)))
                if len(kills[-1][1]) == N:
                    break
        run_child(script, url, cache_path, log, kill_after=None)
    finally:
        server.terminate()
        server.wait(timeout=20)

    mid_run = [keys for _, keys in kills if 0 < len(keys) < N]
    assert len(mid_run) >= 3, [len(k) for _, k in kills]
    sizes = [len(k) for _, k in kills]
    assert sizes == sorted(sizes)  # progress is never lost

    # (a) the final cache equals an uninterrupted run's, built in a fresh folder
    with LocalOpenAIServer(latency_s=0.001) as ref_srv:
        ref = ResponseCache(tmp_path / "ref" / "llm.sqlite")
        run_requests(OpenAICompletions("local-model", base_url=ref_srv.base_url, api_key_env=None), requests(), ref,
                     "resume", RunnerSettings(concurrency=16, progress=False))
    final = ResponseCache(cache_path)
    assert len(final) == N and dict(final.items()) == dict(ref.items())

    # (b) no request cached at a kill was sent again afterwards; duplicates only from in-flight ones
    digest_of = {cache_key("openai_completions", "local-model", r): input_digest(r.prompt) for r in requests()}
    rows = [json.loads(line) for line in open(log)]
    for t_kill, keys in kills:
        done = {digest_of[k] for k in keys}
        resent = [r for r in rows if r["t"] > t_kill and r["input"] in done]  # received or answered
        assert not resent, f"{len(resent)} requests cached before the kill at {t_kill} were sent again"
    answers = Counter(r["input"] for r in rows if r["event"] == "answered" and r["status"] == 200 and r["fault"] is None)
    assert set(answers) == set(digest_of.values())
    duplicates = sum(c - 1 for c in answers.values())
    print(f"cache sizes at kills {sizes}; {duplicates} duplicate answers (requests in flight at a kill)")
    assert duplicates <= CONCURRENCY * len(kills)
    assert final.ledger("resume")["cached"] >= sum(sizes)  # each resume counted what it found cached
