"""Slow: a shard of a WANLI run, a real `nliforge-generate` process, killed during its generate stage with
SIGTERM (it lets the requests in flight finish: nothing is sent twice) or SIGKILL (only the requests in
flight at the kill are sent again) and rerun; merged, it gives the unsharded run's dataset byte for byte."""

from __future__ import annotations

import signal
import time
from collections import Counter

import pytest

from conftest import compose_config
from test_generate_resume import KEY_ENV, overrides, start
from test_generate_resume import served as log_rows
from nliforge.generate import generate
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

pytestmark = pytest.mark.slow
CONCURRENCY = 4   # the WANLI set-up's (test_generate_resume.overrides)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGKILL"])
def test_killed_shard_rerun_changes_nothing(signame, tmp_path, world_cache, classifier_run_dir, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    logs = tmp_path / "ref.jsonl", tmp_path / "shards.jsonl"
    with LocalOpenAIServer(latency_s=0.0, responder=wanli_responder, log_path=logs[0]) as srv:
        generate(compose_config("generate", overrides(classifier_run_dir, srv.base_url, world_cache),
                                tmp_path / "single", world_cache))
    with LocalOpenAIServer(latency_s=0.2, responder=wanli_responder, log_path=logs[1],
                           max_concurrency=CONCURRENCY) as srv:
        args = overrides(classifier_run_dir, srv.base_url, world_cache)
        shard1 = tmp_path / "multirun" / "1"
        proc = start([*args, "shard=1/2"], shard1)
        while proc.poll() is None and sum(r["event"] == "answered" for r in log_rows(logs[1])) < 10:
            time.sleep(0.02)
        assert proc.poll() is None, "the shard finished before it could be killed"
        proc.send_signal(getattr(signal, signame))
        _, err = proc.communicate(timeout=600)
        assert proc.returncode != 0
        if signame == "SIGTERM":   # one line, after the requests in flight were answered and cached
            assert "error: stopped by SIGTERM" in err and "Traceback" not in err, err[-2000:]
        before_rerun = {r["sha256"] for r in log_rows(logs[1]) if r["event"] == "received"}   # the killed start's
        proc = start([*args, "shard=1/2"], shard1)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        generate(compose_config("generate", [*args, "shard=0/2"], tmp_path / "multirun" / "0", world_cache))
    generate(compose_config("generate", [f"merge={tmp_path / 'multirun'}"], tmp_path / "merged", world_cache))
    assert (tmp_path / "merged" / "dataset.jsonl").read_bytes() == (tmp_path / "single" / "dataset.jsonl").read_bytes()
    received = Counter(r["sha256"] for r in log_rows(logs[1]) if r["event"] == "received")
    reference = Counter(r["sha256"] for r in log_rows(logs[0]) if r["event"] == "received")
    assert set(received) == set(reference)                           # the shards sent every request
    twice = [k for k, v in received.items() if v > 1]
    if signame == "SIGTERM":
        assert twice == []                                           # nothing sent twice
    else:   # only requests in flight at the kill (sent before it, their answers never cached) go again
        assert len(twice) <= CONCURRENCY and set(twice) <= before_rerun
