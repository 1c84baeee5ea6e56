"""Lightning's training progress as a log line every N seconds, for output that goes to a file.

Lightning's bars redraw one line with carriage returns: in a Slurm or CI log that is one bar written
at the end. `LineProgressBar` takes the bar's place there (nliforge-train adds it when stderr is not
a terminal, see `progress_callback_for`) and logs `epoch e/E step i/N (p%), rate, elapsed, ETA of
the epoch, the progress-bar metrics` every `every` seconds and at the end of each epoch.
"""

from __future__ import annotations

import logging
import time

from lightning.pytorch.callbacks import ProgressBar

from nliforge.utils.progress import is_terminal, set_interval

log = logging.getLogger("nliforge.progress")


def _clock_text(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class LineProgressBar(ProgressBar):
    """A Lightning progress bar that logs lines; `clock` is the time source (tests pass a fake one)."""

    def __init__(self, every: float, clock=time.monotonic):
        super().__init__()
        self.every, self.clock, self._enabled = float(every), clock, True
        self._start = self._last = 0.0

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self._start = self._last = self.clock()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        now, total = self.clock(), self.total_train_batches
        done = batch_idx + 1
        if not self._enabled or (now - self._last < self.every and done != total):
            return
        self._last = now
        log.info("%s", self.line(trainer, pl_module, done, total, now - self._start))

    def line(self, trainer, pl_module, done: int, total, elapsed: float) -> str:
        """`epoch e/E step i/N (p%), r it/s, elapsed h:mm:ss, ETA h:mm:ss, metrics`."""
        rate = done / elapsed if elapsed > 0 else float("nan")
        epochs = f"{trainer.current_epoch + 1}/{trainer.max_epochs}" if trainer.max_epochs and trainer.max_epochs > 0 \
            else str(trainer.current_epoch + 1)
        parts = [f"epoch {epochs} step {done}"]
        if isinstance(total, int) and total > 0:
            parts[0] += f"/{total} ({100 * done / total:.0f}%)"
        parts.append(f"{rate:.2f} it/s")
        parts.append(f"elapsed {_clock_text(elapsed)}")
        if isinstance(total, int) and total > 0 and rate > 0:
            parts.append(f"ETA {_clock_text((total - done) / rate)}")
        metrics = {k: v for k, v in self.get_metrics(trainer, pl_module).items() if k != "v_num"}
        parts += [f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items()]
        return ", ".join(parts)


def progress_callback_for(trainer_cfg, every) -> LineProgressBar | None:
    """A LineProgressBar when the trainer draws a bar and stderr is not a terminal, else None (Lightning's
    own bar); `every` is the run's `progress_every_s` (null: 30 s), also used by the tqdm loops."""
    seconds = set_interval(every)
    if not trainer_cfg.get("enable_progress_bar", True) or is_terminal():
        return None
    return LineProgressBar(seconds)
