"""Building a training module's optimizer from its config's partial (`model.optimizer`).

`fused=True` (torch.optim.AdamW/Adam: one multi-tensor kernel per step instead of a Python loop
over every parameter) is what `trainer=gpu` and `trainer=ddp` ask for: on one H200 it took
roberta-large from 516 to 543 examples/s (benchmarks/README.md). It is a CUDA setting: on CPU
parameters the optimizer is built as before (fused=None, torch's default), so a CPU run keeps its
numerics and a GPU config moved to a CPU (`trainer.accelerator=cpu`) still runs.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence

import torch

log = logging.getLogger(__name__)


def wants_fused(factory: Callable) -> bool:
    """Whether the optimizer partial asks for `fused=True`."""
    return bool((getattr(factory, "keywords", None) or {}).get("fused"))


def build_optimizer(factory: Callable[..., torch.optim.Optimizer], groups: Sequence[dict]) -> torch.optim.Optimizer:
    """`factory(groups)`, with a `fused=True` request dropped (fused=None) unless every parameter is a
    CUDA tensor. Called from `configure_optimizers`, after Lightning has moved the module to its device."""
    if wants_fused(factory):
        params = [p for group in groups for p in group["params"]]
        if not params or not all(p.is_cuda for p in params):
            log.info("model.optimizer.fused=true: the parameters are not on a CUDA device; using torch's default "
                     "(non-fused) implementation")
            factory = functools.partial(factory, fused=None)
    return factory(groups)
