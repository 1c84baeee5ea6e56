"""`input=`: the dataset a pipeline consumes, named by reference, with its provenance.

A reference is one of
- a generation run folder (it holds manifest.json): its final dataset (`<run>/dataset.jsonl`);
- a JSONL file of the data model (e.g. `<run>/review/reviewed.jsonl`; when it lies inside a run
  folder, that run's manifest is part of the provenance);
- a folder written by `datasets.Dataset.save_to_disk` with the data model's columns;
- the name of a training set (conf/data/train_sets), an eval set (conf/data/eval_sets) or a world split.

A list of references is their concatenation (a uid seen twice keeps its first record); `input_limit`
keeps the first N of those records, or with `{per_label: N}` the first N of each label (unlabeled records
count as one more label), for a small run of any pipeline that takes `input=`. Every
reference's provenance (kind, path, sha256 or fingerprint, count, and for a run folder its pipeline
and its own `input`) goes into the consuming run's manifest, so WANLI -> DISCO -> z-filter runs
chain their provenance. The `input` stage (and `zfilter_seed`) load here and are re-run on every
start: they are cheap, and a changed file then reaches the stages after them.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl, records_digest
from nliforge.data.records import Record, record_from_mapping
from nliforge.engine.stages import RECORD_FIELDS, StageContext, StageOutput, stage
from nliforge.utils.atomic import read_json_file

INPUT_STAGE = "input"
FINAL = "dataset.jsonl"
HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")


def refs_of(value: Any) -> list[str]:
    """A reference or a list of them, as a list of strings ([] for null)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, ListConfig)):
        return [str(v) for v in value]
    return [str(value)]


def check_input(cfg: DictConfig) -> DictConfig:
    """Before anything is written: `input` given to a pipeline that takes none, or missing where the
    pipeline needs it, is an error; a given `input` puts the `input` stage first in the stage list (in a new
    config: `cfg` itself is left as it was)."""
    refs, name = refs_of(cfg.get("input")), str(cfg.pipeline.name)
    accepts = bool(cfg.pipeline.get("accepts_input", False))
    if input_limit(cfg.get("input_limit")) != (None, None) and not refs:
        raise NLIDataError(f"input_limit={cfg.input_limit}: caps `input=`, and this run of pipeline {name!r} has no "
                           "input (a pipeline's own data has its own cap, e.g. data.train_sets.<name>.limit for the "
                           "classifier's set, pipeline.statements.limit for long-text)")
    if refs and not accepts:
        raise NLIDataError(f"input={refs}: pipeline {name!r} does not consume a dataset (pipelines that do "
                           "set pipeline.accepts_input: true, e.g. disco and zfilter)")
    stages = list(cfg.pipeline.stages)
    if not refs and INPUT_STAGE in stages:
        raise NLIDataError(f"input: pipeline {name!r} needs a dataset: input=<run folder | JSONL file | saved "
                           "Hugging Face dataset | training or eval set name> (or a list of them)")
    for ref in refs:   # a reference that names nothing is refused before the run folder exists
        ref_kind(ref, cfg, "input")
    if refs and INPUT_STAGE not in stages:
        cfg = copy.deepcopy(cfg)
        with open_dict(cfg):
            cfg.pipeline.stages = [INPUT_STAGE, *stages]
    return cfg


def input_limit(value: Any) -> tuple[int | None, int | None]:
    """`input_limit` as (first N records, N per label); (None, None) for null. Anything but a positive
    whole number or {per_label: <positive whole number>} is a one-line error."""
    if value is None:
        return None, None
    node = OmegaConf.to_container(value) if isinstance(value, DictConfig) else value
    per_label = isinstance(node, dict) and set(node) == {"per_label"}
    n = node["per_label"] if per_label else node
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise NLIDataError(f"input_limit={value}: expected a positive whole number (the first N input records) or "
                           "{per_label: N} (the first N of each label), e.g. input_limit=100 or 'input_limit={per_label: 20}'")
    return (None, n) if per_label else (n, None)


def limited(records: Sequence[Record], limit: tuple[int | None, int | None]) -> tuple[list[Record], list[Record]]:
    """(kept, left out): the first `limit[0]` records, or the first `limit[1]` of each label, in order."""
    first, per_label = limit
    if first is None and per_label is None:
        return list(records), []
    if first is not None:
        return list(records[:first]), list(records[first:])
    seen: dict[str | None, int] = {}
    kept, left = [], []
    for rec in records:
        seen[rec.label] = seen.get(rec.label, 0) + 1
        (kept if seen[rec.label] <= per_label else left).append(rec)
    return kept, left


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _enclosing_run(path: Path) -> dict | None:
    """The run folder a file lies in (a parent with manifest.json): its path, pipeline and input."""
    for parent in path.resolve().parents:
        manifest = parent / "manifest.json"
        if manifest.is_file():
            m = read_json_file(manifest)
            return {"path": str(parent), "pipeline": m.get("pipeline"), "input": m.get("input")}
    return None


def _run_final(root: Path, where: str) -> Path:
    """The final dataset of a finished run folder; an error when it has none."""
    final = read_json_file(root / "manifest.json").get("final")
    if not final or not (root / final["path"]).is_file():
        raise NLIDataError(f"{where}={str(root)!r}: this run folder has no final dataset (manifest.json has no "
                           "`final`: the run has not finished, or its last stage made no records)")
    return root / final["path"]


def ref_kind(ref: str, cfg: DictConfig, where: str) -> str:
    """What a reference names (run, hf_disk, jsonl, set), checked without reading its records: a path that
    is none of these, a run folder without a final dataset, an unknown set name are errors."""
    path = Path(ref)
    if path.is_dir() and (path / "manifest.json").is_file():
        _run_final(path, where)
        return "run"
    if path.is_dir() and any((path / m).is_file() for m in HF_MARKERS):
        return "hf_disk"
    if path.is_file():
        return "jsonl"
    if path.exists() or "/" in ref or ref.endswith(".jsonl"):
        raise NLIDataError(f"{where}={ref!r}: neither a JSONL file, a run folder (with manifest.json) nor a "
                           f"folder written by datasets' save_to_disk ({', '.join(HF_MARKERS)})")
    _set_spec(ref, cfg, where)
    return "set"


def _from_run(root: Path, where: str) -> tuple[list[Record], dict]:
    manifest = read_json_file(root / "manifest.json")
    final = manifest["final"]
    path = _run_final(root, where)
    records = read_jsonl(path)
    return records, {"kind": "run", "path": str(path.resolve()), "pipeline": manifest.get("pipeline"),
                     "stage": final.get("stage"), "sha256": _sha256(path), "input": manifest.get("input")}


def _from_hf_disk(root: Path, where: str) -> tuple[list[Record], dict]:
    import datasets

    ds = datasets.load_from_disk(str(root))
    if isinstance(ds, datasets.DatasetDict):
        raise NLIDataError(f"{where}={str(root)!r}: a DatasetDict with splits {list(ds)}; give one split's folder")
    records = []
    for i, row in enumerate(ds):
        meta = row.get("meta")
        row = {**row, "meta": json.loads(meta) if isinstance(meta, str) else meta}
        records.append(record_from_mapping(row, f"{root}[{i}]"))
    return records, {"kind": "hf_disk", "path": str(root.resolve()), "fingerprint": ds._fingerprint}


def _set_spec(name: str, cfg: DictConfig, where: str) -> dict:
    """The spec of a training set, eval set or world split `name`; an error when it is none of these."""
    from nliforge.data.registry import eval_set_spec, find_set_yaml, paths_node

    cache = str(cfg.paths.cache_dir)
    train = find_set_yaml(name, "train_sets")
    if train is not None:
        node = OmegaConf.create({"paths": paths_node(cache), "set": OmegaConf.load(train)})
        spec = OmegaConf.to_container(node, resolve=True)["set"][name]
    else:
        try:
            spec = eval_set_spec(name, where, cache)
        except NLIDataError:
            raise NLIDataError(f"{where}={name!r}: not a file, a run folder (with manifest.json), a saved Hugging "
                               "Face dataset, nor a training set, eval set or world split name") from None
    return spec


def _from_name(name: str, cfg: DictConfig, where: str) -> tuple[list[Record], dict]:
    from nliforge.data.registry import load_set

    cache, spec = str(cfg.paths.cache_dir), _set_spec(name, cfg, where)
    world = OmegaConf.to_container(cfg.world, resolve=True) if "world" in cfg else None
    return load_set(spec, where, world, cache), {"kind": "set", "name": name, "spec": spec}


def load_ref(ref: str, cfg: DictConfig, where: str) -> tuple[list[Record], dict]:
    """The records a reference names and its provenance (see the module docstring)."""
    path, kind = Path(ref), ref_kind(ref, cfg, where)
    if kind == "run":
        records, prov = _from_run(path, where)
    elif kind == "hf_disk":
        records, prov = _from_hf_disk(path, where)
    elif kind == "jsonl":
        records = read_jsonl(path)
        prov = {"kind": "jsonl", "path": str(path.resolve()), "sha256": _sha256(path), "run": _enclosing_run(path)}
    else:
        records, prov = _from_name(ref, cfg, where)
    return records, {"ref": ref, **prov, "count": len(records), "records_sha256": records_digest(records)}


def load_refs(refs: Sequence[str], cfg: DictConfig, where: str) -> tuple[list[Record], list[tuple[str, str]], list[dict]]:
    """Every reference's records concatenated in order; a repeated uid is dropped ("duplicate_uid")."""
    records, drops, provenance, seen = [], [], [], set()
    for ref in refs:
        recs, prov = load_ref(ref, cfg, where)
        provenance.append(prov)
        for rec in recs:
            if rec.uid in seen:
                drops.append((rec.uid, "duplicate_uid"))
                continue
            seen.add(rec.uid)
            records.append(rec)
    return records, drops, provenance


@stage(INPUT_STAGE, rerun=True, writes=RECORD_FIELDS)
def input_stage(ctx: StageContext) -> StageOutput:
    """The records of `input` (one reference or a list), with their provenance in manifest.json `input`;
    records past `input_limit` are dropped ("over_input_limit")."""
    records, drops, provenance = load_refs(refs_of(ctx.cfg.get("input")), ctx.cfg, "input")
    ctx.folder.update_manifest(input=provenance)
    kept, left = limited(records, input_limit(ctx.cfg.get("input_limit")))
    drops = drops + [(r.uid, "over_input_limit") for r in left]
    return StageOutput([r.to_dict() for r in kept], drops, count_in=len(records) + len(drops) - len(left),
                       extra={"refs": [p["ref"] for p in provenance]})


def input_records(ctx: StageContext, stage_name: str = INPUT_STAGE) -> list[Record]:
    """The rows of a loading stage as Records (for the stages that consume `input`)."""
    return [record_from_mapping(r, f"stage {stage_name}") for r in ctx.rows(stage_name)]
