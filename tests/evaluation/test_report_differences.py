"""nliforge-report baseline=...: effect sizes with paired / Welch intervals, clipping, few-seed flags.

Every expected number below is worked out by hand in the comments (t quantiles from a printed table)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import compose_plain

from nliforge.evaluation.differences import difference_table, seed_difference
from nliforge.evaluation.suite import add_averages, metrics_rows, write_metrics_csv
from nliforge.evaluation.table import summary_table
from nliforge.report import report

T_975_DF2 = 4.303   # Student t, 97.5% quantile, 2 df
T_975_DF6 = 2.447   # 6 df
T_975_DF1 = 12.706  # 1 df

# train_id -> seed -> accuracies; the baseline and "paired" share seeds 0-2, "welch" ran seeds 10-14
SWEEP = {
    "mnli": {0: {"hans": 0.50, "anli": 0.00}, 1: {"hans": 0.60, "anli": 0.00}, 2: {"hans": 0.55, "anli": 0.015}},
    # hans differences to mnli per seed: 0.01, 0.02, 0.06 (the [1, 2, 6] points case)
    "paired": {0: {"hans": 0.51, "anli": 0.10}, 1: {"hans": 0.62, "anli": 0.20}, 2: {"hans": 0.61, "anli": 0.30}},
    "welch": {s: {"hans": 0.55, "anli": a} for s, a in zip(range(10, 15), (0.08, 0.09, 0.10, 0.11, 0.12))},
    "mnli◇wanli": {0: {"hans": 0.9, "anli": 0.5}},   # one seed: no interval can be formed
}
AVERAGES = {"avg": ["hans", "anli"]}


def _write_sweep(root: Path, sweep: dict) -> Path:
    job = 0
    for train_id, seeds in sweep.items():
        for seed, accs in seeds.items():
            results = add_averages({k: {"acc": v, "n": 100.0} for k, v in accs.items()}, AVERAGES)
            write_metrics_csv(metrics_rows(results, train_id, seed), root / str(job) / "metrics.csv")
            job += 1
    return root


def _metrics(sweep: dict) -> pd.DataFrame:
    rows = [r for tid, seeds in sweep.items() for seed, accs in seeds.items()
            for r in metrics_rows(add_averages({k: {"acc": v} for k, v in accs.items()}, AVERAGES), tid, seed)]
    return pd.DataFrame(rows)


def _cfg(overrides: list[str]):
    return compose_plain("report", overrides)


def test_paired_interval_by_hand():
    # differences [1, 2, 6]: mean 3, sample sd sqrt(((1-3)^2 + (2-3)^2 + (6-3)^2) / 2) = sqrt(7),
    # half-width t_{0.975,2} * sqrt(7) / sqrt(3) = 4.303 * 1.5275 = 6.572
    got = seed_difference(pd.Series([11.0, 12.0, 16.0], index=[0, 1, 2]),
                          pd.Series([10.0, 10.0, 10.0], index=[2, 1, 0]))
    assert got["test"] == "paired" and got["df"] == 2 and got["n"] == 3 and not got["few_seeds"]
    assert got["diff"] == pytest.approx(3.0)
    assert T_975_DF2 * math.sqrt(7 / 3) == pytest.approx(6.572, abs=1e-3)
    assert got["ci_low"] == pytest.approx(3 - 6.572, abs=2e-3) and got["ci_high"] == pytest.approx(3 + 6.572, abs=2e-3)


def test_pairs_follow_the_seed_not_the_row_order():
    # x by seed {0: 1, 1: 5}, base by seed {0: 0, 1: 4} listed in the other order: differences [1, 1], sd 0
    got = seed_difference(pd.Series([1.0, 5.0], index=[0, 1]), pd.Series([4.0, 0.0], index=[1, 0]))
    assert got["test"] == "paired" and got["ci_low"] == pytest.approx(1.0) and got["ci_high"] == pytest.approx(1.0)


def test_welch_interval_by_hand():
    # x = [8, 9, 10, 11, 12] (seeds 10-14): mean 10, s^2 = (4+1+0+1+4)/4 = 2.5, s^2/n = 0.5
    # b = [0, 0, 1.5] (seeds 0-2): mean 0.5, s^2 = (0.25+0.25+1)/2 = 0.75, s^2/n = 0.25
    # diff 9.5; se = sqrt(0.5 + 0.25) = 0.8660
    # Welch-Satterthwaite df = 0.75^2 / (0.5^2/4 + 0.25^2/2) = 0.5625 / 0.09375 = 6
    # half-width t_{0.975,6} * se = 2.447 * 0.8660 = 2.119 -> [7.381, 11.619]
    got = seed_difference(pd.Series([8.0, 9.0, 10.0, 11.0, 12.0], index=range(10, 15)),
                          pd.Series([0.0, 0.0, 1.5], index=[0, 1, 2]))
    assert got["test"] == "welch" and got["df"] == pytest.approx(6.0)
    assert (got["n"], got["n_baseline"], got["few_seeds"]) == (5, 3, False)
    assert got["diff"] == pytest.approx(9.5)
    assert T_975_DF6 * math.sqrt(0.75) == pytest.approx(2.119, abs=1e-3)
    assert got["ci_low"] == pytest.approx(7.381, abs=2e-3) and got["ci_high"] == pytest.approx(11.619, abs=2e-3)


def test_partly_shared_seeds_are_not_paired():
    got = seed_difference(pd.Series([1.0, 2.0, 4.0], index=[0, 1, 2]), pd.Series([0.0, 1.0, 1.0], index=[0, 1, 3]))
    assert got["test"] == "welch"


def test_table_chooses_the_test_per_row_and_covers_the_averages():
    diff = difference_table(_metrics(SWEEP), "mnli").set_index(["train_id", "eval_set"])
    assert list(dict.fromkeys(diff.index.get_level_values(0))) == ["paired", "welch", "mnli◇wanli"]
    assert list(dict.fromkeys(diff.index.get_level_values(1))) == ["hans", "anli", "avg"]
    assert set(diff.loc["paired", "test"]) == {"paired"} and set(diff.loc["welch", "test"]) == {"welch"}
    # the hand cases in accuracy units: paired hans 0.03 ± 0.06572, welch anli 0.095 ± 0.02119
    assert diff.loc[("paired", "hans"), "ci_high"] == pytest.approx(0.09572, abs=2e-5)
    assert diff.loc[("welch", "anli"), "ci_low"] == pytest.approx(0.07381, abs=2e-5)
    # the average column is the per-seed mean of hans and anli, differenced per seed:
    # paired seeds: (0.51+0.10)/2 - 0.25 = 0.055, (0.62+0.20)/2 - 0.30 = 0.11, (0.61+0.30)/2 - 0.2825 = 0.1725
    assert diff.loc[("paired", "avg"), "diff"] == pytest.approx((0.055 + 0.11 + 0.1725) / 3)


def test_star_exactly_when_the_interval_excludes_zero(tmp_path):
    sweep = _write_sweep(tmp_path / "sweep", SWEEP)
    result = report(_cfg([f"sweep={sweep}", "baseline=mnli"]))
    diff = result["diff"].set_index(["train_id", "eval_set"])
    # paired hans: [-3.6, +9.6] points, crosses 0; paired anli: differences [0.10, 0.20, 0.285], mean 0.195,
    # sd 0.0925, half 4.303 * 0.0925 / sqrt(3) = 0.2298 -> [-0.035, 0.425], crosses 0; welch anli: [7.4, 11.6]
    assert not diff.loc[("paired", "hans"), "significant"] and not diff.loc[("paired", "anli"), "significant"]
    assert diff.loc[("welch", "anli"), "significant"]
    md = result["md"].read_text().split("## Differences to mnli")[1]
    assert "| paired | +3.0 [-3.6, +9.6] n=3 |" in md
    assert "+9.5* [+7.4, +11.6] n=5 vs 3 |" in md
    for (tid, name), row in diff.iterrows():
        excludes = row["ci_low"] > 0 or row["ci_high"] < 0
        assert bool(row["significant"]) == excludes
    cells = [c.strip() for line in md.splitlines() if line.startswith("| ") and "---" not in line
             for c in line.strip("|").split("|")[1:]]
    assert sum("*" in c for c in cells) == int(diff["significant"].sum())
    # the test per row, in the caption; mnli◇wanli ran seed 0 only, not the baseline's seeds 0-2: Welch
    assert "paired: paired t; welch: Welch t; mnli◇wanli: Welch t" in md


def test_one_seed_has_no_interval_and_is_flagged(tmp_path):
    sweep = _write_sweep(tmp_path / "sweep", SWEEP)
    result = report(_cfg([f"sweep={sweep}", "baseline=mnli_rep_wanli"]))   # the ASCII form of mnli◇wanli
    diff = result["diff"].set_index(["train_id", "eval_set"])
    assert set(diff["baseline"]) == {"mnli◇wanli"}
    # every other set vs a one-seed baseline: Welch with a side of 1 -> no interval, no star, ‡
    assert diff[["ci_low", "ci_high", "df"]].isna().all().all() and not diff["significant"].any()
    assert diff["few_seeds"].all()
    md = result["md"].read_text()
    assert "nan" not in md.lower() and "| mnli | -35.0 n=3 vs 1‡ |" in md.split("## Differences")[1]
    line = result["diff_csv"].read_text().splitlines()[1]
    assert line == "mnli,hans,mnli◇wanli,-0.35,,,welch,3,1,,False,True,False"   # missing = empty field


def test_intervals_are_clipped_to_the_metric_range():
    # two seeds, differences [+0.8, -0.8]: mean 0, sd 1.1314, half 12.706 * 1.1314 / sqrt(2) = 10.16 -> [-1, 1]
    wild = {"base": {0: {"hans": 0.1}, 1: {"hans": 0.9}}, "other": {0: {"hans": 0.9}, 1: {"hans": 0.1}}}
    metrics = _metrics(wild)
    row = difference_table(metrics, "base", sets=["hans"]).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == (-1.0, 1.0) and row["few_seeds"] and not row["significant"]
    # the summary cell of "base": mean 0.5, half 12.706 * 0.5657 / sqrt(2) = 5.08 -> [0, 1]
    cell = summary_table(metrics, sets=["hans"]).iloc[0]
    assert (cell["ci_low"], cell["ci_high"]) == (0.0, 1.0) and cell["few_seeds"]
    # explicit bounds: [0, 100] allows the difference to reach ±100, so the t-interval shows unclipped
    row = difference_table(metrics, "base", sets=["hans"], bounds=[0, 100]).iloc[0]
    assert row["ci_high"] == pytest.approx(T_975_DF1 * 0.8 * math.sqrt(2) / math.sqrt(2), abs=1e-2)
    # a metric nliforge does not know is not clipped
    unbounded = _metrics(wild).assign(metric=lambda f: f["metric"].replace({"acc": "loss"}))
    assert summary_table(unbounded, metric="loss", sets=["hans"]).iloc[0]["ci_high"] > 1.0


def test_errors_name_the_key_and_what_is_present(tmp_path):
    sweep = _write_sweep(tmp_path / "sweep", SWEEP)
    with pytest.raises(ValueError, match=r"baseline='mnl1'.*present: \['mnli', 'mnli◇wanli', 'paired', 'welch'\]"):
        report(_cfg([f"sweep={sweep}", "baseline=mnl1"]))
    with pytest.raises(ValueError, match=r"bounds=\[1, 0\]: expected \[low, high\]"):
        report(_cfg([f"sweep={sweep}", "bounds=[1,0]"]))
    assert not (sweep / "report").exists()   # nothing written before the error
    assert report(_cfg([f"sweep={sweep}", "baseline=mnli"]))["diff_csv"].is_file()
    # a report without a baseline into the same folder removes the earlier differences, which it would contradict
    assert report(_cfg([f"sweep={sweep}"]))["diff"] is None and not (sweep / "report" / "report_diff.csv").exists()
