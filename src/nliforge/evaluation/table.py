"""Collect the long-form metrics.csv files of several runs into one mean ± std table."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd


def collect_metrics(run_dirs: Iterable[str | Path]) -> pd.DataFrame:
    """Concatenate the metrics.csv of every run folder (those without one are skipped)."""
    frames = [pd.read_csv(Path(d) / "metrics.csv") for d in run_dirs if (Path(d) / "metrics.csv").is_file()]
    if not frames:
        raise FileNotFoundError("no metrics.csv found in the given run folders")
    return pd.concat(frames, ignore_index=True)


def mean_std_table(metrics: pd.DataFrame, metric: str = "acc", scale: float = 100.0) -> pd.DataFrame:
    """Rows: train_id; columns: eval_set; cells `mean ± std` over seeds (population std, ddof=0)."""
    rows = metrics[metrics["metric"] == metric]
    stats = rows.groupby(["train_id", "eval_set"])["value"].agg(
        mean="mean", std=lambda v: v.std(ddof=0), n="count")
    cells = stats.apply(lambda r: f"{scale * r['mean']:.1f} ± {scale * r['std']:.1f}", axis=1)
    table = cells.unstack("eval_set")
    order = [c for c in rows["eval_set"].drop_duplicates()]
    return table[order]
