"""Gates, claims and the verdict files of a study, on run folders written by hand: every number below is
worked out from the values the folders hold."""

from __future__ import annotations

import csv
import json
import math

import pytest
from study_files import write_run, write_study

from nliforge.errors import NLIDataError
from nliforge.evaluation.worlds import Estimate
from nliforge.study.claims import ClaimResult, apply_holm, judge
from nliforge.study.gates import evaluate_gates, run_dir
from nliforge.study.report import environment_warnings, write_verdict
from nliforge.study.schema import load_study

D = [0.02, 0.04, 0.06, 0.08, 0.10]   # b − a on challenge/acc per world (seeds 1 and 2 at d − 0.01, d + 0.01)


@pytest.fixture
def hand(tmp_path):
    """World w, seed s: a's test/acc = 0.60 + 0.01 (w + 1) + 0.02 (s − 1), so the seeds' mean is
    0.61 + 0.01 (w + 1); the test set's gold labels are 12 entailment, 8 neutral (largest class 0.6), 20 pairs;
    b's last-epoch training accuracy is 7/10, except 6/10 in world 2."""
    study = load_study(str(write_study(tmp_path)))
    attempt = tmp_path / "root" / "hand" / "attempt-1"
    gold = {"test": ["entailment"] * 12 + ["neutral"] * 8}
    for w in range(5):
        for s in (1, 2):
            acc = 0.60 + 0.01 * (w + 1) + 0.02 * (s - 1)
            write_run(run_dir(attempt, w, "a", s), {("test", "acc"): acc, ("test", "n"): 20,
                                                   ("challenge", "acc"): 0.40}, gold)
            right = 6 if w == 2 else 7
            write_run(run_dir(attempt, w, "b", s),
                      {("test", "acc"): acc + 0.01, ("challenge", "acc"): 0.40 + D[w] + (0.01 if s == 2 else -0.01)},
                      train=([0] * 10, [0] * right + [1] * (10 - right)))
    return study, attempt


def test_gates_pass_and_fail_with_their_numbers(hand):
    study, attempt = hand
    gates = evaluate_gates(study, attempt)
    assert gates["pairs"].status == "passed"
    assert gates["pairs"].sentence == "pairs passed in 5/5 worlds (20–20, each ≥ 10)"
    assert gates["fit"].status == "failed" and gates["fit"].sentence == "fit: 60.0 < 65.0 in world 2"
    # margins 0.02 … 0.06: mean 0.04, sd sqrt(0.001/4) = 0.015811, se 0.0070711, t_{0.975,4} = 2.776445
    learns = gates["learns"]
    assert learns.status == "passed" and learns.estimate.low == pytest.approx(0.04 - 2.776445 * 0.0070711, abs=1e-6)
    assert learns.sentence == "learns passed (test/acc − its largest class: +4.0 [+2.0, +6.0] over 5 worlds, above 0)"


def test_a_missing_run_leaves_its_gate_pending(hand):
    study, attempt = hand
    (run_dir(attempt, 4, "a", 2) / "metrics.csv").unlink()
    gates = evaluate_gates(study, attempt)
    assert gates["pairs"].status == "pending"
    assert gates["pairs"].sentence == "pairs: 4 of 5 worlds done; 20–20 so far, all ≥ 10"
    assert gates["learns"].sentence == "learns: 4 of 5 worlds done"


def test_claims_are_world_unit_t_tests_and_a_failed_gate_reads_not_tested(hand):
    study, attempt = hand
    c1, c2 = judge(study, attempt, evaluate_gates(study, attempt))
    # per world the seeds' mean of b − a: D; mean 0.06, sd sqrt(0.004/4) = 0.031623, se 0.014142
    assert list(c1.per_world.values()) == pytest.approx(D)
    assert (c1.estimate.estimate, c1.estimate.low, c1.estimate.high) == pytest.approx(
        (0.06, 0.06 - 2.776445 * 0.014142, 0.06 + 2.776445 * 0.014142), abs=1e-5)
    assert c1.p == pytest.approx(0.0066178, abs=1e-6)          # t = 0.06 / 0.014142 = 4.2426 on 4 df
    assert (c1.holm_p, c1.holm_m) == (pytest.approx(0.0066178, abs=1e-6), 1)   # c2 is gated: not in the family
    assert c1.verdict == "reproduced"
    assert c2.verdict == "not tested (gate fit: 60.0 < 65.0 in world 2)" and c2.holm_m == 0
    assert c1.diagnosis.startswith("c1: b − a on challenge/acc is +6.0 points [+2.1, +9.9] (95% t interval over "
                                   "5 worlds); per world 0: +2.0, 1: +4.0, 2: +6.0, 3: +8.0, 4: +10.0; one-sided "
                                   "p = 0.007 (greater than 0), Holm p = 0.007 over 1 test of family F")


def test_a_pending_gate_keeps_its_claims_untested(hand):
    study, attempt = hand
    (run_dir(attempt, 4, "a", 2) / "metrics.csv").unlink()
    c1, _ = judge(study, attempt, evaluate_gates(study, attempt))
    assert c1.verdict == "not tested (gate pairs: 4 of 5 worlds done; 20–20 so far, all ≥ 10)"


def _result(claim, p):
    return ClaimResult(claim, {0: 1.0}, Estimate(1.0), p)


def test_holm_per_family_and_across_attempts(hand, tmp_path):
    study, attempt = hand
    c1, c2 = study.claims
    results = [_result(c1, 0.01), _result(c2, 0.04)]
    apply_holm(study, attempt, results)       # sorted: 0.01 × 2 = 0.02, 0.04 × 1 = 0.04
    assert [(r.holm_p, r.holm_m) for r in results] == [(pytest.approx(0.02), 2), (pytest.approx(0.04), 2)]
    # attempt 2 of the same claims on the same evaluation data: attempt 1's tests join the family
    earlier = attempt.parent / "attempt-1"
    second = attempt.parent / "attempt-2"
    with (earlier / "claims.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["claim", "family", "p_one_sided"])
        w.writeheader()
        w.writerows([{"claim": "c1", "family": "F", "p_one_sided": 0.02}, {"claim": "c2", "family": "F",
                                                                            "p_one_sided": 0.5}])
    across = [_result(c1, 0.01), _result(c2, 0.04)]
    apply_holm(study.__class__(**{**study.__dict__, "evaluation_data": "corrected_across_attempts"}), second, across)
    # four tests 0.01, 0.02, 0.04, 0.5: 0.04, 0.06, 0.08, 0.5
    assert [(r.holm_p, r.holm_m) for r in across] == [(pytest.approx(0.04), 4), (pytest.approx(0.08), 4)]
    fresh = [_result(c1, 0.01), _result(c2, 0.04)]
    apply_holm(study, second, fresh)          # fresh evaluation data: attempt 1 does not count
    assert [r.holm_m for r in fresh] == [2, 2]
    (earlier / "claims.csv").unlink()        # an earlier attempt not judged yet cannot drop out of Holm silently
    with pytest.raises(NLIDataError, match=r"attempt-1: no claims.csv; .* judge it first .*attempt=1"):
        apply_holm(study.__class__(**{**study.__dict__, "evaluation_data": "corrected_across_attempts"}), second,
                   [_result(c1, 0.01), _result(c2, 0.04)])


def test_the_verdict_files_hold_claims_only_and_warn_on_environments(hand):
    study, attempt = hand
    for i, (w, a, s) in enumerate(study.run_names()):
        (run_dir(attempt, w, a, s) / "environment.json").write_text(json.dumps({"threads": 1 if i else 4}))
    gates = evaluate_gates(study, attempt)
    results = judge(study, attempt, gates)
    warnings = environment_warnings(study, attempt)
    assert warnings == ['the runs\' environment.json differ at threads: 4 in 1 runs, 1 in 19 runs']
    lock = {"attempt": 1, "utc": "2026-01-01T00:00:00Z", "sha256": "ab" * 32, "commit": None}
    write_verdict(study, attempt, lock, gates, results, warnings)
    with (attempt / "claims.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["claim"] for r in rows] == ["c1", "c2"]           # gates are never claim rows
    assert (rows[0]["estimate"], rows[0]["verdict"], rows[0]["status"]) == ("6.0000", "reproduced", "current")
    assert rows[0]["per_world"] == "0:2.0000;1:4.0000;2:6.0000;3:8.0000;4:10.0000"
    md = (attempt / "claims.md").read_text()
    assert "- failed: fit: 60.0 < 65.0 in world 2" in md and "threads: 4 in 1 runs" in md
    assert (attempt / "claims.png").stat().st_size > 1000
    assert not math.isnan(results[1].p)        # a gated claim keeps its numbers, only its word says not tested


def test_a_misspelt_cell_is_named(hand):
    from nliforge.study.gates import missing_cells

    study, attempt = hand
    assert missing_cells(study, attempt) == []
    c1 = study.claims[0].__class__(**{**study.claims[0].__dict__, "cells": ("challange/acc",)})
    typo = study.__class__(**{**study.__dict__, "claims": (c1,)})
    (line,) = missing_cells(typo, attempt)
    assert line.startswith("c1: challange/acc is not in ") and line.endswith("its values are nan")


def test_status_says_what_is_done_what_is_left_and_the_gates(hand):
    from nliforge.study.commands import status_lines

    study, attempt = hand
    (run_dir(attempt, 3, "b", 2) / "metrics.csv").unlink()
    lines = status_lines(study, attempt)
    assert lines[0].startswith(f"{attempt}: 19 of 20 runs done · gates: FAILED fit: 60.0 < 65.0 in world 2; ")
    assert lines[1:] == ["  a: 10 done", "  b: 9 done, left: world 3 seed 2"]


def test_a_gated_claim_keeps_its_numbers_in_the_diagnosis(hand):
    study, attempt = hand
    _, c2 = judge(study, attempt, evaluate_gates(study, attempt))
    # b − a on test/acc is 0.01 in every world: sd 0, no spread, so p = 0 (the mean is above 0)
    assert c2.diagnosis == ("c2: b − a on test/acc is +1.0 points [+1.0, +1.0] (95% t interval over 5 worlds); per "
                            "world 0: +1.0, 1: +1.0, 2: +1.0, 3: +1.0, 4: +1.0; one-sided p = 0.000 (greater than 0); "
                            "not tested, because a gate it needs did not pass (fit: 60.0 < 65.0 in world 2).")


def test_before_any_run_every_claim_reads_not_run(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    attempt = tmp_path / "root" / "hand" / "attempt-1"
    c1, c2 = judge(study, attempt, evaluate_gates(study, attempt))
    assert (c1.verdict, c2.verdict) == ("not run", "not run")
    assert c1.diagnosis == "c1: no world has both b and a done yet."
