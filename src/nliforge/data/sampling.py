"""Training batches, planned once for the whole run and sharded across processes.

The plan (which examples form each step's *global* batch) depends only on the seed and the epoch,
never on the number of processes. Under DDP each rank takes its slice of every global batch, so
a multi-process run sees exactly the batches a single-process run with the same `data.batch_size`
sees, and (gradients being averaged) takes the same optimizer steps.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Sequence

from torch.utils.data import Sampler

from nliforge.errors import NLIDataError

log = logging.getLogger(__name__)


class GlobalBatchSampler(Sampler[list[int]]):
    """Seeded random batches of `batch_size` (global) examples, every example once per epoch.

    Randomness comes from (seed, epoch): a run is reproducible and epochs differ; Lightning calls
    `set_epoch` (through `sampler`). With `num_replicas` > 1 each rank yields its share of each global batch; a global
    batch too short to give every rank an example (only ever the last one) is dropped with a warning.

    The plan is made when the first batch is drawn, not when `iter()` is called: Lightning creates
    the first iterator before it calls `set_epoch`, and a resumed run must not take epoch 0's order.
    `resume_at(epoch, batches)` makes that epoch start after its first `batches` batches (the ones a
    checkpoint says were trained), so a run resumed mid-epoch sees the rest of the same plan.
    """

    def __init__(self, n: int, batch_size: int, seed: int = 0, drop_last: bool = False,
                 num_replicas: int = 1, rank: int = 0):
        if batch_size % num_replicas:
            raise NLIDataError(f"data.batch_size={batch_size} is the global batch: it must divide evenly over "
                               f"{num_replicas} processes (trainer.devices x trainer.num_nodes)")
        if not 0 <= rank < num_replicas:
            raise NLIDataError(f"rank {rank} outside 0..{num_replicas - 1}")
        self.n, self.batch_size, self.seed, self.drop_last = n, batch_size, seed, drop_last
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0
        self._resume: tuple[int, int] | None = None

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    @property
    def sampler(self) -> GlobalBatchSampler:
        """Lightning calls `set_epoch` on a DataLoader's `sampler` and its `batch_sampler.sampler`, never on
        a batch sampler itself (`lightning.fabric.utilities.data._set_sampler_epoch`): this is how the
        epoch reaches the plan. Without it every epoch trained on epoch 0's batches."""
        return self

    def resume_at(self, epoch: int, batches: int) -> None:
        """Skip the first `batches` batches of `epoch` (once): they were trained before the checkpoint."""
        self._resume = (int(epoch), int(batches))

    def start_batch(self) -> int:
        """Batches of the current epoch already trained before a resume (0 unless `resume_at` says so)."""
        if self._resume is None or self._resume[0] != self.epoch:
            return 0
        return self._resume[1]

    def _rng(self) -> random.Random:
        return random.Random(f"{self.seed}:{self.epoch}")

    def global_batches(self) -> list[list[int]]:
        """This epoch's plan: the batches a single process would train on, in order."""
        rng = self._rng()
        order = list(range(self.n))
        rng.shuffle(order)
        return self._finish([order[i:i + self.batch_size] for i in range(0, self.n, self.batch_size)], rng)

    def _finish(self, batches: list[list[int]], rng: random.Random) -> list[list[int]]:
        if self.drop_last:
            batches = [b for b in batches if len(b) == self.batch_size]
        return batches

    def _usable(self, batches: list[list[int]]) -> list[list[int]]:
        usable = [b for b in batches if len(b) >= self.num_replicas]
        if len(usable) < len(batches) and self.rank == 0 and self.epoch == 0:
            log.warning("dropped %d batch(es) smaller than the %d processes", len(batches) - len(usable),
                        self.num_replicas)
        return usable

    def __iter__(self) -> Iterator[list[int]]:
        start, self._resume = self.start_batch(), None   # a generator: runs at the first next()
        batches = self.global_batches()
        if self.num_replicas > 1:
            batches = [b[self.rank::self.num_replicas] for b in self._usable(batches)]
        yield from batches[start:]

    def __len__(self) -> int:
        full, rest = divmod(self.n, self.batch_size)
        tail = 0 if self.drop_last or rest == 0 else int(rest >= self.num_replicas)
        return full + tail


class LengthGroupedBatchSampler(GlobalBatchSampler):
    """Batches of similar length, so padding to the longest item wastes little.

    Each epoch: shuffle all indices, cut them into chunks of `chunk_batches` batches, sort each
    chunk by length, cut it into batches, then shuffle the batch order.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, chunk_batches: int = 50,
                 drop_last: bool = False, num_replicas: int = 1, rank: int = 0):
        super().__init__(len(lengths), batch_size, seed, drop_last, num_replicas, rank)
        self.lengths = list(lengths)
        self.chunk_batches = chunk_batches

    def global_batches(self) -> list[list[int]]:
        rng = self._rng()
        order = list(range(self.n))
        rng.shuffle(order)
        chunk = self.batch_size * self.chunk_batches
        batches = []
        for start in range(0, len(order), chunk):
            part = sorted(order[start:start + chunk], key=lambda i: self.lengths[i])
            batches.extend(part[i:i + self.batch_size] for i in range(0, len(part), self.batch_size))
        batches = self._finish(batches, rng)
        rng.shuffle(batches)
        return batches

    def __len__(self) -> int:
        chunk = self.batch_size * self.chunk_batches
        full_chunks, rest = divmod(self.n, chunk)
        whole, part = divmod(rest, self.batch_size)
        tail = whole + (0 if self.drop_last or part == 0 else int(part >= self.num_replicas))
        return full_chunks * self.chunk_batches + tail
