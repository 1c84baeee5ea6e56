"""Token-level losses of the Z-Aug generator (Wu et al. 2022, §2.2.1 and §4.1) and the §4.1 token mask.

All losses take next-token `logits` (B, T, V) and `targets` (B, T) that are already aligned
(logits[:, t] predicts targets[:, t]; the caller shifts), and a float or bool `mask` (B, T) that
selects the positions that count. Every loss is the **mean over the masked positions of the whole
batch** (a token mean, like the MLE loss of Hugging Face causal LMs), not the paper's sum over the
dataset: with sums the balance λ between L_MLE and L_consistency would depend on the batch size
and on sentence lengths. A batch with no masked position gives an exact 0 that still has a graph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from nliforge.world.artifacts import WORD_RE   # the z-filter features' words, so the mask lines up with them

NGRAM_SIDES = ("hypothesis", "premise")


def _masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Σ values·mask / Σ mask; 0 (keeping the graph) when the mask is empty."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp_min(1.0)


def token_log_probs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target_t) per position (B, T), computed in float32; targets < 0 (padding) read id 0."""
    logp = F.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1)


def nll_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Likelihood (MLE) loss: mean over masked tokens of −log p(target_t)."""
    return _masked_mean(-token_log_probs(logits, targets), mask)


def unlikelihood_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                      clamp: float = 1e-5) -> torch.Tensor:
    """Token-level unlikelihood (Welleck et al. 2020): mean over masked tokens of
    −log(clamp_min(1 − p(target_t), clamp)).

    The clamp keeps the loss finite (at most −log(clamp) ≈ 11.5 per token) when the model puts
    all its mass on a token it should not produce; where 1 − p < clamp the gradient is zero.
    """
    p = token_log_probs(logits, targets).exp()
    return _masked_mean(-torch.log((1.0 - p).clamp_min(clamp)), mask)


def debias_unlikelihood_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor,
                             biased: torch.Tensor, clamp: float = 1e-5) -> torch.Tensor:
    """L_UL of a rejected (Z⁻) instance, §4.1: mean over masked tokens of
    −log(m_t·p + (1 − m_t)·(1 − p)), with m_t = 1 − biased_t.

    So tokens that carry a biased feature (`biased` = 1) are unlearned (−log(1 − p), clamped as
    in `unlikelihood_loss`) and every other token of the instance keeps the plain likelihood
    −log p, exactly as the paper's formula reads (m_t = 0 on the biased tokens).
    """
    logp = token_log_probs(logits, targets)
    unlike = -torch.log((1.0 - logp.exp()).clamp_min(clamp))
    per_token = torch.where(biased.bool(), unlike, -logp)
    return _masked_mean(per_token, mask)


def parse_biased_features(features: Sequence[str]) -> tuple[dict[str, list[tuple[str, ...]]], bool]:
    """Split z-filter feature names into n-grams per side and a flag for the other features.

    `word@hypothesis`, `two words@premise` (or `two_words@premise`) are n-gram features of that
    side (lower-cased); anything else (hypothesis length, length ratio, lexical overlap,
    hypothesis-only prediction, the null feature) is a whole-hypothesis feature: the flag is True.
    """
    ngrams: dict[str, list[tuple[str, ...]]] = {side: [] for side in NGRAM_SIDES}
    whole = False
    for name in features:
        text, _, side = str(name).rpartition("@")
        if side in ngrams and text:
            ngrams[side].append(tuple(w for w in re.split(r"[\s_]+", text.lower()) if w))
        else:
            whole = True
    return ngrams, whole


def biased_token_mask(text: str, token_spans: Sequence[tuple[int, int]],
                      biased_ngrams: Sequence[Sequence[str]] | None) -> list[int]:
    """Per token of `text` (given by its character spans), 1 if it carries a biased feature, else 0.

    `biased_ngrams` lists word n-grams (e.g. `("not",)`, `("the", "cat")`), matched
    case-insensitively on whole words of `text` (`WORD_RE`, the z-filter features' word regex); a
    token is 1 when its span overlaps a word of a matching occurrence. `None` stands for the
    non-n-gram features (length, overlap, hypothesis-only prediction, null): then every token is 1,
    as §4.1 prescribes.
    This is 1 − m_t in the paper's notation (m_t = 0 on the tokens that contribute to the bias).
    """
    if biased_ngrams is None:
        return [1] * len(token_spans)
    lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)  # keeps offsets
    words = [(m.start(), m.end(), m.group()) for m in WORD_RE.finditer(lowered)]
    hit: list[tuple[int, int]] = []
    for gram in biased_ngrams:
        gram = tuple(w.lower() for w in gram)
        n = len(gram)
        for i in range(len(words) - n + 1) if n else ():
            if tuple(w for _, _, w in words[i:i + n]) == gram:
                hit.extend((s, e) for s, e, _ in words[i:i + n])
    return [int(any(s < he and hs < e for hs, he in hit)) for s, e in token_spans]
