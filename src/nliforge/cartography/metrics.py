"""Training-dynamics metrics of dataset cartography, from per-epoch label probabilities.

All functions take ``probs`` shaped (E epochs, N examples, C labels). The gold-based ones
also take ``gold`` (N,) ids and require every example to be labeled; ``compute_metrics``
handles unlabeled examples (gold -1) by leaving their gold-based columns empty (NaN).

Standard deviations are population ones (ddof=0), as in the cartography definition: the
epochs are the whole set of observations, not a sample of a larger one.

Forgetfulness of an example never predicted correctly follows allenai/cartography
(`compute_forgetfulness` in `selection/train_dy_filtering.py`): 1000, a value above any count of
forgetting events, so that never-learned examples rank as the most forgotten (Toneva et al. 2019
treat them as forgotten infinitely often). Pass `never_learned=0` for the plain count of events.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nliforge.cartography.store import Dynamics

NEVER_LEARNED = 1000   # forgetfulness of an example never predicted correctly (allenai/cartography)

METRIC_COLUMNS: tuple[str, ...] = (
    "gold", "confidence", "variability", "correctness", "correctness_frac",
    "forgetfulness", "threshold_closeness", "max_variability",
)


def _check_probs(probs: np.ndarray) -> np.ndarray:
    """Return ``probs`` as a float64 (E, N, C) array, or raise a ValueError saying why not."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 3:
        raise ValueError(f"probs must be 3-D (epochs, examples, labels); got shape {probs.shape}")
    if probs.shape[0] < 1:
        raise ValueError("probs holds no epochs")
    if not np.all(np.isfinite(probs)):
        raise ValueError("probs contains NaN or infinite values")
    return probs


def _check_gold(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Return gold as int ids valid for ``probs``; unlabeled entries are an error here."""
    gold = np.asarray(gold)
    if gold.shape != (probs.shape[1],):
        raise ValueError(f"gold must have shape ({probs.shape[1]},); got {gold.shape}")
    gold_f = gold.astype(np.float64)
    bad = ~np.isfinite(gold_f) | (gold_f < 0) | (gold_f >= probs.shape[2])
    if bad.any():
        raise ValueError(f"{int(bad.sum())} gold id(s) are missing or outside 0..{probs.shape[2] - 1}; "
                         "gold-based metrics need labeled examples (use compute_metrics for mixed sets)")
    return gold_f.astype(np.int64)


def gold_probs(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(E, N) probability of the gold label at each epoch."""
    probs = _check_probs(probs)
    gold = _check_gold(probs, gold)
    return probs[:, np.arange(probs.shape[1]), gold]


def confidence(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Mean over epochs of p(gold): high = the model is sure of the right answer."""
    return gold_probs(probs, gold).mean(axis=0)


def variability(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Population std (ddof=0) over epochs of p(gold): high = the model keeps changing its mind."""
    return gold_probs(probs, gold).std(axis=0, ddof=0)


def _correct(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """(E, N) bool: argmax equals gold (ties go to the lowest label id, as np.argmax)."""
    probs = _check_probs(probs)
    gold = _check_gold(probs, gold)
    return probs.argmax(axis=2) == gold[None, :]


def correctness(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Number of epochs (int) at which the predicted label is the gold one."""
    return _correct(probs, gold).sum(axis=0).astype(np.int64)


def forgetfulness(probs: np.ndarray, gold: np.ndarray, never_learned: int = NEVER_LEARNED) -> np.ndarray:
    """Number of learned-then-forgotten events (epoch e correct, epoch e+1 incorrect); an example
    correct at no epoch gets `never_learned` (1000, as allenai/cartography; 0 gives the plain count)."""
    correct = _correct(probs, gold)
    events = (correct[:-1] & ~correct[1:]).sum(axis=0).astype(np.int64)
    return np.where(correct.any(axis=0), events, np.int64(never_learned))


def threshold_closeness(probs: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """c(1 - c) for confidence c: largest (0.25) when the model sits at p(gold) = 0.5."""
    conf = confidence(probs, gold)
    return conf * (1.0 - conf)


def estimated_max_variability(probs: np.ndarray) -> np.ndarray:
    """WANLI Eq. 1: max over labels of the population std over epochs of p(label).

    Needs no gold label, so it scores unlabeled (e.g. generated) examples: an example is
    ambiguous if the checkpoints disagree on any label.
    """
    return _check_probs(probs).std(axis=0, ddof=0).max(axis=1)


def compute_metrics(dyn: Dynamics, never_learned: int = NEVER_LEARNED) -> pd.DataFrame:
    """All per-example metrics as a DataFrame indexed by uid (columns ``METRIC_COLUMNS``).

    Unlabeled examples (gold -1 or missing) get NaN / <NA> in every gold-based column;
    ``max_variability`` is computed for all. ``correctness`` and ``forgetfulness`` are
    nullable integers (pandas ``Int64``); `never_learned` is the forgetfulness of an example
    never predicted correctly (see `forgetfulness`).
    """
    probs = _check_probs(dyn.probs)
    n_epochs, n = probs.shape[:2]
    if len(dyn.uids) != n:
        raise ValueError(f"{len(dyn.uids)} uids but probs has {n} examples")
    gold = np.asarray(dyn.gold, dtype=np.float64).reshape(-1)
    if gold.shape != (n,):
        raise ValueError(f"gold must have shape ({n},); got {np.shape(dyn.gold)}")
    labeled = np.isfinite(gold) & (gold >= 0) & (gold < probs.shape[2])
    lp, lg = probs[:, labeled], gold[labeled].astype(np.int64)
    corr = correctness(lp, lg)
    gold_ids = np.full(n, -1, dtype=np.int64)
    gold_ids[labeled] = lg
    return pd.DataFrame({
        "gold": gold_ids,
        "confidence": _spread(confidence(lp, lg), labeled),
        "variability": _spread(variability(lp, lg), labeled),
        "correctness": _spread(corr, labeled, integer=True),
        "correctness_frac": _spread(corr / n_epochs, labeled),
        "forgetfulness": _spread(forgetfulness(lp, lg, never_learned), labeled, integer=True),
        "threshold_closeness": _spread(threshold_closeness(lp, lg), labeled),
        "max_variability": estimated_max_variability(probs),
    }, index=pd.Index([str(u) for u in dyn.uids], name="uid"))


def _spread(values: np.ndarray, labeled: np.ndarray, integer: bool = False):
    """Place values computed on the labeled subset into a full-length column (missing elsewhere)."""
    if integer:
        full = np.zeros(labeled.shape[0], dtype=np.int64)
        full[labeled] = values
        return pd.arrays.IntegerArray(full, ~labeled)
    full = np.full(labeled.shape[0], np.nan)
    full[labeled] = values
    return full
