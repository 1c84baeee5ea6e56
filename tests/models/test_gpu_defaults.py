"""GPU runs are fast by default: `trainer=gpu` and `trainer=ddp` round batch widths up to a multiple
of 8 and ask for fused AdamW; the optimizer builder asks torch for fused only when the parameters
are CUDA tensors, so nothing changes on a CPU (benchmarks/README.md, "GPU throughput")."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace

import lightning as L
import pytest
import torch

from nliforge.data.datamodule import NLIDataModule
from nliforge.models.backbone import build_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.models.optim import build_optimizer
from nliforge.utils.schema import check_config
from nliforge.world import WorldConfig, generate_split

from conftest import compose_config, resolved


@pytest.mark.parametrize("trainer", ["gpu", "ddp"])
@pytest.mark.parametrize("model", ["tiny", "roberta_large"])
def test_gpu_trainers_round_widths_to_8_and_ask_for_fused_adamw(trainer, model, tmp_path):
    cfg = compose_config("train", [f"trainer={trainer}", f"model={model}"], tmp_path, tmp_path)
    node = resolved(cfg)
    assert node["data"]["pad_to_multiple_of"] == 8
    assert node["model"]["optimizer"]["fused"] is True
    assert node["trainer"]["accelerator"] == "gpu" and node["trainer"]["precision"] == "bf16-mixed"
    assert node["trainer"]["_target_"] == "lightning.pytorch.Trainer"      # the cpu base is still under trainer
    assert node["model"]["optimizer"]["lr"] == (1e-5 if model == "roberta_large" else 1e-3)  # the model's own
    check_config(cfg)   # the schema accepts the new keys' types


def test_ddp_keeps_its_own_trainer_settings(tmp_path):
    trainer = resolved(compose_config("train", ["trainer=ddp"], tmp_path, tmp_path))["trainer"]
    assert (trainer["devices"], trainer["strategy"], trainer["use_distributed_sampler"]) == (2, "ddp", False)


@pytest.mark.parametrize("trainer", ["cpu", "ddp_sim"])
def test_cpu_trainers_change_nothing(trainer, tmp_path):
    node = resolved(compose_config("train", [f"trainer={trainer}"], tmp_path, tmp_path))
    assert node["data"]["pad_to_multiple_of"] is None
    assert "fused" not in node["model"]["optimizer"]


def test_the_user_can_turn_the_gpu_defaults_off(tmp_path):
    node = resolved(compose_config("train", ["trainer=gpu", "data.pad_to_multiple_of=null",
                                             "model.optimizer.fused=false"], tmp_path, tmp_path))
    assert node["data"]["pad_to_multiple_of"] is None and node["model"]["optimizer"]["fused"] is False


@pytest.mark.parametrize("name", ["generate", "evaluate"])
def test_other_entry_points_compose_with_trainer_gpu(name, tmp_path):
    node = resolved(compose_config(name, ["trainer=gpu"], tmp_path, tmp_path))
    assert node["trainer"]["accelerator"] == "gpu"


def _recording_factory(**keywords):
    calls = []

    def factory(groups, **kwargs):
        calls.append(kwargs)
        return "optimizer"
    return partial(factory, **keywords), calls


def test_fused_is_asked_for_only_when_every_parameter_is_on_cuda():
    on_gpu = [SimpleNamespace(is_cuda=True), SimpleNamespace(is_cuda=True)]
    factory, calls = _recording_factory(lr=1e-3, fused=True)
    build_optimizer(factory, [{"params": on_gpu[:1]}, {"params": on_gpu[1:]}])
    assert calls[-1] == {"lr": 1e-3, "fused": True}
    build_optimizer(factory, [{"params": [torch.nn.Parameter(torch.zeros(2))]}, {"params": on_gpu}])
    assert calls[-1] == {"lr": 1e-3, "fused": None}          # one CPU tensor: torch's default
    plain, plain_calls = _recording_factory(lr=1e-3)
    build_optimizer(plain, [{"params": on_gpu}])
    assert plain_calls[-1] == {"lr": 1e-3}                    # nothing asked, nothing added


def test_a_fused_config_trains_on_cpu_with_the_default_adamw():
    records = generate_split(WorldConfig(n_train=64, seed=0), "train")
    texts = [t for r in records for t in (r.premise, r.hypothesis)]
    model, tokenizer, _ = build_backbone({"kind": "tiny", "hidden_size": 32, "num_layers": 1,
                                          "intermediate_size": 64, "vocab_size": 300}, texts)
    module = NLIClassifier(model, optimizer=partial(torch.optim.AdamW, lr=1e-3, fused=True), warmup_ratio=0.0)
    trainer = L.Trainer(accelerator="cpu", max_steps=2, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(module, NLIDataModule(records, tokenizer, batch_size=16, seed=0, pad_to_multiple_of=8))
    assert trainer.global_step == 2
    assert trainer.optimizers[0].defaults["fused"] is None   # torch 2.4+ would run fused on CPU if asked
