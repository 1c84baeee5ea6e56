"""A training run that kills itself with SIGKILL at a chosen step, for resume tests.

SIGKILL cannot be caught: nothing is flushed, no `finally` runs, exactly as when a node dies or the
out-of-memory killer strikes. Sending it from inside the process pins the moment to a step and a
point within it (before the batch, after backward and before the optimizer step, after the batch),
which a signal sent from outside at a random time cannot do. Add it to any run with
`+callbacks.kill._target_=nliforge.testing.kill.SigkillAtStep +callbacks.kill.step=N`.

`SignalAtStep` sends another signal the same way (`+callbacks.kill.signal=SIGTERM`: what Slurm, `scancel`
and `timeout` send, which a run survives with a resumable checkpoint).
"""

from __future__ import annotations

import os
import signal

from lightning.pytorch import Callback

HOOKS = ("on_train_batch_start", "on_before_optimizer_step", "on_train_batch_end")
VALIDATION_HOOK = "on_validation_batch_start"   # in an epoch-end validation, after `step` optimizer steps


class SignalAtStep(Callback):
    """Send `signal` (a name: SIGKILL, SIGTERM, SIGUSR1 ...) to this process when `trainer.global_step`
    equals `step`, at `hook` (one of HOOKS), once.

    `global_step` counts optimizer steps taken, so at `on_before_optimizer_step` of step N it is still N:
    the gradients of batch N exist and the weights are not updated yet.
    """

    def __init__(self, step: int, hook: str = "on_before_optimizer_step", signal: str = "SIGKILL") -> None:
        if hook not in (*HOOKS, VALIDATION_HOOK):
            raise ValueError(f"callbacks.kill.hook={hook!r}; valid: {', '.join((*HOOKS, VALIDATION_HOOK))}")
        self.step, self.hook, self.signum, self.sent = int(step), hook, _signal(signal), False

    def _maybe_die(self, trainer, hook: str) -> None:
        if hook == self.hook and trainer.global_step == self.step and not self.sent:
            self.sent = True
            os.kill(os.getpid(), self.signum)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self._maybe_die(trainer, "on_train_batch_start")

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        self._maybe_die(trainer, "on_before_optimizer_step")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        # global_step already counts this batch's update here
        self._maybe_die(trainer, "on_train_batch_end")

    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0) -> None:
        if not trainer.sanity_checking:
            self._maybe_die(trainer, VALIDATION_HOOK)


class SigkillAtStep(SignalAtStep):
    """SIGKILL this process when `trainer.global_step` equals `step`, at `hook` (one of HOOKS)."""

    def __init__(self, step: int, hook: str = "on_before_optimizer_step") -> None:
        super().__init__(step, hook, "SIGKILL")


def _signal(name: str) -> signal.Signals:
    try:
        return signal.Signals[str(name).upper()]
    except KeyError:
        raise ValueError(f"callbacks.kill.signal={name!r}: not a signal name (SIGKILL, SIGTERM, ...)") from None
