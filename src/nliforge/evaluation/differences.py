"""Effect sizes of a sweep: each training set minus a baseline, per eval set (averages included,
as the suite writes them as eval sets), with a t-interval over seeds.

The interval is **paired** (Student t on the per-seed differences, n - 1 df) where the training set
and the baseline were run with the same seeds, since seed-to-seed noise shared by both (data order,
initialization) then cancels; otherwise **Welch** (unequal variances, Welch–Satterthwaite df). A cell
whose interval excludes 0 is `significant`; with fewer than 3 seeds (pairs, or the smaller side for
Welch) it is `few_seeds`; an interval that cannot be formed (a side with one seed) is left empty.
Intervals of a bounded metric are clipped to ±(high - low), the range a difference can take.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping

import pandas as pd
from scipy import stats

from nliforge.evaluation.table import FEW_SEEDS, metric_range, metric_rows

COLUMNS = ["train_id", "eval_set", "baseline", "diff", "ci_low", "ci_high", "test", "n", "n_baseline",
           "df", "significant", "few_seeds", "in_domain"]


def seed_difference(values: pd.Series, base: pd.Series, ci: float = 0.95) -> dict:
    """Difference of means of two per-seed Series (index = seed) and its `ci` t-interval: paired on
    the per-seed differences when both have the same seeds, Welch otherwise (scipy.stats)."""
    paired = set(values.index) == set(base.index)
    diff = float(values.mean() - base.mean())
    n = len(values) if paired else min(len(values), len(base))
    low = high = df = float("nan")
    if n >= 2:
        with warnings.catch_warnings():   # scipy warns on near-identical seeds; the interval is still right
            warnings.simplefilter("ignore", RuntimeWarning)
            if paired:
                res = stats.ttest_rel(values.to_numpy(float), base.reindex(values.index).to_numpy(float))
            else:
                res = stats.ttest_ind(values.to_numpy(float), base.to_numpy(float), equal_var=False)
            interval = res.confidence_interval(confidence_level=ci)
        low, high, df = float(interval.low), float(interval.high), float(res.df)
    return {"diff": diff, "ci_low": low, "ci_high": high, "test": "paired" if paired else "welch",
            "n": len(values), "n_baseline": len(base), "df": df, "few_seeds": n < FEW_SEEDS}


def difference_table(metrics: pd.DataFrame, baseline: str, metric: str = "acc", ci: float = 0.95, sets=None,
                     in_domain: Mapping[str, Iterable[str]] | None = None, bounds=None) -> pd.DataFrame:
    """Tidy rows (COLUMNS) of every training set other than `baseline` on every eval set both were
    evaluated on, in the sweep's order, raw units (a difference of accuracies in [-1, 1])."""
    rows, order = metric_rows(metrics, metric, sets)
    present = list(rows["train_id"].drop_duplicates())
    if baseline not in present:
        raise ValueError(f"baseline={baseline!r} is not a training set of the sweep; present: {sorted(present)}")
    low, high = metric_range(metric, bounds)
    by_cell = {key: group.set_index("seed")["value"] for key, group in rows.groupby(["train_id", "eval_set"])}
    flagged = {(str(k), str(s)) for k, v in (in_domain or {}).items() for s in v}
    out = []
    for tid in present:
        for name in order:
            if tid == baseline or (tid, name) not in by_cell or (baseline, name) not in by_cell:
                continue
            cell = seed_difference(by_cell[(tid, name)], by_cell[(baseline, name)], ci)
            out.append({"train_id": tid, "eval_set": name, "baseline": baseline, **cell,
                        "in_domain": (tid, name) in flagged})
    table = pd.DataFrame(out, columns=COLUMNS)
    span = high - low
    table["ci_low"], table["ci_high"] = table["ci_low"].clip(-span, span), table["ci_high"].clip(-span, span)
    table["significant"] = (table["ci_low"] > 0) | (table["ci_high"] < 0)
    return table


def row_tests(table: pd.DataFrame) -> dict[str, str]:
    """train_id -> the test(s) its cells used, for the table's caption ("paired t", "Welch t" or both)."""
    names = {"paired": "paired t", "welch": "Welch t"}
    return {tid: " and ".join(names[t] for t in sorted(set(group["test"])))
            for tid, group in table.groupby("train_id", sort=False)}
