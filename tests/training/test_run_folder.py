"""A training run folder holds one run: a new run into a folder that holds one is refused (before: seed 1's
config.yaml, metrics.csv and model/ beside seed 0's dynamics and data map, seed 0's weights in last.ckpt
and seed 1's in last-v2.ckpt); two runs at once into one folder are refused (before: both exit 0 with
last.ckpt and last-v1.ckpt); `overwrite_output=true` empties it first. A torn or foreign checkpoint, a
device or a folder as `ckpt_path`, an infinite learning rate and a `model.max_length` beyond the model's
positions are one `error:` line before anything is written (before: 66-161-line tracebacks)."""

from __future__ import annotations

import errno
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.models.checkpoint_io import AtomicCheckpointIO
from nliforge.train import train
from nliforge.utils.run_dir import run_dir_lock

ROOT = Path(__file__).resolve().parents[2]
TINY = ["experiment=demo", "world.n_train=200", "world.n_dev=60", "world.n_test=60", "world.n_challenge=60",
        "model.max_epochs=1", "logger=none", "save_model=false", "trainer.enable_progress_bar=false",
        "callbacks.dynamics.enabled=false", "num_threads=1"]


def cfg_for(out: Path, cache: Path, extra: list[str] = ()):
    return compose_config("train", [*TINY, *extra], out, cache)


def earlier_run(out: Path) -> dict[str, bytes]:
    """A folder as a finished seed-0 run leaves it (its files' bytes, to check nothing changes)."""
    (out / "checkpoints").mkdir(parents=True)
    (out / "dynamics").mkdir()
    files = {"config.yaml": b"seed: 0\n", "metrics.csv": b"eval_set,acc\nsynthetic_test,0.9\n",
             "checkpoints/last.ckpt": b"seed 0's weights", "dynamics/epoch_000.parquet": b"seed 0's dynamics"}
    for name, data in files.items():
        (out / name).write_bytes(data)
    return files


def snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_new_run_into_a_folder_holding_one_is_refused_and_changes_nothing(tmp_path):
    out = tmp_path / "run"
    files = earlier_run(out)
    with pytest.raises(NLIDataError, match=r"already holds a run \(config.yaml, checkpoints, metrics.csv, dynamics\)"
                                           r".*ckpt_path=last.*overwrite_output=true"):
        train(cfg_for(out, tmp_path / "cache", ["seed=1"]))
    assert snapshot(out) == files


def test_a_second_run_while_one_writes_the_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    with run_dir_lock(out):   # another run, in the middle of writing its folder
        with pytest.raises(NLIDataError, match="another run is writing this folder"):
            train(cfg_for(out, tmp_path / "cache"))
    assert sorted(p.name for p in out.iterdir()) == [".run.lock"]


def test_overwrite_output_empties_the_folder_then_trains_one_run(tmp_path):
    out = tmp_path / "run"
    earlier_run(out)
    train(cfg_for(out, tmp_path / "cache", ["seed=1", "overwrite_output=true"]))
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["last.ckpt", "last.ckpt.digest.json"]   # no -v1
    assert not (out / "dynamics").exists()          # the earlier run's dynamics went with it
    assert "seed: 1" in (out / "config.yaml").read_text()
    assert torch.load(out / "checkpoints" / "last.ckpt", weights_only=True)["global_step"] > 0


@pytest.mark.parametrize("content,says", [
    (None, "not a checkpoint"),                       # truncated: the first 4 kB of a real one
    (random.Random(0).randbytes(5000), "not a checkpoint"),   # seeded: pytest-xdist workers collect the same ids
    (b"", "empty file"),
], ids=["truncated", "random bytes", "empty"])
def test_a_torn_or_foreign_last_ckpt_is_named_and_nothing_changes(tmp_path, content, says):
    out = tmp_path / "run"
    cfg = cfg_for(out, tmp_path / "cache", ["ckpt_path=last"])
    real = tmp_path / "real.ckpt"
    torch.save({"state_dict": {"w": torch.zeros(2000)}}, real)
    (out / "checkpoints").mkdir(parents=True)
    last = out / "checkpoints" / "last.ckpt"
    last.write_bytes(real.read_bytes()[:4096] if content is None else content)
    before = snapshot(out)
    with pytest.raises(NLIDataError, match=f"ckpt_path='{last}': {says}"):
        train(cfg)
    assert snapshot(out) == before


@pytest.mark.parametrize("ckpt,says", [("/dev/zero", "not a regular file"), ("{tmp}", "is a folder"),
                                       ("{tmp}/missing.ckpt", "no such file")])
def test_a_device_or_a_folder_as_ckpt_path_is_refused_before_the_folder_exists(tmp_path, ckpt, says):
    out = tmp_path / "run"
    with pytest.raises(NLIDataError, match=says):
        train(cfg_for(out, tmp_path / "cache", [f"ckpt_path={ckpt.format(tmp=tmp_path)}"]))
    assert not out.exists()


def test_max_length_beyond_the_positions_is_refused_before_the_folder_exists(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(NLIDataError, match=r"model.max_length=1000: the model has positions for 128 tokens"):
        train(cfg_for(out, tmp_path / "cache", ["model.max_length=1000"]))
    assert not out.exists()


def test_the_console_script_says_one_line_for_a_torn_checkpoint_and_an_infinite_lr(tmp_path):
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "last.ckpt").write_bytes(b"PK\x03\x04 truncated")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(tmp_path / "cache")}
    for args, says in ((["ckpt_path=last", f"hydra.run.dir={out}"], f"error: ckpt_path='{out}/checkpoints/last.ckpt'"),
                       (["model.optimizer.lr=inf", f"hydra.run.dir={tmp_path / 'lr'}"],
                        "error: model.optimizer.lr=inf: expected a finite number")):
        done = subprocess.run([sys.executable, "-m", "nliforge.train", *TINY, *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
        assert done.stderr.strip().splitlines()[-1].startswith(says), done.stderr[-2000:]
    assert not (tmp_path / "lr").exists()


def test_a_checkpoint_is_written_in_its_folder_and_a_full_disk_leaves_the_old_one(tmp_path, monkeypatch):
    """Lightning's writer went through /tmp and copied across file systems: a full disk left a truncated
    last.ckpt. Now the temporary file is a sibling, and a failed write leaves the previous file whole."""
    io = AtomicCheckpointIO()
    last = tmp_path / "checkpoints" / "last.ckpt"
    step = lambda n: {"pytorch-lightning_version": "2", "state_dict": {}, "step": n}   # noqa: E731
    io.save_checkpoint(step(1), last)
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append(Path(a).parent), real_replace(a, b)))
    io.save_checkpoint(step(2), last)
    assert set(renamed) == {last.parent} and io.load_checkpoint(last)["step"] == 2   # the file and its digest

    def full_disk(obj, fh):
        fh.write(b"PK\x03\x04 half a checkpoint")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", full_disk)
    with pytest.raises(OSError, match="No space left"):
        io.save_checkpoint(step(3), last)
    assert io.load_checkpoint(last)["step"] == 2
    assert sorted(p.name for p in last.parent.iterdir()) == ["last.ckpt", "last.ckpt.digest.json"]   # no temp file


def test_a_requeued_slurm_job_resumes_its_own_folder_by_itself(tmp_path, monkeypatch):
    from nliforge.models.resume import ckpt_setting

    out = tmp_path / "run"
    cfg = cfg_for(out, tmp_path / "cache")
    out.mkdir()
    monkeypatch.delenv("SLURM_RESTART_COUNT", raising=False)
    assert ckpt_setting(cfg, out) is None
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    assert ckpt_setting(cfg, out) is None                 # a first start's folder is new
    (out / "config.yaml").write_text("seed: 0\n")         # stopped before its first checkpoint
    assert ckpt_setting(cfg, out) == "last"
    monkeypatch.setenv("SLURM_RESTART_COUNT", "0")
    (out / "checkpoints").mkdir()
    (out / "checkpoints" / "last.ckpt").write_bytes(b"x")
    assert ckpt_setting(cfg, out) is None                 # outside a requeue: only what ckpt_path says
    cfg.ckpt_path = str(out / "checkpoints" / "last.ckpt")
    assert ckpt_setting(cfg, out) == "last"               # the folder's own last.ckpt, by its path
