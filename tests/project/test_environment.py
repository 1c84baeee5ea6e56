"""Every run folder records the environment its numbers depend on (environment.json), nliforge-report
warns when the runs it compares differ in it, requirements.lock pins the environment, and the Makefile
and the experiments pin the same CPU kernel paths (docs/reproducibility.md)."""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

import pytest
import torch

from nliforge.engine.run_folder import RunFolder
from nliforge.evaluate import evaluate
from nliforge.evaluation.environments import environment_differences
from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.report import report
from nliforge.train import train
from nliforge.utils.environment import KERNEL_PIN, LOCK_NAME, project_packages

from conftest import SMALL_WORLD, compose_config, compose_plain

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"python", "nliforge_commit", "lock_sha256", "torch_cpu_capability", "cpu_model", "threads", "env",
        "packages"}


def _check_record(folder: Path) -> dict:
    record = json.loads((folder / "environment.json").read_text())
    assert set(record) == KEYS, set(record) ^ KEYS
    assert record["packages"]["torch"] == torch.__version__
    assert {"tokenizers", "transformers", "lightning", "numpy"} <= set(record["packages"])
    assert record["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert record["lock_sha256"] == hashlib.sha256((ROOT / LOCK_NAME).read_bytes()).hexdigest()
    assert set(KERNEL_PIN) <= set(record["env"])
    assert record["threads"] >= 1 and record["cpu_model"]
    return record


def test_a_training_and_its_evaluation_record_their_environment(tmp_path, world_cache):
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=1", "logger=none",
                                   "callbacks=none", "trainer.enable_progress_bar=false"], tmp_path / "train",
                         world_cache)
    train(cfg)
    assert _check_record(tmp_path / "train")["threads"] == 1        # the demo pins one thread
    ev = compose_config("evaluate", [f"model.backbone.name_or_path={tmp_path / 'train' / 'model'}", *SMALL_WORLD,
                                     "logger=none", "num_threads=1"], tmp_path / "eval", world_cache)
    evaluate(ev)
    _check_record(tmp_path / "eval")


def test_a_generation_run_folder_records_its_environment(tmp_path):
    RunFolder(tmp_path / "gen").bind_config({"pipeline": {"name": "wanli"}})
    _check_record(tmp_path / "gen")


def _run(folder: Path, seed: int, **changes) -> None:
    write_metrics_csv(metrics_rows({"hans": {"acc": 0.5 + seed / 10, "n": 10.0}}, "mnli", seed), folder / "metrics.csv")
    record = {"python": "3.11.7", "threads": 1, "env": {"MKL_CBWR": "COMPATIBLE"},
              "packages": {"torch": "2.13.0", "tokenizers": "0.23.3"}}
    for key, value in changes.items():
        section, _, name = key.partition("__")
        (record[section].__setitem__(name, value) if name else record.__setitem__(section, value))
    (folder / "environment.json").write_text(json.dumps(record))


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "differ" in r.getMessage()]


def test_report_warns_once_per_differing_key_and_not_when_equal(tmp_path, caplog):
    same, other = tmp_path / "same", tmp_path / "other"
    for sweep, change in ((same, {}), (other, {"packages__tokenizers": "0.22.0"})):
        _run(sweep / "0", 0)
        _run(sweep / "1", 1, **change)
    with caplog.at_level(logging.WARNING, logger="nliforge.report"):
        report(compose_plain("report", [f"sweep={same}"]))
    assert _warnings(caplog) == []
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="nliforge.report"):
        report(compose_plain("report", [f"sweep={other}"]))
    assert _warnings(caplog) == [f"runs differ in packages.tokenizers: 0.23.3 (1 run: {other / '0'}) vs "
                                 f"0.22.0 (1 run: {other / '1'})"]


def test_differences_name_each_key_and_runs_without_a_record(tmp_path):
    _run(tmp_path / "a", 0)
    _run(tmp_path / "b", 1, threads=2, env__MKL_CBWR=None)
    (tmp_path / "c").mkdir()
    lines = environment_differences([tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    assert lines[0].startswith(f"1 of 3 runs record no environment.json (e.g. {tmp_path / 'c'})")
    assert [line.split(":")[0] for line in lines[1:]] == ["runs differ in env.MKL_CBWR", "runs differ in threads"]
    assert environment_differences([tmp_path / "a", tmp_path / "a"]) == []


def test_the_lock_pins_every_package_of_the_environment():
    lines = [ln for ln in (ROOT / LOCK_NAME).read_text().splitlines() if ln and not ln.startswith("#")]
    locked = dict(ln.split("==") for ln in lines)
    assert len(locked) == len(lines) and locked["torch"] == "2.13.0"   # no local label: a CUDA build keeps it
    missing = sorted(set(project_packages()) - set(locked) - {"nliforge"})
    assert not missing, f"{LOCK_NAME} lacks {missing}: run `make lock`"


@pytest.mark.parametrize("path", ["Makefile", "experiments/common.sh"])
def test_the_makefile_and_the_experiments_pin_the_kernel_paths(path):
    text = (ROOT / path).read_text()
    for name, value in KERNEL_PIN.items():
        assert re.search(rf"{name}\s*\??=\s*{value}\b|{name}=\"\${{{name}:-{value}}}\"", text), (path, name)
