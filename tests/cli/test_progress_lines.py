"""Progress to a file: a line every N seconds with count, rate and ETA instead of a bar drawn
once at the end. Time comes from a fake clock, so every number is known in advance."""

from __future__ import annotations

import io
import logging
import os
import re
import time

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

from nliforge.utils.progress import LineProgress, interval, is_terminal, progress, set_interval
from nliforge.utils.progress_callback import LineProgressBar, progress_callback_for


class FakeClock:
    def __init__(self, step: float = 0.0):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_lines_every_interval_with_rate_and_eta(caplog):
    clock = FakeClock()
    with caplog.at_level(logging.INFO, logger="nliforge.progress"):
        bar = LineProgress(range(100), desc="generate[x]", unit="req", every=10, clock=clock)
        for _ in bar:
            clock.t += 0.5                                   # 2 requests per second
    lines = [r.getMessage() for r in caplog.records]
    # a line at the start, then one per 10 s (every 20 requests), the last at 100/100 (not repeated by close)
    assert len(lines) == 6, lines
    assert lines[0].startswith("generate[x]: 0/100 (0%)")
    assert lines[1] == "generate[x]: 20/100 (20%),  2.00req/s, elapsed 00:10, ETA 00:40"
    assert lines[-1] == "generate[x]: 100/100 (100%),  2.00req/s, elapsed 00:50, ETA 00:00"


def test_progress_picks_lines_for_a_file_and_a_bar_for_a_terminal():
    assert isinstance(progress(range(3), file=io.StringIO()), LineProgress)
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as tty:
        bar = progress(range(3), file=tty)
        assert is_terminal(tty) and not isinstance(bar, LineProgress)
        bar.close()
    os.close(leader)
    assert not isinstance(progress(range(3), disable=True, file=io.StringIO()), LineProgress)


def test_interval_setting_is_checked():
    assert set_interval(5) == 5.0 and interval() == 5.0
    assert set_interval(None) == 30.0
    for bad in (0, -1, "10", True):
        try:
            set_interval(bad)
        except Exception as err:   # noqa: BLE001
            assert str(err).startswith("progress_every_s=") and "positive number" in str(err)
        else:
            raise AssertionError(bad)


class Linear(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        loss = self.layer(batch[0]).pow(2).mean()
        self.log("loss", loss, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def test_lightning_progress_lines_per_interval_and_at_epoch_end(caplog, tmp_path):
    clock = FakeClock(step=1.0)                                 # each look at the clock is one second later
    bar = LineProgressBar(every=3, clock=clock)
    data = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=1)
    trainer = L.Trainer(max_epochs=2, callbacks=[bar], logger=False, enable_checkpointing=False,
                        enable_model_summary=False, default_root_dir=tmp_path, accelerator="cpu")
    with caplog.at_level(logging.INFO, logger="nliforge.progress"):
        trainer.fit(Linear(), data)
    lines = [r.getMessage() for r in caplog.records if r.name == "nliforge.progress"]
    # epoch start reads t, batch k reads t + k: lines at batches 3 and 6 (3 s apart) and at 8 (the end)
    assert len(lines) == 6, lines
    assert lines[0].startswith("epoch 1/2 step 3/8 (38%), 1.00 it/s, elapsed 0:00:03, ETA 0:00:05, loss ")
    assert lines[2].startswith("epoch 1/2 step 8/8 (100%), 1.00 it/s, elapsed 0:00:08, ETA 0:00:00")
    assert lines[3].startswith("epoch 2/2 step 3/8")


def test_the_callback_is_added_only_when_output_is_not_a_terminal():
    from omegaconf import OmegaConf

    on, off = OmegaConf.create({"enable_progress_bar": True}), OmegaConf.create({"enable_progress_bar": False})
    assert progress_callback_for(off, 7) is None and interval() == 7.0
    got = progress_callback_for(on, None)              # pytest captures stderr: not a terminal
    assert isinstance(got, LineProgressBar) and got.every == 30.0


class UniformModule(torch.nn.Module):
    """A module with predict_probs (as NLIClassifier) that gives p = 1/3 for every pair."""

    device = torch.device("cpu")

    def predict_probs(self, batch):
        time.sleep(0.01)
        return torch.full((len(batch["x"]), 3), 1 / 3)


class ListData:
    """The two methods predict_probs uses of an NLIDataModule: encode, then batches of 100."""

    input = "pair"

    def encode(self, records):
        return records

    def loader(self, records):
        return [{"x": torch.zeros(len(records[i:i + 100]))} for i in range(0, len(records), 100)]


def test_an_eval_set_shows_pairs_per_second_and_eta(caplog):
    """A large eval set shows progress in pairs/s with an ETA (even when it has fewer than 20 batches, as
    with a large data.eval_batch_size), and every set's result line gives its time and rate."""
    from nliforge.data import Record
    from nliforge.evaluation.suite import EvalSet, evaluate_suite

    big = EvalSet("big", {"num_classes": 3}, [Record(f"b{i}", "p", "h", "entailment") for i in range(1200)])
    small = EvalSet("small", {"num_classes": 3}, [Record(f"s{i}", "p", "h", "neutral") for i in range(50)])
    set_interval(0.001)                       # progress_every_s: a line after every batch
    try:
        with caplog.at_level(logging.INFO):
            results = evaluate_suite(UniformModule(), ListData(), [big, small])
    finally:
        set_interval(None)
    assert results["big"]["n"] == 1200 and results["small"]["n"] == 50
    lines = [r.getMessage() for r in caplog.records if r.name == "nliforge.progress"]
    assert lines[0].startswith("eval big: 0/1200 (0%)")
    assert lines[1].startswith("eval big: 100/1200 (8%)") and re.search(r"pair/s, elapsed \S+, ETA \d", lines[1])
    assert not any(line.startswith("eval small") for line in lines)    # 50 pairs: no progress lines
    done = [r.getMessage() for r in caplog.records if r.name == "nliforge.evaluation.suite"]
    assert len(done) == 2 and all(" s, " in line and line.endswith("pairs/s)") for line in done)
