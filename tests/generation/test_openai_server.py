"""The OpenAI backends against the local OpenAI-compatible server: shapes, faults, rejections, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from nliforge.generation.backends import build_backend, connect_hint
from nliforge.generation.backends.openai_api import OpenAIChat, OpenAICompletions, _retry_after
from nliforge.generation.cache import ResponseCache
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.types import Failure, GenerationError, GenerationRequest, Response, Sampling
from nliforge.generation.stand_in.server import FAULT_KINDS, LocalOpenAIServer, apply_stop
from nliforge.generation.stand_in.responders import input_digest
from nliforge.pipelines.wanli.stand_in import wanli_responder

pytestmark = pytest.mark.timeout(120)
FAST = dict(progress=False, backoff_base_s=0.005, backoff_max_s=0.05)


def reqs(n: int, n_samples: int = 1) -> list[GenerationRequest]:
    return [GenerationRequest(uid=f"r{i}", prompt=f"Request {i}: write about item {i % 7}.",
                              sampling=Sampling(max_tokens=30), n=n_samples, seed=i) for i in range(n)]


def answered(log_path) -> Counter:
    """Successful answers per input digest, from the server's log."""
    rows = [json.loads(line) for line in open(log_path)]
    return Counter(r["input"] for r in rows if r["event"] == "answered" and r["status"] == 200 and r["fault"] is None)


def test_completions_and_chat_shapes_and_determinism(tmp_path):
    with LocalOpenAIServer(latency_s=0.005) as srv:
        comp = OpenAICompletions("local-model", base_url=srv.base_url, api_key_env=None)
        chat = OpenAIChat("local-model", base_url=srv.base_url, api_key_env=None)
        assert comp.name == "openai_completions" and chat.name == "openai_chat" and chat.model == "local-model"
        requests = reqs(6, n_samples=3)
        c1 = run_requests(comp, requests, ResponseCache(tmp_path / "a.sqlite"), "s", RunnerSettings(**FAST))
        c2 = run_requests(comp, requests, ResponseCache(tmp_path / "b.sqlite"), "s", RunnerSettings(**FAST))
        ch = run_requests(chat, requests, ResponseCache(tmp_path / "c.sqlite"), "s", RunnerSettings(**FAST))
    assert c1 == c2  # deterministic given (prompt, seed, choice index)
    for out in (c1, ch):
        r = out["r0"]
        assert isinstance(r, Response) and len(r.texts) == 3 and len(set(r.texts)) == 3
        assert all(f in ("stop", "length") for f in r.finish_reasons)
        assert r.prompt_tokens == len(requests[0].prompt.split()) and r.completion_tokens > 0
        assert all("\n\n" not in t for t in r.texts)  # the stop string is honoured
    assert srv.stats["200"] == 18


def test_apply_stop_and_max_tokens():
    assert apply_stop(" a b\n\nc d", ["\n\n"], 10) == (" a b", "stop")
    assert apply_stop(" a b c d e", ["\n\n"], 3) == (" a b c", "length")
    assert apply_stop(" a b", [], 3) == (" a b", "stop")


def test_faults_of_every_kind_recover_exactly_once(tmp_path):
    """20% injected faults: every request's answer stored once, results equal a fault-free run, every
    injected fault counted. Only what load cannot change is asserted: on a busy machine the client's 2 s
    timeout also fires on slow honest answers (a run at load 5-7 counted 23 timeouts against 7 injected),
    which the client cannot tell from an injected hang, and on slow fault answers, which it then counts as
    timeouts; each such timeout is a retry and may make the server answer an input twice."""
    requests = reqs(120)
    log = tmp_path / "server.jsonl"
    backend_args = dict(api_key_env=None, timeout_s=2.0)  # far above any real answer under CI load; injected hangs last 300 s
    settings = RunnerSettings(concurrency=16, timeout_s=2.0, **FAST)
    with LocalOpenAIServer(latency_s=0.01, fault_rate=0.2, fault_seed=3, log_path=log, retry_after_s=0.02) as srv:
        cache = ResponseCache(tmp_path / "faulty.sqlite")
        faulty = run_requests(OpenAICompletions("m", base_url=srv.base_url, **backend_args), requests, cache, "s", settings)
    with LocalOpenAIServer(latency_s=0.005) as clean_srv:
        clean = run_requests(OpenAICompletions("m", base_url=clean_srv.base_url, **backend_args), requests,
                             ResponseCache(tmp_path / "clean.sqlite"), "s", settings)
    assert faulty == clean and len(cache) == 120   # each request's answer stored once, as without faults
    assert set(srv.stats) >= set(FAULT_KINDS), srv.stats  # every kind was injected at least once
    ledger = cache.ledger("s")
    faults, injected = ledger["faults"], {"rate_limit": srv.stats["rate_limit"], "server_error": srv.stats["server_error"],
                                          "timeout": srv.stats["timeout"],
                                          "bad_body": srv.stats["truncated"] + srv.stats["bad_json"]}
    # The client sees both broken-body kinds as bad_body. A fault answer the client saw is counted as its kind
    # (or as a timeout when it came too late); an injected hang is always a timeout; so no fault goes uncounted.
    for kind in ("rate_limit", "server_error", "bad_body"):
        assert faults.get(kind, 0) <= injected[kind], (faults, injected)
    assert faults.get("timeout", 0) >= injected["timeout"] and sum(faults.values()) >= sum(injected.values())
    late = faults.get("timeout", 0) - injected["timeout"]   # client-side timeouts of answers the server sent
    counts = answered(log)
    assert len(counts) == 120 and sum(counts.values()) - 120 <= late, (counts, faults, injected)
    if late == 0:   # an unloaded machine: the server answered each request exactly once, every fault as injected
        assert set(counts.values()) == {1} and faults == injected
    assert ledger["retries"] == sum(faults.values()) and ledger["sent"] == 120 + ledger["retries"]


def test_retry_after_header_is_honoured(tmp_path):
    log = tmp_path / "server.jsonl"
    with LocalOpenAIServer(latency_s=0.001, fault_rate=1.0, fault_kinds=("rate_limit",), max_faults_per_request=1,
                           retry_after_s=0.5, log_path=log) as srv:
        backend = OpenAICompletions("m", base_url=srv.base_url, api_key_env=None)
        run_requests(backend, reqs(3), ResponseCache(tmp_path / "c.sqlite"), "s", RunnerSettings(**FAST))
    rows = [r for r in map(json.loads, open(log)) if r["event"] == "answered"]
    for digest in {r["input"] for r in rows}:
        times = [r["t"] for r in rows if r["input"] == digest]
        assert len(times) == 2 and times[1] - times[0] >= 0.5


def test_retry_after_parsing():
    assert _retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # a date in the past
    assert _retry_after({}) is None


def test_context_overflow_is_a_failure_not_resent(tmp_path):
    log = tmp_path / "server.jsonl"
    long = GenerationRequest("long", "word " * 200, Sampling(max_tokens=50))
    requests = reqs(3) + [long]
    with LocalOpenAIServer(latency_s=0.001, context_tokens=100, log_path=log) as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        backend = OpenAICompletions("m", base_url=srv.base_url, api_key_env=None)
        first = run_requests(backend, requests, cache, "s", RunnerSettings(**FAST))
        second = run_requests(backend, requests, cache, "s", RunnerSettings(**FAST))
    assert isinstance(first["long"], Failure) and first["long"].kind == "context_length"
    assert "maximum context length is 100" in first["long"].message and second == first
    rows = [json.loads(line) for line in open(log)]
    long_rows = [(r["event"], r["status"]) for r in rows if r["input"] == input_digest(long.prompt)]
    assert long_rows == [("received", None), ("answered", 400)]  # sent once over two runs
    assert len(rows) == 8 and cache.ledger("s")["failures"] == {"context_length": 1}


def test_endpoint_down_is_waited_for_then_named_with_what_to_start(tmp_path, caplog):
    with LocalOpenAIServer() as srv:
        url = srv.base_url
    backend = build_backend({"kind": "openai_completions", "model": "m", "base_url": url, "api_key_env": None})
    started = time.monotonic()
    with pytest.raises(GenerationError) as info:
        run_requests(backend, reqs(2), ResponseCache(tmp_path / "c.sqlite"), "s",
                     RunnerSettings(max_retries=2, connect_wait_s=1.0, **FAST))
    assert 1.0 <= time.monotonic() - started < 30   # the bounded wait, not the retries' backoff
    msg = str(info.value)
    assert msg.startswith(f"cannot reach {url} (waited 1 s, runner.connect_wait_s;") and "\n" not in msg
    assert "generator=stand_in generator.responder=<name>" in msg
    assert [r.getMessage() for r in caplog.records if "waiting up to 1 s" in r.getMessage()] == [
        f"no answer from {url} yet ({msg.split('; ', 1)[1].split('):')[0]}): waiting up to 1 s for it to accept connections"]
    assert ResponseCache(tmp_path / "c.sqlite").ledger("s").get("sent", 0) == 0   # nothing was sent


def test_a_server_that_comes_up_while_waited_for_answers(tmp_path):
    with LocalOpenAIServer() as srv:
        port = srv.port
    backend = OpenAICompletions("m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=None, timeout_s=5)
    late = LocalOpenAIServer(port=port)
    timer = threading.Timer(0.8, late.start)
    timer.start()
    try:
        out = run_requests(backend, reqs(2), ResponseCache(tmp_path / "c.sqlite"), "s",
                           RunnerSettings(connect_wait_s=20.0, **FAST))
    finally:
        timer.join()
        late.stop()
    assert all(isinstance(r, Response) for r in out.values())


@pytest.mark.parametrize("node,hint", [
    ({"name": "vllm", "base_url": "http://127.0.0.1:8000/v1"}, "start the vLLM server with `nliforge-vllm start`"),
    ({"base_url": "http://localhost:8011/v1"}, "generator=stand_in generator.responder=<name>"),
    ({"base_url": "https://api.example.com/v1"}, "check generator.base_url and this machine's network "
                                                  "(api.example.com is a remote API: nothing to start here)"),
    ({}, "(api.openai.com is a remote API"),
], ids=["vllm", "local server", "remote API", "OpenAI"])
def test_the_connection_hint_fits_the_generator(node, hint):
    assert hint in connect_hint(node)


def test_missing_api_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("NLIFORGE_TEST_KEY", raising=False)
    with pytest.raises(GenerationError, match="set the environment variable NLIFORGE_TEST_KEY"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", api_key_env="NLIFORGE_TEST_KEY")


def test_api_key_from_env_and_wrong_key(tmp_path, monkeypatch):
    with LocalOpenAIServer(latency_s=0.001, api_key="sekret") as srv:
        monkeypatch.setenv("NLIFORGE_TEST_KEY", "sekret")
        ok = OpenAIChat("m", base_url=srv.base_url, api_key_env="NLIFORGE_TEST_KEY")
        out = run_requests(ok, reqs(2), ResponseCache(tmp_path / "a.sqlite"), "s", RunnerSettings(**FAST))
        assert all(isinstance(r, Response) for r in out.values())
        monkeypatch.setenv("NLIFORGE_TEST_KEY", "wrong")
        bad = OpenAIChat("m", base_url=srv.base_url, api_key_env="NLIFORGE_TEST_KEY")
        with pytest.raises(GenerationError, match="401.*set NLIFORGE_TEST_KEY"):
            run_requests(bad, reqs(2), ResponseCache(tmp_path / "b.sqlite"), "s", RunnerSettings(**FAST))


def test_wanli_responder_continues_the_pattern():
    from nliforge.pipelines.wanli.prompts import wanli_prompt

    examples = [("A man plays a red guitar on the street.", "A man plays music."),
                ("Two dogs run across a wide park.", "Animals are outside.")]
    prompt = wanli_prompt(examples, "entailment")
    texts = [wanli_responder(prompt, i, 7, {"max_tokens": 60}) for i in range(200)]
    assert texts == [wanli_responder(prompt, i, 7, {"max_tokens": 60}) for i in range(200)]
    good = [t for t in texts if t.count("\nImplication: ") == 1 and t.startswith(" ")]
    assert 0.8 * len(texts) <= len(good) < len(texts)  # ~10% degenerate answers
    assert any("Write a pair of sentences" in t for t in texts)
    premises = [t.split("\n")[0].strip() for t in good]
    assert any(p not in (e[0] for e in examples) for p in premises)  # perturbed, not copied


def test_command_line_server_prints_url_and_serves(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "nliforge.generation.stand_in.server", "--port", "0",
                             "--latency", "0.001", "--log", str(tmp_path / "log.jsonl")],
                            stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        import urllib.request

        models = json.loads(urllib.request.urlopen(url + "/models", timeout=10).read())
        assert models["data"][0]["id"] == "local-model"
        backend = OpenAICompletions("m", base_url=url, api_key_env=None)
        out = run_requests(backend, reqs(2), ResponseCache(tmp_path / "c.sqlite"), "s", RunnerSettings(**FAST))
        assert isinstance(out["r1"], Response)
        time.sleep(0.05)
        assert len(answered(tmp_path / "log.jsonl")) == 2
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_generation_throughput_benchmark_smoke(tmp_path):
    """The benchmark runs end to end at smoke size (its numbers mean little at this size)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "gt.json"
    proc = subprocess.run([sys.executable, str(root / "benchmarks" / "generation_throughput.py"), "--quick",
                           "--max-wait", "0", "--out", str(out)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "runner / bound" in proc.stdout and "runner / sequential" in proc.stdout
    summary = json.loads(out.read_text())
    assert summary["runner_rps"] > summary["sequential_rps"] > 0 and summary["runs"]["runner"][0]["retries"] == 0
