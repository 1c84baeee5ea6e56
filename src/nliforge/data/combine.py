"""Training-set combinations of WANLI §3.2: augmentation `A + B` and random replacement `A ◇ B`."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from nliforge.errors import NLIDataError
from nliforge.data.records import Record, check_unique_uids

COMBINE_MODES = ("augment", "replace")
SYMBOL = {"augment": "+", "replace": "◇"}
ASCII_SYMBOL = {"augment": "+", "replace": "_rep_"}


def _rng(seed: int, salt: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}:{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def augment(sets: Sequence[Sequence[Record]]) -> list[Record]:
    """A + B + ...: plain concatenation in the order given."""
    return [rec for records in sets for rec in records]


def replace(base: Sequence[Record], others: Sequence[Sequence[Record]], seed: int,
            salt: str = "replace") -> list[Record]:
    """A ◇ B: |B| randomly chosen examples of A are swapped for all of B, so the size stays |A|.

    With several B's, their union replaces as many examples of A. The kept part of A keeps its
    order and the new examples follow, so the result is a pure function of (inputs, seed, salt);
    a nested ◇ (`combine_tree`) salts with its own id.
    """
    incoming = augment(others)
    if len(incoming) > len(base):
        raise NLIDataError(
            f"data.combine=replace: the replacing sets hold {len(incoming)} examples but the base set "
            f"only {len(base)}; A ◇ B needs |B| <= |A| (use data.combine=augment instead)"
        )
    drop = set(_rng(seed, salt).sample(range(len(base)), len(incoming)))
    return [rec for i, rec in enumerate(base) if i not in drop] + list(incoming)


def combine(named_sets: Sequence[tuple[str, Sequence[Record]]], mode: str, seed: int) -> list[Record]:
    """Combine one or more named training sets; the first is the base A for `replace`."""
    if mode not in COMBINE_MODES:
        raise NLIDataError(f"data.combine={mode!r} is not a combination mode; valid: {', '.join(COMBINE_MODES)}")
    if not named_sets:
        raise NLIDataError("data.train_sets is empty; select at least one, e.g. data/train_sets=[synthetic]")
    empty = [name for name, records in named_sets if not records]
    if empty:
        raise NLIDataError(f"training set(s) {empty} hold no records; every set in a combination needs at least "
                           "one example (an empty file or `limit: 0`?)")
    sets = [records for _, records in named_sets]
    if len(sets) == 1:
        out = list(sets[0])
    elif mode == "augment":
        out = augment(sets)
    else:
        out = replace(sets[0], sets[1:], seed)
    check_unique_uids(out, f"training set {combination_id([n for n, _ in named_sets], mode)}")
    return out


def combination_id(names: Sequence[str], mode: str, ascii_only: bool = False) -> str:
    """A readable id: `mnli+wanli` or `mnli◇wanli`; `ascii_only` gives `mnli_rep_wanli` for paths."""
    if mode not in COMBINE_MODES:
        raise NLIDataError(f"data.combine={mode!r} is not a combination mode; valid: {', '.join(COMBINE_MODES)}")
    symbol = (ASCII_SYMBOL if ascii_only else SYMBOL)[mode]
    return symbol.join(names)


def pair_key(rec: Record) -> tuple[str, str, str | None]:
    """What makes two examples duplicates: the same premise, hypothesis (whitespace-normalised) and label."""
    return " ".join(rec.premise.split()), " ".join(rec.hypothesis.split()), rec.label


def union_without_duplicates(*sets: Sequence[Record]) -> list[Record]:
    """A ∪ B ∪ ...: concatenation in order, keeping the first of examples with the same `pair_key`."""
    seen, out = set(), []
    for records in sets:
        for rec in records:
            key = pair_key(rec)
            if key not in seen:
                seen.add(key)
                out.append(rec)
    return out


def augmentation_sets(base: Sequence[Record], subset: Sequence[Record],
                      counterfactuals: Sequence[Record]) -> dict[str, list[Record]]:
    """DISCO §5.1: D^a = D^s ∪ D^c and D_train = D^b ∪ D^a, both without duplicates."""
    augmented = union_without_duplicates(subset, counterfactuals)
    return {"counterfactuals": list(counterfactuals), "subset": list(subset), "augmented": augmented,
            "train": union_without_duplicates(base, augmented)}
