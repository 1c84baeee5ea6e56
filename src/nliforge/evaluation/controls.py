"""Gap closure against a same-size floor and ceiling: how much of the way from the floor
(the base set plus N more biased pairs) to the ceiling (the base set plus N unbiased pairs) a method's
N added pairs go, `(method − floor) / (ceiling − floor)`.

The units are the paired runs (one world seed and one training seed give a method, a floor and a
ceiling run that share data order and initialization), so the estimate is the ratio of the mean paired
differences, and its interval a paired percentile bootstrap over the units: a per-unit ratio is
unstable when one unit's ceiling − floor is near 0, a ratio of means is not. The denominator's own
t-interval is returned beside it: a gap closure means little when the ceiling is not above the floor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nliforge.evaluation.differences import seed_difference

N_BOOT = 10_000   # bootstrap resamples of the units; the interval's ends move < 0.01 between seeds of it


def _paired(method: pd.Series, floor: pd.Series, ceiling: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(method − floor, ceiling − floor) per unit, on the units all three share; an error names the
    units that are not shared (an unpaired floor or ceiling would bias the ratio)."""
    units = set(method.index)
    if units != set(floor.index) or units != set(ceiling.index):
        odd = sorted(map(str, units ^ set(floor.index) | units ^ set(ceiling.index)))
        raise ValueError(f"gap closure needs the same units (world seed, training seed) for the method, floor "
                         f"and ceiling; not shared: {odd}")
    order = sorted(units, key=str)
    m, f, c = (s.reindex(order).to_numpy(float) for s in (method, floor, ceiling))
    return m - f, c - f


def gap_closure(method: pd.Series, floor: pd.Series, ceiling: pd.Series, ci: float = 0.95,
                n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """The gap closure of `method` (Series indexed by unit) and its paired percentile bootstrap
    interval; `ceiling_minus_floor` with its t-interval (evaluation.differences) says whether there
    is a gap to close. Values are NaN where the mean ceiling − floor is 0."""
    gain, gap = _paired(method, floor, ceiling)
    point = float(gain.mean() / gap.mean()) if gap.mean() != 0 else float("nan")
    low = high = float("nan")
    if len(gain) >= 2:
        idx = np.random.default_rng(seed).integers(0, len(gain), size=(n_boot, len(gain)))
        den = gap[idx].mean(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(den != 0, gain[idx].mean(1) / den, np.nan)
        alpha = (1 - ci) / 2
        if not np.isnan(ratios).all():  # all NaN: every resample has no gap, the interval stays NaN
            low, high = (float(v) for v in np.nanquantile(ratios, [alpha, 1 - alpha]))
    denominator = seed_difference(ceiling, floor, ci)
    return {"closure": point, "ci_low": low, "ci_high": high, "n": len(gain),
            "ceiling_minus_floor": denominator["diff"], "cf_low": denominator["ci_low"],
            "cf_high": denominator["ci_high"],
            "gap_shown": bool(denominator["ci_low"] > 0)}


def format_closure(result: dict) -> str:
    """`0.42 [0.10, 0.80]`, or `–` when undefined; `(no gap)` when the ceiling is not shown above the floor."""
    if np.isnan(result["closure"]):
        return "–"
    text = f"{result['closure']:.2f}"
    if not np.isnan(result["ci_low"]):
        text += f" [{result['ci_low']:.2f}, {result['ci_high']:.2f}]"
    return text if result["gap_shown"] else text + " (no gap)"
