"""A refused `nliforge-train` changes no file in the folder it was pointed at (nliforge.utils.run_start):
Hydra's record (`.hydra/`) and `train.log` are written only once every check has passed, the run folder and
checkpoint checks run before Hydra makes the folder, and a folder this run did not make is never removed.
Before: a refused `seed=1` rerun left a seed-0 folder whose `.hydra` said `seed: 1` and appended to its
train.log; after a refused `model.input=hypothesis` rerun the PoE check took a pair model for a
hypothesis-only expert (it read `.hydra/config.yaml`); a second run rewrote a running run's `.hydra`."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest
import torch
from filelock import FileLock

from conftest import console_in_process, file_tree as tree
from nliforge.models.checkpoint_io import AtomicCheckpointIO
from nliforge.models.poe import trained_input
from nliforge.testing.warm import WarmInterpreter
from nliforge.utils.run_start import HeldFileHandler

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
D = ["experiment=demo", "world.n_train=200", "world.n_dev=60", "world.n_test=60", "world.n_challenge=60",
     "model.max_epochs=1", "logger=none", "trainer.enable_progress_bar=false", "num_threads=1"]


@pytest.fixture(scope="module")
def warm():
    with WarmInterpreter(ENV) as interpreter:
        yield interpreter


def run_folder(out: Path, finished: bool) -> Path:
    """A seed-0 pair-input run folder as nliforge-train leaves it (finished: with metrics.csv and model/)."""
    files = {"config.yaml": "seed: 0\nmodel:\n  input: pair\n", ".hydra/config.yaml": "seed: 0\nmodel:\n  input: pair\n",
             ".hydra/overrides.yaml": "- seed=0\n", ".hydra/hydra.yaml": "hydra: {}\n", "train.log": "seed 0's log\n",
             ".run.lock": ""}
    if finished:
        files.update({"metrics.csv": "eval_set,acc\nsynthetic_test,0.9\n", "model/config.json": "{}"})
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    AtomicCheckpointIO().save_checkpoint({"pytorch-lightning_version": "2.6", "state_dict": {"w": torch.ones(2)}},
                                         out / "checkpoints" / "last.ckpt")
    return out


def refused(warm: WarmInterpreter, out: Path, cache: Path, *args: str) -> str:
    """Run nliforge-train into `out`; it must refuse with one `error:` line. Returns that line."""
    done = warm.run("nliforge.train", [*D, *args, f"hydra.run.dir={out}"], cwd=ROOT,
                    env={**ENV, "NLIFORGE_CACHE": str(cache)}, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-3000:]
    return lines[0]


def refused_in_process(monkeypatch, capsys, out: Path, cache: Path, *args: str) -> str:
    """nliforge-train's console script in this process (its imports already paid)."""
    from nliforge.train import main

    monkeypatch.setenv("NLIFORGE_CACHE", str(cache))
    code, err = console_in_process(main, ["nliforge-train", *D, *args, f"hydra.run.dir={out}"], monkeypatch, capsys)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_refused_reruns_and_a_foreign_checkpoint_write_nothing(monkeypatch, capsys, tmp_path):
    """The fast suite's copy of the probes below (in this process: no interpreter start)."""
    out = run_folder(tmp_path / "run", finished=True)
    before = tree(out)
    for args in (["seed=1"], ["model.input=hypothesis"], ["ckpt_path=last"]):
        refused_in_process(monkeypatch, capsys, out, tmp_path / "cache", *args)
        assert tree(out) == before
    assert trained_input(out) == "pair"
    foreign = tmp_path / "weights.pt"
    torch.save({"embeddings": torch.zeros(3)}, foreign)
    says = refused_in_process(monkeypatch, capsys, tmp_path / "new", tmp_path / "cache", f"ckpt_path={foreign}")
    assert "not a Lightning training checkpoint" in says and not (tmp_path / "new").exists()


@pytest.mark.slow   # forks of a warm interpreter: its start costs ~8 CPU-s of imports, more on a busy machine
@pytest.mark.parametrize("args,says", [
    (["seed=1"], "already holds a run"),
    (["model.input=hypothesis"], "already holds a run"),
    (["ckpt_path=last"], "holds a finished run's results (metrics.csv, model)"),
    (["ckpt_path=last", "model.max_epochs=3"], "a resume would overwrite them"),
], ids=["seed", "input", "resume", "resume-longer"])
def test_a_refused_rerun_changes_no_file_in_a_finished_folder(warm, tmp_path, args, says):
    out = run_folder(tmp_path / "run", finished=True)
    before = tree(out)
    assert says in refused(warm, out, tmp_path / "cache", *args)
    assert tree(out) == before                   # no .hydra rewritten, nothing appended to train.log
    assert trained_input(out / "model") == "pair"


@pytest.mark.slow
def test_a_second_run_does_not_rewrite_a_running_runs_record(warm, tmp_path):
    out = run_folder(tmp_path / "run", finished=False)
    before = tree(out)
    with FileLock(str(out / ".run.lock"), timeout=0):    # the first run holds the folder
        assert "already holds a run" in refused(warm, out, tmp_path / "cache")
        assert tree(out) == before
        (out / "config.yaml").unlink()                   # the first run has not written its config yet
        shutil.rmtree(out / "checkpoints")
        before = tree(out)
        assert "another run is writing this folder" in refused(warm, out, tmp_path / "cache")
        assert tree(out) == before


@pytest.mark.slow
def test_a_refusal_removes_only_a_folder_this_run_made(warm, tmp_path):
    bias = ["model.poe.enabled=true", f"model.poe.bias_model={tmp_path / 'no_such_run'}"]   # an input check
    new = tmp_path / "new"
    assert "no such folder" in refused(warm, new, tmp_path / "cache", *bias)
    assert not new.exists()
    empty = tmp_path / "empty"                           # made by the user before the run: kept, still empty
    empty.mkdir()
    assert "no such folder" in refused(warm, empty, tmp_path / "cache", *bias)
    assert empty.is_dir() and not list(empty.iterdir())
    assert "model.max_length=1000" in refused(warm, new, tmp_path / "cache", "model.max_length=1000")
    assert not new.exists()


def test_the_log_file_is_opened_only_once_the_run_is_accepted(tmp_path):
    path = tmp_path / "train.log"
    handler = HeldFileHandler(str(path))
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.handle(logging.makeLogRecord({"msg": "before the checks"}))
    assert not path.exists()                             # a refused run ends here: no file
    handler.accept()
    handler.handle(logging.makeLogRecord({"msg": "training"}))
    handler.close()
    assert path.read_text() == "before the checks\ntraining\n"
