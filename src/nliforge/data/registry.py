"""Resolve a train-set or eval-set config node into Records, whatever the loader.

Loaders: `jsonl` (our data model on disk), `hub` (a Hugging Face dataset, or a local folder
`datasets` can read), `file` (an authors' release file with its own schema, see data/files.py),
`derived` (a deterministic transformation of another set, see data/derivations.py), `world_part` (part k of
n disjoint seeded parts of another set: a world on real text, see data/world_part.py), and the loaders other
modules declare under the entry-point group `nliforge.set_loaders`: `world` (a split of the synthetic NLI
world, built on demand by nliforge.world, which itself reads and writes records with this package).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from nliforge.data.checks import apply_hash_split, check_counts, max_field_chars
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import LABELS, NON_CONTRADICTION, NON_ENTAILMENT
from nliforge.data.records import Record

log = logging.getLogger(__name__)
BUILTIN_LOADERS = ("jsonl", "hub", "file", "derived", "world_part")
LOADER_GROUP = "nliforge.set_loaders"


@cache
def plugin_loaders() -> dict[str, Any]:
    """The set loaders declared under `nliforge.set_loaders`: objects with `splits` (the names a set may
    give as `split`) and `load(spec, where, world, cache_dir) -> list[Record]`."""
    return {ep.name: ep.load() for ep in entry_points(group=LOADER_GROUP)}


def loader_names() -> tuple[str, ...]:
    return BUILTIN_LOADERS + tuple(sorted(plugin_loaders()))


def world_splits() -> tuple[str, ...]:
    """The synthetic world's split names (the `world` set loader's), () without that loader."""
    world = plugin_loaders().get("world")
    return tuple(world.splits) if world is not None else ()


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
    if loader not in loader_names():
        raise NLIDataError(f"{where}.loader={loader!r}; valid loaders: {', '.join(loader_names())}")
    if "name" not in spec:
        raise NLIDataError(f"{where}: missing key 'name'")
    allowed = gold_labels_for(spec)
    if loader == "jsonl":
        records = _load_jsonl(spec, where, allowed)
    elif loader == "hub":
        from nliforge.data.hub import load_hub_records

        records = load_hub_records(spec, where)
    elif loader == "file":
        from nliforge.data.files import load_file_records

        records = load_file_records(spec, where)
    elif loader == "derived":
        records = _load_derived(spec, where, world, cache_dir)
    elif loader == "world_part":
        from nliforge.data.world_part import LOADER as WORLD_PART

        records = WORLD_PART.load(spec, where, world, cache_dir, load_set, named_set_spec)
    else:
        records = plugin_loaders()[loader].load(spec, where, world, cache_dir)
    if spec.get("binarize_gold") and len(allowed) == 2:
        records = binarize_gold(records, allowed)
    _check_labels(records, allowed, spec, where)
    limit = spec.get("limit")
    if limit is None or loader != "hub":   # a Hub set is read only up to its limit: nothing to count
        check_counts(records, spec, where)
    records = apply_hash_split(records, spec, where)
    return records if limit is None else take(records, int(limit), spec.get("limit_seed"), where)


def jsonl_path(spec: Mapping[str, Any], where: str) -> Path:
    """The file of a jsonl set, or the one-line error for a path that is unset or names no file."""
    if not spec.get("path") or spec["path"] == "???":
        raise NLIDataError(f"{where}.path is not set: a jsonl set needs a JSONL file of records, e.g. "
                           f"{where}.path=/path/to/train.jsonl")
    path = Path(str(spec["path"]))
    if spec.get("url") and not path.is_file():
        from nliforge.data.files import missing_file_error

        raise missing_file_error(spec, where, path)
    if not path.is_file():
        raise NLIDataError(f"{where}.path={spec['path']!r}: file not found; expected a JSONL file of records "
                           "(one JSON object per line with uid, premise, hypothesis, label)")
    return path


def check_jsonl_paths(sets: Mapping[str, Any] | None, where: str) -> None:
    """Every jsonl set of `sets` (a config's data.train_sets) names a file: checked before a run imports
    torch, so that a mistyped path costs one line and no imports."""
    for name, spec in (sets or {}).items():
        if isinstance(spec, Mapping) and spec.get("loader") == "jsonl":
            jsonl_path(spec, f"{where}.{name}")


def _load_jsonl(spec: Mapping[str, Any], where: str, allowed: tuple[str, ...]) -> list[Record]:
    """A JSONL file of records in the nliforge data model, or WANLI's release (detected and said)."""
    path = jsonl_path(spec, where)
    from nliforge.data.files import load_file_records, looks_like_wanli

    if looks_like_wanli(path):
        log.info("%s: %s is in WANLI's release format (id, gold, genre, pairID): read as format wanli_jsonl",
                 where, path)
        return load_file_records({**spec, "loader": "file", "format": "wanli_jsonl", "limit": None}, where)
    return read_jsonl(path, allowed_labels=tuple(dict.fromkeys(LABELS + allowed)), allow_unlabeled=False,
                      max_chars=max_field_chars(spec))


def take(records: list[Record], limit: int, seed, where: str) -> list[Record]:
    """The first `limit` records, or with `limit_seed` a seeded random subset of that size in the set's
    order (a same-size slice of a set whose order follows its generation, e.g. by prompt).
    Asking for more than the set has is an error, not a silently smaller set."""
    if seed is None:
        return records[:limit]
    if limit > len(records):
        raise NLIDataError(f"{where}.limit={limit} with limit_seed: the set has only {len(records)} records")
    import random

    keep = sorted(random.Random(int(seed)).sample(range(len(records)), limit))
    return [records[i] for i in keep]


def require_records(records: list[Record], spec: Mapping[str, Any], where: str) -> None:
    """Refuse a set that yields no records, naming where they should have come from (its file, Hub id,
    world split or `limit`): a training run on nothing, or a combination with an empty part, is a mistake."""
    if records:
        return
    loader, limit = spec.get("loader"), spec.get("limit")
    if limit is not None and int(limit) <= 0:
        reason = f"{where}.limit={limit}"
    elif loader in ("jsonl", "file"):
        path = Path(str(spec.get("path")))
        size = path.stat().st_size if path.is_file() else None
        reason = f"{path} is empty (0 bytes)" if size == 0 else f"{path} holds no records (only blank lines)"
    elif loader == "hub":
        reason = f"the Hub set {spec.get('path') or spec.get('source') or spec.get('name')} (split " \
                 f"{spec.get('split', 'train')}) is empty"
    else:
        reason = f"its {loader} source ({spec.get('split') or spec.get('base')}) is empty"
    raise NLIDataError(f"{where}: set {spec.get('name')!r} yields no records: {reason}; a training set needs "
                       "at least one example")


DATA_DIR_ENV = "NLIFORGE_DATA_DIR"


def data_dir(cache_dir: str | Path = "data_cache") -> Path:
    """Where the real data files are: NLIFORGE_DATA_DIR, else `<cache_dir>/real` (what `nliforge-data
    fetch` fills); `paths.data_dir` in the config says the same."""
    return Path(os.environ.get(DATA_DIR_ENV) or Path(cache_dir) / "real")


def paths_node(cache_dir: str | Path) -> dict[str, str]:
    """The `paths` a set YAML may interpolate, for reading one outside a composed config."""
    return {"cache_dir": str(cache_dir), "root_dir": ".", "data_dir": str(data_dir(cache_dir))}


def standalone_root(cache_dir: str | Path, world_part: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a set YAML may interpolate outside a composed config: `paths`, and the `world_part` node a
    world-part set reads (`${oc.select:world_part,null}`) when a caller has one (a world-part set's base)."""
    root: dict[str, Any] = {"paths": paths_node(cache_dir)}
    if world_part is not None:
        root["world_part"] = dict(world_part)
    return root


def config_folders() -> list[Path]:
    """The package's conf/ and the user config folders: NLIFORGE_CONFIG_PATH's, the user data home's conf/
    (registered sets) and the running job's hydra.searchpath."""
    from nliforge.utils.cli import CONF_DIR, USER_CONFIG_ENV
    from nliforge.utils.home import user_conf_dir

    folders = [Path(CONF_DIR)] + [Path(f) for f in os.environ.get(USER_CONFIG_ENV, "").split(os.pathsep) if f.strip()]
    folders.append(user_conf_dir())
    try:
        from hydra.core.hydra_config import HydraConfig

        entries = HydraConfig.get().searchpath
    except (ValueError, ImportError):        # not under @hydra.main (tests, library use)
        entries = []
    folders += [Path(str(e).removeprefix("file://")) for e in entries if not str(e).startswith("pkg://")]
    return list(dict.fromkeys(f.resolve() for f in folders))


def find_set_yaml(name: str, kind: str = "eval_sets") -> Path | None:
    """`data/<kind>/<name>.yaml` in the first config folder that has it (user folders after conf/)."""
    for folder in config_folders():
        path = folder / "data" / kind / f"{name}.yaml"
        if path.is_file():
            return path
    return None


def eval_set_spec(name: str, where: str, cache_dir: str | Path = "data_cache",
                  world_part: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The node of `data/eval_sets/<name>.yaml` (conf/ or a user config folder), `${paths.*}` resolved
    (and `world_part`, given one)."""
    from omegaconf import OmegaConf

    path = find_set_yaml(name)
    if path is None:
        folders = config_folders()
        known = sorted({p.stem for f in folders for p in (f / "data" / "eval_sets").glob("*.yaml")})
        raise NLIDataError(f"{where}={name!r}: neither an eval set in {', '.join(str(f / 'data' / 'eval_sets') for f in folders)} "
                           f"nor a world split; eval sets: {', '.join(known)}; world splits: {', '.join(world_splits())}")
    node = OmegaConf.create({**standalone_root(cache_dir, world_part), "set": OmegaConf.load(path)})
    return OmegaConf.to_container(node, resolve=True)["set"]


def named_set_spec(name: str, where: str, cache_dir: str | Path = "data_cache",
                   world_part: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A registered set by name: `data/train_sets/<name>.yaml` (its node under the set's key) if there is
    one, else the eval set of that name; interpolations resolved as in eval_set_spec."""
    from omegaconf import OmegaConf

    path = find_set_yaml(name, "train_sets")
    if path is None:
        return eval_set_spec(name, where, cache_dir, world_part)
    node = OmegaConf.create({**standalone_root(cache_dir, world_part), "set": OmegaConf.load(path)})
    sets = OmegaConf.to_container(node, resolve=True)["set"]
    if name not in sets:
        raise NLIDataError(f"{where}={name!r}: {path} holds no node {name!r} (a train-set file wraps its set "
                           f"under the set's name); its keys: {', '.join(map(str, sets))}")
    return sets[name]


def _set_node(base: Any, name: str, where: str, cache_dir, world_part=None) -> dict[str, Any]:
    """A set named by `base` (an eval-set name, a world split) or given inline (a node); `world_part`: the
    deriving set's `part`, for a base that is a world part."""
    if isinstance(base, Mapping):
        node = dict(base)
        node.setdefault("name", name)
        return node
    if find_set_yaml(str(base)) is None and base in world_splits():
        return {"name": f"world_{base}", "loader": "world", "split": base, "num_classes": 3}
    return eval_set_spec(str(base), where, cache_dir, world_part)


def _load_derived(spec, where, world, cache_dir) -> list[Record]:
    """`base` (an eval-set name, a world split or an inline set node) transformed by `derivation`;
    `revision_pairs` also loads `originals` (same forms) and pairs them with the base by position."""
    from nliforge.data.derivations import DERIVATIONS, derive, revision_pairs

    name = spec.get("derivation")
    if name not in DERIVATIONS:
        raise NLIDataError(f"{where}.derivation={name!r}: unknown derivation; valid: {', '.join(sorted(DERIVATIONS))}")
    base = spec.get("base")
    if not base:
        raise NLIDataError(f"{where}.base: a derived set needs `base`: an eval-set name, a world split, "
                           f"or a set node")
    base_spec = _set_node(base, f"{spec['name']}_base", f"{where}.base", cache_dir, spec.get("part"))
    if base_spec.get("name") == spec["name"]:
        raise NLIDataError(f"{where}.base={base!r}: a derived set cannot be its own base")
    base_records = load_set(base_spec, f"{where}.base", world, cache_dir)
    if name == "revision_pairs":
        if not spec.get("originals"):
            raise NLIDataError(f"{where}.originals: revision_pairs needs the set of originals the base revises")
        originals_spec = _set_node(spec["originals"], f"{spec['name']}_originals", f"{where}.originals", cache_dir)
        originals = load_set(originals_spec, f"{where}.originals", world, cache_dir)
        per = int(spec.get("revisions_per_original", 2))
        return revision_pairs(originals, base_records, per, f"{where}", spec["name"])
    return derive(base_records, name, int(spec.get("seed", 0)), f"{where}.derivation", spec["name"])


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
