"""Token attributions for an NLI classifier (NLI-Set's "explanation methods"): which tokens of a
(premise, hypothesis) pair push the prediction up or down.

Two methods over the input word embeddings, implemented here (no Captum needed):
- gradient x input ("gxi"): sum over the embedding dimension of x * df/dx;
- integrated gradients ("ig"): (x - x') * the average gradient on the straight path from a baseline
  x' to x, by Gauss-Legendre quadrature with `n_steps` nodes (batched). The baseline keeps the
  special tokens (<s>, </s>, [CLS] ...) and replaces every other token's embedding by the pad
  token's ("pad") or by zeros ("zeros"). Completeness: the attributions sum to f(x) - f(x');
  `Attribution.delta` is the remaining gap, a check on n_steps.
f is the probability of the target class (`output="prob"`) or its logit ("logit"); the target is
the predicted class unless given.

Long inputs: the model takes at most `max_length` tokens (capped by its position embeddings).
`long_inputs="truncate"` cuts the longer text first; `"chunk"` keeps the premise (cut if needed) and
splits the hypothesis into windows of whole sentences of at most half the budget each, one
attribution per window (`Attribution.window` = "2/3").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.models.predict import token_limit

METHODS = ("ig", "gxi")


@dataclass
class Attribution:
    """One pair's (or window's) attribution: display tokens, one score per token, the prediction."""

    tokens: list[str]
    scores: np.ndarray
    target: str
    probs: dict[str, float]
    method: str
    delta: float | None = None
    window: str | None = None
    extra: dict = field(default_factory=dict)


def encode_windows(tokenizer, premise: str, hypothesis: str, limit: int, long_inputs: str) -> list[dict]:
    """Encoded inputs for one pair: one (truncated) or one per hypothesis window ("chunk")."""
    if long_inputs not in ("truncate", "chunk"):
        raise NLIDataError(f"long_inputs={long_inputs!r}; expected 'truncate' or 'chunk'")
    enc = lambda h: tokenizer(premise, h, truncation=True, max_length=limit, return_special_tokens_mask=True,
                              return_tensors="pt")
    whole = tokenizer(premise, hypothesis, truncation=False)["input_ids"]
    if long_inputs == "truncate" or len(whole) <= limit:
        return [enc(hypothesis)]
    budget = max(8, limit // 2 - 4)
    windows, current = [], ""
    for sentence in re.split(r"(?<=[.!?])\s+", hypothesis.strip()):
        candidate = f"{current} {sentence}".strip()
        if current and len(tokenizer(candidate, add_special_tokens=False)["input_ids"]) > budget:
            windows.append(current)
            candidate = sentence
        current = candidate
    windows.append(current)
    return [enc(w) for w in windows]


def _f(model, embeds, mask, target: int, perm, output: str) -> torch.Tensor:
    """f for a batch of embedded inputs: the target class's probability or logit (e/n/c order)."""
    logits = model(inputs_embeds=embeds, attention_mask=mask).logits[:, perm]
    return logits.softmax(-1)[:, target] if output == "prob" else logits[:, target]


def gradient_x_input(model, enc, target: int, perm, output: str = "prob") -> np.ndarray:
    """Per-token sum over the embedding dimension of x * df/dx."""
    x = model.get_input_embeddings()(enc["input_ids"]).detach().requires_grad_(True)
    _f(model, x, enc["attention_mask"], target, perm, output).sum().backward()
    return (x * x.grad).sum(-1)[0].detach().numpy()


def baseline_embeddings(model, enc, baseline: str) -> torch.Tensor:
    """The IG baseline: special tokens kept, every other token the pad embedding or zeros."""
    emb = model.get_input_embeddings()
    x = emb(enc["input_ids"]).detach()
    keep = enc["special_tokens_mask"].bool().unsqueeze(-1)
    if baseline == "zeros":
        other = torch.zeros_like(x)
    elif baseline == "pad":
        pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
        other = emb(torch.full_like(enc["input_ids"], pad)).detach()
    else:
        raise NLIDataError(f"baseline={baseline!r}; expected 'pad' or 'zeros'")
    return torch.where(keep, x, other)


def integrated_gradients(model, enc, target: int, perm, n_steps: int = 32, baseline: str = "pad",
                         batch_size: int = 16, output: str = "prob") -> tuple[np.ndarray, float]:
    """(per-token IG attributions, completeness gap sum(attr) - (f(x) - f(x')))."""
    x = model.get_input_embeddings()(enc["input_ids"]).detach()
    base = baseline_embeddings(model, enc, baseline)
    nodes, weights = np.polynomial.legendre.leggauss(n_steps)
    alphas, weights = torch.tensor((nodes + 1) / 2, dtype=x.dtype), torch.tensor(weights / 2, dtype=x.dtype)
    total = torch.zeros_like(x[0])
    mask = enc["attention_mask"]
    for start in range(0, n_steps, batch_size):
        a = alphas[start:start + batch_size].view(-1, 1, 1)
        path = (base + a * (x - base)).requires_grad_(True)
        _f(model, path, mask.expand(len(a), -1), target, perm, output).sum().backward()
        total += (path.grad * weights[start:start + batch_size].view(-1, 1, 1)).sum(0)
    attr = ((x - base)[0] * total).sum(-1).detach().numpy()
    with torch.no_grad():
        ends = _f(model, torch.cat([x, base]), mask.expand(2, -1), target, perm, output)
    return attr, float(attr.sum() - (ends[0] - ends[1]))


def display_tokens(tokenizer, ids) -> list[str]:
    """Readable tokens: byte-level and SentencePiece space markers shown as a leading space, ## removed."""
    out = []
    for tok in tokenizer.convert_ids_to_tokens([int(i) for i in ids]):
        out.append(tok.replace("Ġ", " ").replace("▁", " ").replace("Ċ", "\\n").replace("##", ""))
    return out


def attribute_pair(model, tokenizer, perm, premise: str, hypothesis: str, method: str = "ig",
                   target: str | None = None, max_length: int = 512, long_inputs: str = "truncate",
                   n_steps: int = 32, baseline: str = "pad", batch_size: int = 16,
                   output: str = "prob") -> list[Attribution]:
    """Attributions of one pair (one per window when chunked) towards `target` (default: predicted)."""
    if method not in METHODS:
        raise NLIDataError(f"method={method!r}; expected one of {METHODS}")
    encs = encode_windows(tokenizer, premise, hypothesis, token_limit(model, max_length), long_inputs)
    out = []
    for i, enc in enumerate(encs, 1):
        with torch.no_grad():
            probs = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits[:, perm].softmax(-1)[0]
        t = LABELS.index(target) if target else int(probs.argmax())
        if method == "ig":
            scores, delta = integrated_gradients(model, enc, t, perm, n_steps, baseline, batch_size, output)
        else:
            scores, delta = gradient_x_input(model, enc, t, perm, output), None
        out.append(Attribution(display_tokens(tokenizer, enc["input_ids"][0]), scores, LABELS[t],
                               {lab: float(p) for lab, p in zip(LABELS, probs)}, method, delta,
                               f"{i}/{len(encs)}" if len(encs) > 1 else None))
    return out
