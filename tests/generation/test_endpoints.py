"""Several endpoints in one run: balanced by free slots, an endpoint stopped mid-run has its requests
finished on the other, nothing answered twice, and the ledger counts per endpoint."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import pytest

from nliforge.errors import NLIDataError
from nliforge.generation.backends import build_backend
from nliforge.generation.backends.endpoints import Endpoints
from nliforge.generation.backends.openai_api import OpenAICompletions
from nliforge.generation.cache import ResponseCache
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.generation.types import GenerationRequest, Response, Sampling, cache_key

pytestmark = pytest.mark.timeout(120)
FAST = dict(progress=False, backoff_base_s=0.005, backoff_max_s=0.05)


def reqs(n: int) -> list[GenerationRequest]:
    return [GenerationRequest(uid=f"r{i}", prompt=f"Request {i}: write about item {i % 7}.",
                              sampling=Sampling(max_tokens=20), seed=i) for i in range(n)]


def answered(*logs) -> Counter:
    """Successful answers per input digest, over the servers' logs."""
    rows = [json.loads(line) for log in logs if log.exists() for line in open(log)]
    return Counter(r["input"] for r in rows if r["event"] == "answered" and r["status"] == 200)


def stop_after(server: LocalOpenAIServer, answers: int) -> None:
    """Stop `server` once it has answered `answers` requests."""
    while server.stats["200"] < answers:
        time.sleep(0.005)
    server.stop()


def node(urls, **extra) -> dict:
    return {"kind": "openai_completions", "model": "local-model", "base_url": urls, "api_key_env": None,
            "runner": {"concurrency": 4}, **extra}


def test_one_url_stays_the_plain_backend_and_lists_make_endpoints():
    one = build_backend(node("http://127.0.0.1:1/v1"))
    assert isinstance(one, OpenAICompletions)
    two = build_backend(node(["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]))
    assert isinstance(two, Endpoints) and two.total_slots == 8
    slots = build_backend(node(None, endpoints=[{"base_url": "http://a/v1", "concurrency": 3},
                                                {"base_url": "http://b/v1", "concurrency": 5}]))
    assert slots.total_slots == 8 and [e.slots for e in slots.eps] == [3, 5]
    # the cache key is the one server's: which server answers never changes the data
    assert (two.name, two.model) == (one.name, one.model)


@pytest.mark.parametrize("bad,key", [(["http://a/v1", "http://a/v1"], "each URL once"),
                                     ([], "non-empty list")])
def test_bad_endpoint_lists_are_one_error(bad, key):
    with pytest.raises(NLIDataError, match=key):
        build_backend(node(bad))
    with pytest.raises(NLIDataError, match=r"generator.endpoints\[1\]"):
        build_backend(node(None, endpoints=[{"base_url": "http://a/v1"}, {"base_url": "http://b/v1", "concurrency": 0}]))


def test_free_slots_balance_requests_by_concurrency(tmp_path):
    """3 and 1 slots, the same latency: the first endpoint answers about three quarters."""
    with LocalOpenAIServer(latency_s=0.02) as a, LocalOpenAIServer(latency_s=0.02) as b:
        backend = build_backend(node(None, endpoints=[{"base_url": a.base_url, "concurrency": 3},
                                                      {"base_url": b.base_url, "concurrency": 1}]))
        cache = ResponseCache(tmp_path / "c.sqlite")
        out = run_requests(backend, reqs(80), cache, "gen", RunnerSettings(**FAST))
        ledger = cache.ledger("gen")
    assert all(isinstance(r, Response) for r in out.values())
    eps = ledger["endpoints"]
    n_a, n_b = eps[a.base_url]["answers"], eps[b.base_url]["answers"]
    assert n_a + n_b == 80 and a.stats["200"] == n_a and b.stats["200"] == n_b
    assert 50 <= n_a <= 70, (n_a, n_b)        # 60 expected from 3:1 slots
    assert eps[a.base_url]["completion_tokens"] + eps[b.base_url]["completion_tokens"] == ledger["completion_tokens"]
    assert 0.02 <= eps[a.base_url]["mean_latency_s"] < 1.0 and eps[a.base_url]["errors"] == {}


def test_stopped_endpoint_requests_finish_on_the_other_exactly_once(tmp_path):
    logs = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    requests = reqs(120)
    with LocalOpenAIServer(latency_s=0.03, log_path=logs[0]) as a, \
            LocalOpenAIServer(latency_s=0.03, log_path=logs[1]) as b:
        backend = build_backend(node([a.base_url, b.base_url]))
        cache = ResponseCache(tmp_path / "c.sqlite")
        threading.Thread(target=stop_after, args=(a, 20), daemon=True).start()   # stopped partway through
        out = run_requests(backend, requests, cache, "gen", RunnerSettings(**FAST))
        ledger = cache.ledger("gen")
        keys = {cache_key(backend.name, backend.model, r) for r in requests}
        assert cache.keys() == keys
    assert all(isinstance(r, Response) for r in out.values())
    eps = ledger["endpoints"]
    assert 0 < eps[a.base_url]["answers"] < 60 < eps[b.base_url]["answers"]   # a went down, b took over
    assert sum(eps[a.base_url]["errors"].values()) >= 1                       # the failures are counted on a
    assert eps[a.base_url]["answers"] + eps[b.base_url]["answers"] == 120
    counts = answered(*logs)
    assert len(counts) == 120 and max(counts.values()) == 1                   # no request answered twice
    assert ledger["faults"] == {}                  # the failover happened inside the backend: no runner retry


def test_every_endpoint_down_reaches_the_runner_and_names_them(tmp_path):
    from nliforge.generation.types import GenerationError

    backend = build_backend(node(["http://127.0.0.1:9/v1", "http://127.0.0.1:7/v1"]))
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(GenerationError, match="cannot reach http://127.0.0.1"):
        run_requests(backend, reqs(2), cache, "gen", RunnerSettings(max_retries=1, **FAST))
    errors = cache.ledger("gen")["endpoints"]
    assert errors["http://127.0.0.1:9/v1"]["errors"]["connection"] >= 1
    assert errors["http://127.0.0.1:7/v1"]["errors"]["connection"] >= 1
