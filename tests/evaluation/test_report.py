"""nliforge-report: a hand-written sweep folder -> Table-3 style numbers, marks and files."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import compose_plain

from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.report import report, resolve_in_domain

T_975_DF1 = 12.706  # Student t quantile for a 95% two-sided interval with n=2 (1 degree of freedom)
# train_id -> eval_set -> accuracy for seeds 0 and 1
ACC = {
    "mnli": {"hans": (0.50, 0.60), "anli": (0.30, 0.32), "mnli_dev": (0.90, 0.92)},
    "wanli": {"hans": (0.70, 0.74), "anli": (0.40, 0.44), "mnli_dev": (0.80, 0.84)},
    "mnli+wanli": {"hans": (0.62, 0.66), "anli": (0.38, 0.40), "mnli_dev": (0.91, 0.93)},
}
IN_DOMAIN = {"mnli": ["mnli_dev"], "mnli+wanli": ["mnli_dev"]}


@pytest.fixture
def sweep(tmp_path) -> Path:
    """A multirun folder as Hydra writes it: <time>/<job num>/metrics.csv, one job per (train_id, seed)."""
    root, job = tmp_path / "multirun_outputs" / "2026-01-01_00-00-00", 0
    for train_id, sets in ACC.items():
        for seed in (0, 1):
            results = {name: {"acc": accs[seed], "n": 50.0} for name, accs in sets.items()}
            write_metrics_csv(metrics_rows(results, train_id, seed), root / str(job) / "metrics.csv")
            job += 1
    return root


def _cfg(overrides: list[str]):
    return compose_plain("report", overrides)


def _in_domain_override() -> str:
    return "in_domain={" + ",".join(f"{k}:[{','.join(v)}]" for k, v in IN_DOMAIN.items()) + "}"


def test_numbers_marks_and_files(sweep):
    result = report(_cfg([f"sweep={sweep}", _in_domain_override()]))
    got = pd.read_csv(sweep / "report" / "report.csv").set_index(["train_id", "eval_set"])
    assert list(got.columns) == ["mean", "std", "n", "ci_low", "ci_high", "few_seeds", "best", "in_domain"]
    assert len(got) == 9 and list(dict.fromkeys(got.index.get_level_values(0))) == list(ACC)
    for train_id, sets in ACC.items():
        for name, (a, b) in sets.items():
            row = got.loc[(train_id, name)]
            mean, std = (a + b) / 2, abs(a - b) / math.sqrt(2)   # sample std of two values
            half = T_975_DF1 * std / math.sqrt(2)
            assert row["n"] == 2
            assert row["mean"] == pytest.approx(mean) and row["std"] == pytest.approx(std)
            # An accuracy's interval is clipped to [0, 1], and two seeds are flagged
            assert row["ci_low"] == pytest.approx(max(mean - half, 0.0), abs=1e-4)
            assert row["ci_high"] == pytest.approx(min(mean + half, 1.0), abs=1e-4)
            assert bool(row["few_seeds"])
            assert bool(row["in_domain"]) == (name in IN_DOMAIN.get(train_id, []))
    # best per column, in-domain cells excluded: mnli+wanli has the top mnli_dev mean but it is in-domain
    assert set(got.index[got["best"]]) == {("wanli", "hans"), ("wanli", "anli"), ("wanli", "mnli_dev")}
    md = result["md"].read_text()
    assert "| wanli | **72.0** ± 2.8" in md and "| mnli | 55.0 ± 7.1 [0.0, 100.0] n=2‡ |" in md   # not [-8.5, 118.5]
    assert "‡: fewer than 3 seeds" in md
    assert "92.0† ± 1.4" in md and "91.0† ± 1.4" in md
    assert result["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert result["png"].stat().st_size > 1000


def test_sets_select_and_order_columns_and_one_seed_has_no_interval(sweep, tmp_path):
    for job in ("1", "3", "5"):   # drop seed 1 of every training set
        (sweep / job / "metrics.csv").unlink()
    result = report(_cfg([f"sweep={sweep}", "sets=[anli,hans]", f"out={tmp_path / 'out'}"]))
    summary = result["summary"]
    assert list(dict.fromkeys(summary["eval_set"])) == ["anli", "hans"]
    assert (summary["n"] == 1).all() and summary[["std", "ci_low", "ci_high"]].isna().all().all()
    assert "| mnli | 30.0 n=1‡ |" in (tmp_path / "out" / "report.md").read_text()
    csv_rows = (tmp_path / "out" / "report.csv").read_text().splitlines()
    assert csv_rows[1] == "mnli,anli,0.3,,1,,,True,False,False"   # a missing interval is empty, not "nan"


def test_errors_name_the_folder_and_the_metric(tmp_path, sweep):
    empty = tmp_path / "empty_sweep"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="empty_sweep"):
        report(_cfg([f"sweep={empty}"]))
    with pytest.raises(ValueError, match="'f1'.*acc"):
        report(_cfg([f"sweep={sweep}", "metric=f1"]))
    with pytest.raises(ValueError, match="snli"):
        report(_cfg([f"sweep={sweep}", "sets=[snli]"]))
    with pytest.raises(ValueError, match="mnl1"):   # a typo in in_domain must not silently drop a dagger
        report(_cfg([f"sweep={sweep}", "in_domain={mnl1:[mnli_dev]}"]))


def test_in_domain_accepts_the_ascii_id_of_a_replacement():
    """Hydra cannot spell '◇' in a dict key, so `mnli_rep_wanli` stands for `mnli◇wanli`."""
    got = resolve_in_domain({"mnli_rep_wanli": ["mnli_dev"], "mnli+wanli": ["x"]}, ["mnli◇wanli", "mnli+wanli"])
    assert got == {"mnli◇wanli": ["mnli_dev"], "mnli+wanli": ["x"]}


def test_wandb_offline_logs_the_table_and_finishes(sweep, tmp_path, monkeypatch):
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wb"))
    for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        monkeypatch.setenv(var, str(tmp_path / "wb_state"))
    (tmp_path / "wb").mkdir()
    result = report(_cfg([f"sweep={sweep}", "wandb=true"]))
    assert wandb.run is None   # finished
    runs = list((tmp_path / "wb" / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and Path(result["wandb_dir"]).is_relative_to(runs[0])
    tables = list(runs[0].rglob("report_*.table.json"))   # beside it: challenge averages (tests/tracking/test_wandb_log.py)
    assert len(tables) == 1 and "wanli" in tables[0].read_text()
    # the offline run's log names the run; W&B's writer process may still be flushing it after finish()
    deadline = time.monotonic() + 30
    while True:
        records = b"".join(p.read_bytes() for p in runs[0].glob("run-*.wandb"))
        if b"report-2026-01-01_00-00-00" in records or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert b"report-2026-01-01_00-00-00" in records   # the run's name


def test_command_line(sweep):
    """The Hydra entry point end to end, with an in-domain mapping whose key holds '+'."""
    env = {**os.environ, "WANDB_MODE": "disabled"}
    proc = subprocess.run([sys.executable, "-m", "nliforge.report", f"sweep={sweep}", _in_domain_override()],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "91.0†" in proc.stdout and (sweep / "report" / "report.png").is_file()
    bad = subprocess.run([sys.executable, "-m", "nliforge.report", f"sweep={sweep / 'nothing'}"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 1 and "nothing" in bad.stderr


def test_lightning_csv_logs_are_not_mistaken_for_suite_results(tmp_path):
    from nliforge.evaluation.table import find_run_dirs

    job = tmp_path / "0"
    (job / "csv_logs" / "version_0").mkdir(parents=True)
    (job / "csv_logs" / "version_0" / "metrics.csv").write_text("epoch,step,train/loss\n0,1,1.0\n")
    (job / "metrics.csv").write_text("train_id,seed,eval_set,metric,value\nsynthetic,1,synthetic_test,acc,0.5\n")
    assert find_run_dirs(tmp_path) == [job]


def _run(folder: Path, train_id: str, train_sets: dict, suite: dict, accs: dict) -> None:
    """A run folder as nliforge-train leaves it: metrics.csv and the resolved config.yaml."""
    import yaml

    write_metrics_csv(metrics_rows({k: {"acc": v, "n": 50.0} for k, v in accs.items()}, train_id, 0),
                      folder / "metrics.csv")
    (folder / "config.yaml").write_text(yaml.safe_dump({"data": {"train_sets": train_sets}, "suite": suite}))


def test_in_domain_is_inferred_from_the_runs_configs(tmp_path):
    """Without in_domain=, an eval set from the same Hub dataset as a run's training set (MNLI's dev for a
    model trained on MNLI) is in-domain for it and not its column's best; so is a set the suite lists under
    suite.in_domain. in_domain= given replaces the inference."""
    hub = lambda name, split: {"name": name, "loader": "hub", "path": "nyu-mll/multi_nli" if name.startswith("mnli")
                               else f"x/{name}", "config": None, "split": split}
    suite = {"sets": {"mnli_dev_matched": hub("mnli_dev_matched", "validation_matched"), "hans": hub("hans", "x"),
                      "world_test": {"name": "world_test", "loader": "world", "split": "test"}},
             "in_domain": ["world_test"]}
    sweep = tmp_path / "sweep"
    _run(sweep / "0", "mnli", {"mnli": hub("mnli", "train")}, suite,
         {"mnli_dev_matched": 0.90, "hans": 0.55, "world_test": 0.7})
    _run(sweep / "1", "wanli", {"wanli": {**hub("wanli", "train"), "path": "alisawuffles/WANLI"}}, suite,
         {"mnli_dev_matched": 0.80, "hans": 0.60, "world_test": 0.6})
    result = report(_cfg([f"sweep={sweep}"]))
    cells = result["summary"].set_index(["train_id", "eval_set"])
    assert set(cells.index[cells["in_domain"]]) == {("mnli", "mnli_dev_matched"), ("mnli", "world_test"),
                                                    ("wanli", "world_test")}
    assert set(cells.index[cells["best"]]) == {("wanli", "mnli_dev_matched"), ("wanli", "hans")}
    assert "inferred from each run's config.yaml" in result["md"].read_text()
    given = report(_cfg([f"sweep={sweep}", "in_domain={wanli:[hans]}"]))["summary"].set_index(["train_id", "eval_set"])
    assert set(given.index[given["in_domain"]]) == {("wanli", "hans")}
    assert bool(given.loc[("mnli", "mnli_dev_matched"), "best"])


def test_without_in_domain_or_configs_the_legend_says_so(sweep):
    md = report(_cfg([f"sweep={sweep}"]))["md"].read_text()
    assert "No in-domain cells: none given (in_domain=) or found in the runs' configs" in md
