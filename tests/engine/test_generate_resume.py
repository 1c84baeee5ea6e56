"""Slow: `nliforge-generate` as a real process, killed with SIGKILL during the generate stage and
resumed, gives the same dataset as an uninterrupted run; and the offline demo command at small size."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.generate import generate
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

pytestmark = pytest.mark.slow
KEY_ENV = "NLIFORGE_TEST_API_KEY"
ROOT = Path(__file__).resolve().parents[2]


def overrides(clf: Path, base_url: str, cache: Path) -> list[str]:
    return ["generator=openai_completions", f"generator.base_url={base_url}", f"generator.api_key_env={KEY_ENV}",
            "generator.model=stand-in", "generator.runner.progress=false", "generator.runner.concurrency=4",
            "generator.runner.requests_per_minute=null", "generator.runner.tokens_per_minute=null",
            "pipeline.generate.per_request=1", f"pipeline.classifier.run_dir={clf}",
            "pipeline.seeds.max_per_label=8", f"paths.cache_dir={cache}"]


def served(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []


def start(args: list[str], run_dir: Path) -> subprocess.Popen:
    env = {**os.environ, KEY_ENV: "test-key", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-m", "nliforge.generate", *args, f"hydra.run.dir={run_dir}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(600)
def test_sigkill_during_generation_then_resume_gives_the_same_dataset(tmp_path, world_cache, classifier_run_dir,
                                                                        monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    rng = random.Random(7)
    log = tmp_path / "server.jsonl"
    with LocalOpenAIServer(latency_s=0.15, responder=wanli_responder, log_path=log, max_concurrency=4) as srv:
        args = overrides(classifier_run_dir, srv.base_url, world_cache)
        run = tmp_path / "killed"
        kills = 0
        while kills < 3:
            before = len(served(log))
            proc = start(args, run)
            target = before + rng.randint(3, 30)
            while proc.poll() is None and len(served(log)) < target:
                time.sleep(0.02)
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        assert kills == 3, "the run finished before it could be killed three times"
        proc = start(args, run)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        killed_log = served(log)
        # the same config, uninterrupted, in a fresh folder (in-process)
        ref = compose_config("generate", args, tmp_path / "reference", world_cache)
        generate(ref)
    assert (run / "dataset.jsonl").read_bytes() == (tmp_path / "reference" / "dataset.jsonl").read_bytes()
    n_requests = json.loads((run / "manifest.json").read_text())["stages"]["generate"]["count_in"]
    answered = [r["sha256"] for r in killed_log if r["status"] == 200]
    # each request answered at least once; re-sent only if in flight at a kill (<= concurrency per kill)
    assert len(set(answered)) == n_requests
    assert len(answered) - n_requests <= 3 * 4
