"""A training run that kills itself with SIGKILL at a chosen step, for resume tests.

SIGKILL cannot be caught: nothing is flushed, no `finally` runs, exactly as when a node dies or the
out-of-memory killer strikes. Sending it from inside the process pins the moment to a step and a
point within it (before the batch, after backward and before the optimizer step, after the batch),
which a signal sent from outside at a random time cannot do. Add it to any run with
`+callbacks.kill._target_=nliforge.testing.kill.SigkillAtStep +callbacks.kill.step=N`.
"""

from __future__ import annotations

import os
import signal

from lightning.pytorch import Callback

HOOKS = ("on_train_batch_start", "on_before_optimizer_step", "on_train_batch_end")


class SigkillAtStep(Callback):
    """SIGKILL this process when `trainer.global_step` equals `step`, at `hook` (one of HOOKS).

    `global_step` counts optimizer steps taken, so at `on_before_optimizer_step` of step N it is still N:
    the gradients of batch N exist and the weights are not updated yet.
    """

    def __init__(self, step: int, hook: str = "on_before_optimizer_step") -> None:
        if hook not in HOOKS:
            raise ValueError(f"callbacks.kill.hook={hook!r}; valid: {', '.join(HOOKS)}")
        self.step, self.hook = int(step), hook

    def _maybe_die(self, trainer, hook: str) -> None:
        if hook == self.hook and trainer.global_step == self.step:
            os.kill(os.getpid(), signal.SIGKILL)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        self._maybe_die(trainer, "on_train_batch_start")

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        self._maybe_die(trainer, "on_before_optimizer_step")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        # global_step already counts this batch's update here
        self._maybe_die(trainer, "on_train_batch_end")
