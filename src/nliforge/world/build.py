"""Writing a whole world to disk (all splits + manifest) atomically, and reusing it."""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import Record
from nliforge.utils.atomic import atomic_write_text, build_folder, read_json_file
from nliforge.world.artifacts import ARTIFACTS, measure_artifact
from nliforge.world.config import GENERATOR_VERSION, SPLITS, WorldConfig
from nliforge.world.generator import generate_split

MANIFEST_NAME = "manifest.json"


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def split_stats(records: list[Record]) -> dict:
    """Counts per label and phenomenon and the measured strength of every artifact."""
    return {
        "n": len(records),
        "labels": dict(sorted(collections.Counter(r.label for r in records).items())),
        "phenomena": dict(sorted(collections.Counter(r.meta["phenomenon"] for r in records).items())),
        "artifacts": {name: measure_artifact(records, name) for name in ARTIFACTS},
    }


def _write_world(cfg: WorldConfig, folder: Path) -> None:
    """Write every split and the manifest into `folder` (a fresh temporary one: see build_folder)."""
    splits = {}
    for split in SPLITS:
        records = generate_split(cfg, split)
        path = write_jsonl(records, folder / f"{split}.jsonl")
        os.chmod(path, 0o644)
        splits[split] = {"file": path.name, "sha256": _file_sha256(path), **split_stats(records)}
    manifest = {"generator_version": GENERATOR_VERSION, "digest": cfg.digest(),
                "config": cfg.to_dict(), "splits": splits}
    atomic_write_text(folder / MANIFEST_NAME, [json.dumps(manifest, indent=2, sort_keys=True) + "\n"])
    os.chmod(folder / MANIFEST_NAME, 0o644)


def build_world(cfg: WorldConfig, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write `<split>.jsonl` for every split and `manifest.json` into out_dir; split -> path.

    Everything is written into a temporary sibling folder that is renamed into place at the
    end, so a crash never leaves a half-built world; an existing out_dir is replaced.
    """
    out_dir = build_folder(out_dir, functools.partial(_write_world, cfg))
    return {split: out_dir / f"{split}.jsonl" for split in SPLITS}


def ensure_world(cfg: WorldConfig, root: str | os.PathLike) -> Path:
    """`root/world-<digest>`, built on first use and reused afterwards (the manifest marks it done)."""
    folder = Path(root) / f"world-{cfg.digest()}"
    if _built(folder):
        return folder
    # Another process may finish the same world meanwhile; its copy is identical and stays.
    return build_folder(folder, functools.partial(_write_world, cfg), done=_built)


def _built(folder: Path) -> bool:
    return (folder / MANIFEST_NAME).is_file()


def read_manifest(folder: str | os.PathLike) -> dict:
    """The manifest of a built world."""
    return read_json_file(Path(folder) / MANIFEST_NAME)
