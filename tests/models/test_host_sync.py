"""No host-device synchronisation per training step.

On a GPU, turning a device tensor into a Python value (`.item()`, `.tolist()`, `bool(t)`, ...)
makes the host wait for the GPU to finish everything queued; once per step, the host can no
longer run ahead and launch the next step while the GPU works. Lightning converts every value
logged with `prog_bar=True` after every step, bar drawn or not (Lightning issue 21232), so the
training modules put the loss on the bar only when a bar is drawn. These tests run on CPU and
count the conversions (the calls that would synchronise on a GPU) over runs of different length:
per-step conversions show up as a count that grows with the number of steps.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import lightning as L
import pytest
import torch

from nliforge.data.datamodule import NLIDataModule
from nliforge.models.backbone import build_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.testing.host_sync import TO_HOST, UPSTREAM, HostValueCounter
from nliforge.world import WorldConfig, generate_split

@pytest.fixture(scope="module")
def records():
    return generate_split(WorldConfig(n_train=256, seed=0), "train")


def _fit_counting(records, steps: int, progress_bar: bool, log_every: int = 1000,
                  dynamics_dir: Path | None = None, names: frozenset[str] = TO_HOST) -> tuple[dict[str, int], L.Trainer]:
    texts = [t for r in records for t in (r.premise, r.hypothesis)]
    model, tokenizer, _ = build_backbone({"kind": "tiny", "hidden_size": 32, "num_layers": 1,
                                          "intermediate_size": 64, "vocab_size": 500}, texts)
    torch.manual_seed(0)
    module = NLIClassifier(model, optimizer=partial(torch.optim.AdamW, lr=1e-3), warmup_ratio=0.0)
    dm = NLIDataModule(records, tokenizer, batch_size=16, seed=0)
    trainer = L.Trainer(accelerator="cpu", max_steps=steps, max_epochs=-1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=progress_bar,
                        enable_model_summary=False, num_sanity_val_steps=0, log_every_n_steps=log_every)
    if dynamics_dir is not None:   # what every nliforge-train run records (callbacks.dynamics)
        from nliforge.cartography import TrainingDynamicsCallback

        trainer.callbacks.append(TrainingDynamicsCallback(dynamics_dir, mode="in_training"))
    counter = HostValueCounter(ignore=UPSTREAM, names=names)

    class Count(L.Callback):  # only the training loop proper, not set-up or tear-down
        def on_train_batch_start(self, *a):
            if trainer.global_step == 2:
                counter.__enter__()

        def on_train_end(self, *a):
            if counter in torch.overrides._get_current_function_mode_stack():
                counter.__exit__(None, None, None)

    trainer.callbacks.append(Count())
    trainer.fit(module, dm)
    return counter.calls, trainer


def test_a_training_step_turns_no_tensor_into_a_host_value(records):
    short, _ = _fit_counting(records, steps=6, progress_bar=False)
    long, trainer = _fit_counting(records, steps=14, progress_bar=False)
    assert trainer.global_step == 14
    assert long == short, f"host values per step: {short} over 4 steps, {long} over 12"
    assert trainer.datamodule.train_dataloader().pin_memory is False   # pinned only for a CUDA device


def test_recording_training_dynamics_adds_no_host_conversion_per_step(records, tmp_path):
    """The dynamics recorder keeps each batch's probabilities and labels on the device and copies
    them to the host once, at the epoch's end (here: when max_steps ends the epoch, inside the
    counted window). Copies to the host (`.cpu()`) count too."""
    names = TO_HOST | {"cpu"}
    plain = {n: _fit_counting(records, n, False, names=names)[0] for n in (6, 14)}
    dyn = {n: _fit_counting(records, n, False, dynamics_dir=tmp_path / f"dyn{n}", names=names)[0] for n in (6, 14)}
    for n in (6, 14):
        assert (tmp_path / f"dyn{n}" / "epoch_000.parquet").exists()   # the recorder ran and wrote
    assert dyn[6] == dyn[14], f"with dynamics: {dyn[6]} over 4 steps, {dyn[14]} over 12"
    added = {k: dyn[14].get(k, 0) - plain[14].get(k, 0) for k in {*dyn[14], *plain[14]}}
    per_step = {k: (dyn[14].get(k, 0) - dyn[6].get(k, 0)) / 8 for k in dyn[14]}
    assert not any(per_step.values()), per_step
    # what the recorder adds is its one copy per epoch (probabilities and labels), nothing else
    assert {k for k, v in added.items() if v} == {"cpu in TrainingDynamicsCallback._collect_in_training",
                                                  "numpy in TrainingDynamicsCallback._collect_in_training"}, added
    assert all(v <= 2 for v in added.values()), added


def test_with_a_progress_bar_the_loss_is_still_shown(records):
    _, trainer = _fit_counting(records, steps=3, progress_bar=True)
    assert "train/loss" in trainer.progress_bar_metrics
    _, quiet = _fit_counting(records, steps=3, progress_bar=False, log_every=3)
    assert "train/loss" not in quiet.progress_bar_metrics
    assert "train/loss" in quiet.callback_metrics   # logged on the logging step, a tensor for callbacks


@pytest.mark.slow
def test_the_train_entry_point_adds_no_per_step_conversion(cfg_train):
    """`train(cfg)` with its callbacks (dynamics recorder, checkpoints, CSV logger): 4 steps and 12
    steps convert the same number of tensors, i.e. none per step."""
    from omegaconf import open_dict

    from nliforge.train import train

    counts = {}
    for batches in (6, 14):
        cfg = cfg_train.copy()
        with open_dict(cfg):
            cfg.paths.output_dir = f"{cfg_train.paths.output_dir}_{batches}"
            cfg.trainer.max_epochs, cfg.trainer.limit_train_batches = 1, batches
            cfg.callbacks.count = {"_target_": "nliforge.testing.host_sync.HostValueCallback",
                                   "path": f"{cfg.paths.output_dir}/host_values.json"}
        train(cfg)
        assert cfg.callbacks.dynamics.enabled
        report = json.loads(Path(cfg.callbacks.count.path).read_text())
        assert report["steps"] == batches - 2
        counts[batches] = report["calls"]
    assert counts[6] == counts[14], f"host values: {counts[6]} over 4 steps, {counts[14]} over 12"
