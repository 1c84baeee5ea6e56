"""Lightning callback that records per-epoch label probabilities for dataset cartography.

Two modes (PRIOR_ART: both are legitimate, so it is a setting and recorded in meta.json):

* ``in_training`` — the cartography code's way: keep the softmax the training step already
  computed for each minibatch (training mode, weights changing within the epoch). No extra
  forward pass. Needs ``training_step`` to return ``{"loss": ..., "probs": (B, 3) detached}``
  and batches with ``uid`` (list of str) and ``labels`` (gold ids, -1 = unlabeled). The batches'
  probabilities and labels stay on the device until the epoch ends, then go to the host in one
  copy: no host-device synchronisation per training step (``tests/models/test_host_sync.py``).
* ``checkpoint`` — WANLI's way: at the end of each epoch score the whole set with that
  epoch's final weights in eval mode, from ``trainer.datamodule.dynamics_dataloader()`` via
  ``pl_module.predict_probs(batch) -> (B, 3)``.

Files are written on global rank 0 only and an existing epoch file is never replaced, so a
resumed run keeps what the first run recorded. The current epoch's buffers (every process's) and the
epoch they belong to go into each checkpoint (``state_dict``), so a run resumed mid-epoch writes the
whole epoch, not just the batches trained after the resume. A checkpoint written after an epoch's last
batch but before its end (a stop signal there) resumes in the next epoch without that epoch's end
hooks (Lightning's restart): its file is written at the resume's start instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
from lightning.pytorch import Callback, LightningModule, Trainer

from nliforge.cartography.store import (Dynamics, epoch_frame, epoch_path, frame_to_parquet_bytes, load_dynamics,
                                       read_meta, update_meta)
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import write_new_file

log = logging.getLogger(__name__)

MODES: tuple[str, ...] = ("in_training", "checkpoint")

__all__ = ["MODES", "TrainingDynamicsCallback", "Dynamics", "load_dynamics"]


class TrainingDynamicsCallback(Callback):
    """Write ``out_dir/epoch_{e:03d}.parquet`` (uid, gold, p_*) and ``meta.json`` each epoch."""

    def __init__(self, out_dir: str | os.PathLike, mode: str = "in_training") -> None:
        if mode not in MODES:
            raise ValueError(f"unknown training-dynamics mode {mode!r}; valid: {', '.join(MODES)}")
        self.out_dir = Path(out_dir)
        self.mode = mode
        self._loaded: list[dict] | None = None   # per-process buffers from a checkpoint, until on_train_start
        self._loaded_epoch: int | None = None     # the epoch they belong to (None: a checkpoint of older code)
        self._epoch = 0                           # the epoch the buffers belong to
        self._reset()

    def _reset(self) -> None:
        """Forget the current epoch's buffers."""
        self._probs: list[torch.Tensor] = []
        self._labels: list[torch.Tensor] = []
        self._uids: list[str] = []

    # ------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict:
        """The epoch so far, per process (a collective call under DDP: every rank builds checkpoints)."""
        from nliforge.models.resume import gather_per_rank

        uids, labels, probs = self._collect_in_training()
        return {"mode": self.mode, "epoch": self._epoch, "ranks": gather_per_rank(
            {"uids": uids, "labels": torch.from_numpy(labels), "probs": torch.from_numpy(probs)})}

    def load_state_dict(self, state_dict: dict) -> None:
        """Keep the buffers until `on_train_start`, which knows this process's rank."""
        self._loaded, self._loaded_epoch = state_dict.get("ranks"), state_dict.get("epoch")

    def on_train_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """After a resume, refill this process's buffers with what the checkpoint recorded this epoch; or,
        when the checkpoint's epoch had run all its batches (Lightning resumes in the next one, skipping that
        epoch's end), write that epoch's file now, from the buffers or with the weights it ended with."""
        ranks, self._loaded = self._loaded, None
        epoch, self._epoch = self._loaded_epoch, trainer.current_epoch
        if epoch is not None and epoch < trainer.current_epoch:
            self._finish_skipped_epoch(trainer, pl_module, epoch, ranks)
            return
        if not ranks or self.mode != "in_training":
            return
        mine = self._rank_buffers(trainer, ranks)
        self._reset()
        if mine["uids"]:
            self._uids = list(mine["uids"])
            self._labels = [mine["labels"].to(pl_module.device)]
            self._probs = [mine["probs"].to(pl_module.device)]

    @staticmethod
    def _rank_buffers(trainer: Trainer, ranks: list[dict]) -> dict:
        """This process's part of a checkpoint's buffers (all of them on rank 0 when the process count changed)."""
        if len(ranks) != trainer.world_size:
            log.warning("checkpoint holds dynamics buffers of %d process(es), this run has %d; kept them on rank 0",
                        len(ranks), trainer.world_size)
            ranks = [_merge(ranks)] + [_empty()] * (trainer.world_size - 1)
        return ranks[trainer.global_rank]

    def _finish_skipped_epoch(self, trainer: Trainer, pl_module: LightningModule, epoch: int,
                              ranks: list[dict] | None) -> None:
        """Write `epoch`'s file, whose end hooks the resume skipped: its buffers (in_training), or a scoring
        with the restored weights, which are that epoch's last (checkpoint mode)."""
        mine = self._rank_buffers(trainer, ranks) if ranks else _empty()
        self._finish_epoch(trainer, pl_module, epoch,
                           (list(mine["uids"]), mine["labels"].long().numpy(), mine["probs"].float().numpy()))

    def _finish_epoch(self, trainer: Trainer, pl_module: LightningModule, epoch: int, recorded) -> None:
        """Score this epoch's weights (checkpoint mode) or gather `recorded` (in_training), forget the buffers,
        and write `epoch`'s file on rank 0."""
        if self.mode == "checkpoint":
            collected = self._score_checkpoint(trainer, pl_module) if trainer.is_global_zero else None
        else:
            collected = self._gather(recorded, trainer)
        self._reset()
        if trainer.is_global_zero and collected is not None:
            self._write_epoch(epoch, *collected)

    # ------------------------------------------------------------------ hooks
    def on_fit_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Refuse to mix modes in one folder (a resumed run must record the same way)."""
        recorded = read_meta(self.out_dir).get("mode")
        if recorded is not None and recorded != self.mode:
            raise ValueError(f"{self.out_dir} holds dynamics recorded in mode {recorded!r}; "
                             f"this run uses {self.mode!r}; use another out_dir")

    def on_train_epoch_start(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Start each epoch with empty buffers."""
        self._epoch = trainer.current_epoch
        self._reset()

    def on_train_batch_end(self, trainer: Trainer, pl_module: LightningModule, outputs,
                           batch, batch_idx: int) -> None:
        """In ``in_training`` mode keep this batch's probabilities (still on device)."""
        if self.mode != "in_training" or trainer.sanity_checking:
            return
        if not isinstance(outputs, Mapping) or "probs" not in outputs:
            raise ValueError("in_training mode needs training_step to return a dict with "
                             "'loss' and 'probs' (B x 3 softmax, detached)")
        probs, uids, labels = outputs["probs"], batch["uid"], batch["labels"]
        _check_batch(probs, uids, labels)
        self._probs.append(probs.detach())
        self._labels.append(labels.detach())
        self._uids.extend(str(u) for u in uids)

    def on_train_epoch_end(self, trainer: Trainer, pl_module: LightningModule) -> None:
        """Collect (or score) this epoch and write its file on rank 0."""
        if trainer.sanity_checking:
            return
        self._finish_epoch(trainer, pl_module, trainer.current_epoch, self._collect_in_training())
        self._epoch = trainer.current_epoch + 1   # what a checkpoint from here on holds: the next epoch's (none)

    # ------------------------------------------------------------- collection
    def _collect_in_training(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """One device-to-host transfer of everything buffered this epoch."""
        if not self._probs:
            return [], np.zeros(0, np.int64), np.zeros((0, len(LABELS)), np.float32)
        probs = torch.cat(self._probs).float().cpu().numpy()
        labels = torch.cat(self._labels).long().cpu().numpy()
        return list(self._uids), labels, probs

    def _gather(self, local, trainer: Trainer):
        """Under multi-process training, collect every rank's examples on rank 0."""
        dist = torch.distributed
        if trainer.world_size <= 1 or not (dist.is_available() and dist.is_initialized()):
            return local
        parts = [None] * trainer.world_size if trainer.is_global_zero else None
        dist.gather_object(local, parts, dst=0)
        if not trainer.is_global_zero:
            return None
        uids = [u for part in parts for u in part[0]]
        return uids, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])

    def _score_checkpoint(self, trainer: Trainer, pl_module: LightningModule):
        """Score the dynamics dataloader with this epoch's weights, eval mode, no grad."""
        loader = _dynamics_loader(trainer)
        if not hasattr(pl_module, "predict_probs"):
            raise ValueError("checkpoint mode needs the LightningModule to define predict_probs(batch)")
        modes = {module: module.training for module in pl_module.modules()}
        pl_module.eval()
        uids, labels, probs = [], [], []
        # same autocast as training (e.g. bf16-mixed), so scores match the trained numerics
        plugin = getattr(trainer, "precision_plugin", None)
        forward = getattr(plugin, "forward_context", contextlib.nullcontext)
        try:
            with torch.inference_mode(), forward():
                for batch_idx, batch in enumerate(loader):
                    batch = pl_module.transfer_batch_to_device(batch, pl_module.device, 0)
                    out = pl_module.predict_probs(batch)
                    _check_batch(out, batch["uid"], batch["labels"])
                    probs.append(out.detach())
                    labels.append(batch["labels"].detach())
                    uids.extend(str(u) for u in batch["uid"])
        finally:
            for module, was_training in modes.items():
                module.train(was_training)
        if not probs:
            return [], np.zeros(0, np.int64), np.zeros((0, len(LABELS)), np.float32)
        return uids, torch.cat(labels).long().cpu().numpy(), torch.cat(probs).float().cpu().numpy()

    # ----------------------------------------------------------------- output
    def _write_epoch(self, epoch: int, uids: list[str], gold: np.ndarray, probs: np.ndarray) -> None:
        """Write one epoch file unless it already exists; keep meta.json in step."""
        path = epoch_path(self.out_dir, epoch)
        frame = epoch_frame(uids, gold, probs)
        if len(frame) < len(uids):
            log.info("%s: %d repeated uid(s) this epoch; kept the last", path.name, len(uids) - len(frame))
        reference = self._reference_count()
        if reference is not None and len(frame) < reference:
            log.warning("%s: incomplete epoch, %d of %d examples recorded", path, len(frame), reference)
        if not write_new_file(path, frame_to_parquet_bytes(frame)):
            log.warning("%s already exists (resumed run?); kept the existing file, not replaced", path)
        update_meta(self.out_dir, self.mode, epoch, len(frame))

    def _reference_count(self) -> int | None:
        """Number of examples of the first epoch recorded in this folder, if any."""
        counts = read_meta(self.out_dir).get("num_examples", {})
        if not counts:
            return None
        return int(counts[min(counts, key=int)])


def _empty() -> dict:
    return {"uids": [], "labels": torch.zeros(0, dtype=torch.int64), "probs": torch.zeros((0, len(LABELS)))}


def _merge(ranks: list[dict]) -> dict:
    """Every process's buffers as one (a resume on a different number of processes)."""
    return {"uids": [u for r in ranks for u in r["uids"]], "labels": torch.cat([r["labels"] for r in ranks]),
            "probs": torch.cat([r["probs"] for r in ranks])}


def _dynamics_loader(trainer: Trainer):
    """The datamodule's unshuffled scoring loader, or a ValueError explaining the contract."""
    datamodule = getattr(trainer, "datamodule", None)
    if datamodule is None or not hasattr(datamodule, "dynamics_dataloader"):
        raise ValueError("checkpoint mode needs trainer.datamodule.dynamics_dataloader() "
                         "(unshuffled batches with uid, labels and model inputs)")
    return datamodule.dynamics_dataloader()


def _check_batch(probs, uids, labels) -> None:
    """Shapes agree with the contract: probs (B, 3), B uids, B labels."""
    if not isinstance(probs, torch.Tensor) or probs.ndim != 2 or probs.shape[1] != len(LABELS):
        shape = tuple(probs.shape) if isinstance(probs, torch.Tensor) else type(probs).__name__
        raise ValueError(f"probs must be a (B, {len(LABELS)}) tensor; got {shape}")
    if len(uids) != probs.shape[0] or len(labels) != probs.shape[0]:
        raise ValueError(f"batch has {probs.shape[0]} probs, {len(uids)} uids, {len(labels)} labels")
