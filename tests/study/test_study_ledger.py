"""Pre-registration: a locked plan, a changed criterion refused by name, amend opening attempt 2 with
attempt 1 kept and marked superseded, and a ledger whose edited line shows."""

from __future__ import annotations

import csv
import json

import pytest
from study_files import STUDY, write_study

from nliforge.errors import NLIDataError
from nliforge.study import ledger
from nliforge.study.schema import load_study


def test_preregister_locks_the_plan_with_its_hash_time_and_commit(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    attempt, lock, new = ledger.preregister(study, str(tmp_path / "root"))
    assert new and attempt == tmp_path / "root" / "hand" / "attempt-1"
    saved = json.loads((attempt / "plan.lock").read_text())
    assert saved["sha256"] == ledger.sha256(study.plan()) == lock["sha256"] and saved["plan"] == study.plan()
    assert saved["utc"].endswith("Z") and "commit" in saved
    again = ledger.preregister(study, str(tmp_path / "root"))
    assert again[2] is False and again[0] == attempt                       # the same plan: nothing new
    assert ledger.current_attempt(study, str(tmp_path / "root")) == attempt


def test_run_refuses_a_study_that_is_not_preregistered(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    with pytest.raises(NLIDataError, match="not pre-registered"):
        ledger.current_attempt(study, str(tmp_path / "root"))


def test_a_changed_criterion_is_refused_naming_the_key(tmp_path):
    root = str(tmp_path / "root")
    ledger.preregister(load_study(str(write_study(tmp_path))), root)
    gates = {**STUDY["gates"], "fit": {**STUDY["gates"]["fit"], "at_least": 0.6}}
    changed = load_study(str(write_study(tmp_path, gates=gates, min_worlds=5)))
    with pytest.raises(NLIDataError) as err:
        ledger.current_attempt(changed, root)
    assert "at gates.fit.threshold;" in str(err.value) and "nliforge-study amend hand" in str(err.value)
    with pytest.raises(NLIDataError, match=r"at gates\.fit\.threshold"):
        ledger.preregister(changed, root)


def test_amend_opens_attempt_2_and_keeps_attempt_1_marked_superseded(tmp_path):
    root = str(tmp_path / "root")
    first, _, _ = ledger.preregister(load_study(str(write_study(tmp_path))), root)
    (first / "claims.csv").write_text("attempt,status,claim\n1,current,c1\n")
    (first / "claims.md").write_text("# Study hand, attempt 1\n")
    changed = load_study(str(write_study(tmp_path, seeds=[1, 2, 3])))
    with pytest.raises(NLIDataError, match="reason"):
        ledger.amend(changed, " ", root)
    second, lock = ledger.amend(changed, "a third seed", root)
    assert second.name == "attempt-2" and lock["reason"] == "a third seed"
    assert ledger.current_attempt(changed, root) == second
    assert json.loads((first / "superseded.json").read_text())["by_attempt"] == 2
    assert (first / "plan.lock").is_file()                                  # kept, never deleted
    with (first / "claims.csv").open() as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["superseded by attempt 2"]
    assert (first / "claims.md").read_text().startswith("> **Superseded** by attempt 2")
    kinds = [e["kind"] for e in ledger.ledger_entries(second.parent)]
    assert kinds == ["preregister", "amend"]


def test_an_edited_ledger_line_breaks_the_chain(tmp_path):
    root = str(tmp_path / "root")
    study = load_study(str(write_study(tmp_path)))
    attempt, _, _ = ledger.preregister(study, root)
    ledger.append_entry(attempt.parent, "verdict", {"attempt": 1})
    path = attempt.parent / "ledger.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[0].replace('"attempt":1', '"attempt":7') + "\n" + lines[1] + "\n")
    with pytest.raises(NLIDataError, match=r"ledger.jsonl:1: the ledger's chain is broken"):
        ledger.current_attempt(study, root)


def test_a_lock_edited_to_match_a_new_plan_is_caught_by_the_ledger(tmp_path):
    root = str(tmp_path / "root")
    attempt, _, _ = ledger.preregister(load_study(str(write_study(tmp_path))), root)
    changed = load_study(str(write_study(tmp_path, seeds=[5])))
    lock = json.loads((attempt / "plan.lock").read_text())
    lock.update(plan=changed.plan(), sha256=ledger.sha256(changed.plan()))
    (attempt / "plan.lock").write_text(json.dumps(lock))
    with pytest.raises(NLIDataError, match="is not the one the ledger recorded for attempt 1"):
        ledger.current_attempt(changed, root)


def test_a_key_added_later_with_an_empty_value_changes_no_plan():
    assert ledger.plan_diff({"gates": {"fit": {"arm": "b"}}}, {"gates": {"fit": {"arm": "b", "why": ""}}}) == []
    assert ledger.plan_diff({"gates": {"fit": {"arm": "b"}}}, {"gates": {"fit": {"arm": "b", "why": "x"}}}) == \
        ["gates.fit.why"]


def test_an_earlier_attempt_is_chosen_by_number_when_the_file_holds_its_plan(tmp_path):
    root = str(tmp_path / "root")
    first_file = tmp_path / "first"
    first_file.mkdir()
    first_study = load_study(str(write_study(first_file)))
    first, _, _ = ledger.preregister(first_study, root)
    second, _ = ledger.amend(load_study(str(write_study(tmp_path, seeds=[1, 2, 3]))), "a third seed", root)
    assert ledger.current_attempt(first_study, root, 1) == first        # attempt 1's plan: its runs can finish
    with pytest.raises(NLIDataError, match=r"at seeds"):
        ledger.current_attempt(first_study, root)                        # the latest is attempt 2: another plan
    with pytest.raises(NLIDataError, match=r"attempt=3: no such attempt .*attempts: 1, 2"):
        ledger.current_attempt(first_study, root, 3)


def test_attempt_and_jobs_options_take_positive_numbers_only():
    from nliforge.study.cli import attempt_number, parse_jobs

    assert attempt_number(None) is None and attempt_number("2") == 2 and parse_jobs("3") == 3
    for bad in ("0", "-1", "x"):
        with pytest.raises(NLIDataError, match="attempt="):
            attempt_number(bad)
        with pytest.raises(NLIDataError, match="jobs="):
            parse_jobs(bad)


def test_fresh_evaluation_data_declared_over_the_same_worlds_is_warned(tmp_path):
    root = str(tmp_path / "root")
    first, _, _ = ledger.preregister(load_study(str(write_study(tmp_path))), root)
    assert ledger.reused_data_warnings(load_study(str(write_study(tmp_path))), first) == []
    again = load_study(str(write_study(tmp_path, seeds=[1, 2, 3])))
    second, _ = ledger.amend(again, "a third seed", root)
    (line,) = ledger.reused_data_warnings(again, second)
    assert line.startswith("attempt 1 evaluated the same worlds (world.seed in 0, 1, 2, 3, 4) on the same suite")
    fresh = load_study(str(write_study(tmp_path, seeds=[1, 2, 3], worlds={"key": "world.seed", "values": [5, 6, 7, 8, 9]})))
    third, _ = ledger.amend(fresh, "new worlds", root)
    assert ledger.reused_data_warnings(fresh, third) == []
    corrected = load_study(str(write_study(tmp_path, seeds=[1, 2, 3], evaluation_data="corrected_across_attempts")))
    assert ledger.reused_data_warnings(corrected, second) == []
