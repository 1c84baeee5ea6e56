"""Wrong-typed settings fail early and by name: every Hydra entry point, run as the real console script,
stops with one line naming the key, the value and the expected type, exit status 2, before any file
is written; and no option of any config group is refused (no false alarms)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from conftest import CONF_DIR, compose_config
from nliforge.utils.schema import ConfigTypeError, check_config

CONF = Path(CONF_DIR)


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def assert_refused(proc: subprocess.CompletedProcess, line: str, untouched: Path) -> None:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"error: {line}" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert not untouched.exists(), sorted(p.name for p in untouched.rglob("*"))


@pytest.mark.parametrize("setting,line", [
    ("data.batch_size=abc", "data.batch_size='abc': expected an integer (the default is 32)"),
    ("trainer.max_epochs=abc", "trainer.max_epochs='abc': expected an integer or null "
                               "(lightning.pytorch.Trainer(max_epochs=...))"),
])
def test_train(tmp_path, setting, line):
    out = tmp_path / "run"
    assert_refused(run(["nliforge-train", setting, f"hydra.run.dir={out}"], tmp_path), line, out)


def test_evaluate(tmp_path):
    out = tmp_path / "run"
    proc = run(["nliforge-evaluate", f"model.backbone.name_or_path={tmp_path}", "data.eval_batch_size=1e",
                f"hydra.run.dir={out}"], tmp_path)
    assert_refused(proc, "data.eval_batch_size='1e': expected an integer (the default is 128)", out)


def test_generate(tmp_path):
    out = tmp_path / "run"
    proc = run(["nliforge-generate", "pipeline=wanli", "pipeline.generate.n=five", f"hydra.run.dir={out}"], tmp_path)
    assert_refused(proc, "pipeline.generate.n='five': expected an integer (the default is 5)", out)


def test_report(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    proc = run(["nliforge-report", f"sweep={sweep}", "ci=high"], tmp_path)
    assert_refused(proc, "ci='high': expected a number (the default is 0.95)", sweep / "report")
    proc = run(["nliforge-report", f"sweep={sweep}", "bounds=high"], tmp_path)
    assert_refused(proc, "bounds='high': expected a list", sweep / "report")


def test_review(tmp_path):
    gen_run = tmp_path / "gen"
    gen_run.mkdir()
    proc = run(["nliforge-review", "serve", f"run={gen_run}", "serve.port=eighty"], tmp_path)
    assert_refused(proc, "serve.port='eighty': expected an integer (the default is 8765)", gen_run / "review")


@pytest.mark.slow
def test_multirun_job_is_checked_before_it_writes(tmp_path):
    sweep = tmp_path / "sweep"
    proc = run(["nliforge-train", "-m", "seed=abc,1", f"hydra.sweep.dir={sweep}"], tmp_path)
    assert proc.returncode == 2 and "error: seed='abc': expected an integer" in proc.stderr, proc.stderr
    assert not [p for p in sweep.rglob("*") if p.name in ("config.yaml", "train_set.manifest.json", "metrics.csv")
                and ".hydra" not in p.parts]


def test_several_problems_are_reported_together(tmp_path):
    cfg = compose_config("train", ["data.batch_size=abc", "model.optimizer.lr=fast", "trainer=ddp_sim",
                                   "trainer.devices=two"], tmp_path, tmp_path)
    defaults = compose_config("train", ["trainer=ddp_sim"], tmp_path, tmp_path)
    with pytest.raises(ConfigTypeError) as err:
        check_config(cfg, defaults)
    assert str(err.value) == ("data.batch_size='abc': expected an integer (the default is 32); "
                              "model.optimizer.lr='fast': expected a number (the default is 0.001)")
    # 'two' passes: Lightning's `devices` takes a string too (its signature says so), and decides later
    cfg.trainer.devices = 2.5
    with pytest.raises(ConfigTypeError, match=r"trainer.devices=2.5: expected .*an integer.* \(lightning"):
        check_config(cfg)


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


@pytest.mark.parametrize("name,group", [("train", g) for g in ("model", "trainer", "callbacks", "logger", "preset",
                                                                "debug", "experiment", "data/train_sets", "world")]
                         + [("generate", "pipeline"), ("generate", "generator")])
def test_every_option_passes_the_check(tmp_path, name, group):
    """Typed against the targets' signatures: a valid option is never refused."""
    for option in _options(group):
        choice = f"[{option}]" if group == "data/train_sets" else option
        overrides = [f"{group}={choice}"]
        if group == "generator" and option in ("causal_unlikelihood", "gpt2_unlikelihood"):
            overrides.append("pipeline=zaug")
        cfg = compose_config(name, overrides, tmp_path, tmp_path)
        check_config(cfg, cfg)



@pytest.mark.parametrize("name", ["evaluate", "report", "review"])
def test_other_entry_points_defaults_pass_the_check(name):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(name)
    GlobalHydra.instance().clear()
    check_config(cfg, cfg)
