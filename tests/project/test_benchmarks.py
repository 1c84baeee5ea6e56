"""The throughput benchmark runs end to end at smoke size (its numbers mean nothing at this size)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    # the profiled runs: nliforge's own steps turn no tensor into a host value (tests/models/test_host_sync.py)
    from nliforge.testing.host_sync import UPSTREAM

    host = summary["host_values_per_step"]
    assert set(host) == {"nliforge", "hf_A_maxlen", "hf_B_best"}
    assert {key.split(" in ")[1] for key in host["nliforge"]} <= UPSTREAM, host["nliforge"]


def _gpu_session():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import gpu_session

    return gpu_session


def test_gpu_session_rotates_contenders_and_shrinks_a_cpu_smoke_run(tmp_path):
    gs = _gpu_session()
    step = gs.PARTS["main"][0]
    args = gs.parse_args(["--device", "cpu", "--model", "tiny", "--out-dir", str(tmp_path)])
    first, second = (gs.command(step, r, args, tmp_path / "x.json") for r in (0, 1))
    names = lambda cmd: cmd[cmd.index("--contenders") + 1:cmd.index("--out")]  # noqa: E731
    assert names(first) == list(step.contenders) and names(second) == [*step.contenders[1:], step.contenders[0]]
    assert first[first.index("--steps") + 1] == "3" and first[first.index("--compile-backend") + 1] == "eager"
    gpu = gs.command(step, 0, gs.parse_args(["--out-dir", str(tmp_path)]), tmp_path / "x.json")
    assert gpu[gpu.index("--steps") + 1] == str(step.steps) and "--compile-backend" not in gpu
    assert {"nliforge+fused", "nliforge+dyn", "hf_B_best", "nliforge+compile"} <= {
        c for s in gs.PARTS["main"] for c in s.contenders}


def test_gpu_session_stops_at_its_budget_and_still_writes_its_folder(tmp_path, monkeypatch):
    gs = _gpu_session()
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    session = gs.main(["--device", "cpu", "--model", "tiny", "--budget-s", "1"])
    assert [e["status"].split(":")[0] for e in session["rounds"]] == ["skipped"] * 4   # 2 steps x 2 rounds
    assert json.loads((tmp_path / "out" / "session.json").read_text())["steps"] == {"default": None, "preset": None}
    assert "no finished round" in (tmp_path / "out" / "session.txt").read_text()
    ended = gs.run_one([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path / "sleep.log", timeout=1)
    assert ended["status"].startswith("timed out") and ended["wall_s"] < 10


@pytest.mark.slow
def test_gpu_session_cpu_smoke(tmp_path):
    """The GPU session's main part end to end on CPU (tiny model, 3 steps, eager compile backend):
    2 rounds of each step as separate processes, merged into one folder."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_session.py"), "--device", "cpu",
                           "--model", "tiny", "--parts", "main", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    session = json.loads((tmp_path / "session.json").read_text())
    assert [e["status"] for e in session["rounds"]] == ["ok"] * 4, session["rounds"]
    default, preset = session["steps"]["default"], session["steps"]["preset"]
    assert default["rounds"] == preset["rounds"] == 2
    assert set(default["contenders"]) == {"nliforge+fused", "nliforge+dyn", "hf_B_best"}
    assert all(len(v["runs"]) == 2 for v in default["contenders"].values())
    assert set(preset["contenders"]) == {"nliforge+compile"} and "dynamics_overhead" in default
    assert session["hf_B_best_call_median"] > 0
    assert "nliforge+compile" in (tmp_path / "session.txt").read_text()


@pytest.mark.slow
def test_generation_scaling_smoke(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generation_scaling.py"), "--quick"],
                          capture_output=True, text=True, cwd=ROOT / "benchmarks", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {" ".join(line.split()[:2]): float(line.split()[-1]) for line in proc.stdout.splitlines()
            if line.split()[:2] and line.split()[1] in ("endpoints", "shards") and not line.startswith("round")}
    assert set(rows) == {f"{n} {kind}" for n in (1, 2, 4) for kind in ("endpoints", "shards")}
    assert all(0 < ratio <= 1.2 for ratio in rows.values()), rows
