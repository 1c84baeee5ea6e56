"""Label-guided decoding for the Z-Aug generator (`generator.label_guidance`).

A label-conditioned generator trained on data where the premise already predicts the label can learn to
read the label token little (experiments/label_following). Guidance amplifies what the token does carry,
with the same trained model (classifier-free guidance, Ho and Salimans 2022, as Sanchez et al. 2023 use it
for language models; the negative prompt here is the other labels): for a prompt `{premise}<|y|>` three
copies of the prompt are decoded side by side, one per label token, all continuing with the same sampled
tokens, and each step's scores are

    s = log p(. | premise, y, h<t) + w * (log p(. | premise, y, h<t) - mean_{y' != y} log p(. | premise, y', h<t))

sampled as logits (temperature, top_p and the per-sample seeds of `HFLocal`); w = 0 is plain sampling.
Three forward rows per sample instead of one.
"""

from __future__ import annotations

import torch

from nliforge.generation.backends.hf_local import HFLocal
from nliforge.generation.types import GenerationError, GenerationRequest


def guided_scores(logprobs: torch.Tensor, w: float) -> torch.Tensor:
    """Scores (rows, vocab) from log-probabilities (rows, labels, vocab) whose column 0 is the intended label."""
    intended = logprobs[:, 0, :]
    others = logprobs[:, 1:, :].mean(dim=1)
    return intended + w * (intended - others)


def label_variants(ids: list[int], label_ids: list[int], uid: str) -> list[list[int]]:
    """The prompt's ids with each label token in its last place, the prompt's own label first."""
    if not ids or ids[-1] not in label_ids:
        raise GenerationError(f"request {uid}: label guidance needs a prompt that ends with a label token "
                              f"(format_prefix(premise, label)); this one does not")
    own = ids[-1]
    return [ids[:-1] + [lab] for lab in [own] + [lab for lab in label_ids if lab != own]]


class GuidedHFLocal(HFLocal):
    """`HFLocal` whose decoding is label-guided with weight `w` (batching, context checks and seeds as HFLocal)."""

    def __init__(self, model: str, label_tokens: list[str], w: float, **kwargs):
        if w < 0:
            raise GenerationError(f"generator.label_guidance must be >= 0 (0: plain sampling), got {w}")
        super().__init__(model, **kwargs)
        self.w = float(w)
        self.label_ids = [self._tok.convert_tokens_to_ids(tok) for tok in label_tokens]
        self.group = len(self.label_ids)

    def _variants(self, req: GenerationRequest, ids: list[int]) -> list[list[int]]:
        return label_variants(ids, self.label_ids, req.uid)

    def _scores(self, logits: torch.Tensor, n_rows: int) -> torch.Tensor:
        return guided_scores(torch.log_softmax(logits.float(), -1).view(n_rows, self.group, -1), self.w)
