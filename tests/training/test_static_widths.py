"""`data.static_widths`: every training batch padded to one of a few widths chosen from the training set,
the same examples in the same order as the dynamic-width plan, and the same training dynamics."""

from __future__ import annotations

from functools import partial

import lightning as L
import pandas as pd
import pytest
import torch

from nliforge.data.datamodule import NLIDataModule
from nliforge.errors import NLIDataError
from nliforge.models.backbone import build_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.data.widths import static_widths
from nliforge.world import WorldConfig, generate_split


@pytest.fixture(scope="module")
def records():
    return generate_split(WorldConfig(n_train=200, seed=3), "train")


@pytest.fixture(scope="module")
def tiny(records):
    texts = [t for r in records for t in (r.premise, r.hypothesis)]
    # dropout off: a mask is drawn over the padded tensor, so another width draws other masks (see below)
    return build_backbone({"kind": "tiny", "hidden_size": 32, "num_layers": 1, "num_heads": 2,
                           "intermediate_size": 64, "vocab_size": 400, "dropout": 0.0}, texts)


def test_widths_minimise_padding_worked_by_hand():
    lengths = [3, 7, 8, 16, 16, 33]   # rounded up to 8: 8 x3, 16 x2, 40 x1
    # two widths, the largest 40: {8} + {16, 40} pads to 3*8 + 3*40 = 144 tokens, {8, 16} + {40} to
    # 5*16 + 40 = 120, so [16, 40]
    assert static_widths(lengths, 2) == [16, 40]
    assert static_widths(lengths, 1) == [40]                 # one width: the longest, rounded up
    assert static_widths(lengths, 3) == [8, 16, 40]
    assert static_widths(lengths, 8) == [8, 16, 40]          # never more widths than distinct lengths
    # weights count rows: 10 rows at 8 make {8} + {16, 40} (80 + 3*40 = 200) beat {8, 16} + {40} (12*16 + 40 = 232)
    assert static_widths([8, 16, 33], 2, weights=[10, 2, 1]) == [8, 40]
    assert static_widths([5, 30], 2, multiple=32) == [32]     # one distinct rounded width
    assert static_widths([9, 30], 2, multiple=1) == [9, 30]


@pytest.mark.parametrize("n", [0, 9, -1])
def test_a_width_count_out_of_range_is_refused_naming_the_key(n):
    with pytest.raises(NLIDataError, match=r"data\.static_widths"):
        static_widths([10, 20], n)


def test_static_widths_and_explicit_buckets_are_refused_together(records, tiny):
    with pytest.raises(NLIDataError, match=r"data\.static_widths=2.*data\.pad_buckets"):
        NLIDataModule(records, tiny[1], batch_size=16, static_widths=2, pad_buckets=[32, 64])


def batches(dm: NLIDataModule, epoch: int) -> list[dict]:
    loader = dm.train_dataloader()
    loader.batch_sampler.set_epoch(epoch)
    return list(loader)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_same_examples_same_order_at_a_few_widths(records, tiny, n):
    dynamic = NLIDataModule(records, tiny[1], batch_size=16, seed=5, pad_to_multiple_of=8)
    static = NLIDataModule(records, tiny[1], batch_size=16, seed=5, pad_to_multiple_of=8, static_widths=n)
    assert len(static.pad_buckets) <= n and all(w % 8 == 0 for w in static.pad_buckets)
    assert max(static.pad_buckets) >= max(static.train_set.lengths())   # every batch fits a width
    for epoch in (0, 1):
        a, b = batches(dynamic, epoch), batches(static, epoch)
        assert [x["uid"] for x in a] == [x["uid"] for x in b]
        for x, y in zip(a, b):
            assert y["input_ids"].shape[1] in static.pad_buckets
            assert y["input_ids"].shape[1] >= x["input_ids"].shape[1]
            w = x["input_ids"].shape[1]   # the extra columns are padding, the rest unchanged
            assert torch.equal(y["input_ids"][:, :w], x["input_ids"])
            assert torch.equal(y["attention_mask"][:, :w], x["attention_mask"])
            assert int(y["attention_mask"][:, w:].sum()) == 0
            assert torch.equal(x["labels"], y["labels"])
    assert len({x["input_ids"].shape[1] for e in (0, 1) for x in batches(static, e)}) <= n


def fit_dynamics(records, tiny, tmp, **data) -> list[pd.DataFrame]:
    from nliforge.cartography import TrainingDynamicsCallback

    model, tokenizer, _ = tiny
    torch.manual_seed(0)
    fresh = type(model)(model.config)
    fresh.load_state_dict(model.state_dict())
    module = NLIClassifier(fresh, optimizer=partial(torch.optim.AdamW, lr=1e-3), warmup_ratio=0.0)
    dm = NLIDataModule(records, tokenizer, batch_size=16, seed=1, **data)
    trainer = L.Trainer(accelerator="cpu", max_epochs=2, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                        callbacks=[TrainingDynamicsCallback(tmp, mode="in_training")], deterministic=True)
    trainer.fit(module, dm)
    return [pd.read_parquet(tmp / f"epoch_{e:03d}.parquet") for e in (0, 1)]


def test_training_dynamics_match_the_dynamic_width_run(records, tiny, tmp_path):
    """Same uids in the same order, same gold labels, probabilities equal up to float noise: the extra
    padding is masked out of attention and the pooled first token, so only the summation order of a
    few reductions changes (measured here: 3.0e-8 after 2 epochs of updates; the bound allows 1e-6).
    With dropout on, a mask is drawn over the padded tensor, so the masks differ between widths and
    the runs are alike in distribution only; this test turns dropout off."""
    a = fit_dynamics(records, tiny, tmp_path / "dynamic", pad_to_multiple_of=8)
    b = fit_dynamics(records, tiny, tmp_path / "static", pad_to_multiple_of=8, static_widths=2)
    for x, y in zip(a, b):
        assert list(x.columns) == list(y.columns) and list(x["uid"]) == list(y["uid"])
        assert (x.drop(columns=[c for c in x.columns if c.startswith("p_")])
                .equals(y.drop(columns=[c for c in y.columns if c.startswith("p_")])))
        probs = [c for c in x.columns if c.startswith("p_")]
        diff = (x[probs] - y[probs]).abs().to_numpy().max()
        assert probs and diff <= 1e-6
    assert (a[1][probs] - a[0][probs]).abs().to_numpy().max() > 1e-3   # training moved them: not a trivial match
