"""Z-Aug's confidence filter (§3.1, Table 8): a generated sample is kept when the teacher's
probability of the sample's own (generated) label is strictly above τ; at or below τ it is dropped.
A pure function of the probabilities, so the rule is tested on hand-picked values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS


@dataclass
class ConfidenceResult:
    """`keep[i]`: p_own[i] > τ; `p_own`: the teacher's probability of sample i's own label;
    `agree`: whether the teacher's argmax is that label (label consistency)."""

    keep: np.ndarray
    p_own: np.ndarray
    agree: np.ndarray


def confidence_filter(labels: Sequence[str], probs: np.ndarray, tau: float,
                      label_names: Sequence[str] = LABELS) -> ConfidenceResult:
    """Keep sample i iff probs[i, own label] > tau (strictly: a sample exactly at τ is dropped)."""
    probs = np.asarray(probs, dtype=np.float64).reshape(len(labels), len(label_names))
    if not 0.0 <= float(tau) <= 1.0:
        raise NLIDataError(f"pipeline.confidence.tau={tau!r}: expected a probability in [0, 1]")
    unknown = sorted({lab for lab in labels if lab not in label_names})
    if unknown:
        raise NLIDataError(f"confidence filter: labels {unknown} are not among {list(label_names)}")
    own = np.array([list(label_names).index(lab) for lab in labels], dtype=np.int64)
    p_own = probs[np.arange(len(labels)), own]
    return ConfidenceResult(p_own > float(tau), p_own, probs.argmax(-1) == own)
