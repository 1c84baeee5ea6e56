"""DDP: nliforge shards each global batch across processes, so a multi-process run trains on the
batches of a single-process run; `trainer=ddp_sim` (2 CPU processes, gloo) must then give the same
training dynamics and suite metrics."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import lightning as L
import numpy as np
import pandas as pd
import pytest
from omegaconf import open_dict

from nliforge.data import NLIDataError
from nliforge.data.sampling import GlobalBatchSampler, LengthGroupedBatchSampler
from nliforge.train import train

from conftest import SMALL_WORLD, compose_config


def _shards(make, world: int) -> list[list[list[int]]]:
    return [list(make(world, rank)) for rank in range(world)]


@pytest.mark.parametrize("n,batch,world", [(100, 8, 2), (101, 8, 2), (97, 12, 3), (64, 16, 4)])
@pytest.mark.parametrize("grouped", [False, True])
def test_shards_reassemble_the_single_process_batches(n, batch, world, grouped):
    lengths = [(7 * i) % 23 + 1 for i in range(n)]

    def make(w, r):
        if grouped:
            return LengthGroupedBatchSampler(lengths, batch, seed=3, chunk_batches=3, num_replicas=w, rank=r)
        return GlobalBatchSampler(n, batch, seed=3, num_replicas=w, rank=r)

    for epoch in (0, 1):
        single = make(1, 0)
        single.set_epoch(epoch)
        plan = list(single)
        shards = []
        for r in range(world):
            s = make(world, r)
            s.set_epoch(epoch)
            shards.append(list(s))
            assert len(shards[-1]) == len(s)   # __len__ agrees with iteration on every rank
        assert len({len(s) for s in shards}) == 1   # every rank takes the same number of steps
        usable = [b for b in plan if len(b) >= world]
        for step, batch_ in enumerate(usable):
            parts = [shards[r][step] for r in range(world)]
            assert sorted(i for p in parts for i in p) == sorted(batch_)
            assert max(map(len, parts)) - min(map(len, parts)) <= 1
        assert sorted(i for b in plan for i in b) == list(range(n))   # one process: each example once


def test_a_batch_too_small_for_every_rank_is_dropped():
    # 17 examples in batches of 8 over 2 ranks: the last global batch has 1 example, rank 1 would get none
    shards = _shards(lambda w, r: GlobalBatchSampler(17, 8, num_replicas=w, rank=r), 2)
    assert [len(s) for s in shards] == [2, 2]
    assert sum(len(b) for s in shards for b in s) == 16


def test_global_batch_must_divide_over_processes():
    with pytest.raises(NLIDataError, match=r"data.batch_size=10 .* 4 processes"):
        GlobalBatchSampler(100, 10, num_replicas=4, rank=0)


def test_train_refuses_an_uneven_global_batch_before_writing(tmp_path, world_cache):
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "trainer=ddp_sim", "data.batch_size=33",
                                   "logger=none"], tmp_path / "run", world_cache)
    with pytest.raises(NLIDataError, match=r"data.batch_size=33 .* 2 processes"):
        train(cfg)
    assert not (tmp_path / "run" / "checkpoints").exists()


def test_train_refuses_lightnings_distributed_sampler(tmp_path, world_cache):
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "trainer=ddp_sim",
                                   "trainer.use_distributed_sampler=true", "logger=none"], tmp_path / "run", world_cache)
    with pytest.raises(NLIDataError, match="use_distributed_sampler=false"):
        train(cfg)


def _run_cli(out: Path, cache: Path, trainer: str) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    args = ["experiment=demo", *SMALL_WORLD, "model.max_epochs=3", "model.backbone.dropout=0", "logger=none",
            f"trainer={trainer}", "trainer.enable_progress_bar=false", f"paths.output_dir={out}",
            f"paths.cache_dir={cache}", "save_model=false"]
    proc = subprocess.run([sys.executable, "-m", "nliforge.train", *args], capture_output=True, text=True,
                          env=env, timeout=600, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-4000:]


def _metrics(out: Path) -> dict:
    with (out / "metrics.csv").open() as fh:
        return {(r["eval_set"], r["metric"]): float(r["value"]) for r in csv.DictReader(fh)}


@pytest.mark.slow
def test_ddp_sim_equals_single_process(tmp_path, world_cache):
    """Same data, seed and global batch; dropout off (each rank draws its own dropout masks)."""
    single, ddp = tmp_path / "single", tmp_path / "ddp"
    _run_cli(single, world_cache, "cpu")
    _run_cli(ddp, world_cache, "ddp_sim")
    for epoch in range(3):
        name = f"epoch_{epoch:03d}.parquet"
        a = pd.read_parquet(single / "dynamics" / name).set_index("uid").sort_index()
        b = pd.read_parquet(ddp / "dynamics" / name).set_index("uid").sort_index()
        assert len(b) == 900 and list(a.index) == list(b.index)   # every example once, gathered on rank 0
        assert (a["gold"] == b["gold"]).all()
        probs = [c for c in a.columns if c.startswith("p_")]
        diff = np.abs(a[probs].to_numpy() - b[probs].to_numpy()).max()
        print(f"epoch {epoch}: max |p_single - p_ddp| = {diff:.2e}")
        assert diff < 2e-3   # float rounding (two half-batch sums vs one), amplified by training; a wrong batch is ~1e-1
    assert a[probs].to_numpy().std(axis=0).max() > 0.01   # the model moved: equality is not trivial
    assert _metrics(single) == pytest.approx(_metrics(ddp), abs=1e-6)
    assert not list(ddp.glob("train_ddp_process_*"))   # the extra process wrote no files of its own


def test_compile_switch_keeps_parameter_names(tmp_path, world_cache):
    """compile.enabled compiles the backbone in place: training runs and the checkpoint and saved
    model keep the plain parameter names (no `_orig_mod.` prefix), so evaluate/resume read them."""
    import torch

    tiny_world = ["world.n_train=200", "world.n_dev=40", "world.n_test=40", "world.n_challenge=40"]  # few widths to trace
    cfg = compose_config("train", ["experiment=demo", *tiny_world, "model.max_epochs=1", "logger=none",
                                   "compile.enabled=true", "compile.backend=eager", "callbacks.dynamics.enabled=false",
                                   "trainer.enable_progress_bar=false"], tmp_path / "run", world_cache)
    results = train(cfg)
    assert 0 <= results["synthetic_test"]["acc"] <= 1
    state = torch.load(tmp_path / "run" / "checkpoints" / "last.ckpt", weights_only=False)["state_dict"]
    assert state and not any("_orig_mod" in k for k in state)
    assert (tmp_path / "run" / "model" / "config.json").is_file()


def test_gpu_fast_preset_sets_the_measured_switches(tmp_path):
    """preset=gpu_fast is the benchmark's `nliforge+compile` contender: bf16 on a GPU, fused AdamW,
    widths rounded to 8, the backbone compiled with dynamic shapes; it composes with any model or
    experiment, and an experiment's own trainer choice does not undo it."""
    for extra in (["model=roberta_large"], ["experiment=demo"]):
        cfg = compose_config("train", ["preset=gpu_fast", *extra], tmp_path, tmp_path)
        assert (cfg.trainer.accelerator, cfg.trainer.precision) == ("gpu", "bf16-mixed")
        assert cfg.compile.enabled is True and cfg.compile.dynamic is True and cfg.compile.mode is None
        assert cfg.data.pad_to_multiple_of == 8 and cfg.model.optimizer.fused is True
    plain = compose_config("train", ["experiment=demo"], tmp_path, tmp_path)
    assert plain.data.pad_to_multiple_of is None and plain.compile.enabled is False and "fused" not in plain.model.optimizer


def _classifier_models() -> list[str]:
    """Every model config that builds a classifier: generator configs (`kind: generator`) are not."""
    from omegaconf import OmegaConf

    from conftest import CONF_DIR

    found = sorted(Path(CONF_DIR, "model").glob("*.yaml"))
    return [p.stem for p in found if OmegaConf.load(p).get("kind") != "generator"]


@pytest.mark.parametrize("trainer", [None, "ddp"])
@pytest.mark.parametrize("model", _classifier_models())
def test_gpu_fast_preset_composes_with_every_model_and_ddp(model, trainer, tmp_path):
    """preset=gpu_fast with each classifier model, alone and with trainer=ddp: the preset's
    switches survive, the config passes the type check, and trainer=ddp (given before or after the
    preset) keeps DDP's strategy and device count with the preset's bf16 precision."""
    from nliforge.utils.schema import check_config

    assert "roberta_large" in _classifier_models() and "tiny_generator" not in _classifier_models()
    extra = [] if trainer is None else [f"trainer={trainer}", "trainer.devices=8"]
    for overrides in (["preset=gpu_fast", f"model={model}", *extra], [*extra, f"model={model}", "preset=gpu_fast"]):
        cfg = compose_config("train", overrides, tmp_path, tmp_path)
        check_config(cfg, cfg)
        assert cfg.model.backbone.kind in ("tiny", "minilm", "pretrained")
        assert (cfg.trainer.accelerator, cfg.trainer.precision) == ("gpu", "bf16-mixed")
        assert cfg.compile.enabled is True and cfg.compile.dynamic is True
        assert cfg.data.pad_to_multiple_of == 8 and cfg.model.optimizer.fused is True
        if trainer == "ddp":
            assert (cfg.trainer.strategy, cfg.trainer.devices) == ("ddp", 8)
            assert cfg.trainer.use_distributed_sampler is False
        else:
            assert cfg.trainer.get("strategy", "auto") == "auto" and cfg.trainer.devices == 1


class RecordSwitches(L.Callback):
    """Test callback: batch widths, the optimiser's fused flag, and the weights' L1 norm at train start and end."""

    seen: dict = {}

    def on_train_start(self, trainer, pl_module):
        RecordSwitches.seen = {"widths": [], "fused": trainer.optimizers[0].defaults.get("fused"),
                               "norm0": _l1(pl_module)}

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        RecordSwitches.seen["widths"].append(int(batch["input_ids"].shape[1]))

    def on_train_end(self, trainer, pl_module):
        RecordSwitches.seen["norm1"] = _l1(pl_module)


def _l1(module) -> float:
    return float(sum(p.detach().abs().sum() for p in module.parameters()))


def test_gpu_fast_switches_train_on_cpu(tmp_path, world_cache, monkeypatch):
    """The preset's switches other than the device (fused AdamW, widths rounded to 8, compile with
    dynamic shapes; the eager backend keeps the test fast) train through train(cfg). Fused AdamW is
    a CUDA setting: on CPU parameters torch's default AdamW runs instead (nliforge.models.optim)."""
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=1", "logger=none",
                                   "compile.enabled=true", "compile.dynamic=true", "compile.backend=eager",
                                   "data.pad_to_multiple_of=8", "+model.optimizer.fused=true",
                                   "callbacks.dynamics.enabled=false", "trainer.enable_progress_bar=false"],
                         tmp_path / "run", world_cache)
    import nliforge.train as train_module

    build = train_module.build_callbacks  # the real callbacks, plus one that only observes
    monkeypatch.setattr(train_module, "build_callbacks", lambda c: build(c) + [RecordSwitches()])
    results = train(cfg)
    seen = RecordSwitches.seen
    assert seen["fused"] is None                                     # asked for, but the params are on CPU
    assert seen["widths"] and all(w % 8 == 0 for w in seen["widths"]) and len(set(seen["widths"])) > 1
    assert seen["norm1"] != pytest.approx(seen["norm0"], rel=1e-6)   # the optimiser stepped
    assert 0 <= results["synthetic_test"]["acc"] <= 1


def test_slurm_ddp_preset_asks_one_task_per_device(tmp_path):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from conftest import CONF_DIR

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("train", overrides=["trainer=ddp", "trainer.devices=4", "hydra/launcher=slurm_ddp"],
                      return_hydra_config=True)
    GlobalHydra.instance().clear()
    launcher = cfg.hydra.launcher
    assert launcher.tasks_per_node == 4 and launcher.gpus_per_node == 4 and launcher.nodes == 1
    assert cfg.trainer.strategy == "ddp" and cfg.trainer.use_distributed_sampler is False
    assert cfg.trainer.precision == "bf16-mixed" and cfg.trainer.accelerator == "gpu"


def test_pad_buckets_reach_the_training_batches(tmp_path, world_cache, monkeypatch):
    """data.pad_buckets (a fixed few widths for CUDA graphs) goes from the config to the
    training loader: every training batch has one of the bucket widths."""
    from nliforge.utils.schema import check_config

    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=1", "logger=none",
                                   "data.pad_buckets=[16,32,64,128]", "callbacks.dynamics.enabled=false",
                                   "trainer.enable_progress_bar=false"], tmp_path / "run", world_cache)
    check_config(cfg, cfg)
    import nliforge.train as train_module

    build = train_module.build_callbacks
    monkeypatch.setattr(train_module, "build_callbacks", lambda c: build(c) + [RecordSwitches()])
    train(cfg)
    widths = RecordSwitches.seen["widths"]
    assert widths and set(widths) <= {16, 32, 64, 128}
