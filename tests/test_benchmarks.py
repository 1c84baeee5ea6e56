"""The throughput benchmark runs end to end at smoke size (its numbers mean nothing at this size)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_train_throughput_smoke(tmp_path):
    out = tmp_path / "tt.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "train_throughput.py"), "--steps", "4",
                           "--warmup", "2", "--rounds", "1", "--n-examples", "256", "--max-wait", "0",
                           "--out", str(out)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "nliforge/A" in proc.stdout and "hf_B_dynamic" in proc.stdout
    summary = json.loads(out.read_text())
    assert summary["table"] and summary["n_params"] > 0


@pytest.mark.slow
def test_gpu_throughput_cpu_smoke(tmp_path):
    out = tmp_path / "gt.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_throughput.py"), "--model", "tiny",
                           "--device", "cpu", "--steps", "3", "--warmup", "2", "--rounds", "1",
                           "--n-examples", "256", "--max-wait", "0", "--profile-steps", "2", "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "nliforge/hf_A" in proc.stdout and "5ep WANLI" in proc.stdout
    assert "conversions per step, by calling function" in Path(str(out) + ".profile.txt").read_text()
    summary = json.loads(out.read_text())
    assert set(summary["contenders"]) == {"nliforge", "hf_A_maxlen", "hf_B_best"}
    for res in summary["contenders"].values():
        assert res["examples_per_s"] > 0 and res["real_tokens_per_s"] > 0
        assert res["padded_tokens_per_s"] >= res["real_tokens_per_s"]
        assert res["projected_5ep_wanli_s"] > 0 and res["mfu"] is None  # no peak FLOPs on CPU
    assert summary["contenders"]["hf_A_maxlen"]["runs"][0]["mean_batch_width"] == 128
    assert summary["env"]["device"] == "cpu" and summary["env"]["torch"] and summary["env"]["transformers"]
    assert 20 < summary["tokens_per_pair"]["mean"] < 40
    # the profiled runs: nliforge's own steps turn no tensor into a host value (tests/test_host_sync.py)
    from nliforge.testing.host_sync import UPSTREAM

    host = summary["host_values_per_step"]
    assert set(host) == {"nliforge", "hf_A_maxlen", "hf_B_best"}
    assert {key.split(" in ")[1] for key in host["nliforge"]} <= UPSTREAM, host["nliforge"]
