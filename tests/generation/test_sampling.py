"""Length-grouped batches: every example once per epoch, seeded, less padding than random batches."""

import random

import pytest

from nliforge.data.sampling import LengthGroupedBatchSampler


@pytest.mark.parametrize("n,bs,drop_last", [(1000, 32, False), (1000, 32, True), (3200, 32, False), (7, 4, False)])
def test_each_example_once_and_len_matches(n, bs, drop_last):
    lengths = [random.Random(i).randint(5, 128) for i in range(n)]
    sampler = LengthGroupedBatchSampler(lengths, bs, seed=0, chunk_batches=5, drop_last=drop_last)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    flat = [i for b in batches for i in b]
    assert len(flat) == len(set(flat))
    if not drop_last:
        assert sorted(flat) == list(range(n))
    assert all(len(b) <= bs for b in batches)


def test_seeded_and_epoch_dependent():
    lengths = [random.Random(i).randint(5, 128) for i in range(500)]
    a, b = LengthGroupedBatchSampler(lengths, 16, seed=1), LengthGroupedBatchSampler(lengths, 16, seed=1)
    assert list(a) == list(b)
    a.set_epoch(1)
    assert list(a) != list(b)


def test_less_padding_than_random_batches():
    rng = random.Random(0)
    lengths = [rng.randint(10, 128) for _ in range(3200)]
    grouped = LengthGroupedBatchSampler(lengths, 32, seed=0)
    order = list(range(3200))
    rng.shuffle(order)
    plain = [order[i:i + 32] for i in range(0, 3200, 32)]

    def padded(batches):
        return sum(max(lengths[i] for i in b) * len(b) for b in batches)

    assert padded(grouped) < 0.7 * padded(plain)
