"""Pick examples from a data map: by region (top fraction) or by per-label quantile.

Both take the DataFrame of :func:`nliforge.cartography.compute_metrics` (indexed by uid)
and return uids in a fully deterministic order: ties are broken by uid, never by row order.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

# region -> (sort columns, ascending flags); "uid" is always the final tie-breaker.
REGION_ORDER: dict[str, tuple[tuple[str, ...], tuple[bool, ...]]] = {
    "ambiguous": (("variability",), (False,)),
    "hard": (("confidence",), (True,)),
    "easy": (("confidence", "variability"), (False, True)),
}
REGIONS: tuple[str, ...] = tuple(REGION_ORDER)


def _uid_frame(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The needed columns plus a string ``uid`` column, whether uid is the index or a column."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"metrics frame lacks column(s) {missing}; has {list(df.columns)}")
    if "uid" in df.columns:
        out = df[["uid"] + columns].copy()
    else:
        out = df[columns].copy()
        out.insert(0, "uid", df.index)
    out["uid"] = out["uid"].astype(str)
    if out["uid"].duplicated().any():
        raise ValueError("metrics frame has repeated uids")
    return out.reset_index(drop=True)


def _check_fraction(name: str, value: float) -> float:
    """A number in [0, 1], or a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1]; got {value!r}")
    return float(value)


def region_size(fraction: float, n: int) -> int:
    """k = floor(fraction * n), with a small epsilon so 0.3 * 10 gives 3, not 2.

    The original cartography selection kept one example too many; this is exact.
    """
    return int(math.floor(_check_fraction("fraction", fraction) * n + 1e-9))


def select_region(df: pd.DataFrame, region: str, fraction: float) -> list[str]:
    """Uids of the ``fraction`` of examples most typical of ``region``.

    ambiguous = highest variability; hard = lowest confidence; easy = highest confidence,
    ties by lower variability. Examples without gold (NaN metrics) are not candidates and do
    not count in N. Returns exactly floor(fraction * N) uids, best first, ties by uid.
    """
    if region not in REGION_ORDER:
        raise ValueError(f"unknown region {region!r}; valid: {', '.join(REGIONS)}")
    columns, ascending = REGION_ORDER[region]
    frame = _uid_frame(df, list(columns))
    frame = frame.dropna(subset=list(columns))
    k = region_size(fraction, len(frame))
    ordered = frame.sort_values(list(columns) + ["uid"], ascending=list(ascending) + [True],
                                kind="mergesort")
    return ordered["uid"].head(k).tolist()


def select_by_quantile(df: pd.DataFrame, column: str, q: float, per_label: bool = True) -> list[str]:
    """Uids whose ``column`` value is strictly above its q-quantile.

    With ``per_label`` the quantile is computed separately within each gold label (rows with
    gold -1 are skipped), as for WANLI's seeds: variability > 0.75 quantile per label.
    Quantiles use linear interpolation (numpy's default). NaN values are never selected.
    Returned best first (decreasing value), ties by uid.
    """
    if not isinstance(column, str) or column not in df.columns:
        numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
        raise ValueError(f"unknown column {column!r}; valid: {', '.join(map(str, numeric))}")
    q = _check_fraction("q", q)
    if not isinstance(per_label, bool):
        raise ValueError(f"per_label must be True or False; got {per_label!r}")
    columns = [column] + (["gold"] if per_label and column != "gold" else [])
    if per_label and "gold" not in df.columns:
        raise ValueError("per_label=True needs a 'gold' column; pass per_label=False")
    frame = _uid_frame(df, columns)
    frame[column] = pd.to_numeric(frame[column], errors="raise").astype(np.float64)
    frame = frame.dropna(subset=[column])
    if per_label:
        gold = frame["gold"].astype(np.float64)
        frame = frame[gold >= 0]
        cut = frame.groupby("gold")[column].transform(lambda s: s.quantile(q))
    else:
        cut = pd.Series(frame[column].quantile(q) if len(frame) else np.nan, index=frame.index)
    chosen = frame[frame[column] > cut]
    ordered = chosen.sort_values([column, "uid"], ascending=[False, True], kind="mergesort")
    return ordered["uid"].tolist()
