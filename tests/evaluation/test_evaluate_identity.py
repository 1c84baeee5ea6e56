"""nliforge-evaluate writes the model's own (train_id, seed), and nliforge-report refuses two run
folders that claim the same (train_id, seed) instead of silently keeping one of them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nliforge.evaluate import evaluate, resolve_identity
from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.report import load_sweep, report
from nliforge.train import train

from conftest import SMALL_WORLD, compose_config, compose_plain


def _model_folder(root: Path, manifest: dict | None = None, config: str | None = None) -> Path:
    (root / "model").mkdir(parents=True)
    if manifest is not None:
        (root / "train_set.manifest.json").write_text(json.dumps(manifest))
    if config is not None:
        (root / "config.yaml").write_text(config)
    return root / "model"


def test_identity_comes_from_the_model_folder_unless_given(tmp_path):
    model = _model_folder(tmp_path / "a", {"train_id": "mnli+wanli", "seed": 3})
    assert resolve_identity(compose_plain("evaluate", [f"model.backbone.name_or_path={model}"])) == ("mnli+wanli", 3)
    given = compose_plain("evaluate", [f"model.backbone.name_or_path={model}", "seed=5", "train_id=mine"])
    assert resolve_identity(given) == ("mine", 5)
    bare = _model_folder(tmp_path / "b", config="seed: 4\n")   # a run folder without a manifest
    assert resolve_identity(compose_plain("evaluate", [f"model.backbone.name_or_path={bare}"])) == (str(bare), 4)
    hub = compose_plain("evaluate", ["model.backbone.name_or_path=roberta-large"])
    assert resolve_identity(hub) == ("roberta-large", 0)


def test_evaluate_writes_the_training_seed(tmp_path, world_cache):
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=1", "logger=none",
                                   "callbacks=none", "trainer.enable_progress_bar=false", "seed=3"],
                         tmp_path / "train", world_cache)
    train(cfg)
    ev = compose_config("evaluate", [f"model.backbone.name_or_path={tmp_path / 'train' / 'model'}", *SMALL_WORLD,
                                     "logger=none"], tmp_path / "eval", world_cache)
    evaluate(ev)
    with (tmp_path / "eval" / "metrics.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {(r["train_id"], r["seed"]) for r in rows} == {("synthetic_biased", "3")}


def _job(folder: Path, train_id: str, seed: int, acc: float) -> None:
    write_metrics_csv(metrics_rows({"hans": {"acc": acc, "n": 10.0}}, train_id, seed), folder / "metrics.csv")


def test_report_refuses_the_same_train_id_and_seed_in_two_folders(tmp_path):
    sweep = tmp_path / "sweep"
    _job(sweep / "0", "mnli", 0, 0.5)
    _job(sweep / "1", "mnli", 1, 0.6)
    assert sorted(load_sweep(sweep).query("metric == 'acc'")["seed"]) == [0, 1]
    _job(sweep / "eval_b", "mnli", 0, 0.7)   # a second model evaluated as seed 0
    with pytest.raises(ValueError, match=r"train_id 'mnli', seed 0 has metrics in 2 run folders: .*/0 and .*/eval_b"):
        report(compose_plain("report", [f"sweep={sweep}"]))
    assert not (sweep / "report").exists()
