"""conf/study/synthetic_ceiling.yaml (2 arms × 5 worlds, the tiny model, one epoch) from preregister to a
verdict through `nliforge-study` with the local launcher (test_study_slurm.py: the same through Slurm). The
verdict's numbers are recomputed here from the runs' own metrics.csv, independently of the study code."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from nliforge.study.schema import load_study

CELLS = {"negation": ["synthetic_challenge_negation"], "overlap": ["synthetic_challenge_overlap"],
         "challenge_mean": ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]}


def study_cli(*args: str, env: dict | None = None, timeout: int = 1500) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nliforge.study", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def accuracy(run: Path, sets: list[str]) -> float:
    m = pd.read_csv(run / "metrics.csv")
    return sum(float(m[(m.eval_set == s) & (m.metric == "acc")].value.iloc[0]) for s in sets) / len(sets)


def check_verdict(attempt: Path) -> None:
    """claims.csv against a recomputation: per world ceiling − d0 (one seed), the mean, its t interval."""
    with (attempt / "claims.csv").open() as fh:
        rows = {r["claim"]: r for r in csv.DictReader(fh)}
    assert list(rows) == list(CELLS)                                       # claims only, no gate rows
    for claim, sets in CELLS.items():
        diffs = [accuracy(attempt / f"runs/ceiling/world-{w}/seed-1", sets)
                 - accuracy(attempt / f"runs/d0/world-{w}/seed-1", sets) for w in range(5)]
        mean = sum(diffs) / 5
        sd = (sum((d - mean) ** 2 for d in diffs) / 4) ** 0.5
        half = stats.t.ppf(0.975, 4) * sd / 5 ** 0.5
        r = rows[claim]
        assert int(r["n_worlds"]) == 5 and float(r["estimate"]) == pytest.approx(100 * mean, abs=1e-3)
        assert float(r["low"]) == pytest.approx(100 * (mean - half), abs=1e-3)
        assert r["verdict"].startswith(("not tested (gate fit: ", "reproduced", "not shown", "contradicted"))
    assert (attempt / "claims.md").is_file() and (attempt / "claims.png").is_file()


def run_study(tmp_path: Path, extra: list[str], env: dict | None = None) -> Path:
    root = f"root={tmp_path / 'studies'}"
    done = study_cli("run", "synthetic_ceiling", root, *extra, env=env)
    assert done.returncode == 2 and "not pre-registered" in done.stderr       # refused before preregister
    pre = study_cli("preregister", "synthetic_ceiling", root, env=env)
    assert pre.returncode == 0 and pre.stdout.startswith("pre-registered: "), pre.stderr
    ran = study_cli("run", "synthetic_ceiling", root, *extra, env=env)
    attempt = tmp_path / "studies" / "synthetic_ceiling" / "attempt-1"
    logs = "".join(p.read_text()[-3000:] for p in (attempt / "logs").glob("*.log"))
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:] + logs
    assert ran.stdout.count("] done: world ") == 10 and "10 of 10 runs done" in ran.stdout
    again = study_cli("run", "synthetic_ceiling", root, *extra, env=env)
    assert "10 done, 0 to run" in again.stdout                                # finished runs are skipped
    status = study_cli("status", "synthetic_ceiling", root, env=env)
    assert "10 of 10 runs done · gates: pairs passed in 5/5 worlds" in status.stdout
    verdict = study_cli("verdict", "synthetic_ceiling", root, env=env)
    assert verdict.returncode == 0 and "claims.csv" in verdict.stdout, verdict.stderr
    return attempt


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_a_synthetic_study_from_preregister_to_verdict(tmp_path):
    attempt = run_study(tmp_path, ["num_threads=1"])
    check_verdict(attempt)
    study = load_study("synthetic_ceiling")
    assert sorted(p.parent.parent.name for p in (attempt / "runs").glob("*/world-*/seed-1")) == \
        sorted(a for a in study.arms for _ in range(5))
