"""A trained task classifier kept for the next run that would train the same one.

Pipelines that build on one D0 (the WANLI and DISCO demos, arms of an experiment) each train the same
classifier: same data, model, trainer, seed, code and environment. With `pipeline.classifier.reuse` set to
a folder, the classifier stage keeps each classifier it trains there under a digest of all of these, and
a later run whose digest matches copies that folder instead of training (the copy is bit-identical to
what training would write, since training is deterministic given them).

Only a classifier whose every set (training sets and suite) is drawn from the synthetic world is kept: its
data is a function of the config and the code. A set read from a file could change under the same name,
so such a classifier is always trained. The digest covers the training config as `train_classifier` runs
it (paths, logger and the pipeline's own settings left out: they change no weight), the installed
packages, Python, torch's CPU kernel path, the kernel-pin variables, the CPU model, torch's thread count
and the bytes of every nliforge source file (an edited checkout is other code).
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from functools import lru_cache
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from nliforge.utils.atomic import build_folder

log = logging.getLogger(__name__)
OUT = "@classifier_run@"     # stands in for the classifier folder in the digested config
NOT_TRAINING = ("paths", "pipeline", "stand_in", "generator", "task_name", "hydra", "logger", "input", "dry_run",
                "register", "progress_every_s")
PACKAGE = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=1)
def source_digest(package: Path = PACKAGE) -> str:
    """sha256 over the relative paths and bytes of the package's .py and .yaml files."""
    h = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".yaml") and p.is_file()):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def world_only(training: dict) -> bool:
    """True when every training set and every suite set is drawn from the synthetic world."""
    sets = [*(training.get("data", {}).get("train_sets") or {}).values(),
            *(training.get("suite", {}).get("sets") or {}).values()]
    return bool(sets) and all(isinstance(s, dict) and s.get("loader") == "world" for s in sets)


def reuse_key(training: DictConfig) -> str | None:
    """The digest a classifier trained with `training` (train_classifier's config, paths.output_dir = OUT)
    is kept under; None when its data is not the world's alone."""
    from nliforge.utils.environment import environment

    resolved = OmegaConf.to_container(training, resolve=True)
    if not world_only(resolved):
        return None
    config = {k: v for k, v in resolved.items() if k not in NOT_TRAINING}
    env = {k: v for k, v in environment().items() if k not in ("nliforge_commit", "lock_sha256")}
    blob = json.dumps({"config": config, "environment": env, "source": source_digest()}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def kept(folder: Path) -> bool:
    """A kept classifier is complete: its model, training set and dynamics are there."""
    return all((folder / name).exists() for name in ("model", "train_set.jsonl", "dynamics"))


def copy_kept(reuse_dir: str | Path, key: str, out: Path) -> bool:
    """Copy the classifier kept under `key` into `out` (absent so far); False when none is kept."""
    source = Path(reuse_dir) / key
    if not kept(source):
        return False
    build_folder(out, lambda tmp: shutil.copytree(source, tmp, dirs_exist_ok=True))
    log.info("classifier: the same config, data, code and environment were trained before; copied %s", source)
    return True


def keep(out: Path, reuse_dir: str | Path, key: str) -> None:
    """Keep the classifier just trained in `out` under `key` (another process may have kept it first)."""
    build_folder(Path(reuse_dir) / key, lambda tmp: shutil.copytree(out, tmp, dirs_exist_ok=True), done=kept)
