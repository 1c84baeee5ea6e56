"""Sharded generation runs and their merge.

`shard=k/n`: the run's stages up to its first generator stage (the *shard stage*, e.g. `generate`) run in
the shard's own folder; that stage sends only the requests shard k holds (nliforge.generation.shard);
the shard then records itself complete in its manifest (`shard`) and stops. The stages before the
shard stage are the same in every shard (the same config and inputs); the stages after it need every
record, so they run after the merge.

`merge=<shard folders or the multirun folder>` checks, before writing anything, that every shard of
0..n-1 is there once, finished, from the same resolved config (the keys in `MERGE_VOLATILE` aside) and
with the same outputs before the shard stage; then it makes the merge's own folder: shard 0's earlier
stages and files, every shard's cache answers and ledger counters, and runs the pipeline from the shard
stage on. The shard stage is computed again from the merged cache, sending nothing (a request no
shard answered is an error), so it writes what an unsharded run writes, and so does every stage after it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError
from nliforge.engine.run_folder import RunFolder
from nliforge.engine.stages import Stage
from nliforge.generation.shard import Shard, parse_shard
from nliforge.utils.config_diff import VOLATILE_KEYS, config_difference

CACHE_FILE = "llm_cache.sqlite"
# keys that may differ between the shards of one run: where each ran and which servers answered
MERGE_VOLATILE = (*VOLATILE_KEYS, "shard", "merge", "generator.base_url", "generator.endpoints", "num_threads",
                  "progress_every_s")
NOT_COPIED = {"stages", "config.yaml", "manifest.json", "environment.json", "dataset.jsonl", ".hydra", ".submitit"}
LEDGER_NOT_MERGED = ("cached", "other_shard")   # a shard's own bookkeeping; the merge counts its own


def shard_stage(pipeline: str, stages: Sequence[Stage], key: str = "shard") -> Stage:
    """The first stage that calls a generator: where a sharded run splits."""
    for st in stages:
        if st.generators:
            return st
    raise NLIDataError(f"{key}: pipeline {pipeline!r} has no stage that calls a generator in pipeline.stages "
                       f"({', '.join(s.name for s in stages)}); only a run with a generate stage can be sharded")


def shard_folders(value) -> list[Path]:
    """The shard folders `merge=` names: folders holding a config.yaml, or a multirun folder (its job
    folders that hold one)."""
    items = list(value) if isinstance(value, (list, tuple, ListConfig)) else [value]
    found: list[Path] = []
    for item in items:
        path = Path(str(item))
        if (path / "config.yaml").is_file():
            found.append(path)
        elif path.is_dir():
            jobs = sorted((p for p in path.iterdir() if _is_shard(p)), key=lambda p: p.name)
            if not jobs:
                raise NLIDataError(f"merge={item}: neither a shard's run folder nor a multirun folder holding them "
                                   "(no config.yaml of a run with shard=k/n in it or its subfolders)")
            found.extend(jobs)
        else:
            raise NLIDataError(f"merge={item}: no such folder")
    return found


RUN = "<run folder>"   # the shard's own folder in its config, so that shards compare equal


def _is_shard(folder: Path) -> bool:
    """A run folder made with `shard=` (a multirun folder may also hold the merge's own folder)."""
    return (folder / "config.yaml").is_file() and OmegaConf.load(folder / "config.yaml").get("shard") is not None


def _load(folder: Path) -> tuple[dict, dict]:
    config = OmegaConf.to_container(OmegaConf.load(folder / "config.yaml"), resolve=True)
    return _relocated(config, str(config["paths"]["output_dir"]), RUN), RunFolder(folder).manifest()


def _relocated(node, old: str, new: str):
    """`node` with every string that holds the path `old` (paths under the run folder) holding `new` instead."""
    if isinstance(node, dict):
        return {k: _relocated(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [_relocated(v, old, new) for v in node]
    return node.replace(old, new) if isinstance(node, str) and len(old) > 1 and old in node else node


def check_shards(value) -> list[tuple[Shard, Path, dict]]:
    """Every shard 0..n-1 once, finished, from one config: [(shard, folder, config)] by k, else one error."""
    found = []
    for folder in shard_folders(value):
        config, manifest = _load(folder)
        shard = parse_shard(config.get("shard"), f"{folder}/config.yaml: shard")
        if shard is None:
            raise NLIDataError(f"merge: {folder} is not a shard (its config has shard=null)")
        mark = manifest.get("shard") or {}
        if not mark.get("complete") or not RunFolder(folder).is_done(str(mark.get("stage"))):
            raise NLIDataError(f"merge: shard {shard} in {folder} has not finished (rerun it with the same command; "
                               "it resumes without resending what was answered)")
        found.append((shard, folder, config))
    return _check_set(found)


def _check_set(found: list[tuple[Shard, Path, dict]]) -> list[tuple[Shard, Path, dict]]:
    n = found[0][0].n
    by_k: dict[int, tuple[Shard, Path, dict]] = {}
    for shard, folder, config in found:
        if shard.n != n:
            raise NLIDataError(f"merge: {folder} is shard {shard} but {found[0][1]} is shard {found[0][0]}: "
                               "the shards of one run share n")
        if shard.k in by_k:
            raise NLIDataError(f"merge: two copies of shard {shard}: {by_k[shard.k][1]} and {folder}")
        by_k[shard.k] = (shard, folder, config)
    missing = [f"{k}/{n}" for k in range(n) if k not in by_k]
    if missing:
        raise NLIDataError(f"merge: shard(s) {', '.join(missing)} missing (found {', '.join(str(s) for s, _, _ in found)})")
    ordered = [by_k[k] for k in range(n)]
    first = ordered[0]
    for shard, folder, config in ordered[1:]:
        diff = config_difference(first[2], config, volatile=MERGE_VOLATILE)
        if diff:
            raise NLIDataError(f"merge: shard {shard} ({folder}) was made with another config than shard "
                               f"{first[0]} ({first[1]}): {diff}")
    return ordered


def merged_config(cfg: DictConfig, shards: list[tuple[Shard, Path, dict]]) -> DictConfig:
    """The merge's run config: shard 0's resolved config, unsharded, writing into this run's folder."""
    run = OmegaConf.create(_relocated(shards[0][2], RUN, str(cfg.paths.output_dir)))
    with open_dict(run):
        run.shard = None
        run.merge = [str(folder) for _, folder, _ in shards]
        run.dry_run = False
    OmegaConf.set_readonly(run, True)
    return run


def check_same_inputs(shards: list[tuple[Shard, Path, dict]], before: Sequence[str]) -> None:
    """The stages before the shard stage wrote the same outputs in every shard."""
    first = RunFolder(shards[0][1])
    for shard, folder, _ in shards[1:]:
        other = RunFolder(folder)
        for name in before:
            if other.stage_entry(name).get("sha256") != first.stage_entry(name).get("sha256"):
                raise NLIDataError(f"merge: stage {name!r} wrote different outputs in shard {shard} ({folder}) and "
                                   f"shard {shards[0][0]} ({shards[0][1]}); shards must start from the same inputs")


def seed_merged_folder(folder: RunFolder, shards: list[tuple[Shard, Path, dict]], before: Sequence[str]) -> dict:
    """Shard 0's stages before the shard stage (and its other files: the classifier, ...), and every shard's
    cache and ledger, into the merge's folder; returns the manifest's `merged_from`."""
    from nliforge.generation.cache import ResponseCache

    src = RunFolder(shards[0][1])
    for item in sorted(src.root.iterdir()):
        if item.name not in NOT_COPIED and not item.name.startswith(CACHE_FILE) and not item.name.endswith(".log"):
            _copy(item, folder.root / item.name)
    folder.stage_dir.mkdir(parents=True, exist_ok=True)
    for name in before:
        for path in (src.output_path(name), src.drops_path(name)):
            if path.exists():
                _copy(path, folder.stage_dir / path.name)
    folder.update_manifest(stages={name: src.stage_entry(name) for name in before})
    merged_from = []
    with ResponseCache(folder.root / CACHE_FILE) as cache:
        for shard, path, _ in shards:
            with ResponseCache(path / CACHE_FILE) as part:
                new = cache.merge_from(part, skip=LEDGER_NOT_MERGED)
            merged_from.append({"shard": str(shard), "folder": str(path.resolve()), "answers": new})
    return {"merged_from": merged_from}


def _copy(src: Path, dst: Path) -> None:
    """A hard link where the file system allows it (checkpoints are large), else a copy."""
    def link(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    if src.is_dir():
        shutil.copytree(src, dst, copy_function=link, dirs_exist_ok=True)
    elif not dst.exists():
        link(src, dst)
