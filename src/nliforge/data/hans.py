"""HANS (McCoy, Pavlick, Linzen 2019) and McCoy et al.'s (2020) MNLI difficulty counts: the derivations
that cut the sets the real-text suite runs on these cores (registered in data/derivations.py's table).

- `hans_subcase_200`: a stratified subset of HANS, `PER_SUBCASE` (200) pairs of each of its 30 subcases
  (= 6,000; every subcase is half of one heuristic x label cell, so each of the six cells has 1,000), chosen
  by a generator seeded with the derivation's `seed`, kept in the set's order.
- `mccoy_hard`: the pairs of an MNLI set with McCoy's count that at most `HARD_MAX_CORRECT` (20) of the 100
  BERT-base runs got right (an MNLI "hard" set by an external difficulty measure; 1,082 of the 9,815
  dev-matched pairs).

`stratify` and `hard_pairs` are the plain functions; the per-cell scores are in evaluation/hans.py.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

from nliforge.errors import NLIDataError
from nliforge.data.records import Record

HEURISTICS = ("lexical_overlap", "subsequence", "constituent")
N_SUBCASES = 30
PER_SUBCASE = 200
MCCOY_KEY = "number of correct responses (out of 100)"
HARD_MAX_CORRECT = 20


def stratify(records: Sequence[Record], per: int, seed: int = 0, key: str = "subcase") -> list[Record]:
    """`per` records of each value of meta[key], a seeded sample per value, in the records' order. A value
    with fewer than `per` records is an error (a subset that is silently not stratified is worse)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        if key not in r.meta:
            raise NLIDataError(f"stratify: record {r.uid} has no meta {key!r}; a HANS-style set carries "
                               "heuristic, subcase and template")
        groups[str(r.meta[key])].append(i)
    keep: list[int] = []
    for value in sorted(groups):
        idx = groups[value]
        if len(idx) < per:
            raise NLIDataError(f"stratify: {key}={value!r} has {len(idx)} records, fewer than {per}")
        keep += random.Random(f"{seed}|{value}").sample(idx, per)
    return [records[i] for i in sorted(keep)]


def hard_pairs(records: Sequence[Record], max_correct: int = HARD_MAX_CORRECT) -> list[Record]:
    """The records whose McCoy count (meta MCCOY_KEY, out of 100) is at most `max_correct`."""
    missing = [r.uid for r in records if MCCOY_KEY not in r.meta]
    if missing:
        raise NLIDataError(f"mccoy_hard: {len(missing)} records (e.g. {missing[0]}) have no meta {MCCOY_KEY!r}; "
                           "the base must be McCoy et al.'s MNLI dev file (mnli_dev_matched_mccoy or a part of it)")
    return [r for r in records if int(r.meta[MCCOY_KEY]) <= max_correct]


def hans_subcase_200(records: Sequence[Record], seed: int = 0) -> list[Record]:
    return stratify(records, PER_SUBCASE, seed)


def mccoy_hard(records: Sequence[Record], seed: int = 0) -> list[Record]:
    return hard_pairs(records)
