"""A training resume (`ckpt_path=last`, same run folder) under a config that differs from the folder's
config.yaml is refused naming the key, as a generation run folder refuses one, unless
`allow_config_change=true` says so; epoch limits may grow and run-only settings may change."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import open_dict

from conftest import SMALL_WORLD, compose_config
from nliforge.errors import NLIDataError
from nliforge.models.resume import check_resume_config
from nliforge.train import train
from nliforge.utils.run import prepare_output_dir


def folder(tmp_path: Path, overrides: list[str] = ()) -> Path:
    """A run folder as a first start leaves it: config.yaml, environment.json and checkpoints/last.ckpt."""
    out = tmp_path / "run"
    prepare_output_dir(compose_config("train", ["logger=none", *SMALL_WORLD, *overrides], out, tmp_path / "cache"))
    (out / "checkpoints").mkdir()
    (out / "checkpoints" / "last.ckpt").write_bytes(b"not read: the config is checked first")
    return out


def resume_cfg(tmp_path: Path, overrides: list[str]):
    return compose_config("train", ["logger=none", *SMALL_WORLD, "ckpt_path=last", *overrides],
                          tmp_path / "run", tmp_path / "cache")


@pytest.mark.parametrize("override,diff", [("seed=1", "seed was 0, now 1"),
                                           ("model.optimizer.lr=0.002", "model.optimizer.lr was 0.001, now 0.002")])
def test_a_resume_with_another_seed_or_lr_is_refused_naming_the_key(tmp_path, override, diff):
    out = folder(tmp_path)
    with pytest.raises(NLIDataError, match=f"was trained with a different config: {diff}.*allow_config_change=true"):
        check_resume_config(resume_cfg(tmp_path, [override]), out, str(out / "checkpoints" / "last.ckpt"))


def test_the_same_config_longer_training_and_run_only_settings_resume(tmp_path):
    out = folder(tmp_path)
    cfg = resume_cfg(tmp_path, ["model.max_epochs=9", "num_threads=1", "progress_every_s=5",
                                "trainer.enable_progress_bar=false"])
    check_resume_config(cfg, out, str(out / "checkpoints" / "last.ckpt"))
    check_resume_config(resume_cfg(tmp_path, ["seed=1"]), out, None)   # no checkpoint: a fresh start
    assert not list(out.glob("config.before_resume_*.yaml"))


def test_allow_config_change_accepts_it_and_keeps_the_old_config(tmp_path, caplog):
    out = folder(tmp_path)
    old = (out / "config.yaml").read_text()
    check_resume_config(resume_cfg(tmp_path, ["seed=1", "allow_config_change=true"]), out, "last.ckpt")
    assert (out / "config.before_resume_1.yaml").read_text() == old
    assert "seed was 0, now 1" in caplog.text


def test_train_refuses_before_it_rewrites_anything(tmp_path):
    out = folder(tmp_path)
    before = (out / "config.yaml").read_bytes()
    cfg = resume_cfg(tmp_path, ["seed=3"])
    with open_dict(cfg):
        cfg.paths.output_dir = str(out)
    with pytest.raises(NLIDataError, match="seed was 0, now 3"):
        train(cfg)
    assert (out / "config.yaml").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["checkpoints", "config.yaml", "environment.json"]


def test_a_copied_run_folder_resumes_its_paths_follow_it(tmp_path):
    import shutil

    moved = tmp_path / "moved"
    shutil.copytree(folder(tmp_path), moved)
    cfg = compose_config("train", ["logger=none", *SMALL_WORLD, "ckpt_path=last"], moved, tmp_path / "cache")
    check_resume_config(cfg, moved, str(moved / "checkpoints" / "last.ckpt"))
    with open_dict(cfg):
        cfg.callbacks.dynamics.dir = str(tmp_path / "elsewhere")
    with pytest.raises(NLIDataError, match="callbacks.dynamics.dir was"):
        check_resume_config(cfg, moved, str(moved / "checkpoints" / "last.ckpt"))
