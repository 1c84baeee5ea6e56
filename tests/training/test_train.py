"""End-to-end: train(cfg) on the synthetic world with a tiny model, evaluate, resume, bad input."""

import csv
import json
from pathlib import Path

import pytest
from omegaconf import open_dict

from nliforge.data import NLIDataError, Record, write_jsonl
from nliforge.data.training_set import build_training_set
from nliforge.evaluate import evaluate
from nliforge.train import train

from conftest import SMALL_WORLD, compose_config

SUITE = ["synthetic_dev", "synthetic_test", "synthetic_challenge_negation", "synthetic_challenge_overlap",
         "synthetic_challenge_length", "synthetic_test_2class"]


@pytest.fixture(scope="module")
def trained_run(cfg_train_base, tmp_path_factory):
    cfg = cfg_train_base.copy()
    with open_dict(cfg):
        cfg.paths.output_dir = str(tmp_path_factory.mktemp("trained") / "run")
    results = train(cfg)
    return cfg, results, Path(cfg.paths.output_dir)


def _read_metrics(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_run_writes_long_form_metrics(trained_run):
    cfg, results, out = trained_run
    rows = _read_metrics(out / "metrics.csv")
    assert list(rows[0]) == ["train_id", "seed", "eval_set", "metric", "value"]
    accs = {r["eval_set"]: float(r["value"]) for r in rows if r["metric"] == "acc"}
    assert sorted(accs) == sorted(SUITE)
    assert all(r["train_id"] == "synthetic_biased" and r["seed"] == "0" for r in rows)
    assert all(0.0 <= v <= 1.0 for v in accs.values())
    assert accs == pytest.approx({k: v["acc"] for k, v in results.items()})
    # a 2-class view of the same test split is scored against binarised gold
    n = {r["eval_set"]: float(r["value"]) for r in rows if r["metric"] == "n"}
    assert n["synthetic_test_2class"] == n["synthetic_test"]


def test_run_writes_dynamics_data_map_model_manifest(trained_run):
    cfg, _, out = trained_run
    epochs = sorted(p.name for p in (out / "dynamics").glob("epoch_*.parquet"))
    assert epochs == ["epoch_000.parquet", "epoch_001.parquet"]
    assert (out / "data_map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    manifest = json.loads((out / "train_set.manifest.json").read_text())
    assert manifest["size"] == 900 and manifest["train_id"] == "synthetic_biased"
    assert (out / "model" / "config.json").is_file() and (out / "checkpoints" / "last.ckpt").is_file()
    assert (out / "config.yaml").is_file()


def test_evaluate_reproduces_train_metrics(trained_run, tmp_path, world_cache):
    _, results, out = trained_run
    cfg = compose_config("evaluate", [f"model.backbone.name_or_path={out / 'model'}", *SMALL_WORLD],
                         tmp_path / "eval", world_cache)
    again = evaluate(cfg)
    assert {k: v["acc"] for k, v in again.items()} == pytest.approx({k: v["acc"] for k, v in results.items()})
    rows = _read_metrics(tmp_path / "eval" / "metrics.csv")
    assert rows[0]["train_id"] == "synthetic_biased"


def test_resume_does_not_overwrite_dynamics(trained_run, tmp_path):
    cfg, _, out = trained_run
    import shutil
    run = tmp_path / "resumed"
    shutil.copytree(out, run)
    (run / "metrics.csv").unlink()   # as a run stopped after its last epoch: a finished one's results are
    shutil.rmtree(run / "model")     # never overwritten (tests/training/test_checkpoint_integrity.py)
    before = {p.name: p.read_bytes() for p in (run / "dynamics").glob("epoch_*.parquet")}
    cfg = cfg.copy()
    with open_dict(cfg):
        cfg.paths.output_dir = str(run)
        cfg.ckpt_path = "last"
        cfg.model.max_epochs = 3
    train(cfg)
    after = {p.name: p.read_bytes() for p in (run / "dynamics").glob("epoch_*.parquet")}
    assert sorted(after) == ["epoch_000.parquet", "epoch_001.parquet", "epoch_002.parquet"]
    assert all(after[name] == data for name, data in before.items())


def test_same_config_same_training_set(cfg_train):
    with open_dict(cfg_train):
        cfg_train.data.train_sets = {"synthetic_biased": cfg_train.data.train_sets.synthetic_biased,
                                     "synthetic": {**cfg_train.data.train_sets.synthetic_biased,
                                                   "name": "synthetic", "split": "train", "limit": 200}}
        cfg_train.data.combine = "replace"
    one, two = build_training_set(cfg_train), build_training_set(cfg_train)
    assert one.digest == two.digest and one.train_id == "synthetic_biased◇synthetic"
    assert len(one.records) == 900 and sum(r.uid.startswith("synthetic-train-") for r in one.records) == 200
    with open_dict(cfg_train):
        cfg_train.seed = 1
    assert build_training_set(cfg_train).digest != one.digest


def test_bad_train_file_stops_with_file_line_and_leaves_nothing(tmp_path, world_cache):
    bad = tmp_path / "train.jsonl"
    write_jsonl([Record("u1", "A dog runs.", "An animal runs.", "entailment")], bad)
    bad.write_text(bad.read_text() + '{"uid": "u2", "premise": "", "hypothesis": "x", "label": "neutral"}\n')
    out = tmp_path / "run"
    cfg = compose_config("train", ["data/train_sets=[jsonl]", f"data.train_sets.jsonl.path={bad}", *SMALL_WORLD],
                         out, world_cache)
    with pytest.raises(NLIDataError, match=rf"{bad}:2: field 'premise' is empty"):
        train(cfg)
    assert not out.exists()


def test_val_set_must_be_in_suite(cfg_train):
    with open_dict(cfg_train):
        cfg_train.data.val_sets = ["hans"]
    with pytest.raises(NLIDataError, match=r"data.val_sets: 'hans' is not in suite 'synthetic'; suite sets: synthetic_dev"):
        train(cfg_train)
    assert not Path(cfg_train.paths.output_dir).exists()


def test_checkpoint_mode_dynamics_through_train(cfg_train):
    """WANLI's way: each epoch's weights score the training set afterwards, in eval mode."""
    import json as _json

    import pandas as pd
    with open_dict(cfg_train):
        cfg_train.callbacks.dynamics.mode = "checkpoint"
        cfg_train.model.max_epochs = 2
    train(cfg_train)
    dyn = Path(cfg_train.callbacks.dynamics.dir)
    assert _json.loads((dyn / "meta.json").read_text())["mode"] == "checkpoint"
    last = pd.read_parquet(dyn / "epoch_001.parquet")
    assert len(last) == 900 and last["uid"].is_unique
    probs = last[["p_entailment", "p_neutral", "p_contradiction"]].to_numpy()
    assert abs(probs.sum(1) - 1).max() < 1e-4
    metrics = pd.read_parquet(dyn / "metrics.parquet")
    assert {"confidence", "variability", "max_variability"} <= set(metrics.columns)


def test_evaluate_console_script(trained_run, tmp_path, world_cache):
    import subprocess
    _, results, out = trained_run
    proc = subprocess.run(["nliforge-evaluate", f"model.backbone.name_or_path={out / 'model'}", *SMALL_WORLD,
                           f"paths.cache_dir={world_cache}", f"hydra.run.dir={tmp_path / 'ev'}"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    acc = {r["eval_set"]: float(r["value"]) for r in _read_metrics(tmp_path / "ev" / "metrics.csv") if r["metric"] == "acc"}
    assert acc == pytest.approx({k: v["acc"] for k, v in results.items()})


def test_training_loss_reaches_the_logger_on_every_logging_step(trained_run):
    """The loss is `self.log`ged only on the steps the loggers write (no progress bar here), and
    every one of those steps has it: steps 19, 39, ... with log_every_n_steps = 20."""
    import torch

    cfg, _, out = trained_run
    every = int(cfg.trainer.log_every_n_steps)
    rows = _read_metrics(out / "csv_logs" / "version_0" / "metrics.csv")
    steps = [int(r["step"]) for r in rows if r.get("train/loss")]
    total = torch.load(out / "checkpoints" / "last.ckpt", weights_only=False, map_location="cpu")["global_step"]
    assert total >= 2 * every and steps == list(range(every - 1, total, every))
    assert all(float(r["train/loss"]) > 0 for r in rows if r.get("train/loss"))


def test_default_checkpoints_are_last_only_and_every_epoch_on_request(trained_run, classifier_run_dir):
    """By default a run keeps only last.ckpt (resume); save_top_k=-1 keeps each epoch as epoch_NN.ckpt
    (no doubled `epoch_epoch=`), which the variability stage reads."""
    from nliforge.engine.classifier import ClassifierRun

    _, _, out = trained_run
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["last.ckpt", "last.ckpt.digest.json"]
    with pytest.raises(NLIDataError, match="save_top_k=-1"):
        ClassifierRun(out).epoch_checkpoints()
    kept = ClassifierRun(classifier_run_dir).epoch_checkpoints()
    assert [p.name for p in kept] == ["epoch_00.ckpt", "epoch_01.ckpt"]
