"""A training run folder holds one run.

* A folder that already holds a run (its `config.yaml`, `checkpoints/`, `metrics.csv` or `model/`) takes
  only that run's resume: `ckpt_path=last` (with the same config, `nliforge.models.resume`), or a requeued
  Slurm job of it. Anything else is refused before a file is written, unless `overwrite_output=true`,
  which empties the folder first. Without this a second seed's config.yaml, metrics.csv and model/
  landed beside the first one's dynamics and data map, and its checkpoint became `last-v1.ckpt`.
* A finished run's results (`metrics.csv`, `model/`) are never overwritten: a resume into a folder that holds
  them is refused, naming the way on (a new folder started from its checkpoint).
* While a run is in it, the folder is locked (`filelock`, an OS lock released when the process ends,
  even by SIGKILL); a second run into it is refused with one line.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout   # a dependency of torch, so always installed

from nliforge.errors import NLIDataError

LOCK_NAME = ".run.lock"
RESULTS = ("metrics.csv", "model")      # what a finished run leaves
RUN_MARKERS = ("config.yaml", "checkpoints", "metrics.csv", "model", "dynamics", "train_set.manifest.json")
# what Hydra writes into the folder before the run starts: never a sign of an earlier run
HYDRA_FILES = (".hydra", "train.log", LOCK_NAME)


def run_markers(out: Path) -> list[str]:
    """The files and folders of an earlier run that `out` holds (empty: a new or empty folder)."""
    return [name for name in RUN_MARKERS if (out / name).exists()]


def finished_results(out: Path) -> list[str]:
    """The results of a finished run that `out` holds (metrics.csv, model)."""
    return [name for name in RESULTS if (out / name).exists()]


def check_run_dir(out: Path, ckpt_path: str | None, overwrite: bool) -> None:
    """Refuse a new run into a folder that holds one, naming what it holds and the ways on."""
    if out.exists() and not out.is_dir():
        raise NLIDataError(f"paths.output_dir={str(out)!r}: is a file, not a folder")
    held = run_markers(out)
    results = finished_results(out)
    if ckpt_path == "last" and results and not overwrite:
        raise NLIDataError(f"paths.output_dir={str(out)!r} holds a finished run's results ({', '.join(results)}); "
                           "a resume would overwrite them. To train it further, start a new folder from its "
                           f"checkpoint: ckpt_path={out / 'checkpoints' / 'last.ckpt'} hydra.run.dir=<new folder>")
    if not held or overwrite or ckpt_path == "last":
        return
    what = "ckpt_path=" + str(ckpt_path) if ckpt_path else "a new run"
    raise NLIDataError(f"paths.output_dir={str(out)!r} already holds a run ({', '.join(held)}); {what} would mix "
                       "two runs in one folder. Resume it with ckpt_path=last (same config), choose another "
                       "hydra.run.dir, or pass overwrite_output=true to empty it first")


def empty_run_dir(out: Path) -> None:
    """Remove everything in `out` except Hydra's files of this very run and the lock."""
    for entry in out.iterdir():
        if entry.name in HYDRA_FILES or entry.suffix == ".log":   # Hydra's log of this job, open right now
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


@contextmanager
def run_dir_lock(out: Path):
    """Hold `out`'s lock for the block; another process holding it is an error naming the folder."""
    out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out / LOCK_NAME), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise NLIDataError(f"paths.output_dir={str(out)!r}: another run is writing this folder (it holds "
                           f"{LOCK_NAME}); wait for it to end or choose another hydra.run.dir") from None
    try:
        yield out
    finally:
        lock.release()
