"""Preemption: a run told to stop (SIGTERM, or the early-warning signal a cluster sends before it) writes
a resumable `last.ckpt`, says so in one line and exits non-zero; a requeued Slurm job resumes by itself.

Lightning notices SIGTERM (`trainer.received_sigterm`, its signal connector) and stops at the next batch
boundary by raising `SIGTERMException`, a `SystemExit` that would end the process with code 0.
`PreemptionCheckpoint` adds what a scheduler needs on top:

* the early-warning signals (`--signal=USR1@90` in an sbatch script; USR2 is submitit's) count as a stop
  too, chained to any handler already there (submitit's requeue runs after the checkpoint is written);
* the checkpoint is written at the end of the batch being trained, where the step checkpoints of
  `callbacks.checkpoint.every_n_train_steps` are written (an exact resume), or, when the stop comes
  elsewhere (validation, before the first batch), when Lightning unwinds;
* `train` turns the stop into `Preempted`: exit code 128 + the signal, and, inside a Slurm job, the job
  requeued (`scontrol requeue`, as Lightning's SLURMEnvironment does) unless submitit requeues it itself.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

from lightning.pytorch import Callback
from lightning.pytorch.utilities.exceptions import SIGTERMException

log = logging.getLogger(__name__)
WARNING_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2)


class Preempted(SystemExit):
    """The run stopped on a signal after writing `checkpoint`; the process exits with 128 + signal."""

    def __init__(self, signum: int, checkpoint: Path | None) -> None:
        super().__init__(128 + int(signum))
        self.signum, self.checkpoint = int(signum), checkpoint


class PreemptionCheckpoint(Callback):
    """Writes `<dirpath>/last.ckpt` when the run is told to stop, then lets Lightning stop it."""

    def __init__(self, dirpath: str | Path, filename: str = "last.ckpt") -> None:
        self.path = Path(dirpath) / filename
        self.signum: int | None = None      # the early-warning signal received, if any
        self.saved = False
        self._previous: dict[int, object] = {}

    # -- signals ------------------------------------------------------------------------------------
    def _on_warning(self, signum, frame) -> None:
        self.signum = signum

    def setup(self, trainer, pl_module, stage: str) -> None:
        if stage != "fit" or not _main_thread():
            return
        for sig in WARNING_SIGNALS:
            self._previous[sig] = signal.getsignal(sig)
            signal.signal(sig, self._on_warning)

    def restore_signals(self) -> None:
        """The handlers there were before `setup` (called once fit has returned or stopped: Lightning's own
        teardown puts back the handlers it found, which by then include ours)."""
        for sig, handler in self._previous.items():
            if handler is not None and _main_thread():
                signal.signal(sig, handler)

    def stop_signal(self, trainer) -> int | None:
        if self.signum is not None:
            return self.signum
        return int(signal.SIGTERM) if trainer.received_sigterm else None

    # -- the checkpoint -----------------------------------------------------------------------------
    def _save(self, trainer) -> None:
        if not self.saved:
            trainer.save_checkpoint(self.path)
            self.saved = True

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self.stop_signal(trainer) is None:
            return
        self._save(trainer)
        if self.signum is not None:   # Lightning stops on SIGTERM itself; on a warning signal, we stop it
            raise SIGTERMException

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        if isinstance(exception, SIGTERMException) and self.stop_signal(trainer) is not None:
            self._save(trainer)

    def preempted(self, trainer) -> Preempted:
        """The exit that says the run stopped, after the checkpoint is on disk (and the job requeued)."""
        signum = self.stop_signal(trainer) or int(signal.SIGTERM)
        name = signal.Signals(signum).name
        where = self.path if self.saved else None
        if trainer.is_global_zero:
            print(f"stopped by {name}: resumable checkpoint {where}; resume with ckpt_path=last"
                  if where else f"stopped by {name} before a checkpoint could be written", file=sys.stderr,
                  flush=True)
        if signum != signal.SIGTERM:
            self._hand_on(signum, trainer)
        return Preempted(signum, where)

    def _hand_on(self, signum: int, trainer) -> None:
        """After an early-warning signal: submitit's handler (it requeues and exits), or, in a plain Slurm
        job, `scontrol requeue` of this job."""
        previous = self._previous.get(signum)
        if callable(previous):
            previous(signum, None)
            return
        job = os.environ.get("SLURM_JOB_ID")
        if job and trainer.is_global_zero:
            array = os.environ.get("SLURM_ARRAY_JOB_ID")
            job = f"{array}_{os.environ['SLURM_ARRAY_TASK_ID']}" if array else job
            done = subprocess.run(["scontrol", "requeue", job], capture_output=True, text=True)
            log.warning("Slurm job %s %s", job, "requeued" if done.returncode == 0 else
                        f"not requeued: {done.stderr.strip()}")


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def slurm_restart() -> int:
    """How often Slurm has requeued this job (0 outside Slurm and on a first start)."""
    try:
        return int(os.environ.get("SLURM_RESTART_COUNT", "0") or 0)
    except ValueError:
        return 0
