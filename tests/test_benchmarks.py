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
