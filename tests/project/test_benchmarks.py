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


def test_gpu_session_headline_plan_and_its_cache_folders(tmp_path, monkeypatch):
    gs = _gpu_session()
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    session = gs.main(["--device", "cpu", "--model", "tiny", "--parts", "headline", "--budget-s", "1"])
    # the default step (trainer=gpu, HF, preset=gpu_fast) runs its 2 rounds in one process; the graphs
    # alternate cold and warm, round by round
    assert [(e["step"], e["round"]) for e in session["rounds"]] == [
        ("default", 1), ("graphs_cold", 1), ("graphs_warm", 1), ("graphs_cold", 2), ("graphs_warm", 2)]
    args = gs.parse_args(["--cache-root", str(tmp_path / "c"), "--out-dir", str(tmp_path)])
    cold, warm = gs.PARTS["headline"][1:]
    assert gs.cache_dir(cold, 1, args) == (tmp_path / "c" / "graphs_cold_r2", "cold")
    assert gs.cache_dir(warm, 1, args) == (tmp_path / "c" / "graphs_cold_r2", "warm")   # what that cold run left
    default = gs.PARTS["headline"][0]
    cmd = gs.command(default, 0, args, tmp_path / "x.json")
    assert cmd[cmd.index("--rounds") + 1] == "2" and {"nliforge+dyn", "hf_B_best", "nliforge+fast"} <= set(cmd)


def test_headline_line_from_a_projection_worked_by_hand():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from gpu_report import cache_state, headline

    def run(rate, startup, **counts):
        return {"examples_per_s": rate, "startup_s": startup, "compile_counters": counts}

    cold = run(900.0, 40.0, **{"inductor/fxgraph_cache_miss": 10, "stats/unique_graphs": 5})
    warm = run(1000.0, 10.0, **{"inductor/fxgraph_cache_hit": 10, "stats/unique_graphs": 5})
    assert [cache_state(r) for r in (cold, warm, run(1, 1), run(1, 1, **{"stats/unique_graphs": 2}))] == [
        "cold", "warm", None, "compiled"]
    env = {"device_name": "NVIDIA H200"}
    merged = {"default": {"args": {"batch_size": 32, "warmup": 30}, "env": env, "contenders": {
                  "hf_B_best": {"examples_per_s": 300.0, "runs": [run(300.0, 10.0)]}}},
              "graphs_cold": {"args": {"batch_size": 32, "warmup": 80}, "env": env, "contenders": {
                  "nliforge+graphs4": {"examples_per_s": 900.0, "runs": [cold]}}},
              "graphs_warm": {"args": {"batch_size": 32, "warmup": 80}, "env": env, "contenders": {
                  "nliforge+graphs4": {"examples_per_s": 1000.0, "runs": [warm]}}}}
    out, lines = headline(merged, "roberta-large")
    # 5 epochs x ceil(103,000 / 32) = 16,095 steps. HF: 10 + (16,095 - 30) x 32 / 300 = 1,723.6 s;
    # cold graphs: 40 + (16,095 - 80) x 32 / 900 = 609.42 s = 10.16 min, 515,000 / 609.42 = 845.1 ex/s,
    # 1,723.6 / 609.42 = 2.83x
    assert out["hf"]["projected_s"] == pytest.approx(1723.6, abs=0.01)
    assert out["headline"] == "RoBERTa-large x WANLI x 5 epochs, one H200: 10.2 min (845 ex/s, 2.83x fused HF Trainer)"
    assert lines[-1] == out["headline"]
    warm_row = next(r for r in out["rows"] if r["cache"] == "warm")   # 10 + 16,015 x 32 / 1,000 = 522.48 s
    assert warm_row["projected_s"] == pytest.approx(522.48, abs=0.01)


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
def test_startup_benchmark_smoke(tmp_path):
    """Every console script's --help, this tree against itself as the baseline, with the template installed."""
    out = tmp_path / "startup.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "startup.py"), "--baseline", str(ROOT / "src"),
                           "--plugin", "--rounds", "1", "--out", str(out)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    medians = json.loads(out.read_text())["medians"]
    assert set(medians) == {"this", "baseline"} and "nliforge-generate" in medians["this"]
    assert all(0 < s < 60 for per in medians.values() for s in per.values())
    assert "nliforge-report" in proc.stdout and "ratio" in proc.stdout


@pytest.mark.slow   # about a minute of waits on the stand-in's latency and shard processes' start-up
def test_generation_scaling_smoke(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "generation_scaling.py"), "--quick"],
                          capture_output=True, text=True, cwd=ROOT / "benchmarks", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {" ".join(line.split()[:2]): float(line.split()[-1]) for line in proc.stdout.splitlines()
            if line.split()[:2] and line.split()[1] in ("endpoints", "shards") and not line.startswith("round")}
    assert set(rows) == {f"{n} {kind}" for n in (1, 2, 4) for kind in ("endpoints", "shards")}
    assert all(0 < ratio <= 1.2 for ratio in rows.values()), rows
