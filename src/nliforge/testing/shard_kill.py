"""A shard that signals itself once, after its n-th answer, for the tests of sharded generation on Slurm.

A test cannot reach into a Slurm array task to kill it at a chosen moment, so the task does it itself:
with `NLIFORGE_TEST_SIGNAL_SHARD=<k/n>:<answers>:<signal>:<marker file>` in the environment (Slurm passes
the submitting environment to its jobs), the runner of shard k/n sends `signal` to its own process after
its `answers`-th answer, once: the marker file, written first, keeps a rerun from doing it again. Unset
(always, outside tests), nothing here runs.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ENV = "NLIFORGE_TEST_SIGNAL_SHARD"


def armed() -> bool:
    return bool(os.environ.get(ENV))


def after_answer(shard, answers: int) -> None:
    """Signal this process when the environment names this shard and its answer count is reached."""
    spec = os.environ.get(ENV, "")
    which, count, name, marker = spec.split(":", 3)
    if shard is None or str(shard) != which or answers != int(count) or Path(marker).exists():
        return
    Path(marker).write_text(f"shard {which} sent {name} to itself after {answers} answers\n")
    os.kill(os.getpid(), signal.Signals[name])
