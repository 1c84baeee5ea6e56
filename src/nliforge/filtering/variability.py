"""WANLI Stage 3 selection (§2.3): the most ambiguous half, balanced over intended labels.

Generated examples are unlabeled, so ambiguity is the *estimated max variability* (Eq. 1) of the
task model's per-epoch predictions (:func:`nliforge.cartography.metrics.estimated_max_variability`).
The paper keeps "an equal number of examples from each (intended) label class with the highest
max variability", half of the set in all. Per-label quota, with N examples and L labels present:

    m = min(floor(fraction * N / L), size of the smallest label)

so every label gives exactly m and the total is L * m <= fraction * N. With the paper's numbers
(287,241 after the heuristics, L = 3) this gives m = 47,873 and 143,619 kept, its reported size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nliforge.cartography.metrics import estimated_max_variability
from nliforge.errors import NLIDataError


def balanced_quota(labels: Sequence[str], fraction: float) -> int:
    """m = min(floor(fraction * N / L), smallest label count); see the module docstring."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0.0 <= fraction <= 1.0:
        raise NLIDataError(f"fraction must be a number in [0, 1]; got {fraction!r}")
    _, counts = np.unique(np.asarray(labels), return_counts=True)
    if counts.size == 0:
        return 0
    # The epsilon keeps exact products exact (0.3 * 10 / 1 is 3, not 2.9999...).
    return int(min(math.floor(fraction * len(labels) / counts.size + 1e-9), counts.min()))


def select_balanced_top(scores: np.ndarray, labels: Sequence[str], fraction: float = 0.5) -> np.ndarray:
    """Indices (ascending) of the m highest-scoring examples of each label (m: `balanced_quota`).

    Ties are broken by lower index. Scores must be finite: a NaN would have no place in the order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    labels = np.asarray(labels)
    if scores.ndim != 1 or labels.shape != scores.shape:
        raise NLIDataError(f"expected 1-D scores and one label per score; got shapes {scores.shape} and {labels.shape}")
    if not np.isfinite(scores).all():
        raise NLIDataError("scores contain NaN or infinite values; expected one finite score per example")
    m = balanced_quota(labels, fraction)
    chosen = []
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        best = rows[np.lexsort((rows, -scores[rows]))][:m]
        chosen.append(best)
    return np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)


def select_by_max_variability(epoch_probs: np.ndarray, labels: Sequence[str],
                              fraction: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """(kept indices ascending, all scores): the balanced top `fraction` by estimated max variability
    of per-epoch probabilities shaped (E, N, C); the pipeline's `variability` stage."""
    try:
        scores = estimated_max_variability(epoch_probs)
    except ValueError as err:
        raise NLIDataError(f"per-epoch probabilities: {err}") from None
    return select_balanced_top(scores, labels, fraction), scores
