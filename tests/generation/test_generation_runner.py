"""The response cache, the rate limiter and the runner's retry logic, with scripted in-process backends."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest

from nliforge.generation.cache import ResponseCache
from nliforge.generation.ratelimit import RateLimiter, TokenBucket, estimate_tokens
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.types import (Failure, GenerationError, GenerationRequest, RequestRejected, Response,
                                       RetryableError, Sampling, cache_key)

FAST = dict(progress=False, backoff_base_s=0.001, backoff_max_s=0.01)


def reqs(n: int, prefix: str = "p") -> list[GenerationRequest]:
    return [GenerationRequest(uid=f"{prefix}{i}", prompt=f"prompt number {i}", seed=i) for i in range(n)]


class Scripted:
    """An AsyncBackend whose answers echo the prompt; `faults[uid]` lists exceptions raised first."""

    name, model = "scripted", "echo"

    def __init__(self, faults=None, delay: float = 0.0):
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.calls: dict[str, list[float]] = {}
        self.delay = delay
        self.in_flight = self.max_in_flight = 0
        self.closed = 0

    async def agenerate(self, request):
        self.calls.setdefault(request.uid, []).append(time.monotonic())
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            pending = self.faults.get(request.uid)
            if pending:
                raise pending.pop(0)
            return Response([f"echo {request.prompt}"], ["stop"], prompt_tokens=3, completion_tokens=2)
        finally:
            self.in_flight -= 1

    async def aclose(self):
        self.closed += 1


# --------------------------------------------------------------------------- cache
def test_cache_round_trip_reopen_and_ledger(tmp_path):
    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path)
    resp = Response(["a b", "c"], ["stop", "length"], prompt_tokens=5, completion_tokens=3)
    cache.count("wanli", "sent", 2)
    cache.count("wanli", "fault:rate_limit")
    cache.put("k1", "wanli", resp)
    cache.put("k2", "wanli", Failure("context_length", "too long"))
    assert not cache.put("k1", "wanli", Response(["other"], ["stop"]))  # a second answer never replaces the first
    assert cache.get("k1") == resp and cache.get("k2") == Failure("context_length", "too long")
    assert cache.get("missing") is None and len(cache) == 2 and cache.keys() == {"k1", "k2"}
    cache.count("wanli", "cached", 4)  # pending until close
    cache.close()
    cache.close()  # idempotent

    reopened = ResponseCache(path)
    assert reopened.get("k1") == resp and "k2" in reopened
    ledger = reopened.ledger("wanli")
    assert ledger["sent"] == 2 and ledger["cached"] == 4 and ledger["faults"] == {"rate_limit": 1}
    assert reopened.ledger("other")["sent"] == 0
    assert set(reopened.ledger_all()) == {"wanli"}
    with pytest.raises(TypeError, match="Response or a Failure"):
        reopened.put("k3", "wanli", "text")
    reopened.close()
    with pytest.raises(ValueError, match="closed"):
        reopened.get("k1")
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_cache_ledger_is_committed_with_the_answer(tmp_path):
    """Counters ride in the answer's transaction: another connection sees them without close()."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.count("s", "retries", 3)
    cache.put("k", "s", Response(["x"], ["stop"]))
    other = sqlite3.connect(tmp_path / "c.sqlite")
    assert other.execute("SELECT value FROM ledger WHERE stage='s' AND name='retries'").fetchone() == (3.0,)
    assert other.execute("SELECT COUNT(*) FROM answers").fetchone() == (1,)


# --------------------------------------------------------------------------- rate limits
def test_token_bucket_math():
    bucket = TokenBucket(600, burst=10, clock=lambda: 0.0)  # 10 per second, 10 banked
    delays = [bucket.reserve(1, now=0.0) for _ in range(30)]
    assert delays[:10] == [0.0] * 10
    assert delays[10] == pytest.approx(0.1) and delays[29] == pytest.approx(2.0)
    # 3 s later the bucket has refilled 30 units: the 20 owed, then 10 banked (capped at burst).
    assert bucket.reserve(10, now=3.0) == 0.0 and bucket.reserve(1, now=3.0) == pytest.approx(0.1)
    assert TokenBucket(None).reserve(10**9) == 0.0
    with pytest.raises(ValueError, match="positive"):
        TokenBucket(0)


def test_rate_limiter_takes_the_later_of_both_limits():
    req = GenerationRequest("u", "x" * 400, Sampling(max_tokens=50), n=2)
    assert estimate_tokens(req) == 100 + 100
    chat = GenerationRequest("c", "", Sampling(max_tokens=10), messages=({"role": "user", "content": "y" * 41},))
    assert estimate_tokens(chat) == 11 + 10
    limiter = RateLimiter(requests_per_minute=6000, tokens_per_minute=12000, clock=lambda: 0.0)  # 100 req/s, 200 tok/s
    assert limiter.reserve(req, now=0.0) == 0.0  # 200 tokens banked (one second's worth)
    assert limiter.reserve(req, now=0.0) == pytest.approx(1.0)  # tokens, not requests, are the bound
    assert RateLimiter().unlimited and RateLimiter().reserve(req) == 0.0


def test_runner_respects_requests_per_minute(tmp_path):
    backend = Scripted()
    settings = RunnerSettings(requests_per_minute=1200, concurrency=8, **FAST)  # 20/s, burst 20
    t0 = time.monotonic()
    run_requests(backend, reqs(40), ResponseCache(tmp_path / "c.sqlite"), "s", settings)
    assert time.monotonic() - t0 >= 0.9  # 20 banked, 20 more at 20/s


# --------------------------------------------------------------------------- runner
def test_settings_from_dict_rejects_unknown_keys():
    s = RunnerSettings.from_dict({"concurrency": 4, "max_retries": 2})
    assert s.concurrency == 4 and s.max_retries == 2 and s.timeout_s == 60.0
    with pytest.raises(ValueError, match="concurency"):
        RunnerSettings.from_dict({"concurency": 4})
    with pytest.raises(ValueError, match=">= 1"):
        RunnerSettings.from_dict({"concurrency": 0})


def test_runner_answers_caches_and_skips_on_second_run(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = Scripted(delay=0.01)
    settings = RunnerSettings(concurrency=5, price_per_1k_prompt=1.0, price_per_1k_completion=2.0, **FAST)
    out = run_requests(backend, reqs(30), cache, "wanli", settings)
    assert set(out) == {f"p{i}" for i in range(30)} and out["p7"].texts == ["echo prompt number 7"]
    assert backend.max_in_flight == 5 and backend.closed == 1
    assert len(cache) == 30
    again = Scripted()
    out2 = run_requests(again, reqs(30), cache, "wanli", settings)
    assert again.calls == {} and out2 == out
    ledger = cache.ledger("wanli")
    assert ledger["sent"] == 30 and ledger["cached"] == 30 and ledger["prompt_tokens"] == 90
    assert ledger["cost"] == pytest.approx((90 * 1.0 + 60 * 2.0) / 1000)


def test_runner_rejects_duplicate_uids_and_sends_equal_requests_once(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(ValueError, match="'p1'"):
        run_requests(Scripted(), reqs(2) + reqs(2)[1:], cache, "s", RunnerSettings(**FAST))
    same = [GenerationRequest("a", "same prompt"), GenerationRequest("b", "same prompt")]
    backend = Scripted()
    out = run_requests(backend, same, cache, "s", RunnerSettings(**FAST))
    assert out["a"] == out["b"] and sum(len(v) for v in backend.calls.values()) == 1


def test_retries_with_backoff_and_counts_faults(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    faults = {"p0": [RetryableError("server_error", "500"), RetryableError("bad_body", "cut")],
              "p1": [RetryableError("rate_limit", "429")]}
    backend = Scripted(faults)
    out = run_requests(backend, reqs(3), cache, "s", RunnerSettings(**FAST))
    assert all(isinstance(r, Response) for r in out.values())
    assert len(backend.calls["p0"]) == 3 and len(backend.calls["p1"]) == 2 and len(backend.calls["p2"]) == 1
    ledger = cache.ledger("s")
    assert ledger["retries"] == 3 and ledger["sent"] == 6
    assert ledger["faults"] == {"server_error": 1, "bad_body": 1, "rate_limit": 1}


def test_retry_waits_at_least_retry_after(tmp_path):
    backend = Scripted({"p0": [RetryableError("rate_limit", "429", retry_after=0.4)]})
    run_requests(backend, reqs(1), ResponseCache(tmp_path / "c.sqlite"), "s", RunnerSettings(**FAST))
    first, second = backend.calls["p0"]
    assert second - first >= 0.4


def test_backoff_is_full_jitter_capped():
    import random

    s = RunnerSettings(backoff_base_s=1.0, backoff_max_s=8.0)
    rng = random.Random(0)
    draws = [s.backoff(6, None, rng) for _ in range(2000)]
    assert 0.0 <= min(draws) < 0.5 and 7.5 < max(draws) <= 8.0  # uniform(0, min(8, 32))
    assert all(s.backoff(1, 2.5, rng) >= 2.5 for _ in range(50))


def test_timeout_is_a_retried_fault(tmp_path):
    class SlowOnce(Scripted):
        async def agenerate(self, request):
            if len(self.calls.get(request.uid, [])) == 0:
                self.calls[request.uid] = [time.monotonic()]
                await asyncio.sleep(10)
            return await super().agenerate(request)

    cache = ResponseCache(tmp_path / "c.sqlite")
    out = run_requests(SlowOnce(), reqs(2), cache, "s", RunnerSettings(timeout_s=0.2, **FAST))
    assert all(isinstance(r, Response) for r in out.values())
    assert cache.ledger("s")["faults"] == {"timeout": 2}


def test_rejection_becomes_a_cached_failure(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = Scripted({"p1": [RequestRejected("context_length", "prompt too long")]})
    out = run_requests(backend, reqs(3), cache, "s", RunnerSettings(**FAST))
    assert out["p1"] == Failure("context_length", "prompt too long")
    again = Scripted({"p1": [RequestRejected("context_length", "prompt too long")]})
    assert run_requests(again, reqs(3), cache, "s", RunnerSettings(**FAST))["p1"] == out["p1"]
    assert again.calls == {} and cache.ledger("s")["failures"] == {"context_length": 1}


def test_exhausted_retries_raise_and_keep_answers(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = Scripted({"p0": [RetryableError("connection", "cannot reach http://x: is the server running?")] * 5},
                       delay=0.01)
    with pytest.raises(GenerationError, match="cannot reach http://x") as info:
        run_requests(backend, reqs(4), cache, "s", RunnerSettings(max_retries=2, concurrency=1, **FAST))
    assert "p0" in str(info.value) and len(backend.calls["p0"]) == 3
    assert backend.closed == 1


def test_fatal_backend_error_stops_the_run(tmp_path):
    backend = Scripted({"p2": [GenerationError("set OPENAI_API_KEY")]})
    with pytest.raises(GenerationError, match="OPENAI_API_KEY"):
        run_requests(backend, reqs(3), ResponseCache(tmp_path / "c.sqlite"), "s", RunnerSettings(**FAST))


class Batchy:
    """A BatchBackend: answers in order; the prompt "reject" becomes a Failure."""

    name, model, batch_size = "batchy", "m", 4

    def __init__(self):
        self.batches: list[list[str]] = []

    def generate_batch(self, requests):
        self.batches.append([r.uid for r in requests])
        return [Failure("bad_request", "no") if r.prompt == "reject" else Response([r.prompt.upper()], ["stop"], 1, 1)
                for r in requests]


def test_batch_backend_runs_in_order_in_chunks(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    requests = reqs(10) + [GenerationRequest("r", "reject")]
    backend = Batchy()
    first = run_requests(backend, requests[:5], cache, "s", RunnerSettings(progress=False))
    assert backend.batches == [["p0", "p1", "p2", "p3"], ["p4"]]
    out = run_requests(backend, requests, cache, "s", RunnerSettings(progress=False))
    assert backend.batches[2:] == [["p5", "p6", "p7", "p8"], ["p9", "r"]]
    assert out["p3"] == first["p3"] and out["p3"].texts == ["PROMPT NUMBER 3"] and out["r"].kind == "bad_request"
    assert cache_key("batchy", "m", requests[0]) in cache and cache.ledger("s")["sent"] == 11
