"""Two-annotator aggregation (WANLI §2.4 rules), Cohen's kappa, and single automatic reviewers."""

from __future__ import annotations

import pytest

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.review.aggregate import aggregate, automatic_records, cohen_kappa
from nliforge.data.judgements import Judgement

PREMISE = "A man walks his dog in the park."
HYPOTHESIS = "A person is outside."


def rec(uid: str) -> Record:
    return Record(uid, PREMISE, HYPOTHESIS, None, "wanli", {"seed_uid": "s-" + uid})


def jd(uid, annotator, label, premise=PREMISE, hypothesis=HYPOTHESIS, t=0.0, source="page") -> Judgement:
    revised = premise != PREMISE or hypothesis != HYPOTHESIS
    return Judgement(uid, annotator, label, premise, hypothesis, revised=revised, source=source, created_at=t)


def one(judgements, seed=0, **kw):
    uids = sorted({j.uid for j in judgements})
    return aggregate([rec(u) for u in uids], judgements, seed, **kw)


def test_either_discard_drops_the_example():
    res = one([jd("x", "a", "discard"), jd("x", "b", "entailment"),
               jd("y", "a", "neutral", hypothesis="A man is outdoors."), jd("y", "b", "discard", t=1),
               jd("z", "a", "neutral"), jd("z", "b", "neutral")])
    assert [r.uid for r in res.records] == ["z"]
    assert res.counts["discarded"] == 2 and res.counts["kept"] == 1 and res.counts["agreed"] == 1


def test_agreed_label_source_and_provenance():
    res = one([jd("x", "ann1", "contradiction", t=1), jd("x", "ann2", "contradiction", t=2)])
    (out,) = res.records
    assert out.label == "contradiction" and out.source == "wanli_reviewed"
    assert (out.premise, out.hypothesis) == (PREMISE, HYPOTHESIS)
    assert out.meta["seed_uid"] == "s-x"      # the original provenance stays
    review = out.meta["review"]
    assert review["annotators"] == ["ann1", "ann2"] and review["labels"] == ["contradiction"] * 2
    assert review["rule"] == "agreed" and review["revised"] is False
    assert res.disagreements == []


def test_both_revised_picks_one_revision_with_its_label_seeded():
    js = []
    for i in range(40):
        js += [jd(f"u{i}", "a", "entailment", hypothesis="A man is outdoors.", t=1),
               jd(f"u{i}", "b", "neutral", premise="A man walks his old dog in the park.", t=2)]
    res = one(js, seed=7)
    assert res.counts["both_revised"] == 40 and len(res.records) == 40
    picked = set()
    for out in res.records:
        review = out.meta["review"]
        assert review["revised"] is True and review["rule"] == "both_revised"
        assert review["original"] == {"premise": PREMISE, "hypothesis": HYPOTHESIS}
        if review["revision_by"] == "a":   # the label travels with the chosen revision
            assert (out.premise, out.hypothesis, out.label) == (PREMISE, "A man is outdoors.", "entailment")
        else:
            assert (out.premise, out.hypothesis, out.label) == ("A man walks his old dog in the park.", HYPOTHESIS,
                                                                "neutral")
        picked.add(review["revision_by"])
    assert picked == {"a", "b"}
    again = one(js, seed=7)
    assert [r.to_json() for r in again.records] == [r.to_json() for r in res.records]
    other = one(js, seed=8)
    assert [r.to_json() for r in other.records] != [r.to_json() for r in res.records]
    assert res.kappa is None and res.counts["kappa_items"] == 0   # revised examples are not in kappa


def test_single_nontrivial_revision_keeps_the_original_with_the_other_label():
    for keep_trivial in (True, False):
        res = one([jd("x", "a", "entailment", hypothesis="A man is outdoors with a pet.", t=1),
                   jd("x", "b", "neutral", t=2)], keep_trivial_single_revision=keep_trivial)
        (out,) = res.records
        assert (out.premise, out.hypothesis, out.label) == (PREMISE, HYPOTHESIS, "neutral")
        assert out.meta["review"]["rule"] == "single_revision_ignored" and out.meta["review"]["revised"] is False
        assert out.meta["review"]["labels"] == ["entailment", "neutral"]
        assert res.counts["single_revision_ignored"] == 1


def test_trivial_single_revision_option():
    trivial = "a person is outside"   # case and punctuation only
    js = [jd("x", "a", "entailment", hypothesis=trivial, t=1), jd("x", "b", "entailment", t=2)]
    kept = one(js).records[0]
    assert kept.hypothesis == trivial and kept.label == "entailment"
    assert kept.meta["review"]["rule"] == "trivial_single_revision" and kept.meta["review"]["revision_by"] == "a"
    off = one(js, keep_trivial_single_revision=False).records[0]
    assert off.hypothesis == HYPOTHESIS and off.meta["review"]["rule"] == "single_revision_ignored"


def test_whitespace_only_edit_is_not_a_revision():
    res = one([jd("x", "a", "neutral", premise="  A man walks his   dog in the park. "), jd("x", "b", "neutral")])
    assert res.records[0].meta["review"]["rule"] == "agreed" and res.records[0].premise == PREMISE
    assert res.counts["kappa_items"] == 1


def test_disagreement_random_label_both_kept_and_independent_of_other_items():
    js = []
    for i in range(40):
        js += [jd(f"d{i}", "a", "entailment", t=1), jd(f"d{i}", "b", "contradiction", t=2)]
    res = one(js, seed=3)
    assert res.counts["disagreement"] == 40 and len(res.disagreements) == 40
    assert {r.label for r in res.records} == {"entailment", "contradiction"}
    for out in res.records:
        assert out.meta["review"]["labels"] == ["entailment", "contradiction"]
        assert out.meta["review"]["rule"] == "disagreement"
        assert out.label == {"a": "entailment", "b": "contradiction"}[out.meta["review"]["label_from"]]
    assert [r.uid for r in res.disagreements] == [r.uid for r in res.records]
    # The outcome of an example depends on (seed, uid) only, not on the other examples.
    alone = aggregate([rec("d5")], [j for j in js if j.uid == "d5"], 3).records[0]
    assert alone.label == next(r.label for r in res.records if r.uid == "d5")


def test_incomplete_repeats_and_more_than_two_annotators():
    js = [jd("solo", "a", "neutral"),
          jd("twice", "a", "neutral", t=1), jd("twice", "a", "entailment", t=2),       # one annotator, twice
          jd("re", "a", "neutral", t=1), jd("re", "b", "entailment", t=2), jd("re", "a", "entailment", t=3),
          jd("three", "late", "contradiction", t=9), jd("three", "b", "neutral", t=2),
          jd("three", "early", "neutral", t=1)]
    records = [rec(u) for u in ("solo", "twice", "re", "three", "none")]
    res = aggregate(records, js, 0)
    c = res.counts
    assert c["incomplete"] == 3 and c["complete"] == 2   # solo, twice, none
    assert c["repeat_judgements_replaced"] == 2
    assert c["more_than_two"] == 1 and c["judgements_ignored"] == 1
    by_uid = {r.uid: r for r in res.records}
    assert by_uid["re"].label == "entailment" and by_uid["re"].meta["review"]["rule"] == "agreed"  # a's latest
    assert by_uid["three"].meta["review"]["annotators"] == ["early", "b"]   # first two by created_at
    assert by_uid["three"].label == "neutral"


def test_judgement_of_unknown_uid_is_an_error():
    with pytest.raises(NLIDataError, match="'ghost'"):
        aggregate([rec("x")], [jd("ghost", "a", "neutral")], 0)


def test_kappa_matches_hand_computation():
    # Confusion matrix (rows: first annotator, columns: second; order e, n, c):
    #   e: 3 1 0      p_o = (3 + 2 + 2) / 10 = 0.7
    #   n: 0 2 1      first's marginals  e 4, n 3, c 3;  second's  e 4, n 3, c 3
    #   c: 1 0 2      p_e = (4*4 + 3*3 + 3*3) / 100 = 0.34
    # kappa = (0.7 - 0.34) / (1 - 0.34) = 0.36 / 0.66 = 6/11
    cells = ([("entailment", "entailment")] * 3 + [("neutral", "neutral")] * 2 + [("contradiction",) * 2] * 2
             + [("entailment", "neutral"), ("neutral", "contradiction"), ("contradiction", "entailment")])
    js = []
    for i, (first, second) in enumerate(cells):
        js += [jd(f"k{i}", "a", first, t=1), jd(f"k{i}", "b", second, t=2)]
    # Examples outside the kappa set: a discard, a revision by both.
    js += [jd("q1", "a", "discard"), jd("q1", "b", "neutral", t=1),
           jd("q2", "a", "neutral", hypothesis="A man is outdoors."), jd("q2", "b", "entailment", hypothesis="x y z")]
    res = one(js)
    assert res.counts["kappa_items"] == 10
    assert res.kappa == pytest.approx(6 / 11, abs=1e-12)
    assert cohen_kappa(cells) == pytest.approx(0.36 / 0.66)
    assert len(res.disagreements) == 3


def test_kappa_undefined_cases():
    assert cohen_kappa([]) is None
    assert cohen_kappa([("neutral", "neutral")] * 4) is None   # chance agreement 1: 0/0
    assert cohen_kappa([("neutral", "entailment"), ("entailment", "neutral")]) == pytest.approx(-1.0)


def test_automatic_records():
    records = [rec("a"), rec("b"), rec("c")]
    js = [Judgement("a", "teacher:m", "neutral", PREMISE, HYPOTHESIS, source="teacher", confidence=0.97),
          Judgement("b", "teacher:m", "discard", PREMISE, HYPOTHESIS, source="teacher", confidence=0.4),
          Judgement("c", "teacher:m", "entailment", PREMISE, HYPOTHESIS, source="teacher", confidence=0.99)]
    out = automatic_records(records, js)
    assert [(r.uid, r.label) for r in out] == [("a", "neutral"), ("c", "entailment")]
    assert out[0].meta["review"] == {"labels": ["neutral"], "annotators": ["teacher:m"], "sources": ["teacher"],
                                     "revised": False, "rule": "automatic", "label_from": "teacher:m",
                                     "confidence": 0.97}
    assert out[0].source == "wanli_reviewed"
    with pytest.raises(NLIDataError, match="no automatic judgement"):
        automatic_records(records, js[:2])
    second = Judgement("a", "llm:x", "neutral", PREMISE, HYPOTHESIS, source="llm_judge")
    with pytest.raises(NLIDataError, match="one automatic reviewer"):
        automatic_records(records, js + [second])
