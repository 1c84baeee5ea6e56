"""HANS (regenerated) and McCoy's MNLI-hard pairs: registration (counts, sha256), the stratified subset,
the 3-to-2 collapse and the per heuristic x label / per subcase scores against hand-computed values.

Tests that read the files skip without NLIFORGE_DATA_DIR (as tests/data/test_real_data.py's)."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
import torch
from conftest import real_data_dir

from nliforge.data.fetch import registered_files, select
from nliforge.data.hans import MCCOY_KEY, hard_pairs, stratify
from nliforge.data.records import Record
from nliforge.data.registry import eval_set_spec, load_set
from nliforge.errors import NLIDataError
from nliforge.evaluation.collapse import collapse_predictions
from nliforge.evaluation.hans import cell_scores
from nliforge.evaluation.suite import EvalSet, score_set

HANS = "hans/hans_regenerated_seed0.tsv"


@pytest.fixture
def real_dir() -> Path:
    return real_data_dir(HANS)


def _registered(name: str) -> dict:
    f = select([name], registered_files())[0]
    return {**f.spec, "path": str(f.path)}


def test_hans_files_are_registered_with_url_and_sha256():
    names = {f.name: f for f in registered_files()}
    for name, sha in (("hans_regenerated", "1eb0f23a8b16659b"), ("hans_train_regenerated", "b984d7ca524b9c62")):
        assert name in names
        assert names[name].sha256.startswith(sha)
        assert "github.com/tommccoy1/hans" in names[name].url


def test_hans_eval_counts_per_heuristic_label_and_subcase(real_dir):
    records = load_set(_registered("hans_regenerated"), "t")
    assert len(records) == 30000
    cells = Counter((r.meta["heuristic"], r.label) for r in records)
    assert cells == {(h, lab): 5000 for h in ("lexical_overlap", "subsequence", "constituent")
                     for lab in ("entailment", "non-entailment")}
    assert set(Counter(r.meta["subcase"] for r in records).values()) == {1000}
    assert len(Counter(r.meta["subcase"] for r in records)) == 30


def test_hans_train_counts(real_dir):
    records = load_set(_registered("hans_train_regenerated"), "t")
    assert len(records) == 29008
    cells = Counter((r.meta["heuristic"], r.label) for r in records)
    assert cells == {("lexical_overlap", "entailment"): 4915, ("lexical_overlap", "non-entailment"): 4859,
                     ("subsequence", "entailment"): 4429, ("subsequence", "non-entailment"): 4982,
                     ("constituent", "entailment"): 4917, ("constituent", "non-entailment"): 4906}
    evals = {(r.premise, r.hypothesis) for r in load_set(_registered("hans_regenerated"), "t")}
    assert not any((r.premise, r.hypothesis) in evals for r in records)


def test_a_changed_copy_of_hans_is_refused_by_its_sha256(real_dir, tmp_path):
    copy = tmp_path / "hans.tsv"
    shutil.copyfile(real_dir / HANS, copy)
    copy.write_bytes(copy.read_bytes().replace(b"The scientists thanked", b"The scientists thankeD", 1))
    with pytest.raises(NLIDataError, match="sha256"):
        load_set({**_registered("hans_regenerated"), "path": str(copy)}, "t")


def test_the_subset_is_200_per_subcase_and_the_hard_set_at_most_20_of_100(real_dir):
    subset = load_set(eval_set_spec("hans_regenerated_subset", "t"), "t")
    assert len(subset) == 6000
    assert set(Counter(r.meta["subcase"] for r in subset).values()) == {200}
    assert [r.uid for r in subset] == [r.uid for r in load_set(eval_set_spec("hans_regenerated_subset", "t"), "t")]
    hard = load_set(eval_set_spec("mnli_dev_test_part_hard", "t"), "t")
    assert hard and all(int(r.meta[MCCOY_KEY]) <= 20 for r in hard)
    test_part = load_set(eval_set_spec("mnli_dev_test_part", "t"), "t")
    assert len(hard) == sum(int(r.meta[MCCOY_KEY]) <= 20 for r in test_part)


def _rows() -> list[Record]:
    spec = [("lexical_overlap", "a", "entailment"), ("lexical_overlap", "a", "entailment"),
            ("lexical_overlap", "b", "non-entailment"), ("lexical_overlap", "b", "non-entailment"),
            ("subsequence", "c", "entailment"), ("subsequence", "d", "non-entailment"),
            ("constituent", "e", "entailment"), ("constituent", "f", "non-entailment")]
    return [Record(f"u{i}", "p", "h", lab, "", {"heuristic": h, "subcase": s, "template": "t"})
            for i, (h, s, lab) in enumerate(spec)]


# 3-class probabilities (entailment, neutral, contradiction) for the 8 rows above
PROBS = torch.tensor([[0.7, 0.2, 0.1],    # e -> e        right
                      [0.3, 0.4, 0.3],    # e -> n        wrong
                      [0.2, 0.5, 0.3],    # ne, neutral   right
                      [0.6, 0.1, 0.3],    # ne -> e       wrong
                      [0.5, 0.2, 0.3],    # e -> e        right
                      [0.1, 0.1, 0.8],    # ne, contra    right
                      [0.2, 0.3, 0.5],    # e -> c        wrong
                      [0.9, 0.05, 0.05]])  # ne -> e      wrong


def test_collapse_and_cells_against_hand_computed_values():
    rows = _rows()
    pred = collapse_predictions(PROBS, "entailment", "argmax")
    assert pred.tolist() == [1, 0, 0, 1, 1, 0, 0, 1]          # neutral and contradiction -> 0
    scores = cell_scores(rows, pred.tolist())
    assert scores["acc@lexical_overlap@entailment"] == 0.5
    assert scores["acc@lexical_overlap@non-entailment"] == 0.5
    assert scores["acc@subsequence@entailment"] == 1.0
    assert scores["acc@subsequence@non-entailment"] == 1.0
    assert scores["acc@constituent@entailment"] == 0.0
    assert scores["acc@constituent@non-entailment"] == 0.0
    assert scores["n@lexical_overlap@entailment"] == 2
    assert scores["acc@subcase@b"] == 0.5 and scores["acc@subcase@f"] == 0.0
    # `sum` collapse: row 4's p(e)=0.6 > 0.4 -> entailment; row 5's p(e)=0.5 is not above 0.5 -> non-entailment
    # (argmax says entailment there: the two rules differ only on such rows)
    assert collapse_predictions(PROBS, "entailment", "sum").tolist() == [1, 0, 0, 1, 0, 0, 0, 1]


def test_score_set_adds_the_cells_on_a_hans_like_set():
    es = EvalSet("h", {"name": "h", "num_classes": 2, "positive": "entailment"}, _rows())
    scores = score_set(PROBS, es)
    assert scores["acc"] == pytest.approx(4 / 8)
    assert scores["acc@lexical_overlap@non-entailment"] == 0.5
    assert scores["acc@subcase@c"] == 1.0


def test_stratify_refuses_a_short_subcase_and_hard_pairs_needs_the_counts():
    rows = _rows()
    assert [r.uid for r in stratify(rows, 1, seed=0)] == sorted(
        {r.uid for r in stratify(rows, 1, seed=0)}, key=lambda u: int(u[1:]))
    with pytest.raises(NLIDataError, match="fewer than 3"):
        stratify(rows, 3)
    with pytest.raises(NLIDataError, match="no meta"):
        hard_pairs(rows)
