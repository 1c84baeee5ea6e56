"""Collect the long-form metrics.csv files of several runs, and the tidy per-cell statistics
(mean, sample std, t-interval, best, in-domain) behind the Table-3 style report.

Intervals of a bounded metric are clipped to its range (two seeds of an accuracy once gave
[-292.7, 342.7]); a t-interval from n < 3 seeds is that wide because t_{0.975,1} = 12.7, so such
cells are flagged (`few_seeds`) rather than trusted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist


def collect_metrics(run_dirs: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate the metrics.csv of every run folder (those without one are skipped)."""
    frames = [pd.read_csv(Path(d) / "metrics.csv") for d in run_dirs if (Path(d) / "metrics.csv").is_file()]
    if not frames:
        raise FileNotFoundError("no metrics.csv found in the given run folders")
    return pd.concat(frames, ignore_index=True)


SUITE_COLUMNS = ("train_id", "seed", "eval_set", "metric", "value")
UNIT_METRICS = ("acc", "acc_cf", "delta_s")   # the suite's metrics that live in [0, 1] (and their averages)
FEW_SEEDS = 3   # a cell from fewer seeds than this is flagged: its interval says little


def metric_range(metric: str, bounds=None) -> tuple[float, float]:
    """(low, high) a value of `metric` can take: `bounds` when given (the report's `bounds` key),
    [0, 1] for the suite's accuracies and δs, else unbounded."""
    if bounds is not None:
        pair = list(bounds)
        numbers = all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in pair)
        if len(pair) != 2 or not numbers or not pair[0] < pair[1]:
            raise ValueError(f"bounds={pair}: expected [low, high], two numbers with low < high")
        return float(pair[0]), float(pair[1])
    return (0.0, 1.0) if metric in UNIT_METRICS else (-np.inf, np.inf)


def is_suite_metrics(path: Path) -> bool:
    """Whether a metrics.csv is a run's suite results (not, e.g., Lightning's CSV logger's
    csv_logs/version_0/metrics.csv of training curves, which shares the name)."""
    with Path(path).open(encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
    return tuple(header) == SUITE_COLUMNS


def find_run_dirs(sweep: str | Path) -> list[Path]:
    """Every folder under `sweep` (recursively) holding a metrics.csv, in job order (2 before 10),
    so a Hydra multirun folder of any depth (<time>/<job num>/) can be reported on."""
    sweep = Path(sweep)
    if not sweep.is_dir():
        raise FileNotFoundError(f"sweep folder {sweep} does not exist")
    dirs = {p.parent for p in sweep.rglob("metrics.csv") if is_suite_metrics(p)}
    if not dirs:
        raise FileNotFoundError(f"no metrics.csv found under {sweep} (is it a multirun folder?)")
    def natural(path: Path) -> list:
        return [(0, int(s), "") if s.isdigit() else (1, 0, s) for s in path.relative_to(sweep).parts]

    return sorted(dirs, key=natural)


def metric_rows(metrics: pd.DataFrame, metric: str, sets=None) -> tuple[pd.DataFrame, list[str]]:
    """The rows of one metric on the chosen eval sets, and the eval sets in report order; errors name
    the metric or the sets that are not in the sweep."""
    rows = metrics[metrics["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r}; metrics present: {sorted(metrics['metric'].unique())}")
    order = list(sets) if sets else list(rows["eval_set"].drop_duplicates())
    missing = sorted(set(order) - set(rows["eval_set"]))
    if missing:
        raise ValueError(f"eval sets {missing} not in the sweep; present: {sorted(rows['eval_set'].unique())}")
    return rows[rows["eval_set"].isin(order)], order


def summary_table(metrics: pd.DataFrame, metric: str = "acc", ci: float = 0.95, sets=None,
                  in_domain: Mapping[str, Iterable[str]] | None = None, bounds=None) -> pd.DataFrame:
    """Tidy rows (train_id, eval_set, mean, std, n, ci_low, ci_high, few_seeds, best, in_domain), raw units.

    std is the sample std (ddof=1) over seeds, the one a Student-t interval mean ± t·std/√n is built
    from; n=1 leaves std and the interval empty rather than pretending to a spread. The interval is
    clipped to the metric's range (`metric_range`); `few_seeds` flags n < 3. `best` marks the
    highest mean per eval set among cells not flagged in-domain, as Table 3 bolds excluding gray cells.
    """
    rows, order = metric_rows(metrics, metric, sets)
    low, high = metric_range(metric, bounds)
    stats = rows.groupby(["train_id", "eval_set"], sort=False)["value"].agg(
        mean="mean", std=lambda v: v.std(ddof=1), n="count").reset_index()
    half = stats["std"] / np.sqrt(stats["n"]) * t_dist.ppf((1 + ci) / 2, (stats["n"] - 1).clip(lower=1))
    half = half.where(stats["n"] > 1)
    stats["ci_low"], stats["ci_high"] = (stats["mean"] - half).clip(low, high), (stats["mean"] + half).clip(low, high)
    stats["few_seeds"] = stats["n"] < FEW_SEEDS
    flagged = {(str(k), str(s)) for k, v in (in_domain or {}).items() for s in v}
    stats["in_domain"] = [(t, s) in flagged for t, s in zip(stats["train_id"], stats["eval_set"])]
    top = stats[~stats["in_domain"]].groupby("eval_set")["mean"].max()
    stats["best"] = ~stats["in_domain"] & np.isclose(stats["mean"], stats["eval_set"].map(top))
    stats["eval_set"] = pd.Categorical(stats["eval_set"], categories=order, ordered=True)
    train_order = list(rows["train_id"].drop_duplicates())
    stats["train_id"] = pd.Categorical(stats["train_id"], categories=train_order, ordered=True)
    stats = stats.sort_values(["train_id", "eval_set"]).reset_index(drop=True)
    stats[["train_id", "eval_set"]] = stats[["train_id", "eval_set"]].astype(str)
    return stats[["train_id", "eval_set", "mean", "std", "n", "ci_low", "ci_high", "few_seeds", "best", "in_domain"]]
