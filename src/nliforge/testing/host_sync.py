"""Counting host-device synchronisation points on any machine.

On a GPU, turning a device tensor into a Python value (`.item()`, `.tolist()`, `bool(t)`, ...)
makes the host wait until the GPU has finished everything queued; once per training step, that
stops the host from launching the next step while the GPU works. On a CPU the same calls cost
nothing, but they are the same calls: counting them per step (here, with a TorchFunctionMode)
shows on a CPU where a GPU run would synchronise. `tests/models/test_host_sync.py` and the
`--profile-steps` runs of `benchmarks/gpu_throughput.py` use it.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import lightning as L
from torch.overrides import TorchFunctionMode

log = logging.getLogger(__name__)

# Tensor methods that return host values: each one synchronises when the tensor is on a GPU.
TO_HOST = frozenset({"item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__"})

# Calling functions whose conversions are not nliforge's to remove, or no synchronisation on a GPU.
UPSTREAM = frozenset({
    "_get_value",  # torch.optim: Adam's step counters live on the host (unless fused/capturable)
    "_ignore_bidirectional_mask_sdpa",  # transformers: `padding_mask.all()` decides whether SDPA may
                                        # skip the mask; the HF Trainer pays it too, torch.compile skips it
})


class HostValueCounter(TorchFunctionMode):
    """Counts tensor-to-host conversions as {"<method> in <calling function>": n} while active.
    `names`: the tensor methods to count; add `"cpu"` to count copies to the host as well (on a GPU a
    blocking copy waits for the queue too)."""

    def __init__(self, ignore: frozenset[str] | set[str] = frozenset(), names: frozenset[str] = TO_HOST):
        super().__init__()
        self.ignore = ignore  # calling functions not to count (plain or qualified names)
        self.names = names
        self.calls: dict[str, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in self.names:
            code = sys._getframe(1).f_code
            caller = getattr(code, "co_qualname", code.co_name)  # Class.method from Python 3.11
            if caller not in self.ignore and code.co_name not in self.ignore:
                key = f"{name} in {caller}"
                self.calls[key] = self.calls.get(key, 0) + 1
        return func(*args, **(kwargs or {}))

    def per_step(self, steps: int) -> dict[str, float]:
        """The counts divided by `steps`, largest first."""
        return {k: v / max(steps, 1) for k, v in sorted(self.calls.items(), key=lambda kv: -kv[1])}


class HostValueCallback(L.Callback):
    """Counts tensor-to-host conversions over the training steps of the first epoch, from batch
    `start` to its last batch (steps only: no epoch-end work), and logs them per step; with `path`,
    also writes them there as JSON. Add it to any run to audit a module for per-step GPU syncs:
        nliforge-train +callbacks.host_values._target_=nliforge.testing.host_sync.HostValueCallback
    Conversions in `UPSTREAM` (torch, transformers) are not counted."""

    def __init__(self, start: int = 2, path: str | None = None):
        self.start, self.path = start, path
        self.counter, self.steps = HostValueCounter(ignore=UPSTREAM), 0

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        if trainer.current_epoch == 0 and batch_idx == self.start:
            self.counter.__enter__()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.current_epoch != 0 or batch_idx < self.start:
            return
        self.steps += 1
        if batch_idx == trainer.num_training_batches - 1:
            self.counter.__exit__(None, None, None)
            per_step = self.counter.per_step(self.steps)
            log.info("tensor-to-host conversions per training step (%d steps): %s", self.steps, per_step or "none")
            if self.path:
                Path(self.path).write_text(json.dumps({"steps": self.steps, "calls": self.counter.calls,
                                                       "per_step": per_step}, indent=1) + "\n")
