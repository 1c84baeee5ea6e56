"""Resolve a train-set or eval-set config node into Records, whatever the loader.

Loaders: `jsonl` (our data model on disk), `hub` (a Hugging Face dataset, or a local folder
`datasets` can read), `world` (a split of the synthetic NLI world, built on demand).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nliforge.data.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import LABELS, NON_CONTRADICTION, NON_ENTAILMENT
from nliforge.data.records import Record

LOADERS = ("jsonl", "hub", "world")


def gold_labels_for(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The gold label names a set may contain: 3-class, or a 2-class pair."""
    num_classes = int(spec.get("num_classes", 3))
    if num_classes == 3:
        return LABELS
    if num_classes == 2:
        positive = spec.get("positive", "entailment")
        if positive == "entailment":
            return ("entailment", NON_ENTAILMENT)
        if positive == "contradiction":
            return ("contradiction", NON_CONTRADICTION)
        raise NLIDataError(f"{spec.get('name')}.positive={positive!r}; valid: entailment, contradiction")
    raise NLIDataError(f"{spec.get('name')}.num_classes={num_classes}; valid: 2, 3")


def load_set(spec: Mapping[str, Any], where: str, world: Mapping[str, Any] | None = None,
             cache_dir: str | Path = "data_cache") -> list[Record]:
    """Load the records a set config describes; `where` names the config key in errors."""
    loader = spec.get("loader")
    if loader not in LOADERS:
        raise NLIDataError(f"{where}.loader={loader!r}; valid loaders: {', '.join(LOADERS)}")
    if "name" not in spec:
        raise NLIDataError(f"{where}: missing key 'name'")
    allowed = gold_labels_for(spec)
    if loader == "jsonl":
        if not spec.get("path"):
            raise NLIDataError(f"{where}.path: a jsonl set needs a file path")
        records = read_jsonl(spec["path"], allowed_labels=tuple(dict.fromkeys(LABELS + allowed)), allow_unlabeled=False)
    elif loader == "hub":
        from nliforge.data.hub import load_hub_records

        records = load_hub_records(spec, where)
    else:
        records = _load_world(spec, where, world, cache_dir)
    if spec.get("binarize_gold") and len(allowed) == 2:
        records = binarize_gold(records, allowed)
    _check_labels(records, allowed, spec, where)
    limit = spec.get("limit")
    return records if limit is None else records[: int(limit)]


def _load_world(spec, where, world, cache_dir) -> list[Record]:
    from nliforge.world import SPLITS, WorldConfig, ensure_world

    if world is None:
        raise NLIDataError(f"{where}: loader 'world' needs the `world` config node")
    split = spec.get("split")
    if split not in SPLITS:
        raise NLIDataError(f"{where}.split={split!r}; world splits: {', '.join(SPLITS)}")
    cfg = WorldConfig.from_dict(dict(world))
    folder = ensure_world(cfg, Path(cache_dir) / "world")
    return read_jsonl(folder / f"{split}.jsonl")


def binarize_gold(records: list[Record], allowed: tuple[str, ...]) -> list[Record]:
    """Map 3-class gold labels onto a 2-class set's pair (e.g. neutral, contradiction -> non-entailment)."""
    positive, negative = allowed
    return [r if r.label in allowed else Record(r.uid, r.premise, r.hypothesis,
                                                positive if r.label == positive else negative, r.source, r.meta)
            for r in records]


def _check_labels(records, allowed, spec, where) -> None:
    bad = sorted({r.label for r in records if r.label not in allowed})
    if bad:
        raise NLIDataError(
            f"{where}.label_map: the set yields labels {bad}, which a {spec.get('num_classes', 3)}-class set "
            f"cannot hold; valid gold labels: {', '.join(allowed)}"
        )
