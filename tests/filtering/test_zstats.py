"""z-statistics and the App. B features: hand-computed z*, exact feature names, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.filtering.features import FeatureSpace, example_features
from nliforge.filtering.zstats import dataset_biased, top_biased, word_label_plot, z_scores
from nliforge.world import WorldConfig, generate_split

# rows: features, columns: entailment, neutral, contradiction
COUNTS = np.array([[6, 2, 1], [0, 0, 4], [0, 0, 0], [10, 10, 10]])
NAMES = ["six-two-one", "only-contra", "never-seen", "uniform"]


def test_z_against_hand_computed_table():
    z = z_scores(COUNTS)
    # p0 = 1/3, so sqrt(p0 (1 - p0) / n) = sqrt(2/9 / n).
    # f0: n = 9, p̂(e) = 6/9; z = (2/3 - 1/3) / sqrt(2/81) = (1/3) / (sqrt(2)/9) = 3/sqrt(2) = 2.1213
    assert z[0, 0] == pytest.approx(3 / math.sqrt(2))
    #     p̂(c) = 1/9: z = (1/9 - 3/9) / (sqrt(2)/9) = -2/sqrt(2) = -1.4142
    assert z[0, 2] == pytest.approx(-2 / math.sqrt(2))
    # f1: n = 4, p̂(c) = 1: z = (2/3) / sqrt(2/36) = (2/3) / (sqrt(2)/6) = 4/sqrt(2) = 2.8284
    assert z[1, 2] == pytest.approx(4 / math.sqrt(2))
    #     p̂(e) = 0: z = (-1/3) / (sqrt(2)/6) = -2/sqrt(2)
    assert z[1, 0] == pytest.approx(-2 / math.sqrt(2))
    assert np.isnan(z[2]).all()  # n = 0: undefined
    assert z[3] == pytest.approx([0, 0, 0])  # uniform: no correlation


def test_top_biased_ranks_positive_z_only_ties_by_name():
    top = top_biased(COUNTS, NAMES, k=2)
    assert [n for n, _ in top["entailment"]] == ["six-two-one"]  # only z > 0 qualifies
    assert [n for n, _ in top["contradiction"]] == ["only-contra"]
    assert top["neutral"] == []
    tied = top_biased(np.array([[0, 0, 3], [0, 0, 3], [0, 0, 3]]), ["b", "c", "a"], k=2)
    assert [n for n, _ in tied["contradiction"]] == ["a", "b"]


def test_ties_at_the_kth_rank_by_name_or_all_included():
    # b (n = 4) is above three features tied at n = 3 (bit-identical z); k = 2 cuts through the tie
    counts, names = np.array([[0, 0, 4], [0, 0, 3], [0, 0, 3], [0, 0, 3], [2, 1, 0]]), ["b", "c", "a", "d", "e"]
    by_name = top_biased(counts, names, k=2)["contradiction"]
    assert [n for n, _ in by_name] == ["b", "a"]                    # exactly k: the tied name that sorts first
    included = top_biased(counts, names, k=2, ties="include")["contradiction"]
    assert [n for n, _ in included] == ["b", "a", "c", "d"]         # every tied feature, by (-z, name)
    assert included[1][1] == included[2][1] == included[3][1] < included[0][1]
    # no tie at the k-th rank: both rules agree
    assert top_biased(counts, names, k=1, ties="include") == top_biased(counts, names, k=1)
    with pytest.raises(NLIDataError, match=r"ties='random'; valid: name, include"):
        top_biased(counts, names, k=2, ties="random")


def test_bad_input_names_the_setting():
    with pytest.raises(NLIDataError, match="k = 5"):
        top_biased(COUNTS, NAMES, k=5)
    with pytest.raises(NLIDataError, match="empty"):
        top_biased(np.zeros((0, 3), int), [], k=1)
    with pytest.raises(NLIDataError, match="labels"):
        z_scores(np.array([[3], [4]]))
    one_label = [Record(f"u{i}", "A man sleeps.", "A man rests.", "entailment") for i in range(3)]
    with pytest.raises(NLIDataError, match="single label"):
        dataset_biased(one_label, k=1)
    with pytest.raises(NLIDataError, match="labels"):
        dataset_biased([Record("u", "A man sleeps.", "A man rests.", None)], k=1)


PAIR = ("The cat is not on the mat.", "The cat is NOT happy!")
PAIR_FEATURES = {
    "null",
    "the@premise", "cat@premise", "is@premise", "not@premise", "on@premise", "mat@premise",
    "the cat@premise", "cat is@premise", "is not@premise", "not on@premise", "on the@premise",
    "the mat@premise",
    "the@hypothesis", "cat@hypothesis", "is@hypothesis", "not@hypothesis", "happy@hypothesis",
    "the cat@hypothesis", "cat is@hypothesis", "is not@hypothesis", "not happy@hypothesis",
    "hypo-len:5-7",            # 5 tokens
    "len-ratio:0.5-0.75",      # 5 / 7 = 0.714
    # 4 of 5 hypothesis tokens occur in the premise: 0.8 (not > 0.8)
    "lex-overlap>0.5", "lex-overlap>0.6", "lex-overlap>0.7",
    "hypo-only-pred=contradiction",
}


def test_features_of_a_hand_made_pair():
    assert example_features(*PAIR, hypo_pred="contradiction") == PAIR_FEATURES
    space = FeatureSpace()
    m = space.featurise([PAIR[0]], [PAIR[1]], hypo_preds=[2])  # id 2 = contradiction
    assert {space.names[j] for j in m.indices} == PAIR_FEATURES
    full = example_features("A dog runs in the park.", "The dog runs.")
    assert {"full-lex-overlap", "lex-overlap>0.9", "hypo-len<5", "len-ratio:0.5-0.75"} <= full


def test_feature_space_grows_incrementally_and_matches_plain_python():
    recs = generate_split(WorldConfig(n_train=300, seed=5), "train_biased")
    preds = [("entailment", None, 1)[i % 3] for i in range(len(recs))]
    space = FeatureSpace()
    first = space.featurise_records(recs[:100], preds[:100])
    width, names_before = first.shape[1], list(space.names)
    second = space.featurise_records(recs[100:], preds[100:])
    assert len(space) > width and space.names[:width] == names_before  # old ids kept
    assert space.pad(first).shape == (100, len(space))
    for offset, m in ((0, first), (100, second)):
        for i in range(m.shape[0]):
            rec, pred = recs[offset + i], preds[offset + i]
            pred = "neutral" if pred == 1 else pred
            got = {space.names[j] for j in m.indices[m.indptr[i]:m.indptr[i + 1]]}
            assert got == example_features(rec.premise, rec.hypothesis, pred), rec.uid
    with pytest.raises(NLIDataError, match="hypo_preds"):
        space.featurise(["a b"], ["c"], hypo_preds=["maybe"])


@pytest.fixture(scope="module")
def biased_world():
    return generate_split(WorldConfig(n_train=1500, seed=0), "train_biased")


def test_planted_artifacts_top_the_biased_features(biased_world):
    top = {lab: [n for n, _ in fs[:5]] for lab, fs in dataset_biased(biased_world, k=20).items()}
    assert "full-lex-overlap" in top["entailment"]
    assert "not@hypothesis" in top["contradiction"]
    assert {"hypo-len:10-14", "hypo-len:15-19"} & set(top["neutral"])


def test_word_label_plot_writes_png(tmp_path):
    out = word_label_plot(COUNTS, tmp_path / "plots" / "contra.png", "contradiction", 2.0, names=NAMES)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(NLIDataError, match="labels"):
        word_label_plot(COUNTS, tmp_path / "x.png", "maybe")
