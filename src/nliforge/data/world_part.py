"""The `world_part` set loader: part k of n disjoint seeded parts of a registered set, so that a world on real
text (an independent sample of the data) is a sweep dimension of a run: `world_part.index=k`.

A set YAML with `loader: world_part` names its `base` (a registered train or eval set, a list of them read
one after the other, or an inline set node) and reads the run's `world_part` node through
`part: ${oc.select:world_part,null}` (index 1-based, count, seed). The cut:

- plain: one permutation of the base's records (`random.Random(seed).shuffle` over their indices) cut into
  `count` slices of near-equal size (slice k = positions (k-1)n/count .. kn/count); the part keeps the
  permutation's order;
- `stratify: <meta key>`: per group (in sorted order) a permutation seeded `f"{seed}|{group}"`, cut into
  `count` equal slices (len // count each; a remainder belongs to no part); the part keeps the base's order,
  each record's position in its group's slice kept as meta `slot`; `per_group_limit: N` keeps slots < N.

Within a slice the first `round(train_fraction * len)` records (in the slice's seeded order) are `split:
train`, the rest `split: test`; `split: all` keeps the slice. `relabel: {from: to}` maps gold labels (e.g. a
2-class set's non-entailment trained as neutral), the label before kept as meta `relabel_meta` if named.
The set's own `limit` (load_set) then takes the first N.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from nliforge.data.records import Record
from nliforge.errors import NLIDataError

SPLITS = ("train", "test", "all")
KEY = "world_part"   # the run config's node: {index: null, count: 5, seed: 0}


def world_part_of(spec: Mapping[str, Any], where: str) -> tuple[int, int, int]:
    """(index, count, seed) of the run's `world_part` node as the set received it, checked."""
    part = spec.get("part") or {}
    if not isinstance(part, Mapping):
        raise NLIDataError(f"{where}.part={part!r}: expected the run's world_part node, "
                           "part: ${oc.select:world_part,null}")
    count, seed, index = part.get("count", 5), part.get("seed", 0), part.get("index")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise NLIDataError(f"{KEY}.count={count!r}: expected a whole number >= 1 (the number of disjoint parts)")
    if index is None:
        raise NLIDataError(f"{KEY}.index is not set: set {spec.get('name')!r} is one of {count} disjoint parts "
                           f"of {spec.get('base')}; e.g. {KEY}.index=1 (1..{count})")
    if not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= count:
        raise NLIDataError(f"{KEY}.index={index!r}: expected a whole number in 1..{count} ({KEY}.count) "
                           f"for set {spec.get('name')!r}")
    return index, count, seed


def split_slice(chunk: list, spec: Mapping[str, Any], where: str) -> list:
    """The train part (the first round(train_fraction * len)), the test part (the rest) or all of a slice."""
    split = spec.get("split", "all")
    if split not in SPLITS:
        raise NLIDataError(f"{where}.split={split!r}; valid: {', '.join(SPLITS)}")
    if split == "all":
        return chunk
    fraction = spec.get("train_fraction", 0.7)
    if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise NLIDataError(f"{where}.train_fraction={fraction!r}: expected a number in (0, 1]")
    n_train = round(fraction * len(chunk))
    return chunk[:n_train] if split == "train" else chunk[n_train:]


def plain_part(records: list[Record], index: int, count: int, seed: int, spec, where) -> list[Record]:
    """Slice `index` of one seeded permutation, in the permutation's order (experiments' `cut`)."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    k = index - 1
    chunk = [records[i] for i in order[k * len(order) // count:(k + 1) * len(order) // count]]
    return split_slice(chunk, spec, where)


def stratified_part(records: list[Record], index: int, count: int, seed: int, spec, where) -> list[Record]:
    """Per group of meta `stratify` its slice `index` of a permutation seeded f"{seed}|{group}", in the
    base's order, each record's place in its group's slice kept as meta `slot`."""
    key, cap = spec["stratify"], spec.get("per_group_limit")
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        if key not in r.meta:
            raise NLIDataError(f"{where}.stratify={key!r}: record {r.uid} has no meta {key!r}; "
                               f"its meta keys: {', '.join(sorted(r.meta)) or '(none)'}")
        groups[r.meta[key]].append(i)
    kept: list[tuple[int, int]] = []
    for group in sorted(groups):
        idx = list(groups[group])
        random.Random(f"{seed}|{group}").shuffle(idx)
        per = len(idx) // count
        chunk = list(enumerate(idx[(index - 1) * per:index * per]))
        chunk = split_slice(chunk, spec, where)
        kept += [(i, slot) for slot, i in (chunk if cap is None else chunk[:int(cap)])]
    return [Record(records[i].uid, records[i].premise, records[i].hypothesis, records[i].label,
                   records[i].source, {**records[i].meta, "slot": slot}) for i, slot in sorted(kept)]


def relabel(records: list[Record], mapping: Mapping[str, str], meta_key: str | None) -> list[Record]:
    """Gold labels mapped by `mapping`; with `meta_key` every record keeps its label before as that meta."""
    return [Record(r.uid, r.premise, r.hypothesis, mapping.get(r.label, r.label), r.source,
                   {**r.meta, meta_key: r.label} if meta_key else r.meta) for r in records]


def base_records(spec: Mapping[str, Any], where: str, world, cache_dir, load_set, named_set_spec) -> list[Record]:
    """The records of `base`: one registered set's (train sets first, then eval sets), several read in
    order, or an inline set node's (read by the registry's `load_set` and `named_set_spec`, which it passes in:
    the registry imports this loader, not the other way round)."""
    base = spec.get("base")
    if not base:
        raise NLIDataError(f"{where}.base: a world_part set needs `base`: a registered set's name, a list of "
                           "them, or a set node")
    bases = list(base) if isinstance(base, (list, tuple)) else [base]
    out: list[Record] = []
    for j, b in enumerate(bases):
        at = f"{where}.base" + (f"[{j}]" if len(bases) > 1 else "")
        node = dict(b) if isinstance(b, Mapping) else named_set_spec(str(b), at, cache_dir, spec.get("part"))
        if node.get("name") == spec.get("name"):
            raise NLIDataError(f"{at}={b!r}: a world_part set cannot be its own base")
        out += load_set(node, at, world, cache_dir)
    return out


class WorldPartLoader:
    splits = SPLITS

    @staticmethod
    def load(spec: Mapping[str, Any], where: str, world, cache_dir, load_set, named_set_spec) -> list[Record]:
        index, count, seed = world_part_of(spec, where)
        if spec.get("per_group_limit") is not None and not spec.get("stratify"):
            raise NLIDataError(f"{where}.per_group_limit needs {where}.stratify (the meta key of the groups)")
        records = base_records(spec, where, world, cache_dir, load_set, named_set_spec)
        cut = stratified_part if spec.get("stratify") else plain_part
        part = cut(records, index, count, seed, spec, where)
        mapping = spec.get("relabel")
        if mapping:
            if not isinstance(mapping, Mapping):
                raise NLIDataError(f"{where}.relabel={mapping!r}: expected a mapping of gold labels, "
                                   "e.g. {non-entailment: neutral}")
            part = relabel(part, mapping, spec.get("relabel_meta"))
        return part


LOADER = WorldPartLoader()


def check_world_parts(sets: Mapping[str, Any] | None, where: str) -> None:
    """Every world-part set of `sets` (a config's data.train_sets or suite.sets) has a world: checked before a
    run imports torch, so that an unset `world_part.index` costs one line and no imports."""
    from omegaconf import DictConfig, OmegaConf

    for name, spec in (sets or {}).items():
        if isinstance(spec, (Mapping, DictConfig)) and spec.get("loader") == "world_part":
            node = OmegaConf.to_container(spec, resolve=True) if isinstance(spec, DictConfig) else dict(spec)
            world_part_of(node, f"{where}.{name}")
