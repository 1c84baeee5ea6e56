"""Collect the long-form metrics.csv files of several runs, and the tidy per-cell statistics
(mean, sample std, t-interval, best, in-domain) behind the Table-3 style report."""

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


def summary_table(metrics: pd.DataFrame, metric: str = "acc", ci: float = 0.95, sets=None,
                  in_domain: Mapping[str, Iterable[str]] | None = None) -> pd.DataFrame:
    """Tidy rows (train_id, eval_set, mean, std, n, ci_low, ci_high, best, in_domain), raw units.

    std is the sample std (ddof=1) over seeds, the one a Student-t interval mean ± t·std/√n is built
    from; n=1 leaves std and the interval empty rather than pretending to a spread. `best` marks the
    highest mean per eval set among cells not flagged in-domain, as Table 3 bolds excluding gray cells.
    """
    rows = metrics[metrics["metric"] == metric]
    if rows.empty:
        raise ValueError(f"no rows for metric {metric!r}; metrics present: {sorted(metrics['metric'].unique())}")
    order = list(sets) if sets else list(rows["eval_set"].drop_duplicates())
    missing = sorted(set(order) - set(rows["eval_set"]))
    if missing:
        raise ValueError(f"eval sets {missing} not in the sweep; present: {sorted(rows['eval_set'].unique())}")
    rows = rows[rows["eval_set"].isin(order)]
    stats = rows.groupby(["train_id", "eval_set"], sort=False)["value"].agg(
        mean="mean", std=lambda v: v.std(ddof=1), n="count").reset_index()
    half = stats["std"] / np.sqrt(stats["n"]) * t_dist.ppf((1 + ci) / 2, (stats["n"] - 1).clip(lower=1))
    half = half.where(stats["n"] > 1)
    stats["ci_low"], stats["ci_high"] = stats["mean"] - half, stats["mean"] + half
    flagged = {(str(k), str(s)) for k, v in (in_domain or {}).items() for s in v}
    stats["in_domain"] = [(t, s) in flagged for t, s in zip(stats["train_id"], stats["eval_set"])]
    top = stats[~stats["in_domain"]].groupby("eval_set")["mean"].max()
    stats["best"] = ~stats["in_domain"] & np.isclose(stats["mean"], stats["eval_set"].map(top))
    stats["eval_set"] = pd.Categorical(stats["eval_set"], categories=order, ordered=True)
    train_order = list(rows["train_id"].drop_duplicates())
    stats["train_id"] = pd.Categorical(stats["train_id"], categories=train_order, ordered=True)
    stats = stats.sort_values(["train_id", "eval_set"]).reset_index(drop=True)
    stats[["train_id", "eval_set"]] = stats[["train_id", "eval_set"]].astype(str)
    return stats[["train_id", "eval_set", "mean", "std", "n", "ci_low", "ci_high", "best", "in_domain"]]
