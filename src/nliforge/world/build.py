"""Writing a whole world to disk (all splits + manifest) atomically, and reusing it."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from nliforge.data.jsonl import atomic_write_text, write_jsonl
from nliforge.data.records import Record
from nliforge.utils.folders import replace_folder
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


def _build_in_temp(cfg: WorldConfig, out_dir: Path) -> Path:
    """Write every split and the manifest into a fresh temporary sibling of out_dir."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a cache folder should be readable
        splits = {}
        for split in SPLITS:
            records = generate_split(cfg, split)
            path = write_jsonl(records, tmp / f"{split}.jsonl")
            os.chmod(path, 0o644)
            splits[split] = {"file": path.name, "sha256": _file_sha256(path), **split_stats(records)}
        manifest = {"generator_version": GENERATOR_VERSION, "digest": cfg.digest(),
                    "config": cfg.to_dict(), "splits": splits}
        atomic_write_text(tmp / MANIFEST_NAME, [json.dumps(manifest, indent=2, sort_keys=True) + "\n"])
        os.chmod(tmp / MANIFEST_NAME, 0o644)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def build_world(cfg: WorldConfig, out_dir: str | os.PathLike) -> dict[str, Path]:
    """Write `<split>.jsonl` for every split and `manifest.json` into out_dir; split -> path.

    Everything is written into a temporary sibling folder that is renamed into place at the
    end, so a crash never leaves a half-built world; an existing out_dir is replaced.
    """
    out_dir = Path(out_dir)
    replace_folder(_build_in_temp(cfg, out_dir), out_dir)
    return {split: out_dir / f"{split}.jsonl" for split in SPLITS}


def ensure_world(cfg: WorldConfig, root: str | os.PathLike) -> Path:
    """`root/world-<digest>`, built on first use and reused afterwards (the manifest marks it done)."""
    folder = Path(root) / f"world-{cfg.digest()}"
    if (folder / MANIFEST_NAME).is_file():
        return folder
    tmp = _build_in_temp(cfg, folder)
    if (folder / MANIFEST_NAME).is_file():
        # Another process finished the same world meanwhile; its copy is identical.
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        replace_folder(tmp, folder)
    return folder


def read_manifest(folder: str | os.PathLike) -> dict:
    """The manifest of a built world."""
    return json.loads((Path(folder) / MANIFEST_NAME).read_text(encoding="utf-8"))
