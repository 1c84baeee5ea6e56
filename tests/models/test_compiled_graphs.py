"""The graph-ready step (`preset=gpu_graphs` without the GPU parts): with `data.static_widths` and
`compile.regional`, `torch.compile` builds one graph per batch shape, shared by every encoder layer; no
graph breaks; no recompiles once each width has been seen; the epoch's short last batch and evaluation
run eagerly (`compile.full_batches_only`); and the on-disk cache (`compile.cache_dir`) is loaded by a
second process of the same shapes. Runs on CPU: `backend="eager"` (dynamo's graphs, guards and counters,
no code generation) for the counts, inductor for the cache (slow: a C++ compiler builds its kernels)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import lightning as L
import pytest
import torch
from torch._dynamo.utils import counters

from nliforge.data.datamodule import NLIDataModule
from nliforge.errors import NLIDataError
from nliforge.models.backbone import build_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.models.graphs import compile_backbone_model, repeated_blocks
from nliforge.world import WorldConfig, generate_split

TINY = {"kind": "tiny", "hidden_size": 32, "num_layers": 2, "num_heads": 2, "intermediate_size": 64,
        "vocab_size": 300, "dropout": 0.0}


@pytest.fixture(scope="module")
def setup():
    records = generate_split(WorldConfig(n_train=70, seed=2), "train")   # 70 = 4 batches of 16 + 6
    texts = [t for r in records for t in (r.premise, r.hypothesis)]
    model, tokenizer, _ = build_backbone(TINY, texts)
    return records, model, tokenizer


def shapes_of(dm: NLIDataModule, epochs: int) -> tuple[set, set]:
    """(width, has padding) of the full training batches, and the widths of the short ones."""
    full, short = set(), set()
    for epoch in range(epochs):
        loader = dm.train_dataloader()
        loader.batch_sampler.set_epoch(epoch)
        for b in loader:
            key = (b["input_ids"].shape[1], not bool(b["attention_mask"].all()))
            (full if len(b["uid"]) == dm.batch_size else short).add(key)
    return full, short


def fit(setup, epochs: int, module=None, dm=None, val: bool = False):
    records, model, tokenizer = setup
    if module is None:
        torch.manual_seed(0)
        fresh = type(model)(model.config)
        fresh.load_state_dict(model.state_dict())
        module = NLIClassifier(fresh, optimizer=partial(torch.optim.AdamW, lr=1e-3), warmup_ratio=0.0,
                               val_names=["dev"] if val else ())
        compile_backbone_model(module.model, {"enabled": True, "dynamic": False, "backend": "eager",
                                              "regional": True})
        module.full_batches_only = True
    dm = dm or NLIDataModule(records, tokenizer, batch_size=16, seed=0, pad_to_multiple_of=8, static_widths=2,
                             val_sets={"dev": records[:20]} if val else None)
    trainer = L.Trainer(accelerator="cpu", max_epochs=epochs, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0)
    trainer.fit(module, dm)
    return module, dm


def test_preset_gpu_graphs_composes_and_its_keys_are_checked(tmp_path):
    from nliforge.utils.schema import ConfigTypeError, check_config

    from conftest import compose_config, resolved

    cfg = compose_config("train", ["preset=gpu_graphs", "model=roberta_large"], tmp_path, tmp_path)
    node = resolved(cfg)
    assert node["data"]["static_widths"] == 4 and node["data"]["pad_to_multiple_of"] == 8
    assert {k: node["compile"][k] for k in ("enabled", "dynamic", "mode", "regional", "full_batches_only")} == {
        "enabled": True, "dynamic": False, "mode": "reduce-overhead", "regional": True, "full_batches_only": True}
    assert node["compile"]["cache_dir"] == f"{tmp_path}/torch_compile"
    assert node["trainer"]["accelerator"] == "gpu" and node["model"]["optimizer"]["fused"] is True
    check_config(cfg)
    for bad in ("data.static_widths=9", "data.static_widths=two", "compile.recompile_limit=0"):
        with pytest.raises(ConfigTypeError, match=bad.split("=")[0].replace(".", r"\.")):
            check_config(compose_config("train", ["preset=gpu_graphs", bad], tmp_path, tmp_path))


def test_full_batches_only_on_a_torch_without_set_stance_is_refused_naming_the_key(monkeypatch):
    from nliforge.models.graphs import check_compile_settings

    monkeypatch.delattr(torch.compiler, "set_stance")
    with pytest.raises(NLIDataError, match=r"compile\.full_batches_only=true needs torch >= 2\.6"):
        check_compile_settings({"enabled": True, "full_batches_only": True})
    check_compile_settings({"enabled": True, "full_batches_only": False})   # nothing else needs it


def test_regional_compile_finds_the_layers_and_refuses_a_model_without_them(setup):
    model = setup[1]
    assert repeated_blocks(model) is model.roberta.encoder.layer
    with pytest.raises(NLIDataError, match=r"compile\.regional=true"):
        compile_backbone_model(torch.nn.Linear(2, 2), {"enabled": True, "regional": True})


def test_one_graph_per_shape_no_breaks_no_recompiles_after_warm_up(setup):
    torch._dynamo.reset()
    counters.clear()
    module, dm = fit(setup, epochs=1, val=True)
    full, short = shapes_of(dm, 1)
    assert {w for w, _ in full} <= set(dm.pad_buckets) and len(dm.pad_buckets) <= 2 and len(full) >= 2
    assert short, "70 examples = 4 batches of 16 and one of 6"
    # one graph per (width, padding mask or none) of the full batches, shared by both layers; the short
    # last batch and the validation batches (other shapes) ran eagerly
    assert counters["stats"]["unique_graphs"] == len(full)
    assert dict(counters["graph_break"]) == {}
    graphs, recompiles = counters["stats"]["unique_graphs"], sum(counters["recompiles"].values())
    fit(setup, epochs=1, module=module, dm=dm)   # the same plan again: every shape seen, nothing compiles
    assert counters["stats"]["unique_graphs"] == graphs
    assert sum(counters["recompiles"].values()) == recompiles
    module.full_batches_only = False   # without it the short batch and validation compile graphs of their own
    fit(setup, epochs=1, module=module, dm=dm)
    val = {(b["input_ids"].shape[0], b["input_ids"].shape[1]) for loader in dm.val_dataloader() for b in loader}
    assert counters["stats"]["unique_graphs"] == graphs + len(short) + len(val) == graphs + 2
    assert dict(counters["graph_break"]) == {}


CACHE_RUN = r"""
import json, sys, torch
from torch._dynamo.utils import counters
from transformers import AutoModelForSequenceClassification, RobertaConfig
from nliforge.models.graphs import compile_backbone_model
torch.manual_seed(0)
cfg = RobertaConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                    max_position_embeddings=40, num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = AutoModelForSequenceClassification.from_config(cfg)
compile_backbone_model(model, {"enabled": True, "dynamic": False, "regional": True, "cache_dir": sys.argv[1]})
for width in (8, 8):
    ids = torch.randint(4, 50, (2, width))
    model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits.sum().backward()
print(json.dumps({"graphs": counters["stats"]["unique_graphs"], **counters["inductor"], **counters["aot_autograd"]}))
"""


@pytest.mark.slow
def test_a_second_process_of_the_same_shapes_loads_the_compile_cache(tmp_path):
    """Inductor on CPU (a C++ compiler): the first process compiles (FX graph cache misses, the forward and
    the backward graph) and fills `compile.cache_dir`; the second loads both from it (hits, no miss)."""
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", CACHE_RUN, str(cache)], capture_output=True, text=True,
                             env=env, timeout=900)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["graphs"] == warm["graphs"] == 1   # one width, one graph for both layers
    assert cold.get("fxgraph_cache_miss", 0) == 2 and cold.get("fxgraph_cache_hit", 0) == 0
    assert warm.get("fxgraph_cache_hit", 0) == 2 and warm.get("fxgraph_cache_miss", 0) == 0
    assert warm.get("autograd_cache_hit", 0) == 1
    assert (cache / "fxgraph").is_dir() and any(cache.rglob("*"))
