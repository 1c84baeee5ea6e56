"""The verdict words of `experiments/summary.csv`, defined once here and applied by rule.

The unit of analysis is the **world**: D0, the generated sets, the floor and the ceiling are drawn once per
world seed, so training seeds within a world are not independent units. A claim's estimate is the mean over
worlds of the per-world estimate (itself the mean over that world's training seeds of the paired
difference); its interval is a Student t interval over the worlds, n_worlds - 1 degrees of freedom. With
n_worlds = 2 that interval is very wide (t = 12.71): the honest width of two draws.

On real text a world is a disjoint part of the corpus (R5: each part its own training and test pairs) or a
draw of D0, the floor's pool and W (R5-R4a); the first real-text attempts used the example as the unit on one
sample of the data and count as n_worlds = 1. Only NLI-Set has no worlds (`n_worlds` empty, the unit is the
prompt): its interval over prompts decides, read against the stated side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from scipy import stats

MIN_WORLDS = 5            # worlds needed for "reproduced"
MIN_WORLDS_LOW_POWER = 3  # ... for "reproduced, low power", only for claims whose per-world run costs > 30 min

VERDICTS = {
    "reproduced": "a tested claim whose 95% interval over worlds lies on the stated side of the reference "
                  f"(0 unless said), with n_worlds ≥ {MIN_WORLDS}, and, for a claim tested in a family committed "
                  "together, a Holm-adjusted one-sided p < 0.05 over that family; on real text a world is a disjoint part of "
                  "the corpus or a draw of D0 and W; without worlds (NLI-Set, unit the prompt) the interval over "
                  "prompts on the stated side",
    "reproduced, low power": f"as reproduced, with {MIN_WORLDS_LOW_POWER} ≤ n_worlds < {MIN_WORLDS}; allowed only "
                             "for a claim whose run costs more than 30 minutes per world on 2 cores",
    "contradicted": "the interval over worlds lies entirely on the wrong side of the reference, with the same "
                    f"number of worlds `reproduced` needs (n_worlds ≥ {MIN_WORLDS}; ≥ {MIN_WORLDS_LOW_POWER} as "
                    "`contradicted, low power` for a costly claim); without worlds: the interval on the wrong side",
    "not shown": "anything else; the reason in brackets: too few worlds (n_worlds < 5), the interval includes "
                 "the reference, no interval (one world), or no estimate",
    "calibrated": "a calibration (not a claim about a method): every world's value within the target ± the "
                  "stated tolerance; otherwise `not calibrated`",
    "descriptive": "a measurement reported beside a claim, with no pass/fail criterion (a cost, a diagnosis, "
                   "a comparison nobody stated in advance); it counts neither for nor against the paper",
    "not run": "the experiment exists as a command, but no result file does",
}


@dataclass(frozen=True)
class Estimate:
    """One claim's number: `estimate` [`low`, `high`], `n_worlds` (None: the unit is the example or the
    prompt, no worlds), `per_unit` (per world; per training seed on real text), `reference` (a bound read
    from the results file, e.g. a majority class; None: the claim's own)."""
    estimate: float
    low: float = math.nan
    high: float = math.nan
    n_worlds: int | None = None
    per_unit: tuple[float, ...] = field(default=())
    reference: float | None = None

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


def t_interval(per_world: list[float], ci: float = 0.95) -> Estimate:
    """Mean of the per-world estimates with its Student t interval over worlds (n - 1 df); one world: no
    interval. per_world [1.0, 5.0] -> 3.0 [-22.41, 28.41] (t_{0.975,1} = 12.706, sd/sqrt(2) = 2)."""
    values = [float(v) for v in per_world]
    if not values:
        return Estimate(math.nan, n_worlds=0)
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Estimate(mean, n_worlds=n, per_unit=tuple(values))
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(stats.t.ppf(0.5 + ci / 2, n - 1)) * sd / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n, tuple(values))


def one_sided_p(e: Estimate, direction: int = 1, reference: float = 0.0) -> float:
    """The one-sided t test over worlds of 'the mean is on the stated side of `reference`' (n - 1 df); nan
    with fewer than 2 worlds. per_unit [1.0, 3.0, 5.0], direction +1: t = 3/(2/sqrt 3) = 2.598 on 2 df -> 0.0608."""
    n = len(e.per_unit)
    if n < 2:
        return math.nan
    mean = sum(e.per_unit) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in e.per_unit) / (n - 1))
    if sd == 0:
        return float((mean - reference) * direction <= 0)
    return float(stats.t.sf((mean - reference) * direction / (sd / math.sqrt(n)), n - 1))


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p values: sorted ascending, p_(i) * (m − i + 1) (i from 1), made
    monotone and capped at 1. {a: 0.01, b: 0.04, c: 0.03} -> a 0.03, c 0.06, b 0.06."""
    order = sorted(p_values, key=p_values.get)
    m, running, out = len(order), 0.0, {}
    for i, name in enumerate(order):
        running = max(running, min(1.0, (m - i) * p_values[name]))
        out[name] = running
    return out


def side(e: Estimate, direction: int = 1, reference: float = 0.0) -> str:
    """'right' when the interval lies on the stated side of `reference` (direction +1: above, -1: below),
    'wrong' when it lies entirely on the other side, '' otherwise or without an interval."""
    if not e.has_interval:
        return ""
    lo, hi = sorted(((e.low - reference) * direction, (e.high - reference) * direction))
    return "right" if lo > 0 else "wrong" if hi < 0 else ""


def _world_verdict(e: Estimate, direction: int, reference: float, costly: bool) -> str:
    n = e.n_worlds or 0
    where = side(e, direction, reference)
    if where:   # the same number of worlds for a verdict either way
        word = "reproduced" if where == "right" else "contradicted"
        if n >= MIN_WORLDS:
            return word
        if costly and n >= MIN_WORLDS_LOW_POWER:
            return f"{word}, low power (n_worlds = {n} < {MIN_WORLDS})"
        wrong = "" if where == "right" else "; interval on the wrong side"
        return f"not shown (n_worlds = {n} < {MIN_WORLDS}{wrong})"
    reasons = [f"n_worlds = {n} < {MIN_WORLDS}"] if n < MIN_WORLDS else []
    reasons.append(f"interval includes {reference:g}" if e.has_interval else "no interval")
    return "not shown (" + "; ".join(reasons) + ")"


def _example_verdict(e: Estimate, direction: int, reference: float) -> str:
    """No worlds (NLI-Set's prompts): the interval (every seed's, or the paired t over seeds) on the stated side and every
    seed's own estimate on that side too; a test statistic without an interval (a z against its
    Bonferroni bound) is read against the bound."""
    if not e.has_interval:
        beyond = (e.estimate - reference) * direction
        return "reproduced" if beyond > 0 else "contradicted" if beyond < 0 else "not shown (at the bound)"
    where = side(e, direction, reference)
    if where == "wrong":
        return "contradicted"
    if where == "right":
        if all((v - reference) * direction > 0 for v in e.per_unit):
            return "reproduced"
        return "not shown (not on the stated side in every seed)"
    return f"not shown (interval includes {reference:g})"


def verdict(kind: str, e: Estimate | None, direction: int = 1, reference: float = 0.0,
            costly: bool = False, tolerance: float = 0.0, holm_p: float | None = None) -> str:
    """The verdict word of one claim by the rules of VERDICTS. kind: tested | descriptive | calibration |
    not run. `e.reference`, where the results file gives one, replaces `reference`. `holm_p`: the claim's
    Holm-adjusted p over its family, which a `reproduced` must also pass."""
    word = _verdict(kind, e, direction, reference, costly, tolerance)
    if holm_p is not None and word.startswith("reproduced") and not holm_p < 0.05:
        return f"not shown (Holm-adjusted p = {holm_p:.3f} ≥ 0.05 over its family)"
    return word


def _verdict(kind: str, e: Estimate | None, direction: int, reference: float, costly: bool, tolerance: float) -> str:
    if kind == "not run" or e is None:
        return "not run"
    if kind == "descriptive":
        return "descriptive"
    if e.reference is not None:
        reference = e.reference
    if kind == "calibration":
        inside = e.per_unit and all(abs(v - reference) <= tolerance for v in e.per_unit)
        return "calibrated" if inside else "not calibrated"
    if kind != "tested":
        raise ValueError(f"claim kind {kind!r}: expected tested, descriptive, calibration or not run")
    if math.isnan(e.estimate):
        return "not shown (no estimate)"
    if e.n_worlds is None:
        return _example_verdict(e, direction, reference)
    return _world_verdict(e, direction, reference, costly)
