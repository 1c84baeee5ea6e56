"""Shards of a generation run: `shard=k/n` sends only the requests shard k holds; a merge answers every
request from the shards' caches and sends none.

The rule is on each request's identity, its cache key (a sha256 of the backend kind, the model, the
prompt or messages, the sampling settings, the sample indices and the seed): shard k of n holds the
requests whose key, read as a number, is k modulo n. So shard k of n always holds the same requests,
whatever the other shards do, and the n shards together hold each request exactly once.

The engine sets the shard (or the merge's no-send guard) while a run's generate stages run; the runner
reads it (`active_shard`, `send_forbidden`). A request another shard holds is answered, in this
shard's own folder, with the Failure `other_shard` (never cached): the shard's stage outputs are
partial, and only the merge's are the dataset.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from nliforge.errors import NLIDataError

OTHER_SHARD = "other_shard"


@dataclass(frozen=True)
class Shard:
    k: int
    n: int

    def holds(self, key: str) -> bool:
        """Whether a request with this cache key (hex sha256) is this shard's."""
        return int(key[:16], 16) % self.n == self.k

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def parse_shard(value, key: str = "shard") -> Shard | None:
    """`k/n` (0 <= k < n) as a Shard; None for null; one error naming `key` otherwise."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if not m or int(m.group(2)) < 1 or int(m.group(1)) >= int(m.group(2)):
        raise NLIDataError(f"{key}={value!r}: expected k/n with 0 <= k < n, e.g. shard=0/4")
    return Shard(int(m.group(1)), int(m.group(2)))


_SHARD: ContextVar[Shard | None] = ContextVar("nliforge_shard", default=None)
_NO_SEND: ContextVar[str | None] = ContextVar("nliforge_no_send", default=None)


def active_shard() -> Shard | None:
    return _SHARD.get()


def send_forbidden() -> str | None:
    """Why no request may be sent now (a merge), or None."""
    return _NO_SEND.get()


@contextlib.contextmanager
def sharding(shard: Shard | None) -> Iterator[None]:
    token = _SHARD.set(shard)
    try:
        yield
    finally:
        _SHARD.reset(token)


@contextlib.contextmanager
def sending_nothing(reason: str | None) -> Iterator[None]:
    token = _NO_SEND.set(reason)
    try:
        yield
    finally:
        _NO_SEND.reset(token)


# Fault injection for the Slurm tests of sharded runs (tests/project/test_generate_slurm.py): a test cannot reach
# into an array task to stop it at a chosen moment, so the task does it itself. With
# NLIFORGE_TEST_SIGNAL_SHARD=<k/n>:<answers>:<signal>:<marker file> in the environment (Slurm passes the submitting
# environment to its jobs), shard k/n sends `signal` to its own process after its `answers`-th answer, once (the
# marker file, written first, keeps the rerun from doing it again). Unset, as always outside tests, nothing runs.
SIGNAL_ENV = "NLIFORGE_TEST_SIGNAL_SHARD"


def signal_self_if_asked(answers: int) -> None:
    spec = os.environ.get(SIGNAL_ENV, "")
    if not spec:
        return
    which, count, name, marker = spec.split(":", 3)
    shard = active_shard()
    if shard is None or str(shard) != which or answers != int(count) or Path(marker).exists():
        return
    Path(marker).write_text(f"shard {which} sent {name} to itself after {answers} answers\n")
    os.kill(os.getpid(), signal.Signals[name])

