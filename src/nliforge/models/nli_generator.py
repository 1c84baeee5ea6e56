"""The Z-Aug data generator (Wu et al. 2022): a causal LM over premise, label, hypothesis.

Loss per batch, every term a mean over its tokens (see `nliforge.models.losses`):

    L = L_MLE + λ·L_consistency + α·L_UL

- L_MLE: next-token NLL of every token after BOS (premise, label token, hypothesis, EOS) of the
  regular rows (mode `mle`: D0, or Z(D0) when debiasing).
- L_consistency (§2.2.1): unlikelihood −log(1 − p(H_t | l′, P, H_<t)) on the hypothesis tokens
  (not EOS) of the regular rows, in a second forward pass where the label token is replaced by
  l′ ≠ l (one other label per example, drawn once with the training seed). λ = 0 skips the pass
  and L is then exactly the model's own causal-LM loss.
- L_UL (§4.1): rows of mode `unlikelihood` (Z⁻(D0), rejected by z-filtering) take
  −log(m_t p + (1 − m_t)(1 − p)) over all their tokens instead of L_MLE: unlikelihood on the
  tokens that carry a biased feature, likelihood on the others.

The paper's L_debias = L_MLE(Z(D0)) + α·L_UL(Z⁻(D0)) has no consistency term: use λ = 0 for
that fine-tuning (λ, when > 0, applies to the `mle` rows only).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import lightning as L
import torch

from nliforge.generation.zaug_format import LABEL_TOKENS, label_token
from nliforge.models.classifier import log_this_step, progress_bar_drawn
from nliforge.models.losses import (biased_token_mask, debias_unlikelihood_loss, nll_loss,
                                    parse_biased_features, unlikelihood_loss)
from nliforge.models.optim import build_optimizer

MODES = ("mle", "unlikelihood")
NO_DECAY = ("bias", "ln_", "LayerNorm", "layer_norm", "norm.weight")


@dataclass(frozen=True)
class GeneratorExample:
    """One training instance: `mode` is `mle` or `unlikelihood` (a Z⁻ instance); `biased` are
    the names of its features in B(its label) when z-filtering rejected it (empty: treat as a
    whole-hypothesis feature)."""

    premise: str
    label: str
    hypothesis: str
    mode: str = "mle"
    biased: tuple[str, ...] = ()


def add_label_tokens(tokenizer) -> list[int]:
    """Add the label tokens (normal added tokens, so decoding keeps them) and a pad token if missing."""
    tokenizer.add_tokens([t for t in LABEL_TOKENS.values() if t not in tokenizer.get_vocab()])
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return [tokenizer.convert_tokens_to_ids(t) for t in LABEL_TOKENS.values()]


def _encode_side(tokenizer, text: str, ngrams, whole: bool) -> tuple[list[int], list[int]]:
    """Token ids of one side and its biased-token mask (1 = carries a biased feature)."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    spans = [tuple(s) for s in enc["offset_mapping"]]
    return enc["input_ids"], biased_token_mask(text, spans, None if whole else ngrams)


def encode_example(tokenizer, ex: GeneratorExample, rng: random.Random, max_length: int) -> dict:
    """Aligned inputs/targets (targets[t] = ids[t + 1]) with the masks the losses need.

    Sequences longer than `max_length` tokens (BOS and EOS included) are cut on the right.
    """
    if ex.mode not in MODES:
        raise ValueError(f"generator example mode {ex.mode!r}; valid: {MODES}")
    ngrams, whole = parse_biased_features(ex.biased) if ex.mode == "unlikelihood" else ({}, False)
    whole = whole or (ex.mode == "unlikelihood" and not ex.biased)
    p_ids, p_bias = _encode_side(tokenizer, ex.premise, ngrams.get("premise", []), False)
    h_ids, h_bias = _encode_side(tokenizer, ex.hypothesis, ngrams.get("hypothesis", []), whole)
    label_id = tokenizer.convert_tokens_to_ids(label_token(ex.label))
    other = rng.choice([t for name, t in LABEL_TOKENS.items() if name != ex.label])
    ids = [tokenizer.bos_token_id, *p_ids, label_id, *h_ids, tokenizer.eos_token_id][:max_length]
    n_p, n_h = len(p_ids), len(h_ids)
    hyp = [0] * (n_p + 1) + [1] * n_h + [0]  # per target position (targets start at the premise)
    biased = p_bias + [0] + h_bias + [0]
    perturbed = list(ids[:-1])
    if n_p + 1 < len(perturbed):
        perturbed[n_p + 1] = tokenizer.convert_tokens_to_ids(other)
    n = len(ids) - 1
    return {"input_ids": ids[:-1], "perturbed_ids": perturbed, "targets": ids[1:],
            "hyp_mask": hyp[:n], "biased": biased[:n], "mode": MODES.index(ex.mode)}


def encode_examples(tokenizer, examples: Sequence[GeneratorExample], seed: int, max_length: int) -> list[dict]:
    """All examples encoded; the perturbed labels l′ are drawn from one rng seeded with `seed`."""
    rng = random.Random(seed)
    return [encode_example(tokenizer, ex, rng, max_length) for ex in examples]


def collate(rows: Sequence[dict], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-pad a batch: inputs with `pad_id`, targets with -100, masks with 0."""
    width = max(len(r["input_ids"]) for r in rows)
    fills = {"input_ids": pad_id, "perturbed_ids": pad_id, "targets": -100, "hyp_mask": 0, "biased": 0}
    out = {k: torch.tensor([r[k] + [v] * (width - len(r[k])) for r in rows]) for k, v in fills.items()}
    out["attention_mask"] = torch.tensor([[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"]))
                                          for r in rows])
    out["mode"] = torch.tensor([r["mode"] for r in rows])
    return out


class NLIGenerator(L.LightningModule):
    """Trains any causal LM on premise-label-hypothesis sequences with the Z-Aug losses.

    `optimizer` builds the optimizer from parameter groups (Table 7: Adam, lr 1e-5, eps 1e-6);
    the learning rate is constant after `warmup_steps` of linear warmup (0: constant throughout).
    """

    def __init__(self, model, optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 lam: float = 0.5, alpha: float = 1.0, clamp: float = 1e-5,
                 weight_decay: float = 0.0, warmup_steps: int = 0):
        super().__init__()
        if lam < 0 or alpha < 0:
            raise ValueError(f"generator lam ({lam}) and alpha ({alpha}) must be >= 0")
        self.save_hyperparameters(ignore=["model", "optimizer"], logger=False)
        self.model = model
        self.optimizer_factory = optimizer or (lambda params: torch.optim.Adam(params, lr=1e-5, eps=1e-6))
        self._step_losses: list[torch.Tensor] = []  # detached, on device: read once, after training

    def losses(self, batch: dict) -> dict[str, torch.Tensor]:
        """The loss terms of one batch (`loss` is their weighted sum)."""
        hp = self.hparams
        mle_row = (batch["mode"] == 0)[:, None]
        valid = batch["targets"] != -100
        ids, mask = batch["input_ids"], batch["attention_mask"]
        if hp.lam > 0:  # one forward pass over the true and the perturbed labels
            logits, perturbed = self.model(input_ids=torch.cat([ids, batch["perturbed_ids"]]),
                                           attention_mask=torch.cat([mask, mask])).logits.chunk(2)
        else:
            logits, perturbed = self.model(input_ids=ids, attention_mask=mask).logits, None
        terms = {"mle": nll_loss(logits, batch["targets"], valid & mle_row)}
        terms["consistency"] = (unlikelihood_loss(perturbed, batch["targets"], batch["hyp_mask"].bool() & mle_row,
                                                  hp.clamp) if perturbed is not None else logits.new_zeros(()))
        terms["unlikelihood"] = debias_unlikelihood_loss(logits, batch["targets"], valid & ~mle_row,
                                                         batch["biased"], hp.clamp)
        terms["loss"] = terms["mle"] + hp.lam * terms["consistency"] + hp.alpha * terms["unlikelihood"]
        return terms

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        terms = self.losses(batch)
        size = int(batch["input_ids"].size(0))
        if log_this_step(self):
            bar = progress_bar_drawn(self)
            for name, value in terms.items():
                self.log(f"train/{name}", value, prog_bar=bar and name == "loss", batch_size=size)
        self._step_losses.append(terms["loss"].detach())
        return terms["loss"]

    @property
    def step_losses(self) -> list[float]:
        """The training loss of every step so far (one host-device copy for all of them)."""
        return torch.stack(self._step_losses).float().tolist() if self._step_losses else []

    def configure_optimizers(self):
        decay, no_decay = [], []
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                (no_decay if any(nd in name for nd in NO_DECAY) else decay).append(param)
        groups = [{"params": decay, "weight_decay": self.hparams.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        optimizer = build_optimizer(self.optimizer_factory, groups)  # fused only on CUDA
        warmup = max(0, int(self.hparams.warmup_steps))
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda i: min(1.0, (i + 1) / (warmup + 1)))
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
