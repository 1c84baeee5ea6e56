"""The NLI classifier: a LightningModule over AutoModelForSequenceClassification."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import lightning as L
import torch
import torch.nn.functional as F
from transformers import get_linear_schedule_with_warmup

from nliforge.data.datamodule import TOKEN_KEYS
from nliforge.models.graphs import eager_stance
from nliforge.models.optim import build_optimizer

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "LayerNorm.bias")


def progress_bar_drawn(module: L.LightningModule) -> bool:
    """Whether the module's trainer draws a progress bar. Lightning turns every value logged with
    `prog_bar=True` into a Python number after every step, bar or no bar (Lightning issue 21232):
    on a GPU that is a host-device synchronisation per step, so training losses go to the bar only
    when there is one (`tests/models/test_host_sync.py`)."""
    trainer = getattr(module, "_trainer", None)
    return trainer is not None and trainer.progress_bar_callback is not None


def log_this_step(module: L.LightningModule) -> bool:
    """Whether a training step should `self.log` its loss: always while a progress bar shows it,
    otherwise only on the steps the loggers write (`trainer.log_every_n_steps`). Each `self.log`
    call costs about 1 ms of host time (8% of a tiny model's CPU step), and in between the value
    would only be overwritten."""
    if progress_bar_drawn(module) or getattr(module, "_trainer", None) is None:
        return True
    connector = getattr(module.trainer, "_logger_connector", None)  # Lightning's own test, if it has one
    return bool(getattr(connector, "should_update_logs", True))


class NLIClassifier(L.LightningModule):
    """Fine-tunes a sequence classifier with AdamW (decoupled weight decay) and linear decay after warmup.

    `training_step` returns the batch's detached probabilities so the training-dynamics callback
    can record them without a second forward pass.
    """

    # constructor arguments of a subclass kept out of the saved hyper-parameters (data, not settings)
    unsaved_args: tuple[str, ...] = ()
    # `compile.full_batches_only`: a compiled backbone runs compiled on full training batches alone; a
    # shorter batch (an epoch's last) and evaluation run eagerly, so no graph is built for a shape seen once
    full_batches_only: bool = False
    _graph_rows: int = 0

    def __init__(self, model, optimizer: Callable[..., torch.optim.Optimizer] | None = None,
                 weight_decay: float = 0.1, warmup_ratio: float = 0.06,
                 label_permutation: Sequence[int] | None = None, val_names: Sequence[str] = ()):
        super().__init__()
        self.save_hyperparameters(ignore=["model", "optimizer", *self.unsaved_args], logger=False)
        self.model = model
        self.optimizer_factory = optimizer or (lambda params: torch.optim.AdamW(params, lr=1e-5))
        perm = torch.tensor(list(label_permutation)) if label_permutation is not None else None
        self.register_buffer("label_permutation", perm, persistent=False)
        self.val_names = list(val_names)

    def on_fit_start(self) -> None:
        """Train in training mode: `from_pretrained` returns the backbone in eval mode and Lightning (2.2+)
        keeps a module's mode, so a pretrained model (MiniLM, RoBERTa) trained with its dropout off and
        Lightning warned "Found N module(s) in eval mode at the start of training"."""
        self.train()

    def forward(self, batch: dict) -> torch.Tensor:
        with eager_stance(self.full_batches_only and self.off_graph(batch)):
            logits = self.model(**{k: batch[k] for k in TOKEN_KEYS if k in batch}).logits
        return logits if self.label_permutation is None else logits[:, self.label_permutation]

    def off_graph(self, batch: dict) -> bool:
        """Whether `batch` runs eagerly under `full_batches_only`: outside training, or fewer rows than
        the largest training batch seen."""
        if not self.training or torch.is_inference_mode_enabled() or not torch.is_grad_enabled():
            return True
        rows = int(batch["input_ids"].shape[0])
        self._graph_rows = max(self._graph_rows, rows)
        return rows < self._graph_rows

    def training_step(self, batch: dict, batch_idx: int) -> dict:
        if self.full_batches_only:   # a new step: CUDA graph trees may reuse the last step's buffers
            torch.compiler.cudagraph_mark_step_begin()
        logits = self(batch)
        loss = F.cross_entropy(logits, batch["labels"], ignore_index=-1)
        if log_this_step(self):
            self.log("train/loss", loss, prog_bar=progress_bar_drawn(self), batch_size=len(batch["uid"]))
        return {"loss": loss, "probs": logits.detach().float().softmax(-1)}

    def validation_step(self, batch: dict, batch_idx: int, dataloader_idx: int = 0) -> None:
        logits = self(batch)
        labels = batch["labels"]
        mask = labels >= 0
        acc = (logits.argmax(-1)[mask] == labels[mask]).float().mean() if mask.any() else torch.tensor(0.0)
        name = self.val_names[dataloader_idx] if dataloader_idx < len(self.val_names) else str(dataloader_idx)
        self.log(f"val/{name}/acc", acc, add_dataloader_idx=False, batch_size=int(mask.sum()), prog_bar=True,
                 sync_dist=True)  # under DDP every rank scores the whole set: the mean of equal values

    @torch.inference_mode()
    def predict_probs(self, batch: dict) -> torch.Tensor:
        """Probabilities in e/n/c order for a batch (call in eval mode)."""
        return self(batch).float().softmax(-1)

    def configure_optimizers(self):
        decay, no_decay = [], []
        for name, param in self.named_parameters():  # the module's, so heads a subclass adds train too
            if param.requires_grad:
                (no_decay if any(nd in name for nd in NO_DECAY) else decay).append(param)
        groups = [{"params": decay, "weight_decay": self.hparams.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        optimizer = build_optimizer(self.optimizer_factory, groups)  # fused only on CUDA
        total = int(self.trainer.estimated_stepping_batches)
        scheduler = get_linear_schedule_with_warmup(optimizer, int(self.hparams.warmup_ratio * total), total)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
