"""Slow: a 4-shard WANLI generation run as a Slurm array on the local one-node cluster (slurm/local_cluster.py)
against two stand-in servers, one stopped partway (its requests finish on the other), one shard stopped once
by SIGTERM (as Slurm preempts) and rerun; merged, the dataset is the unsharded run's byte for byte, and the
servers' logs show no request answered twice. Skips without a cluster, unless NLIFORGE_REQUIRE_SLURM=1 (CI)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.generate import generate
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
LAUNCHER = ["hydra/launcher=slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=2",
            "hydra.launcher.timeout_min=15"]


def wanli(clf: Path, urls: list[str], cache: Path) -> list[str]:
    return ["generator=openai_completions", f"generator.base_url=[{','.join(urls)}]", "generator.api_key_env=null",
            "generator.model=stand-in", "generator.runner.progress=false", "generator.runner.concurrency=4",
            "generator.runner.requests_per_minute=null", "generator.runner.tokens_per_minute=null",
            "generator.runner.backoff_base_s=0.05", "pipeline.generate.per_request=1",
            f"pipeline.classifier.run_dir={clf}", "pipeline.seeds.max_per_label=8", f"paths.cache_dir={cache}"]


def answered(log: Path) -> Counter:
    rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    return Counter(r["sha256"] for r in rows if r["event"] == "answered" and r["status"] == 200)


def stop_after(server: LocalOpenAIServer, answers: int, stopped: threading.Event) -> None:
    while server.stats["200"] < answers:
        time.sleep(0.01)
    server.stop()
    stopped.set()


def generate_cli(args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nliforge.generate", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1500)


@pytest.mark.timeout(1800)
def test_sharded_wanli_on_a_slurm_array_merges_into_the_unsharded_dataset(slurm_env, tmp_path, world_cache,
                                                                          classifier_run_dir):
    logs = {name: tmp_path / f"{name}.jsonl" for name in ("ref", "a", "b")}
    with LocalOpenAIServer(latency_s=0.0, responder=wanli_responder, log_path=logs["ref"]) as ref:
        single = generate(compose_config("generate", wanli(classifier_run_dir, [ref.base_url], world_cache),
                                         tmp_path / "single", world_cache))
    n_requests = single["stages"]["generate"]["count_in"]
    sweep, marker = tmp_path / "sweep", tmp_path / "killed_once"
    env = {**slurm_env, "NLIFORGE_TEST_SIGNAL_SHARD": f"2/4:3:SIGTERM:{marker}"}
    a = LocalOpenAIServer(latency_s=0.1, responder=wanli_responder, log_path=logs["a"], max_concurrency=4).start()
    stopped = threading.Event()
    with LocalOpenAIServer(latency_s=0.1, responder=wanli_responder, log_path=logs["b"], max_concurrency=4) as b:
        threading.Thread(target=stop_after, args=(a, n_requests // 4, stopped), daemon=True).start()
        args = ["-m", "shard=0/4,1/4,2/4,3/4", *wanli(classifier_run_dir, [a.base_url, b.base_url], world_cache),
                *LAUNCHER, f"hydra.sweep.dir={sweep}"]
        first = generate_cli(args, env, tmp_path)
        # shard 2 stopped itself once with SIGTERM (as a preempted job): the array reports it, the others finish
        assert first.returncode != 0 and marker.exists(), first.stdout[-2000:] + first.stderr[-3000:]
        assert "stopped by SIGTERM" in first.stderr, first.stderr[-3000:]
        assert [(sweep / str(k) / "manifest.json").is_file() for k in range(4)] == [True] * 4
        again = generate_cli(args, env, tmp_path)          # the same multirun: finished shards skip, shard 2 resumes
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-3000:]
    a.stop()
    assert stopped.is_set(), "server a was never stopped: the run ended before a quarter of its requests"
    merged = generate_cli([f"merge={sweep}", f"hydra.run.dir={tmp_path / 'merged'}"], slurm_env, tmp_path)
    assert merged.returncode == 0, merged.stderr[-3000:]
    assert (tmp_path / "merged" / "dataset.jsonl").read_bytes() == (tmp_path / "single" / "dataset.jsonl").read_bytes()
    counts = answered(logs["a"]) + answered(logs["b"])
    assert set(counts) == set(answered(logs["ref"])) and len(counts) == n_requests
    assert max(counts.values()) == 1                                   # no request answered twice
    assert 0 < sum(answered(logs["a"]).values()) < n_requests / 2      # a answered until it was stopped
    manifest = json.loads((tmp_path / "merged" / "manifest.json").read_text())
    endpoints = manifest["ledger"]["generate"]["endpoints"]
    assert sum(e["answers"] for e in endpoints.values()) == n_requests == manifest["ledger"]["generate"]["sent"]
    assert sum(endpoints[a.base_url]["errors"].values()) >= 1          # a's failures, counted on a
