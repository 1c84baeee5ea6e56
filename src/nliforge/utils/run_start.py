"""Nothing written before the checks: what Hydra would write into a run folder before the task starts,
held back until the run is accepted.

Hydra's run job makes the output folder, opens the job's log file there (`train.log`, `generate.log`,
`evaluate.log`) and writes its record (`.hydra/config.yaml`, `hydra.yaml`, `overrides.yaml`) before the
task function runs, so a run refused by its own checks still rewrote the folder it was pointed at: a
refused `seed=1` rerun left a seed-0 folder whose `.hydra` said seed 1, and a second run rewrote the
running one's record. An entry point that uses this module (nliforge-train, nliforge-generate, nliforge-evaluate) instead:

* sets `hydra.output_subdir: null` and writes the same record itself with `write_hydra_record`, once
  every check has passed (nliforge-train: and it holds the folder's lock);
* logs to the file through `HeldFileHandler`, which keeps the records in memory until `accept_run_log()`
  (a refused run's lines go to the console only); `accept_run` does both once the run is accepted;
* runs its checks in `Preflight` (a Hydra callback, `on_run_start`), before Hydra makes the folder at all,
  and notes whether the folder existed, so that only a folder this run made is removed when it is refused.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from nliforge.utils.atomic import atomic_write_text

HELD_MAX = 100_000      # records held for a run not yet accepted (a refused run keeps none of them)
_existed: dict[str, bool] = {}


class HeldFileHandler(logging.FileHandler):
    """A FileHandler that opens its file and writes what it holds only after `accept()` (not `release`:
    that is logging.Handler's lock)."""

    def __init__(self, filename: str, mode: str = "a", encoding: str | None = None, delay: bool = True,
                 errors: str | None = None) -> None:
        super().__init__(filename, mode, encoding, delay=True, errors=errors)
        self.held: list[logging.LogRecord] = []
        self.accepted = False

    def emit(self, record: logging.LogRecord) -> None:
        if self.accepted:
            super().emit(record)
        elif len(self.held) < HELD_MAX:
            self.held.append(record)

    def accept(self) -> None:
        self.accepted = True
        held, self.held = self.held, []
        for record in held:
            super().emit(record)


def accept_run_log() -> None:
    """Let every held log file of this process write (the run is accepted)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, HeldFileHandler):
            handler.accept()


def accept_run(out: Path, task_cfg: DictConfig) -> None:
    """Every check passed: write Hydra's record of this job into `out` and let the held log write (an entry
    point with one writing process; nliforge-train also asks for DDP's rank zero)."""
    write_hydra_record(out, task_cfg)
    accept_run_log()


def write_hydra_record(out: Path, task_cfg: DictConfig) -> None:
    """Hydra's record of this job (`.hydra/config.yaml`, `hydra.yaml`, `overrides.yaml`), as Hydra writes it,
    into `out` when `out` is this Hydra job's folder; nothing outside a Hydra app."""
    from hydra.core.hydra_config import HydraConfig

    try:
        hc = HydraConfig.get()
    except ValueError:
        return
    if Path(hc.runtime.output_dir).resolve() != Path(out).resolve():
        return
    record = Path(out) / ".hydra"
    record.mkdir(parents=True, exist_ok=True)
    for name, node in (("config.yaml", task_cfg), ("hydra.yaml", HydraConfig.instance().cfg),
                       ("overrides.yaml", hc.overrides.task)):
        atomic_write_text(record / name, [OmegaConf.to_yaml(node)])


def existed_before(folder: str | Path) -> bool | None:
    """Whether `folder` existed when this run started (None: not noted, e.g. a multirun job)."""
    return _existed.get(str(Path(folder).resolve()))


def task_config(config: DictConfig) -> DictConfig:
    """The task's config as the job will see it, from the run's config in `on_run_start`: Hydra's node
    removed, `${hydra:runtime.output_dir}` resolving to the folder the job will make (hydra.run.dir)."""
    from hydra.core.hydra_config import HydraConfig

    full = config.copy()
    with read_write(full.hydra.runtime), open_dict(full.hydra.runtime):
        full.hydra.runtime.output_dir = os.path.abspath(str(full.hydra.run.dir))
    HydraConfig.instance().set_config(full)
    task = full.copy()
    with read_write(task), open_dict(task):
        del task["hydra"]
    return task


class Preflight(Callback):
    """Hydra callback: `check(task_cfg)` (a dotted function name) before Hydra makes the run folder, writes
    its record or opens the log; a refusal is one `error:` line, exit 1. A multirun's jobs are checked in
    the task itself (their folders are the sweep's)."""

    def __init__(self, check: str) -> None:
        self.check = check

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        import importlib
        import sys

        from nliforge.errors import NLIDataError

        module, _, name = self.check.rpartition(".")
        task = task_config(config)
        out = Path(str(config.hydra.run.dir)).resolve()
        _existed[str(out)] = out.exists()
        try:
            getattr(importlib.import_module(module), name)(task)
        except NLIDataError as err:
            print(f"error: {err}", file=sys.stderr)
            raise SystemExit(1) from None
