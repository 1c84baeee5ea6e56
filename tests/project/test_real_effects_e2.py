"""experiments/real_effects E2: the worlds' originals are disjoint, and the dose order gives one revision per
original at the first dose, one of each kind at the second and all four at the third (checked by counting)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from experiments.real_effects.e2_sets import revision_order, world_originals


def test_world_originals_are_disjoint_slices_of_one_permutation():
    worlds = world_originals(1666)
    assert [len(w) for w in worlds] == [333] * 5
    flat = [i for w in worlds for i in w]
    assert len(set(flat)) == 1665 and set(flat) <= set(range(1666))   # one original left out, none twice
    assert world_originals(1666) == worlds and world_originals(1666, seed=1) != worlds
    with pytest.raises(ValueError, match="need 1665; there are 1000"):
        world_originals(1000)


def test_revision_order_doses():
    originals = [4, 9, 17, 20, 31]
    order = revision_order(originals, world=2)
    assert len(order) == 4 * len(originals) and len(set(order)) == len(order)
    # every revision of every original, and nothing else: rows 2i and 2i+1 of both files
    assert sorted(order) == sorted((k, r) for i in originals for k in ("premise", "hypothesis") for r in (2 * i, 2 * i + 1))
    first, second = order[:5], order[5:10]
    assert sorted(r // 2 for _, r in first) == originals            # dose 1: one revision of each original
    assert Counter(k for k, _ in first) == {"premise": 3, "hypothesis": 2}   # alternating over 5 originals
    both = Counter((k, r // 2) for k, r in first + second)          # dose 2: one of each kind per original
    assert both == {(k, i): 1 for k in ("premise", "hypothesis") for i in originals}
    assert revision_order(originals, world=2) == order and revision_order(originals, world=3) != order


def write_run(run: Path, right: dict[str, list[bool]], acc_cf: float) -> None:
    """A finished E2 run: per CF set 2 originals then 2 counterfactuals, `right` saying which were right."""
    (run / "predictions").mkdir(parents=True)
    metrics = []
    for key, name in (("rp", "snli_cad_cf_premise_test"), ("rh", "snli_cad_cf_hypothesis_test")):
        roles = ["original", "original", "counterfactual", "counterfactual"]
        lines = ["uid,gold,pred"] + [f"{name}-{i}/{role},entailment,{'entailment' if ok else 'neutral'}"
                                     for i, (role, ok) in enumerate(zip(roles, right[key]))]
        (run / "predictions" / f"{name}.csv").write_text("\n".join(lines) + "\n")
        metrics.append(f"{name},acc_cf,{acc_cf}")
    (run / "metrics.csv").write_text("eval_set,metric,value\n" + "\n".join(metrics) + "\n")


def test_e2_difference_of_differences_by_hand(tmp_path):
    from experiments.real_effects.analysis_e2 import ARMS, e2_rows

    human = {"rp": [True, True, True, True], "rh": [True, False, True, False]}     # originals 3/4; rev 1.0, 0.5
    mnli = {"rp": [True, True, True, False], "rh": [True, True, False, False]}     # originals 4/4; rev 0.5, 0.0
    base = {"rp": [False, False, False, False], "rh": [True, True, False, False]}  # originals 2/4; rev 0.0, 0.0
    for arm in ARMS:
        write_run(tmp_path / "e2" / "w1" / arm, human if arm.startswith("human") else mnli if arm.startswith("mnli")
                  else base, 0.5 if arm.startswith("human") else 0.25)
    labels = ["entailment"] * 2 + ["neutral"] * 5 + ["contradiction"] * 3              # largest class 0.5
    rows, levels = e2_rows(tmp_path, labels, worlds=(1, 2))                            # world 2 unfinished: left out
    value = {r["criterion"]: r["value"] for r in rows}
    assert {r["world"] for r in rows} == {1} and len(levels) == len(ARMS)
    # rev: human (1.0 + 0.5) / 2 = 0.75, mnli 0.25; orig: human 0.75, mnli 1.0 -> (0.5) - (-0.25) = 0.75
    assert value["E2-333"] == pytest.approx(75.0) and value["E2-1332"] == pytest.approx(75.0)
    assert value["E2-666-rp"] == pytest.approx(50.0) and value["E2-666-rh"] == pytest.approx(50.0)
    assert value["E2-666-orig"] == pytest.approx(-25.0) and value["E2-666-cf_rp"] == pytest.approx(25.0)
    assert value["E2-333-human−base-rev"] == pytest.approx(75.0)
    assert value["G2-human_333"] == pytest.approx(25.0) and value["G2-base"] == pytest.approx(0.0)


def test_single_sentence_cue_by_construction():
    from experiments.real_effects.e2_cues import cue_points

    labels = ["entailment", "neutral", "contradiction"]
    determined = [f"{w} here" for w in ("cat", "dog", "bird") for _ in range(10)]
    by_word = [lab for lab in labels for _ in range(10)]
    assert cue_points(determined, by_word) == pytest.approx(100 * (1 - 1 / 3))     # the word gives the label
    # every sentence with each of the three labels (what revisions that keep a sentence do): held out, a pair's
    # label is one its sentence never had in training, so the cue is below the largest class
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
    revised = [f"the {w} sentence" for w in words for _ in labels]
    assert cue_points(revised, labels * 10) < -20
