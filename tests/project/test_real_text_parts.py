"""experiments/real_text R5: the parts are disjoint samples that cover the corpus, and a part's hypothesis-only
number is its seed-averaged accuracy minus its own test part's majority share (by hand)."""

from __future__ import annotations

import pytest

from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import Record

from experiments.real_text import analysis_parts
from experiments.real_text.parts import cut


def test_parts_are_disjoint_cover_everything_and_split_70_30():
    records = list(range(9815))
    parts = cut(records)
    assert [(len(tr), len(te)) for tr, te in parts] == [(1374, 589)] * 5
    seen = [x for tr, te in parts for x in tr + te]
    assert sorted(seen) == records                        # every pair once: disjoint and covering
    assert cut(records) == parts and cut(records, seed=1) != parts
    snli = cut(list(range(2066)))
    assert [len(tr) + len(te) for tr, te in snli] == [413, 413, 413, 413, 414]


def _rec(i: int, label: str) -> Record:
    return Record(uid=f"u{i}", premise="p", hypothesis=f"h{i}", label=label)


def test_hyp_only_part_by_hand(tmp_path):
    """Test part: 3 entailment, 1 neutral, 1 contradiction -> majority 0.6; seeds at 0.70 and 0.80 -> mean
    0.75 -> +15.0 points."""
    labels = ["entailment"] * 3 + ["neutral", "contradiction"]
    write_jsonl([_rec(i, lab) for i, lab in enumerate(labels)], tmp_path / "sets" / "exp_real_text_mnli_p1_test.jsonl")
    for seed, acc in ((1, 0.7), (2, 0.8)):
        run = tmp_path / "r2a_p1" / f"seed{seed}"
        run.mkdir(parents=True)
        (run / "metrics.csv").write_text("train_id,seed,eval_set,metric,value\n"
                                         f"x,{seed},exp_real_text_mnli_p1_test,acc,{acc}\nx,{seed},exp_real_text_mnli_p1_test,n,5\n")
    value, seeds = analysis_parts.hyp_only_part(tmp_path, "mnli", "r2a", 1)
    assert (value, seeds) == (pytest.approx(15.0), 2)
    assert analysis_parts.hyp_only_part(tmp_path, "mnli", "r2a", 2) is None     # part 2 never ran
