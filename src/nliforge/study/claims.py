"""A study's claims judged: per-world contrasts, t intervals over worlds, one-sided p, Holm per family (over
every attempt of a claim with `evaluation_data: corrected_across_attempts`), and the package's verdict words
(`nliforge.evaluation.verdict`). Every diagnosis sentence is written from the numbers."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.evaluation.verdict import verdict
from nliforge.evaluation.worlds import SIDES, Estimate, holm, one_sided_p, t_interval
from nliforge.study.gates import GateState, cell_value, fmt, is_done, run_dir
from nliforge.study.parts import Claim
from nliforge.study.schema import Study


@dataclass
class ClaimResult:
    claim: Claim
    per_world: dict
    estimate: Estimate
    p: float = math.nan
    holm_p: float = math.nan
    holm_m: int = 0
    gate: str | None = None
    verdict: str = ""
    diagnosis: str = ""
    scale: float = 100.0
    extra: dict = field(default_factory=dict)


def claim_world_values(study: Study, attempt: Path, claim: Claim) -> dict:
    """{world: the mean over training seeds of (a − b) on the claim's cell (or the mean of its cells)} for
    the worlds where both arms have every seed done; a seed pairs a's run with b's."""
    cache: dict = {}
    out = {}
    for w in study.worlds.values:
        pairs = [(run_dir(attempt, w, claim.a, s), run_dir(attempt, w, claim.b, s)) for s in study.seeds]
        if not all(is_done(r, study.save_model) for pair in pairs for r in pair):
            continue
        cells = lambda run: sum(cell_value(run, c, w, cache) for c in claim.cells) / len(claim.cells)  # noqa: E731
        out[w] = sum(cells(a) - cells(b) for a, b in pairs) / len(pairs)
    return out


def gate_reason(claim: Claim, gates: dict[str, GateState]) -> str | None:
    """The sentences of the claim's gates that did not pass (failed first), or None when all passed."""
    states = [gates[g] for g in claim.needs]
    failed = [s.short for s in states if s.status == "failed"] or [s.short for s in states if s.status != "passed"]
    return "; ".join(failed) if failed else None


def earlier_p_values(attempt: Path, family: str) -> dict[tuple, float]:
    """(attempt, claim id) -> one-sided p of the family's tested claims in every earlier attempt's claims.csv."""
    out = {}
    for earlier in sorted(attempt.parent.glob("attempt-*")):
        n = int(earlier.name.removeprefix("attempt-"))
        if n >= int(attempt.name.removeprefix("attempt-")):
            continue
        if not (earlier / "claims.csv").is_file():   # its tests would silently drop out of Holm
            raise NLIDataError(f"{earlier}: no claims.csv; with evaluation_data: corrected_across_attempts every "
                               f"earlier attempt's tests join Holm: judge it first (`nliforge-study verdict "
                               f"<study> attempt={n}`, after finishing its runs with `run … attempt={n}`)")
        with (earlier / "claims.csv").open(newline="") as fh:
            for r in csv.DictReader(fh):
                if r["family"] == family and r["p_one_sided"] not in ("", "nan"):
                    out[(n, r["claim"])] = float(r["p_one_sided"])
    return out


def judge(study: Study, attempt: Path, gates: dict[str, GateState]) -> list[ClaimResult]:
    results = []
    for c in study.claims:
        values = claim_world_values(study, attempt, c)
        e = t_interval(list(values.values()))
        p = one_sided_p(e, SIDES[c.side]) if len(values) >= 2 else math.nan
        results.append(ClaimResult(c, values, e, p, gate=gate_reason(c, gates), scale=study.scale))
    apply_holm(study, attempt, results)
    for r in results:
        paper = None if r.claim.paper_value is None else r.claim.paper_value / study.scale
        failed = any(gates[g].status == "failed" for g in r.claim.needs)
        r.verdict = verdict("tested", r.estimate, SIDES[r.claim.side], holm_p=r.holm_p if r.holm_m else None,
                            paper_value=paper, min_worlds=study.min_worlds, gate=r.gate) if r.per_world or failed \
            else "not run"
        r.diagnosis = diagnosis(study, r)
    return results


def apply_holm(study: Study, attempt: Path, results: list[ClaimResult]) -> None:
    """Holm over each family's tested claims (a gated claim is not tested); across attempts, each earlier
    attempt's tests of the family join it."""
    this = int(attempt.name.removeprefix("attempt-"))
    for family in dict.fromkeys(r.claim.family for r in results):
        members = {(this, r.claim.id): r.p for r in results
                   if r.claim.family == family and r.gate is None and not math.isnan(r.p)}
        if study.evaluation_data == "corrected_across_attempts":
            members.update(earlier_p_values(attempt, family))
        adjusted = holm(members)
        for r in results:
            if (this, r.claim.id) in adjusted:
                r.holm_p, r.holm_m = adjusted[(this, r.claim.id)], len(members)


def diagnosis(study: Study, r: ClaimResult) -> str:
    """One sentence from the numbers: the estimate, its interval, the per-world values, p, Holm, and why the word."""
    c, e, s = r.claim, r.estimate, r.scale
    unit = " points" if s == 100 else ""
    if not r.per_world:
        if r.verdict.startswith("not tested"):
            return f"{c.id}: not tested, because a gate it needs did not pass ({r.gate})."
        return f"{c.id}: no world has both {c.a} and {c.b} done yet."
    worlds = ", ".join(f"{w}: {fmt(v, s, True)}" for w, v in r.per_world.items())
    text = f"{c.id}: {c.contrast} on {c.metric} is {fmt(e.estimate, s, True)}{unit}"
    if e.has_interval:
        text += f" [{fmt(e.low, s, True)}, {fmt(e.high, s, True)}] (95% t interval over {e.n_worlds} worlds)"
    text += f"; per world {worlds}"
    if not math.isnan(r.p):
        text += f"; one-sided p = {r.p:.3f} ({c.side} than 0)"
    if r.gate:
        return text + f"; not tested, because a gate it needs did not pass ({r.gate})."
    if r.holm_m:
        text += f", Holm p = {r.holm_p:.3f} over {r.holm_m} test{'s' if r.holm_m > 1 else ''} of family {c.family}"
    return text + f"; verdict: {r.verdict}."
