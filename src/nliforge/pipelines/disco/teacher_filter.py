"""DISCO's teacher filter (§3.2, Eq. 1): keep a counterfactual when a teacher NLI model's
probability of the target label rises enough from the original pair to the edited one,

    Δ = p(l′ | P′, H) − p(l′ | P, H),

accepted when Δ exceeds a threshold (0.25: the original code's effective value). Each teacher's
columns are mapped to entailment/neutral/contradiction by name through its own `label2id`
(`nliforge.models.predict.predict_probs`); several teachers are averaged in probability space.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABEL2ID
from nliforge.data.records import Record


def probability_shift(p_new: np.ndarray, p_orig: np.ndarray, targets: Sequence[str]) -> np.ndarray:
    """Δ per row: p_new[i, target_i] − p_orig[i, target_i] (probabilities in e/n/c column order)."""
    p_new, p_orig = np.asarray(p_new, dtype=np.float64), np.asarray(p_orig, dtype=np.float64)
    if p_new.shape != p_orig.shape or p_new.ndim != 2 or p_new.shape[0] != len(targets):
        raise NLIDataError(f"probability_shift: p_new {p_new.shape}, p_orig {p_orig.shape} and "
                           f"{len(targets)} targets must agree as (N, 3), (N, 3), N")
    try:
        idx = np.array([LABEL2ID[t] for t in targets], dtype=np.int64)
    except KeyError as exc:
        raise NLIDataError(f"probability_shift: unknown target label {exc.args[0]!r}; expected {sorted(LABEL2ID)}") from None
    rows = np.arange(len(idx))
    return p_new[rows, idx] - p_orig[rows, idx]


def ensemble_probs(records: Sequence[Record], model_dirs: Sequence[str | Path], batch_size: int = 64,
                   max_length: int = 128, device: str = "cpu", progress: bool = True) -> np.ndarray:
    """Mean over teachers of p(e, n, c) per record; each teacher reads its own label2id."""
    from nliforge.models.predict import load_classifier, predict_probs

    if not model_dirs:
        raise NLIDataError("pipeline.disco_teacher: no teacher model folder to score with")
    total = None
    for folder in model_dirs:
        probs = predict_probs(load_classifier(folder, key="teacher.model_dir"), records, batch_size=batch_size,
                              max_length=max_length, device=device, progress=progress, desc="teacher")
        total = probs if total is None else total + probs
    return total / len(model_dirs)
