"""Label-following (nliforge.analysis.label_following, `nliforge-analyze label-following`): the misclassification
correction against values computed by hand, and the action on generated sets whose answer is known."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nliforge.analysis.label_following import (confusion_counts, correct_distribution, label_following,
                                               over_worlds, row_rates)
from nliforge.analyze import main
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.errors import NLIDataError

# 0.8 on the diagonal, 0.1 off it: C = 0.7 I + 0.1 J, C^{-1} = (I - 0.1 J) / 0.7, so p = (q - 0.1) / 0.7.
SYMMETRIC = np.full((3, 3), 0.1) + 0.7 * np.eye(3)
# An asymmetric judge: entailment is its best label, contradiction its worst.
ASYMMETRIC = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.1, 0.2, 0.7]])


def test_correction_by_hand_symmetric_judge():
    # q = (0.52, 0.24, 0.24): p = (0.42, 0.14, 0.14) / 0.7 = (0.6, 0.2, 0.2)
    assert np.allclose(correct_distribution(np.array([0.52, 0.24, 0.24]), SYMMETRIC), [0.6, 0.2, 0.2])


def test_correction_by_hand_asymmetric_judge():
    # p = (0.6, 0.3, 0.1): q = C^T p = (0.48 + 0.06 + 0.01, 0.06 + 0.21 + 0.02, 0.06 + 0.03 + 0.07)
    #                                = (0.55, 0.29, 0.16); the correction must give p back
    assert np.allclose(correct_distribution(np.array([0.55, 0.29, 0.16]), ASYMMETRIC), [0.6, 0.3, 0.1])


def test_correction_clips_and_renormalises():
    # q = (0.95, 0.05, 0.0): (q - 0.1) / 0.7 = (1.214, -0.071, -0.143) -> clipped (1, 0, 0), already summing to 1
    assert np.allclose(correct_distribution(np.array([0.95, 0.05, 0.0]), SYMMETRIC), [1.0, 0.0, 0.0])
    # q = (0.5, 0.5, 0.0): (0.571, 0.571, -0.143) -> clipped (0.571, 0.571, 0) -> renormalised (0.5, 0.5, 0)
    assert np.allclose(correct_distribution(np.array([0.5, 0.5, 0.0]), SYMMETRIC), [0.5, 0.5, 0.0])


def test_shares_by_hand():
    # 100 asked for entailment, judged 52 e / 24 n / 24 c; 50 asked for contradiction, judged 10 e / 10 n / 30 c:
    # raw (52 + 30) / 150; contradiction: q = (0.2, 0.2, 0.6), p = (0.1, 0.1, 0.5) / 0.7 = (1/7, 1/7, 5/7)
    intended = ["entailment"] * 100 + ["contradiction"] * 50
    judged = (["entailment"] * 52 + ["neutral"] * 24 + ["contradiction"] * 24
              + ["entailment"] * 10 + ["neutral"] * 10 + ["contradiction"] * 30)
    r = label_following(intended, judged, SYMMETRIC)
    assert r.n == 150 and r.n_per_label == [100, 0, 50]
    assert r.raw == pytest.approx(82 / 150)
    assert r.raw_per_label[0] == pytest.approx(0.52) and r.raw_per_label[1] is None
    assert r.corrected_per_label[0] == pytest.approx(0.6) and r.corrected_per_label[2] == pytest.approx(5 / 7)
    assert r.corrected == pytest.approx((100 * 0.6 + 50 * 5 / 7) / 150)


def test_confusion_counts_and_rates_by_hand():
    true = ["entailment", "entailment", "neutral", "contradiction", "contradiction", "contradiction"]
    judged = ["entailment", "neutral", "neutral", "contradiction", "entailment", "contradiction"]
    counts = confusion_counts(true, judged)
    assert counts.tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 2]]
    assert np.allclose(row_rates(counts), [[0.5, 0.5, 0], [0, 1, 0], [1 / 3, 0, 2 / 3]])
    with pytest.raises(NLIDataError, match="no held-out pair of true label 'neutral'"):
        row_rates(confusion_counts(["entailment", "contradiction"], ["entailment", "entailment"]))


def test_singular_judge_is_refused():
    always_entailment = np.array([[1.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0]])
    with pytest.raises(NLIDataError, match="singular"):
        correct_distribution(np.array([1.0, 0, 0]), always_entailment)


def test_interval_over_worlds_is_the_t_interval():
    results = [label_following(["entailment"] * 10, ["entailment"] * k + ["neutral"] * (10 - k), SYMMETRIC)
               for k in (5, 7)]
    s = over_worlds(results)
    # raw 0.5 and 0.7: mean 0.6, sd/sqrt(2) = 0.1, t_{0.975,1} = 12.706
    assert s["raw"]["estimate"] == pytest.approx(0.6) and s["raw"]["n_worlds"] == 2
    assert s["raw"]["high"] == pytest.approx(0.6 + 12.7062 * 0.1, abs=1e-3)


WORD = {"yes": "entailment", "maybe": "neutral", "no": "contradiction"}


def rule_judge(records):
    """A judge whose every answer is known: the label of the hypothesis' word."""
    return [WORD[r.hypothesis] for r in records]


def pairs(counts, label_of, prefix):
    """Records with `counts[(label, word)]` pairs each; `label_of(label)` -> (gold label, meta)."""
    out = []
    for (label, word), n in counts.items():
        gold, meta = label_of(label)
        out += [Record(f"{prefix}{len(out) + i}", "p", word, gold, "gen", meta) for i in range(n)]
    return out


@pytest.fixture
def known_judge(monkeypatch, tmp_path):
    """--judge names a folder; the action's judge is the rule above. Held-out pairs: of each true label, 8 the
    judge gets right and 1 each it calls another label: the SYMMETRIC matrix."""
    import nliforge.analysis.label_following as lf

    monkeypatch.setattr(lf, "classifier_judge", lambda path: rule_judge)
    held = pairs({(lab, w): 8 if WORD[w] == lab else 1 for lab in LABELS for w in WORD}, lambda lab: (lab, {}), "h")
    write_jsonl(held, tmp_path / "held.jsonl")
    return tmp_path / "held.jsonl"


def test_action_by_hand(known_judge, tmp_path, capsys):
    """World A: 100 asked for entailment, judged 52 / 24 / 24 -> raw 0.52, corrected 0.6 (the hand example);
    world B: 100 asked for entailment judged 80 / 10 / 10 -> corrected (0.8 - 0.1) / 0.7 = 1.0."""
    intended = lambda lab: (None, {"intended_label": lab})   # noqa: E731
    a = pairs({("entailment", "yes"): 52, ("entailment", "maybe"): 24, ("entailment", "no"): 24}, intended, "a")
    b = pairs({("entailment", "yes"): 80, ("entailment", "maybe"): 10, ("entailment", "no"): 10}, intended, "b")
    write_jsonl(a, tmp_path / "a.jsonl"), write_jsonl(b, tmp_path / "b.jsonl")
    assert main(["label-following", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--judge", "judge",
                 "--heldout", str(known_judge), "--out", str(tmp_path / "out")]) == 0
    out = json.loads((tmp_path / "out" / "label_following.json").read_text())
    wa, wb = out["per_world"]
    assert wa["judge_accuracy"] == pytest.approx(24 / 30)
    assert np.allclose(wa["confusion"], SYMMETRIC)
    assert wa["raw"] == pytest.approx(0.52) and wa["corrected"] == pytest.approx(0.6)
    assert wb["raw"] == pytest.approx(0.8) and wb["corrected"] == pytest.approx(1.0)
    assert wa["judged"]["a0"] == "entailment" and wa["judged"]["a60"] == "neutral"
    assert out["over_worlds"]["corrected"]["estimate"] == pytest.approx(0.8)
    assert out["over_worlds"]["raw"]["n_worlds"] == 2
    printed = capsys.readouterr().out
    assert "raw 0.520, corrected 0.600" in printed and "over 2 worlds" in printed


def test_action_names_a_record_without_intended_label(known_judge, tmp_path, capsys):
    gen = [Record("g1", "p", "yes", None, "gen", {"intended_label": "neutral"}),
           Record("g2", "p", "no", None, "gen", {})]
    write_jsonl(gen, tmp_path / "gen.jsonl")
    with pytest.raises(SystemExit) as exc:
        main(["label-following", str(tmp_path / "gen.jsonl"), "--judge", "judge", "--heldout", str(known_judge),
              "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and f"{tmp_path / 'gen.jsonl'}:2" in err and "intended_label" in err
    assert not (tmp_path / "out" / "label_following.json").exists()


def test_action_refuses_mismatched_judges(known_judge, tmp_path, capsys):
    write_jsonl([Record("g1", "p", "yes", None, "gen", {"intended_label": "neutral"})], tmp_path / "g.jsonl")
    with pytest.raises(SystemExit):
        main(["label-following", str(tmp_path / "g.jsonl"), "--judge", "j1", "j2", "--heldout", str(known_judge),
              "--out", str(tmp_path / "out")])
    assert "--judge: 2 values for 1 inputs" in capsys.readouterr().err
