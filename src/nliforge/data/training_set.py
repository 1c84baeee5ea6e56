"""Assemble the training set a run config selects, with a manifest for provenance."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from nliforge.data.combine import COMBINE_MODES, combine
from nliforge.data.combine_tree import combination_tree, describe, evaluate, render
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import records_digest, write_jsonl
from nliforge.data.records import Record
from nliforge.data.register import set_origin
from nliforge.data.registry import load_set, require_records
from nliforge.utils.atomic import atomic_write_text

log = logging.getLogger(__name__)


@dataclass
class TrainingSet:
    """The combined records, their readable id (`mnli+wanli`, `mnli◇wanli`, `(mnli◇wanli)+disco`), an
    ASCII id for paths, the sizes of the parts and the combination tree (for the manifest)."""

    records: list[Record]
    train_id: str
    train_id_ascii: str
    sizes: dict[str, int]
    digest: str
    tree: dict = field(default_factory=dict)


def build_training_set(cfg: DictConfig) -> TrainingSet:
    """Load every set under `data.train_sets` (in selection order) and combine by `data.combine`: a
    mode (augment, replace) for the whole list, or an expression over the sets' names (`combine_tree`).

    Writes nothing to the run folder: every input error (a bad line, a set that yields no records, a
    malformed expression) is raised here, before train() creates it."""
    selected = cfg.data.get("train_sets")
    if not selected:
        raise NLIDataError("data.train_sets: no training set selected; e.g. data/train_sets=[synthetic]")
    world = OmegaConf.to_container(cfg.world, resolve=True) if "world" in cfg else None
    specs = {name: OmegaConf.to_container(spec, resolve=True) for name, spec in selected.items()}
    names = [spec.get("name", name) for name, spec in specs.items()]
    mode = str(cfg.data.combine)
    tree = combination_tree(mode, names)       # a malformed expression fails before any set is loaded
    named = []
    for name, spec in specs.items():
        where = f"data.train_sets.{name}"
        log.info("training set %s: %s", name, set_origin(name))   # which file a name selected
        records = load_set(spec, where, world, cfg.data.cache_dir)
        require_records(records, spec, where)   # an empty part of a combination, too: before any file is written
        named.append((spec.get("name", name), records))
    sets = dict(named)
    records = combine(named, mode, int(cfg.seed)) if mode in COMBINE_MODES else evaluate(tree, sets, int(cfg.seed))
    return TrainingSet(records, render(tree), render(tree, ascii_only=True), {n: len(r) for n, r in named},
                       records_digest(records), describe(tree, sets))


def write_training_manifest(ts: TrainingSet, cfg: DictConfig, out_dir: Path, extra: dict | None = None) -> None:
    """Record what was trained on: sizes in and out, combination mode, seed, sha256 of the JSONL bytes,
    and `extra` entries the trainer adds (e.g. `poe_bias_model`, the frozen bias expert's folder)."""
    manifest = {"train_id": ts.train_id, "train_id_ascii": ts.train_id_ascii, "combine": cfg.data.combine,
                "seed": int(cfg.seed), "sizes_in": ts.sizes, "size": len(ts.records), "sha256": ts.digest,
                "tree": ts.tree, **(extra or {})}
    atomic_write_text(out_dir / "train_set.manifest.json", [json.dumps(manifest, indent=2, ensure_ascii=False)])
    if cfg.data.get("save_train_set"):
        write_jsonl(ts.records, out_dir / "train_set.jsonl")
