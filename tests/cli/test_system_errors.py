"""A full disk, a read-only folder and a missing mandatory setting are one `error:` line on every script
(before: a 99-line traceback ending in torch's inline_container error for a full disk while last.ckpt was
written, 30 lines for a read-only run folder, 57-105 lines for `nliforge-publish` without repo_id,
`nliforge-report` without sweep, `nliforge-review serve` without run). The container runs as root on one
writable file system, so the full disk and the read-only file system are made the honest way that is left:
the OSError the kernel would give (ENOSPC from the checkpoint file's write, under torch's own writer, which
wraps it in a RuntimeError; EROFS from mkdir) is raised where the kernel would raise it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nliforge.utils.system_errors import disk_error_line, missing_value_line

ROOT = Path(__file__).resolve().parents[2]
TINY = ["experiment=demo", "world.n_train=120", "world.n_dev=30", "world.n_test=30", "world.n_challenge=30",
        "model.max_epochs=1", "logger=none", "save_model=false", "trainer.enable_progress_bar=false",
        "callbacks.dynamics.enabled=false", "num_threads=1"]

FULL_DISK = """
import errno, sys, torch
real = torch.save
class Full:   # the checkpoint file on a disk that fills after 4 KiB
    def __init__(self, fh): self.fh, self.n = fh, 0
    def write(self, b):
        if self.n > 4096:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.n += len(b)
        return self.fh.write(b)
    def flush(self): self.fh.flush()
torch.save = lambda obj, f, *a, **k: real(obj, Full(f), *a, **k)
"""
READ_ONLY = """
import errno, os, sys
real = os.mkdir
def mkdir(path, *a, **k):   # every folder under READ_ONLY_ROOT is on a read-only file system
    if str(path).startswith(os.environ["READ_ONLY_ROOT"]):
        raise OSError(errno.EROFS, "Read-only file system", str(path))
    return real(path, *a, **k)
os.mkdir = mkdir
"""


def script(tmp_path: Path, module: str, args: list[str], prelude: str = "", env: dict | None = None):
    code = f"{prelude}\nimport sys, runpy\nsys.argv = {[module, *args]!r}\nrunpy.run_module({module!r}, run_name='__main__')\n"
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(tmp_path / "cache"),
                               **(env or {})})


def one_error_line(done) -> str:
    assert "Traceback" not in done.stderr and "Error executing job" not in done.stderr, done.stderr[-3000:]
    errors = [line for line in done.stderr.split("\n") if line.startswith("error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    return errors[0]


@pytest.mark.parametrize("module,args,key", [("nliforge.report", [], "sweep"),
                                             ("nliforge.publish", ["run=."], "repo_id"),
                                             ("nliforge.review.cli", ["serve"], "run")])
def test_a_missing_mandatory_setting_is_one_line(tmp_path, module, args, key):
    done = script(tmp_path, module, args)
    assert done.returncode == 2
    assert one_error_line(done) == (f"error: {key}: a mandatory setting with no value; give it on the command "
                                    f"line: {key}=<value> (see --help)")
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # no run folder left behind


def test_a_full_disk_while_last_ckpt_is_written_is_one_line_naming_it(tmp_path):
    out = tmp_path / "run"
    done = script(tmp_path, "nliforge.train", [*TINY, f"hydra.run.dir={out}"], FULL_DISK)
    assert done.returncode == 1
    last = one_error_line(done)
    assert last.startswith(f"error: {out}/checkpoints/last.ckpt: No space left on device [ENOSPC]: free space"), last
    assert not (out / "checkpoints" / "last.ckpt").exists()
    assert [p.name for p in (out / "checkpoints").iterdir()] == []   # no temporary file left


@pytest.mark.parametrize("module,args", [("nliforge.train", TINY), ("nliforge.generate", ["experiment=demo"])])
def test_a_run_folder_on_a_read_only_file_system_is_one_line(tmp_path, module, args):
    out = tmp_path / "ro" / "run"
    done = script(tmp_path, module, [*args, f"hydra.run.dir={out}"], READ_ONLY, {"READ_ONLY_ROOT": str(tmp_path / "ro")})
    assert done.returncode == 1
    line = one_error_line(done)
    assert line.startswith(f"error: {tmp_path / 'ro'}") and "Read-only file system [EROFS]: the folder is on a read-only" in line


def test_the_lines_come_from_the_chain_and_name_the_key():
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 40704 vs 598")
    except RuntimeError as err:
        assert disk_error_line(err).startswith("No space left on device [ENOSPC]")
    assert disk_error_line(ValueError("x")) is None and disk_error_line(OSError(errno.ENOENT, "gone")) is None
    from omegaconf import OmegaConf

    cfg = OmegaConf.create({"a": {"b": "???"}})
    with pytest.raises(Exception) as info:
        _ = cfg.a.b
    assert missing_value_line(info.value).startswith("a.b: a mandatory setting with no value")
