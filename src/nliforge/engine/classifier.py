"""The task model a generation pipeline builds on: an `nliforge-train` run folder (its training set,
training dynamics, final model and one checkpoint per epoch), or one trained on the spot."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from omegaconf import DictConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.records import Record
from nliforge.models.predict import Classifier, load_classifier, predict_probs

log = logging.getLogger(__name__)
KEY = "pipeline.classifier.run_dir"


def derived_config(cfg: DictConfig) -> DictConfig:
    """A writable copy of the run's read-only config (generate.final_config), for a stage that trains a model
    with a variant of it (the classifier, DISCO's teacher, the long-text explainer); interpolations are kept."""
    return OmegaConf.create(OmegaConf.to_container(cfg, resolve=False))


def classifier_training_config(cfg: DictConfig, out_dir: Path | str) -> DictConfig:
    """The resolved `nliforge-train` config of the classifier the generate config describes (its
    data/model/trainer groups), trained into out_dir."""
    sub = derived_config(cfg)
    with open_dict(sub):
        sub.paths.output_dir = str(out_dir)
        sub.data.save_train_set = True           # the seed pool and exemplar pool
        sub.save_model = True
        sub.ckpt_path = "last"                   # a killed classifier stage resumes from its last epoch
        if sub.get("callbacks", {}).get("checkpoint") is not None:
            sub.callbacks.checkpoint.save_top_k = -1   # every epoch's weights: the variability stage scores each
        sub.logger = {k: v for k, v in (sub.get("logger") or {}).items() if k == "csv"}
    return OmegaConf.create(OmegaConf.to_container(sub, resolve=True))


def train_classifier(cfg: DictConfig, out_dir: Path) -> Path:
    """Train the classifier the generate config describes into out_dir."""
    from nliforge.train import train

    train(classifier_training_config(cfg, out_dir))
    return out_dir


class ClassifierRun:
    """Read-only view of a classifier run folder, with errors that say what is missing."""

    def __init__(self, run_dir: str | Path):
        self.root = Path(run_dir)
        if not self.root.is_dir():
            raise NLIDataError(f"{KEY}={str(self.root)!r}: no such folder (an nliforge-train output folder)")

    def _need(self, rel: str, hint: str) -> Path:
        path = self.root / rel
        if not path.exists():
            raise NLIDataError(f"{KEY}={str(self.root)!r}: {rel} is missing; {hint}")
        return path

    def train_records(self) -> list[Record]:
        """The classifier's training set: the pool seeds and exemplars come from."""
        path = self._need("train_set.jsonl", "train it with data.save_train_set=true")
        return read_jsonl(path)

    def metrics(self) -> pd.DataFrame:
        """Cartography metrics (variability, confidence ...) per training uid."""
        from nliforge.cartography import compute_metrics, load_dynamics

        folder = self._need("dynamics", "train it with callbacks=default (training dynamics on)")
        return compute_metrics(load_dynamics(folder))

    def final_model(self) -> Classifier:
        """(model, tokenizer, label permutation) of the final weights, in eval mode."""
        return load_classifier(self._need("model", "train it with save_model=true"), KEY)

    def epoch_files(self) -> list[Path]:
        """The per-epoch Lightning checkpoints there are (epoch_00.ckpt, or epoch_epoch=00.ckpt of older
        runs), in epoch order; last.ckpt excluded."""
        folder = self.root / "checkpoints"
        found = []
        for path in folder.glob("*.ckpt") if folder.is_dir() else []:
            match = re.search(r"epoch[_=]*(\d+)", path.stem)
            if path.name != "last.ckpt" and match:
                found.append((int(match.group(1)), path))
        return [p for _, p in sorted(found)]

    def epoch_checkpoints(self) -> list[Path]:
        """One Lightning checkpoint per epoch, in epoch order; at least 2 (estimated max variability)."""
        found = self.epoch_files()
        if len(found) < 2:
            raise NLIDataError(f"{KEY}={str(self.root)!r}: estimated max variability needs at least 2 epoch "
                               f"checkpoints in {self.root / 'checkpoints'}, found {len(found)}; train it with "
                               "callbacks.checkpoint.save_top_k=-1 (keep every epoch) and model.max_epochs >= 2")
        return found

    def final_probs(self, pairs: Sequence[tuple[str, str]], batch_size: int = 128, max_length: int = 128,
                    device: str = "cpu") -> np.ndarray:
        """p(label) in e/n/c order for each pair under the final weights: shape (N, 3)."""
        return predict_probs(self.final_model(), pairs, batch_size=batch_size, max_length=max_length, device=device,
                             progress=False)

    def epoch_probs(self, pairs: Sequence[tuple[str, str]], batch_size: int = 128, max_length: int = 128,
                    device: str = "cpu") -> np.ndarray:
        """p(label) in e/n/c order for each pair under each epoch's weights: shape (epochs, N, 3)."""
        classifier = self.final_model()
        out = []
        for ckpt in self.epoch_checkpoints():
            state = torch.load(ckpt, map_location="cpu", weights_only=False)["state_dict"]
            weights = {k[len("model."):]: v for k, v in state.items() if k.startswith("model.")}
            classifier.model.load_state_dict(weights)
            out.append(predict_probs(classifier, pairs, batch_size=batch_size, max_length=max_length, device=device,
                                     progress=False))
        return np.stack(out)
