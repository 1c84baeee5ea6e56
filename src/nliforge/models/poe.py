"""Product of experts (Clark et al., 2019; Karimi Mahabadi et al., 2020; Z-Aug App. A.2).

Training fits the ensemble softmax(log p_main + β·log p_bias); the main model is pushed towards
what the hypothesis-only bias expert cannot predict. At test only the main head is used
(`predict_probs` is NLIClassifier's). The bias expert is one of two kinds:

* jointly trained (`model.poe.bias_model: null`): a bias head reads the shared backbone's
  last-layer first-token state for the hypothesis alone, with the gradient stopped, so it learns
  the artifacts without ever updating the encoder; the loss adds γ·CE of the bias head.
* frozen (`model.poe.bias_model: <folder>`): a separate classifier trained before with
  `model.input=hypothesis`. Its log p(e, n, c) on every training hypothesis is computed once,
  before training (`frozen_bias_table`), and looked up by uid; no γ term, since nothing trains it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from nliforge.data.datamodule import HYP_PREFIX, TOKEN_KEYS
from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.models.classifier import NLIClassifier, log_this_step, progress_bar_drawn
from nliforge.models.predict import classifier_folder, load_classifier, predict_probs
from nliforge.utils.atomic import read_json_file

log = logging.getLogger(__name__)

NUM_LABELS = 3
BIAS_KEY = "model.poe.bias_model"


def poe_loss(main_logits: torch.Tensor, bias_logits: torch.Tensor, labels: torch.Tensor,
             beta: float = 1.0, gamma: float = 1.0) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """−log softmax(log p_main + β·log p_bias)[y] + γ·CE(bias_logits, y), averaged over labelled rows.

    Returns the loss and its parts (`joint`, and `bias` when γ > 0) for logging. Labels of −1 are
    ignored. `bias_logits` may be log-probabilities (a frozen expert's): log_softmax leaves them as
    they are. γ = 0 drops the bias term altogether, as a frozen expert has nothing to train.
    """
    joint = F.log_softmax(main_logits.float(), -1) + beta * F.log_softmax(bias_logits.float(), -1)
    joint_ce = F.cross_entropy(joint, labels, ignore_index=-1)  # cross_entropy renormalises: the softmax
    if not gamma:
        return joint_ce, {"joint": joint_ce}
    bias_ce = F.cross_entropy(bias_logits.float(), labels, ignore_index=-1)
    return joint_ce + gamma * bias_ce, {"joint": joint_ce, "bias": bias_ce}


def hidden_size(model) -> int:
    """Width of the backbone's hidden states, from its config (every HF encoder names it hidden_size)."""
    size = getattr(model.config, "hidden_size", None)
    if not isinstance(size, int):
        raise NLIDataError(f"model.poe.enabled=true: backbone {type(model).__name__} has no config.hidden_size "
                           "for the bias head")
    return size


class BiasTable(NamedTuple):
    """A frozen bias expert's log p(e, n, c) per training record (rows in `uids` order) and the folder
    it was read from."""

    source: str
    uids: list[str]
    log_probs: np.ndarray


def missing_uid_error(missing: Sequence[str], source: str) -> NLIDataError:
    """The one-line error for training uids the frozen bias expert has no log-probs for."""
    return NLIDataError(f"{BIAS_KEY}={source!r}: no bias log-probs for training uid {missing[0]!r} "
                        f"({len(missing)} missing); expected one row per training record")


class PoEClassifier(NLIClassifier):
    """NLIClassifier plus a hypothesis-only bias expert, trained with the PoE loss.

    Without `bias_table`, the expert is a detached bias head: it works for any
    AutoModelForSequenceClassification, as the hypothesis representation is the last entry of
    `hidden_states` (requested with `output_hidden_states=True`) at the first token, so no
    architecture-specific attribute is touched; batches need `hyp_input_ids`/`hyp_attention_mask`
    (NLIDataModule(..., hypothesis_view=True)). With a `bias_table` (a frozen, separately trained
    expert), its log-probs are looked up by `batch["uid"]`, there is no head and γ is 0.
    """

    # the table is data, not a setting: kept out of the checkpoint's hyper-parameters
    unsaved_args = ("bias_table",)

    def __init__(self, model, *args, beta: float = 1.0, gamma: float = 1.0, bias_table: BiasTable | None = None,
                 **kwargs):
        super().__init__(model, *args, **kwargs)
        self.beta, self.gamma = float(beta), (float(gamma) if bias_table is None else 0.0)
        self.bias_source = None if bias_table is None else bias_table.source
        if bias_table is None:
            # not named "bias_*": NO_DECAY matches parameter names by substring
            self.hyp_head = nn.Linear(hidden_size(model), NUM_LABELS)
            return
        self.bias_rows = {uid: i for i, uid in enumerate(bias_table.uids)}
        # a buffer follows the module to its device; not persistent: recomputed, never checkpointed
        self.register_buffer("bias_log_probs", torch.as_tensor(np.asarray(bias_table.log_probs, np.float32)),
                             persistent=False)

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

    def frozen_bias(self, uids: Sequence[str]) -> torch.Tensor:
        """The frozen expert's log-probs for these uids (an error names the key if one is missing)."""
        missing = [uid for uid in uids if uid not in self.bias_rows]
        if missing:
            raise missing_uid_error(missing, str(self.bias_source))
        rows = torch.tensor([self.bias_rows[uid] for uid in uids], device=self.bias_log_probs.device)
        return self.bias_log_probs[rows]

    def bias_logits(self, batch: dict) -> torch.Tensor:
        """The bias expert's logits, or a frozen expert's log-probs (e/n/c order, like the main head)."""
        if self.bias_source is not None:
            return self.frozen_bias(batch["uid"])
        features = self.hypothesis_features(batch)
        return self.hyp_head(features.to(self.hyp_head.weight.dtype))

    def training_step(self, batch: dict, batch_idx: int) -> dict:
        main = self(batch)
        loss, parts = poe_loss(main, self.bias_logits(batch), batch["labels"], self.beta, self.gamma)
        size = len(batch["uid"])
        if log_this_step(self):
            self.log("train/loss", loss, prog_bar=progress_bar_drawn(self), batch_size=size)
            for name, value in parts.items():   # joint, and bias when the head trains
                self.log(f"train/loss_{name}", value, batch_size=size)
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


def bias_model_setting(model_cfg: Mapping[str, Any]) -> str | None:
    """`model.poe.bias_model` when PoE is on and the key is set, else None (the jointly trained head)."""
    node = model_cfg.get("poe") or {}
    value = node.get("bias_model") if node.get("enabled", False) else None
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise NLIDataError(f"{BIAS_KEY}={value!r}; expected an nliforge-train run folder (or its model/) "
                           "trained with model.input=hypothesis, or null")
    return str(value)


def trained_input(folder: Path) -> str | None:
    """The `model.input` a classifier folder was trained with, or None when nothing records it.

    Read from the `config.yaml` nliforge-train writes once a run is accepted (a config without
    `model.input` means the pair), else `nliforge_input` in the model's config.json; never from Hydra's
    `.hydra/config.yaml`, which records the last command pointed at the folder, not the run it holds. The
    run folder is the parent of a `model/` folder, else the folder itself.
    """
    from omegaconf import OmegaConf

    run = folder.parent if folder.name == "model" else folder
    config = run / "config.yaml"
    if config.is_file():
        model = OmegaConf.load(config).get("model") or {}
        return str(model.get("input", "pair"))
    recorded = read_json_file(folder / "config.json").get("nliforge_input")
    return None if recorded is None else str(recorded)


def check_bias_model(path: str) -> Path:
    """The classifier folder of `model.poe.bias_model`, refused unless trained on the hypothesis alone.

    A folder whose training view nothing records (a bare Hugging Face folder) is accepted with a
    warning: the product of experts only makes sense with a hypothesis-only expert.
    """
    folder = classifier_folder(path, BIAS_KEY)
    trained = trained_input(folder)
    if trained is None:
        log.warning("%s=%s: no run config records its model.input; assuming a hypothesis-only classifier",
                    BIAS_KEY, path)
    elif trained != "hypothesis":
        raise NLIDataError(f"{BIAS_KEY}={path!r} was trained with model.input={trained!r}; expected a run "
                           "trained with model.input=hypothesis")
    return folder


def frozen_bias_table(path: str, records: Sequence[Record], *, batch_size: int = 64, max_length: int = 128,
                      device: str = "cpu") -> BiasTable:
    """The frozen bias expert in `path` scored on the hypothesis alone of every record, as log-probs.

    Probabilities come from `predict_probs(view="hypothesis")`; a probability of exactly 0 is
    raised to the smallest float32 so its log is finite. Only these log-probs are kept: the frozen
    expert's weights never reach the optimizer.
    """
    folder = check_bias_model(path)
    log.info("product of experts: frozen bias expert %s on %d training hypotheses", folder, len(records))
    probs = predict_probs(load_classifier(folder, BIAS_KEY), records, batch_size=batch_size, max_length=max_length,
                          device=device, desc="bias expert", view="hypothesis")
    log_probs = np.log(np.maximum(probs, np.finfo(np.float32).tiny)).astype(np.float32)
    return BiasTable(str(folder.resolve()), [r.uid for r in records], log_probs)


def check_bias_table(table: BiasTable, records: Sequence[Record]) -> None:
    """Every training uid must have a row in the table (an error names `model.poe.bias_model`)."""
    have = set(table.uids)
    missing = [r.uid for r in records if r.uid not in have]
    if missing:
        raise missing_uid_error(missing, table.source)
