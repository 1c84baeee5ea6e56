"""Scoring a 3-class model on 2-class sets (HANS, QNLI, WNLI ...: entailment vs non-entailment;
LI-TS: contradiction vs non-contradiction)."""

from __future__ import annotations

import torch

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABEL2ID

COLLAPSE_RULES = ("argmax", "sum")


def collapse_predictions(probs: torch.Tensor, positive: str, rule: str = "argmax") -> torch.Tensor:
    """2-class predictions: 1 = the positive class (entailment or contradiction), 0 = the rest.

    `argmax`: argmax over three classes, then merge (McCoy's HANS rule, WANLI's default).
    `sum`: p(rest) = sum of the other two probabilities, then compare (Z-Aug's option).
    """
    if rule not in COLLAPSE_RULES:
        raise NLIDataError(f"suite.collapse={rule!r}; valid: {', '.join(COLLAPSE_RULES)}")
    if positive not in ("entailment", "contradiction"):
        raise NLIDataError(f"positive={positive!r}; valid: entailment, contradiction")
    pos = LABEL2ID[positive]
    if rule == "argmax":
        return (probs.argmax(-1) == pos).long()
    p_pos = probs[:, pos]
    return (p_pos > probs.sum(-1) - p_pos).long()
