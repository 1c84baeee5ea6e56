"""The `provenance` column of `experiments/summary.csv`: which floor design a row's comparison used and whether
the row is current, as `<design>; <status>`. Set per source by rule (RULES below: the results file's era, and
whether the comparison's baseline is a floor, D0 itself or nothing), never typed in per row; a results file no
rule names stops summary.py, so a new source gets its line here (one line: pattern, floor design, status).

A row whose files are a proper subset of another row's files (the same claim re-run with more worlds added to
the first attempt's) is superseded by that row, whatever its file's rule says.
"""

from __future__ import annotations

import re

from nliforge.errors import NLIDataError

DESIGNS = {
    "d0_floor": "the floor holds D0: D0 + N pairs of D0's own biased distribution (`nliforge.world.arms`, from "
                "2026-11-26), or on real text the base set + N pairs of the same corpus",
    "fresh_draw_floor": "the floor is a fresh draw of |D0| + N biased pairs that does not hold D0 (the world draws "
                        "a split whole for its size): floor and treatment differ in their base too",
    "splits": "the biased and the unbiased split of one size (W1's premise: no D0 + N)",
    "vs_d0": "no floor: a set against D0 itself, or two arms that both hold D0",
    "no_floor": "no trained arms compared: a calibration, correlation, z statistic, agreement or rate",
    "not_run": "no result",
    "study": "a study's claim (`conf/study/<name>.yaml`, pre-registered, judged by `nliforge-study verdict`): its "
             "arms, gates and floors are the study file's; the row is read from its attempt's claims.csv",
}
CURRENT, STALE, SUPERSEDED = "current", "stale: first attempt", "superseded: first attempt"
STATUSES = {
    CURRENT: "the row's design is the project's current one (a floor that holds D0, the world as the unit)",
    STALE: "run before the floors that hold D0 or before the world became the unit; its verdict is not "
           "current and the experiment needs re-running",
    SUPERSEDED: "the same claim re-run with the current design and more worlds: the re-run's row is current",
    "stale: labeller below the floor": "the first WANLI mechanism test, whose labeller was less accurate than the "
                                       "floor model: it could not succeed; redesigned in "
                                       "wanli_generated/README.md",
    "not run": "no result file",
    "superseded: later attempt": "a study's earlier attempt at the claim (the study's ledger says why it was amended)",
}

# (pattern on the claim's first file, the design of its floor comparisons, status); the first match wins
RULES: tuple[tuple[str, str, str], ...] = (
    (r"^synthetic_artifacts/.*_2worlds\.csv$", "splits", SUPERSEDED),
    (r"^synthetic_artifacts/", "splits", CURRENT),
    (r"^(world_calibration|max_variability)/", "no_floor", CURRENT),
    (r"^wanli_generated/results_mechanism\.csv$", "d0_floor", "stale: labeller below the floor"),
    (r"^wanli_generated/results_labeller\.csv$", "d0_floor", CURRENT),
    (r"^disco_table3/five_worlds/", "d0_floor", CURRENT),
    (r"^disco_table3/results\.csv$", "fresh_draw_floor", SUPERSEDED),
    (r"^zfilter_training/five_worlds/", "d0_floor", CURRENT),
    (r"^zfilter_training/results", "fresh_draw_floor", SUPERSEDED),
    (r"^(wanli_generated|disco_table3|combined|zfilter_training|real_lm)/", "fresh_draw_floor", STALE),
    (r"^nli_set/", "no_floor", CURRENT),
    (r"^label_following/", "no_floor", CURRENT),   # a generator's label-following: no trained arms
    (r"^real_effects/README\.md$", "not_run", "not run"),   # real_effects: what was not run
    (r"^real_effects/", "d0_floor", CURRENT),   # real_effects: disjoint parts as worlds
    (r"^real_text/results(_r1r4)?\.csv$", "d0_floor", STALE),   # one sample, the example as the unit
    (r"^real_text/", "d0_floor", CURRENT),
)
# real-text criteria whose baseline is base + N pairs of the corpus (a floor); the others compare no arms
REAL_FLOOR_CRITERIA = {"R1a", "R1b", "R4a", "R5-R4a"}
D0_ROWS = {"D0", "D0 = D^b", "floor: D0 (plain training)"}


def comparison(source) -> str:
    """'floor' when the source's baseline is a floor (or a ceiling − floor check), 'd0' when it is D0 itself or
    another arm, 'none' when no trained arms are compared."""
    if source is None:
        return "none"
    minus = getattr(source, "minus", None)
    if minus is not None:   # summary_sources.Paired: row − minus
        return "d0" if minus in D0_ROWS else "floor" if "floor" in minus else "d0"
    return "floor" if getattr(source, "criterion", None) in REAL_FLOOR_CRITERIA else "none"


def rule(first_file: str) -> tuple[str, str]:
    for pattern, design, status in RULES:
        if re.search(pattern, first_file):
            return design, status
    raise NLIDataError(f"{first_file}: no provenance rule; add one line to experiments/summary_provenance.RULES")


def provenance(claim, all_files: list[tuple[str, ...]] = ()) -> str:
    """`<design>; <status>` of one claim (summary_claims.Claim); `all_files`: every claim's data files (its
    source's, not its gates'), for the superseded rule."""
    if claim.source is None:   # a claim with no result file
        return "not_run; not run"
    files = tuple(claim.source.files)
    design, status = rule(files[0])
    kind = comparison(claim.source)
    design = {"floor": design, "d0": "vs_d0", "none": "no_floor"}[kind]
    if any(set(files) < set(other) for other in all_files):
        status = SUPERSEDED
    return f"{design}; {status}"
