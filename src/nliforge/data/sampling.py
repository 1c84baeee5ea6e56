"""Length-grouped batches: similar-length pairs share a batch, so padding to the longest wastes little."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from torch.utils.data import Sampler


class LengthGroupedBatchSampler(Sampler[list[int]]):
    """Seeded batches of similar length, every example exactly once per epoch.

    Each epoch: shuffle all indices, cut them into chunks of `chunk_batches` batches, sort each
    chunk by length, cut it into batches, then shuffle the batch order. Randomness comes from
    (seed, epoch), so a run is reproducible and epochs differ. Lightning calls `set_epoch`.
    """

    def __init__(self, lengths: Sequence[int], batch_size: int, seed: int = 0, chunk_batches: int = 50,
                 drop_last: bool = False):
        self.lengths = list(lengths)
        self.batch_size, self.seed, self.chunk_batches, self.drop_last = batch_size, seed, chunk_batches, drop_last
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def _batches(self) -> list[list[int]]:
        rng = random.Random(f"{self.seed}:{self.epoch}")
        order = list(range(len(self.lengths)))
        rng.shuffle(order)
        chunk = self.batch_size * self.chunk_batches
        batches = []
        for start in range(0, len(order), chunk):
            part = sorted(order[start:start + chunk], key=lambda i: self.lengths[i])
            batches.extend(part[i:i + self.batch_size] for i in range(0, len(part), self.batch_size))
        if self.drop_last:
            batches = [b for b in batches if len(b) == self.batch_size]
        rng.shuffle(batches)
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        chunk = self.batch_size * self.chunk_batches
        full_chunks, rest = divmod(len(self.lengths), chunk)
        tail = rest // self.batch_size if self.drop_last else -(-rest // self.batch_size)
        return full_chunks * self.chunk_batches + tail
