"""Tests of nliforge.cartography: metrics by hand, selection, plot, and the Lightning recorder."""

from __future__ import annotations

import logging
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from lightning.pytorch import LightningDataModule, LightningModule, Trainer
from lightning.pytorch.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader

from nliforge.cartography import (
    NEVER_LEARNED, PROB_COLUMNS, Dynamics, TrainingDynamicsCallback, compute_metrics, confidence, correctness,
    estimated_max_variability, forgetfulness, load_dynamics, plot_data_map, select_by_quantile,
    select_region, summarize, threshold_closeness, variability,
)
from nliforge.cartography.store import epoch_frame, epoch_path, frame_to_parquet_bytes

# 3 epochs x 4 examples x 3 labels (e, n, c). Gold: a=0, b=1, c=2, d=2.
PROBS = np.array([
    # a                 b                 c                 d
    [[.2, .5, .3], [.1, .8, .1], [.5, .3, .2], [.1, .1, .8]],   # epoch 0
    [[.6, .3, .1], [.7, .2, .1], [.6, .2, .2], [.05, .05, .9]],  # epoch 1
    [[.4, .35, .25], [.1, .6, .3], [.7, .1, .2], [0., 0., 1.]],  # epoch 2
])
GOLD = np.array([0, 1, 2, 2])


# ----------------------------------------------------------------------------- metrics
def test_metrics_by_hand():
    # p(gold): a .2 .6 .4 | b .8 .2 .6 | c .2 .2 .2 | d .8 .9 1.0
    # confidence: a 1.2/3=.4, b 1.6/3=.5333.., c .2, d 2.7/3=.9
    np.testing.assert_allclose(confidence(PROBS, GOLD), [0.4, 1.6 / 3, 0.2, 0.9])
    # variability (ddof=0): a devs -.2 .2 0 -> sqrt(.08/3) = .163299
    #   b devs .26667 -.33333 .06667 -> sq .071111 .111111 .004444, sum .186667 -> sqrt(.186667/3) = .249444
    #   c constant -> 0;  d devs -.1 0 .1 -> sqrt(.02/3) = .081650
    expected_var = [math.sqrt(.08 / 3), math.sqrt((.56 / 3) / 3), 0.0, math.sqrt(.02 / 3)]
    np.testing.assert_allclose(variability(PROBS, GOLD), expected_var, atol=1e-12)
    # with ddof=1 a would be sqrt(.08/2) = .2: the population std is really what we compute
    assert not np.isclose(variability(PROBS, GOLD)[0], 0.2)
    assert np.isclose(np.std([.2, .6, .4], ddof=1), 0.2)
    # argmax per epoch: a 1,0,0 (gold 0 -> wrong, right, right) = 2
    #   b 1,0,1 (gold 1 -> right, wrong, right) = 2;  c 0,0,0 (gold 2) = 0;  d 2,2,2 = 3
    corr = correctness(PROBS, GOLD)
    assert corr.dtype.kind == "i" and corr.tolist() == [2, 2, 0, 3]
    # forgetfulness: only b goes right -> wrong (epoch 0 -> 1); c is never right: 1000, as cartography
    assert forgetfulness(PROBS, GOLD).tolist() == [0, 1, 1000, 0]
    # c(1-c): .4*.6=.24, .5333*.4667=.248889, .2*.8=.16, .9*.1=.09
    np.testing.assert_allclose(threshold_closeness(PROBS, GOLD),
                               [.24, (1.6 / 3) * (1.4 / 3), .16, .09])


def test_estimated_max_variability_by_hand():
    # a: label e .163299 (the gold std above); n .5 .3 .35 -> mean .38333, sum sq .021667 -> .084984
    # b: label e .1 .7 .1 -> mean .3, devs -.2 .4 -.2 -> sqrt(.24/3) = .282843 > gold's .249444
    #    so the max is on a NON-gold label
    # c: e .5 .6 .7 -> sqrt(.02/3) = .081650 (n the same; c constant 0)
    # d: gold c .8 .9 1 -> .081650; e, n .1 .05 0 -> sqrt(.005/3) = .040825
    emv = estimated_max_variability(PROBS)
    np.testing.assert_allclose(emv, [math.sqrt(.08 / 3), math.sqrt(.24 / 3),
                                     math.sqrt(.02 / 3), math.sqrt(.02 / 3)], atol=1e-12)
    assert emv[1] > variability(PROBS, GOLD)[1]


def test_forgetfulness_counts_every_transition():
    # gold 0; correct, wrong, correct, wrong over 4 epochs -> two forgetting events
    probs = np.array([[[.9, .1, 0]], [[.1, .9, 0]], [[.8, .2, 0]], [[.3, .7, 0]]])
    assert forgetfulness(probs, np.array([0])).tolist() == [2]


def test_forgetfulness_of_an_example_never_learned_follows_cartography():
    # allenai/cartography's compute_forgetfulness: `if not any(correctness_trend): return 1000`
    never = np.array([[[.1, .9, 0]], [[.2, .8, 0]], [[.4, .6, 0]]])   # gold 0, wrong at every epoch
    once = np.array([[[.1, .9, 0]], [[.2, .8, 0]], [[.6, .4, 0]]])    # learned at the last epoch
    assert forgetfulness(never, np.array([0])).tolist() == [NEVER_LEARNED] == [1000]
    assert forgetfulness(once, np.array([0])).tolist() == [0]
    assert forgetfulness(never, np.array([0]), never_learned=0).tolist() == [0]   # the plain count
    dyn = Dynamics(uids=["n", "o"], gold=np.array([0, 0]), probs=np.concatenate([never, once], axis=1),
                   epochs=[0, 1, 2])
    assert compute_metrics(dyn)["forgetfulness"].tolist() == [1000, 0]
    assert compute_metrics(dyn, never_learned=0)["forgetfulness"].tolist() == [0, 0]


def test_compute_metrics_unlabeled_rows():
    probs = np.concatenate([PROBS, PROBS[:, 1:2]], axis=1)  # 5th example = b's probs, no gold
    dyn = Dynamics(uids=["a", "b", "c", "d", "u"], gold=np.array([0, 1, 2, 2, -1]),
                   probs=probs, epochs=[0, 1, 2])
    m = compute_metrics(dyn)
    assert m.index.name == "uid" and list(m.index) == ["a", "b", "c", "d", "u"]
    assert m.loc["b", "correctness"] == 2 and m.loc["b", "forgetfulness"] == 1
    assert m.loc["b", "correctness_frac"] == pytest.approx(2 / 3)
    assert np.isnan(m.loc["u", "confidence"]) and np.isnan(m.loc["u", "variability"])
    assert pd.isna(m.loc["u", "correctness"]) and m.loc["u", "gold"] == -1
    assert m.loc["u", "max_variability"] == pytest.approx(math.sqrt(.24 / 3))
    with pytest.raises(ValueError, match="gold"):
        confidence(probs, dyn.gold)


# ----------------------------------------------------------------------------- selection
def _frame(n, variability, confidence, gold=None):
    uids = [f"u{i:02d}" for i in range(n)]
    gold = np.zeros(n, int) if gold is None else gold
    return pd.DataFrame({"variability": variability, "confidence": confidence, "gold": gold},
                        index=pd.Index(uids, name="uid"))


def test_select_region_exact_k_and_members():
    df = _frame(10, [.1, .5, .3, .5, .2, .0, .4, .05, .15, .25],
                [.9, .2, .5, .6, .95, .95, .1, .3, .7, .8])
    assert select_region(df, "ambiguous", 0.33) == ["u01", "u03", "u06"]  # floor(3.3) = 3
    assert select_region(df, "hard", 0.2) == ["u06", "u01"]
    # easy: confidence .95 tie between u04 (var .2) and u05 (var 0) -> lower variability first
    assert select_region(df, "easy", 0.3) == ["u05", "u04", "u00"]
    assert select_region(df, "easy", 0.0) == []
    assert len(select_region(df, "easy", 1.0)) == 10
    eight = _frame(8, np.linspace(0, .4, 8), np.linspace(.1, .9, 8))
    assert len(select_region(eight, "ambiguous", 0.25)) == 2
    big = _frame(100, np.arange(100) / 100, np.arange(100) / 100)
    assert 0.29 * 100 < 29 and len(select_region(big, "hard", 0.29)) == 29  # float error guarded


def test_select_region_ties_deterministic():
    df = _frame(6, [.3, .3, .3, .3, .1, .1], [.5] * 6)
    first = select_region(df, "ambiguous", 0.5)
    shuffled = df.sample(frac=1.0, random_state=3)
    assert first == select_region(shuffled, "ambiguous", 0.5) == ["u00", "u01", "u02"]
    as_column = df.reset_index()
    assert select_region(as_column, "ambiguous", 0.5) == first


def test_select_validation():
    df = _frame(4, [.1] * 4, [.1] * 4)
    with pytest.raises(ValueError, match="ambiguous, hard, easy"):
        select_region(df, "middle", 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        select_region(df, "easy", 1.5)
    with pytest.raises(ValueError, match="valid: variability"):
        select_by_quantile(df, "nope", 0.5)


def test_select_by_quantile_strict_per_label():
    # label 0: 1..5, 0.75-quantile (linear) = 4 -> strictly above: only 5 (not 4)
    # label 1: all 10 -> quantile 10 -> nothing strictly above
    # label -1 (unlabeled) is never selected
    values = [1, 2, 3, 4, 5, 10, 10, 10, 10, 99]
    gold = [0, 0, 0, 0, 0, 1, 1, 1, 1, -1]
    df = _frame(10, values, [.5] * 10, gold=gold)
    assert select_by_quantile(df, "variability", 0.75) == ["u04"]
    # pooled: quantile of all ten at .75 = 10 -> only 99
    assert select_by_quantile(df, "variability", 0.75, per_label=False) == ["u09"]


# ----------------------------------------------------------------------------- plot
def _random_metrics(n=300, epochs=4, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet([.7, .7, .7], size=(epochs, n))
    uids = [f"x{i:04d}" for i in range(n)]
    return compute_metrics(Dynamics(uids, rng.integers(0, 3, n), probs, list(range(epochs))))


def test_plot_writes_png(tmp_path):
    path = plot_data_map(_random_metrics(), tmp_path / "maps" / "map.png", title="toy")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    small = plot_data_map(_random_metrics(), tmp_path / "small.png", max_points=50)
    assert small.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ----------------------------------------------------------------------------- recorder
VOCAB, LENGTH, N_EXAMPLES = 12, 6, 23


def _toy_examples():
    """Label = which of tokens 1/2/3 is most frequent; the last two examples are unlabeled."""
    gen = torch.Generator().manual_seed(0)
    items = []
    for i in range(N_EXAMPLES):
        ids = torch.randint(1, VOCAB, (LENGTH,), generator=gen)
        mask = torch.ones(LENGTH, dtype=torch.long)
        mask[LENGTH - i % 3:] = 0
        counts = torch.stack([(ids[mask.bool()] == t).sum() for t in (1, 2, 3)])
        label = -1 if i >= N_EXAMPLES - 2 else int(counts.argmax())
        items.append({"input_ids": ids * mask, "attention_mask": mask,
                      "labels": torch.tensor(label), "uid": f"ex{i:02d}"})
    return items


class ToyData(LightningDataModule):
    def __init__(self):
        super().__init__()
        self.items = _toy_examples()

    def train_dataloader(self):
        return DataLoader(self.items, batch_size=5, shuffle=True,
                          generator=torch.Generator().manual_seed(1))

    def dynamics_dataloader(self):
        return DataLoader(self.items, batch_size=7, shuffle=False)


class ToyNLI(LightningModule):
    """Mean of token embeddings -> dropout -> linear; dropout makes train/eval mode differ."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(16, 3)

    def forward(self, input_ids, attention_mask):
        mask = attention_mask.unsqueeze(-1).float()
        pooled = (self.emb(input_ids) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.out(self.drop(pooled))

    def training_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        labels = batch["labels"]
        loss = F.cross_entropy(logits, labels.clamp(min=0), reduction="none")
        loss = (loss * (labels >= 0)).sum() / (labels >= 0).sum().clamp(min=1)
        return {"loss": loss, "probs": logits.softmax(-1).detach()}

    def predict_probs(self, batch):
        return self(batch["input_ids"], batch["attention_mask"]).softmax(-1)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.5)


def _fit(out_dir, mode, max_epochs=3, callbacks=(), ckpt_path=None, model=None):
    torch.manual_seed(0)
    model = model or ToyNLI()
    checkpointing = bool(callbacks)
    trainer = Trainer(max_epochs=max_epochs, accelerator="cpu", logger=False,
                      enable_checkpointing=checkpointing, enable_progress_bar=False,
                      enable_model_summary=False,
                      callbacks=[TrainingDynamicsCallback(out_dir, mode=mode), *callbacks])
    trainer.fit(model, datamodule=ToyData(), ckpt_path=ckpt_path)
    return model


@pytest.mark.parametrize("mode", ["in_training", "checkpoint"])
def test_callback_writes_every_epoch(tmp_path, mode):
    model = _fit(tmp_path / "dyn", mode)
    files = sorted(p.name for p in (tmp_path / "dyn").glob("epoch_*.parquet"))
    assert files == ["epoch_000.parquet", "epoch_001.parquet", "epoch_002.parquet"]
    dyn = load_dynamics(tmp_path / "dyn")
    assert dyn.epochs == [0, 1, 2] and dyn.mode == mode and dyn.probs.shape == (3, N_EXAMPLES, 3)
    assert dyn.uids == sorted(f"ex{i:02d}" for i in range(N_EXAMPLES))
    assert dyn.gold[-2:].tolist() == [-1, -1]
    np.testing.assert_allclose(dyn.probs.sum(-1), 1.0, atol=1e-5)
    frame = pd.read_parquet(epoch_path(tmp_path / "dyn", 0))
    assert list(frame.columns) == ["uid", "gold", *PROB_COLUMNS]
    if mode == "checkpoint":  # last epoch == eval-mode scoring of the final weights
        model.eval()
        with torch.inference_mode():
            loader = ToyData().dynamics_dataloader()
            manual = torch.cat([model.predict_probs(b) for b in loader]).numpy()
        np.testing.assert_allclose(dyn.probs[-1], manual, rtol=0, atol=1e-7)


def test_summarize(tmp_path):
    _fit(tmp_path / "dyn", "in_training")
    metrics = summarize(tmp_path / "dyn", plot_path=tmp_path / "map.png")
    assert (tmp_path / "dyn" / "metrics.parquet").exists()
    assert (tmp_path / "map.png").read_bytes()[:4] == b"\x89PNG"
    assert pd.read_parquet(tmp_path / "dyn" / "metrics.parquet").shape == metrics.shape
    assert metrics["correctness"].dropna().between(0, 3).all()


def test_existing_epoch_file_not_overwritten(tmp_path, caplog):
    out = tmp_path / "dyn"
    out.mkdir()
    known = frame_to_parquet_bytes(epoch_frame(["zzz"], np.array([1]), np.array([[.2, .3, .5]])))
    epoch_path(out, 1).write_bytes(known)
    with caplog.at_level(logging.WARNING, logger="nliforge.cartography"):
        _fit(out, "in_training")
    assert epoch_path(out, 1).read_bytes() == known
    assert any("already exists" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match="epoch_001.parquet"):
        load_dynamics(out)
    assert load_dynamics(out, allow_missing=True).uids == []  # "zzz" only in epoch 1


def test_real_resume_keeps_earlier_epochs(tmp_path, caplog):
    out, ckpt_dir = tmp_path / "dyn", tmp_path / "ckpt"
    ckpt = ModelCheckpoint(dirpath=ckpt_dir, save_last=True, every_n_epochs=1)
    _fit(out, "checkpoint", max_epochs=2, callbacks=[ckpt])
    before = {e: epoch_path(out, e).read_bytes() for e in (0, 1)}
    with caplog.at_level(logging.WARNING, logger="nliforge.cartography"):
        _fit(out, "checkpoint", max_epochs=4, ckpt_path=str(ckpt_dir / "last.ckpt"),
             callbacks=[ModelCheckpoint(dirpath=ckpt_dir, save_last=True, every_n_epochs=1)])
    assert {e: epoch_path(out, e).read_bytes() for e in (0, 1)} == before
    assert epoch_path(out, 2).exists() and epoch_path(out, 3).exists()
    assert not any("already exists" in r.getMessage() for r in caplog.records)
    assert load_dynamics(out).epochs == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="'checkpoint'"):  # cannot mix modes in one folder
        _fit(out, "in_training", max_epochs=1)


def _fake_trainer(epoch, datamodule=None):
    return SimpleNamespace(is_global_zero=True, sanity_checking=False, current_epoch=epoch,
                           world_size=1, datamodule=datamodule)


def test_in_training_repeats_and_incomplete_epoch(tmp_path, caplog):
    cb = TrainingDynamicsCallback(tmp_path, mode="in_training")
    p = torch.tensor([[.2, .3, .5], [.6, .2, .2]])
    for epoch, batches in enumerate([[(["a", "b"], p), (["a", "c"], p.flip(0))], [(["b"], p[:1])]]):
        trainer = _fake_trainer(epoch)
        cb.on_train_epoch_start(trainer, None)
        for uids, probs in batches:
            batch = {"uid": uids, "labels": torch.zeros(len(uids), dtype=torch.long)}
            cb.on_train_batch_end(trainer, None, {"loss": 0, "probs": probs}, batch, 0)
        with caplog.at_level(logging.WARNING, logger="nliforge.cartography"):
            cb.on_train_epoch_end(trainer, None)
    first = pd.read_parquet(epoch_path(tmp_path, 0)).set_index("uid")
    assert list(first.index) == ["a", "b", "c"]
    assert first.loc["a", "p_entailment"] == pytest.approx(.6)  # the later "a" wins
    assert pd.read_parquet(epoch_path(tmp_path, 1)).shape[0] == 1
    assert any("incomplete epoch" in r.getMessage() for r in caplog.records)


def test_checkpoint_scoring_restores_modes():
    model = ToyNLI()
    model.train()
    model.drop.eval()  # a deliberately frozen submodule must stay in eval
    cb = TrainingDynamicsCallback("unused", mode="checkpoint")
    uids, gold, probs = cb._score_checkpoint(_fake_trainer(0, ToyData()), model)
    assert model.training and model.out.training and not model.drop.training
    assert len(uids) == N_EXAMPLES and probs.shape == (N_EXAMPLES, 3)


def test_mode_validation():
    with pytest.raises(ValueError, match="in_training, checkpoint"):
        TrainingDynamicsCallback("x", mode="offline")
