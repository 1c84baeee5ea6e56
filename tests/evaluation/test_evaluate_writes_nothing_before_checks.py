"""A refused `nliforge-evaluate` changes no file in the folder it was pointed at (nliforge.utils.run_start):
the model folder, the view it was trained on and the suite's part sets are checked before Hydra makes the
folder, and Hydra's record (`.hydra/`) and `evaluate.log` are written only once every check has passed.
Before: a `model.input=hypothesis` evaluation of a pair model was refused after config.yaml and
environment.json were written, and every refusal rewrote the folder's `.hydra`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from conftest import SMALL_WORLD, console_in_process, file_tree

pytestmark = pytest.mark.usefixtures("module_cache")   # one cache folder for the module's runs
ARGS = ["logger=none", "num_threads=1", *SMALL_WORLD]


def evaluate_cli(monkeypatch, capsys, model: Path, out: Path, *args: str) -> tuple[int, str]:
    from nliforge.evaluate import main

    argv = ["nliforge-evaluate", *ARGS, f"model.backbone.name_or_path={model}", *args, f"hydra.run.dir={out}"]
    return console_in_process(main, argv, monkeypatch, capsys)


def refused(monkeypatch, capsys, model: Path, out: Path, *args: str) -> str:
    code, err = evaluate_cli(monkeypatch, capsys, model, out, *args)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), err[-3000:]
    return lines[0]


def eval_folder(out: Path) -> Path:
    """An evaluation folder as nliforge-evaluate leaves it."""
    files = {"config.yaml": "seed: 0\n", "metrics.csv": "eval_set,acc\nsynthetic_test,0.9\n",
             "environment.json": "{}\n", ".hydra/config.yaml": "seed: null\n", ".hydra/hydra.yaml": "hydra: {}\n",
             ".hydra/overrides.yaml": "- logger=none\n", "evaluate.log": "the first evaluation's log\n"}
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    return out


def test_refused_evaluations_change_no_file_and_make_no_folder(monkeypatch, capsys, tmp_path):
    model = tmp_path / "train" / "model"          # a pair model's folder: its config.json records the view
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps({"nliforge_input": "pair"}))
    out = eval_folder(tmp_path / "eval")
    before = file_tree(out)
    says = refused(monkeypatch, capsys, model, out, "model.input=hypothesis")
    assert "was trained with model.input='pair'" in says
    assert "no such folder" in refused(monkeypatch, capsys, tmp_path / "no_model", out)
    assert file_tree(out) == before               # no config.yaml, environment.json or .hydra rewritten
    new, empty = tmp_path / "new", tmp_path / "empty"
    refused(monkeypatch, capsys, model, new, "model.input=hypothesis")
    assert not new.exists()
    empty.mkdir()                                 # made by the user before the run: kept, still empty
    refused(monkeypatch, capsys, model, empty, "model.input=hypothesis")
    assert empty.is_dir() and not list(empty.iterdir())


@pytest.mark.slow   # trains the session's classifier, then evaluates it on the small world's suite
def test_an_evaluation_records_the_command_then_a_refusal_keeps_it(monkeypatch, capsys, tmp_path, classifier_run_dir):
    model, out = classifier_run_dir / "model", tmp_path / "eval"
    code, err = evaluate_cli(monkeypatch, capsys, model, out)
    assert code == 0, err[-3000:]
    assert OmegaConf.load(out / ".hydra" / "overrides.yaml") == [*ARGS, f"model.backbone.name_or_path={model}"]
    assert OmegaConf.load(out / ".hydra" / "config.yaml").seed is None    # the command's config, as Hydra wrote it
    assert OmegaConf.load(out / "config.yaml").seed == 0                  # the run's: the model's training seed
    assert "synthetic_test" in (out / "evaluate.log").read_text() and (out / "metrics.csv").is_file()
    before = file_tree(out)
    assert "model.input=pair" in refused(monkeypatch, capsys, model, out, "model.input=hypothesis")
    assert file_tree(out) == before
