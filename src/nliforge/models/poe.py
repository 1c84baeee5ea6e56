"""Product of experts (Karimi Mahabadi et al., 2020; Z-Aug App. A.2) over one shared encoder.

A hypothesis-only bias head reads the shared backbone's last-layer first-token state for the
hypothesis alone, with the gradient stopped, so the bias expert learns the artifacts without ever
updating the encoder. Training fits the ensemble softmax(log p_main + β·log p_bias) plus γ·CE of
the bias head; the main model is pushed towards what the bias expert cannot predict. At test only
the main head is used (`predict_probs` is NLIClassifier's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from nliforge.data.datamodule import HYP_PREFIX, TOKEN_KEYS
from nliforge.data.errors import NLIDataError
from nliforge.models.classifier import NLIClassifier, log_this_step, progress_bar_drawn

NUM_LABELS = 3


def poe_loss(main_logits: torch.Tensor, bias_logits: torch.Tensor, labels: torch.Tensor,
             beta: float = 1.0, gamma: float = 1.0) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """−log softmax(log p_main + β·log p_bias)[y] + γ·CE(bias_logits, y), averaged over labelled rows.

    Returns the loss and its two parts (`joint`, `bias`) for logging. Labels of −1 are ignored.
    """
    joint = F.log_softmax(main_logits.float(), -1) + beta * F.log_softmax(bias_logits.float(), -1)
    joint_ce = F.cross_entropy(joint, labels, ignore_index=-1)  # cross_entropy renormalises: the softmax
    bias_ce = F.cross_entropy(bias_logits.float(), labels, ignore_index=-1)
    return joint_ce + gamma * bias_ce, {"joint": joint_ce, "bias": bias_ce}


def hidden_size(model) -> int:
    """Width of the backbone's hidden states, from its config (every HF encoder names it hidden_size)."""
    size = getattr(model.config, "hidden_size", None)
    if not isinstance(size, int):
        raise NLIDataError(f"model.poe.enabled=true: backbone {type(model).__name__} has no config.hidden_size "
                           "for the bias head")
    return size


class PoEClassifier(NLIClassifier):
    """NLIClassifier plus a detached hypothesis-only bias head, trained with the PoE loss.

    Works for any AutoModelForSequenceClassification: the hypothesis representation is the last
    entry of `hidden_states` (requested with `output_hidden_states=True`) at the first token, so no
    architecture-specific attribute is touched. Batches need `hyp_input_ids`/`hyp_attention_mask`
    (NLIDataModule(..., hypothesis_view=True)).
    """

    def __init__(self, model, *args, beta: float = 1.0, gamma: float = 1.0, **kwargs):
        super().__init__(model, *args, **kwargs)
        self.beta, self.gamma = float(beta), float(gamma)
        # not named "bias_*": NO_DECAY matches parameter names by substring
        self.hyp_head = nn.Linear(hidden_size(model), NUM_LABELS)

    def hypothesis_features(self, batch: dict) -> torch.Tensor:
        """Last-layer first-token state of the shared encoder on the hypothesis alone, detached."""
        missing = HYP_PREFIX + "input_ids"
        if missing not in batch:
            raise NLIDataError(f"model.poe.enabled=true needs batches with {missing!r}: build the data module "
                               "with hypothesis_view=True")
        inputs = {k: batch[HYP_PREFIX + k] for k in TOKEN_KEYS if HYP_PREFIX + k in batch}
        with torch.no_grad():  # the bias head never updates the encoder: no graph is kept either
            out = self.model(**inputs, output_hidden_states=True)
        return out.hidden_states[-1][:, 0].detach()

    def bias_logits(self, batch: dict) -> torch.Tensor:
        """The bias expert's logits (e/n/c order, like the main head after label_permutation)."""
        features = self.hypothesis_features(batch)
        return self.hyp_head(features.to(self.hyp_head.weight.dtype))

    def training_step(self, batch: dict, batch_idx: int) -> dict:
        main = self(batch)
        loss, parts = poe_loss(main, self.bias_logits(batch), batch["labels"], self.beta, self.gamma)
        size = len(batch["uid"])
        if log_this_step(self):
            self.log("train/loss", loss, prog_bar=progress_bar_drawn(self), batch_size=size)
            self.log("train/loss_joint", parts["joint"], batch_size=size)
            self.log("train/loss_bias", parts["bias"], batch_size=size)
        # training dynamics describe the main model: the one that is kept and tested
        return {"loss": loss, "probs": main.detach().float().softmax(-1)}


def poe_settings(model_cfg: Mapping[str, Any]) -> dict | None:
    """`model.poe` as keyword arguments for PoEClassifier, or None when it is off or absent."""
    node = model_cfg.get("poe") or {}
    if not node.get("enabled", False):
        return None
    settings = {}
    for key in ("beta", "gamma"):
        value = node.get(key, 1.0)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
            raise NLIDataError(f"model.poe.{key}={value!r}; expected a number >= 0")
        settings[key] = float(value)
    if model_cfg.get("input", "pair") != "pair":
        raise NLIDataError(f"model.poe.enabled=true needs model.input=pair (got {model_cfg.get('input')!r}): "
                           "the bias head already gives the hypothesis-only view")
    return settings
