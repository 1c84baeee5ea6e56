"""The verdict words of a claim, defined once here and applied by rule: `nliforge-study verdict` and the
summary scripts of `experiments/` use this module; the statistics (t interval over worlds, one-sided p,
Holm) are `nliforge.evaluation.worlds`'s.

The unit of analysis is the **world** (an independent draw of the data: the synthetic world's seed, or a
disjoint part of a real corpus): a claim's estimate is the mean over worlds of the per-world estimate (the
mean over that world's training seeds of the paired difference), its interval a Student t interval over
worlds (n_worlds - 1 df). Without worlds (NLI-Set, the unit is the prompt) the interval over prompts decides.
A claim whose pre-registered gate failed is `not tested (gate …)`, the gate's numbers in the brackets.
"""

from __future__ import annotations

import math

from nliforge.evaluation.worlds import Estimate

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
    "direction only": "a claim that would be reproduced (or reproduced, low power) whose paper gives a number on "
                      "the same scale (a correlation) lying beyond the whole interval: the direction holds, the "
                      "size is below the paper's",
    "contradicted": "the interval over worlds lies entirely on the wrong side of the reference, with the same "
                    f"number of worlds `reproduced` needs (n_worlds ≥ {MIN_WORLDS}; ≥ {MIN_WORLDS_LOW_POWER} as "
                    "`contradicted, low power` for a costly claim); without worlds: the interval on the wrong side",
    "not shown": "anything else; the reason in brackets: too few worlds (n_worlds < 5), the interval includes "
                 "the reference, no interval (one world), or no estimate",
    "calibrated": "a calibration (not a claim about a method): every world's value within the target ± the "
                  "stated tolerance; otherwise `not calibrated`",
    "descriptive": "a measurement reported beside a claim, with no pass/fail criterion (a cost, a diagnosis, "
                   "a comparison nobody stated in advance); it counts neither for nor against the paper",
    "not tested": "a claim whose pre-registered gate failed (the set-up could not answer it) or has not finished: "
                  "`not tested (gate NAME: the gate's numbers)`; it counts neither for nor against the paper",
    "not run": "the experiment exists as a command, but no result file does",
}


def side(e: Estimate, direction: int = 1, reference: float = 0.0) -> str:
    """'right' when the interval lies on the stated side of `reference` (direction +1: above, -1: below),
    'wrong' when it lies entirely on the other side, '' otherwise or without an interval."""
    if not e.has_interval:
        return ""
    lo, hi = sorted(((e.low - reference) * direction, (e.high - reference) * direction))
    return "right" if lo > 0 else "wrong" if hi < 0 else ""


def _world_verdict(e: Estimate, direction: int, reference: float, costly: bool, min_worlds: int) -> str:
    n = e.n_worlds or 0
    where = side(e, direction, reference)
    if where:   # the same number of worlds for a verdict either way
        word = "reproduced" if where == "right" else "contradicted"
        if n >= min_worlds:
            return word
        if costly and n >= MIN_WORLDS_LOW_POWER:
            return f"{word}, low power (n_worlds = {n} < {min_worlds})"
        wrong = "" if where == "right" else "; interval on the wrong side"
        return f"not shown (n_worlds = {n} < {min_worlds}{wrong})"
    reasons = [f"n_worlds = {n} < {min_worlds}"] if n < min_worlds else []
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
            costly: bool = False, tolerance: float = 0.0, holm_p: float | None = None,
            paper_value: float | None = None, min_worlds: int = MIN_WORLDS, gate: str | None = None) -> str:
    """The verdict word of one claim by the rules of VERDICTS. kind: tested | descriptive | calibration |
    not run. `e.reference`, where the results file gives one, replaces `reference`. `holm_p`: the claim's
    Holm-adjusted p over its family, which a `reproduced` must also pass. `paper_value`: the paper's number
    on the claim's own scale (None where the scales differ); a `reproduced` whose whole interval falls short
    of it (direction +1: the interval's top below it) is `direction only`. `min_worlds`: the worlds a
    `reproduced` or `contradicted` needs (a study's `min_worlds`, default MIN_WORLDS).
    `gate`: the failed gate's sentence (`fit: 60.2 < 65.0 in world 2`): the claim is `not tested (gate …)`."""
    if gate:
        return f"not tested (gate {gate})"
    word = _verdict(kind, e, direction, reference, costly, tolerance, min_worlds)
    if holm_p is not None and word.startswith("reproduced") and not holm_p < 0.05:
        return f"not shown (Holm-adjusted p = {holm_p:.3f} ≥ 0.05 over its family)"
    if paper_value is not None and word.startswith("reproduced") and e is not None and e.has_interval:
        far = e.high if direction > 0 else e.low
        if (paper_value - far) * direction > 0:
            word = word.replace("reproduced", "direction only", 1)
            where = "above" if direction > 0 else "below"
            return word if "(" in word else f"{word} (the paper's {paper_value:g} lies {where} the interval)"
    return word


def _verdict(kind: str, e: Estimate | None, direction: int, reference: float, costly: bool, tolerance: float,
             min_worlds: int) -> str:
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
    return _world_verdict(e, direction, reference, costly, min_worlds)
