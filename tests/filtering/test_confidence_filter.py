"""Z-Aug's confidence filter (Z-Aug, Table 8: keep p_teacher(own label) > τ) on hand-picked
probabilities exactly at, just below and just above τ: exactly the samples at or below τ are dropped."""

from __future__ import annotations

import numpy as np
import pytest

from nliforge.errors import NLIDataError
from nliforge.filtering.confidence import confidence_filter

EPS = 2.0 ** -20   # exactly representable: 0.75 ± EPS are the neighbours of τ we mean


def test_drops_exactly_the_samples_at_or_below_tau():
    tau = 0.75
    labels = ["entailment", "neutral", "contradiction", "entailment", "neutral", "contradiction"]
    probs = [[0.75, 0.125, 0.125],               # at τ: dropped
             [0.125, 0.75 + EPS, 0.125 - EPS],   # just above: kept
             [0.125 + EPS, 0.125, 0.75 - EPS],   # just below: dropped
             [0.0, 0.25, 0.75],                  # the teacher prefers another label: dropped
             [0.0, 1.0, 0.0],                    # certain: kept
             [0.5, 0.0, 0.5]]                    # a tie at the argmax, below τ: dropped
    res = confidence_filter(labels, np.array(probs), tau)
    assert res.keep.tolist() == [False, True, False, False, True, False]
    assert res.p_own.tolist() == [0.75, 0.75 + EPS, 0.75 - EPS, 0.0, 1.0, 0.5]
    assert res.agree.tolist() == [True, True, True, False, True, False]   # argmax takes the first of a tie


def test_tau_of_the_paper_and_the_edges():
    labels = ["neutral"] * 3
    probs = np.array([[0.0, 0.95, 0.05], [0.0, 0.96, 0.04], [0.1, 0.94, 0.0]])
    assert confidence_filter(labels, probs, 0.95).keep.tolist() == [False, True, False]
    assert confidence_filter(labels, probs, 0.0).keep.tolist() == [True, True, True]       # τ = 0 keeps p > 0
    assert confidence_filter(labels, probs, 1.0).keep.tolist() == [False, False, False]    # nothing is above 1
    assert confidence_filter([], np.zeros((0, 3)), 0.5).keep.tolist() == []


def test_bad_tau_and_labels_name_the_problem():
    with pytest.raises(NLIDataError, match=r"pipeline.confidence.tau=1.5"):
        confidence_filter(["neutral"], np.array([[0.0, 1.0, 0.0]]), 1.5)
    with pytest.raises(NLIDataError, match="not among"):
        confidence_filter(["maybe"], np.array([[0.0, 1.0, 0.0]]), 0.5)
