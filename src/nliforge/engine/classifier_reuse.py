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

Each kept entry carries `reuse_manifest.json`, written when it is finished: the sha256 of every file and
the epochs it holds. An entry is copied only when its files are exactly those, byte for byte, and it has
each epoch's dynamics (and checkpoint, where the config keeps one per epoch); the copy is checked again
before it takes the run's place. A damaged, partial or unrecorded entry is never copied: the classifier
is trained and the entry rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from functools import lru_cache
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.utils.atomic import atomic_write_text, build_folder

log = logging.getLogger(__name__)
OUT = "@classifier_run@"     # stands in for the classifier folder in the digested config
NOT_TRAINING = ("paths", "pipeline", "stand_in", "generator", "task_name", "hydra", "logger", "input", "dry_run",
                "register", "progress_every_s")
PACKAGE = Path(__file__).resolve().parents[1]
MANIFEST = "reuse_manifest.json"
UNRECORDED = (MANIFEST, ".run.lock")    # the record itself; the lock file of the run that trained it


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


def expected_epochs(training: DictConfig) -> dict:
    """What a kept classifier trained with `training` must hold: `epochs` (one dynamics file each) and
    whether each epoch has a checkpoint (`save_top_k: -1`, as the classifier stage sets)."""
    checkpoint = (training.get("callbacks") or {}).get("checkpoint") or {}
    dynamics = (training.get("callbacks") or {}).get("dynamics") or {}
    return {"epochs": int(training.trainer.max_epochs) if dynamics.get("enabled", False) else 0,
            "epoch_checkpoints": checkpoint.get("save_top_k") == -1}


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` but the record and the lock, by relative path."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in UNRECORDED}


def epochs_held(names, pattern: str) -> set[int]:
    return {int(m.group(1)) for name in names if (m := re.fullmatch(pattern, name))}


def missing_parts(names, expect: dict) -> list[str]:
    """What an entry holding the files `names` lacks against `expect` (expected_epochs)."""
    missing = [n for n in ("model/model.safetensors", "model/config.json", "train_set.jsonl", "metrics.csv")
               if n not in names]
    want = set(range(int(expect.get("epochs", 0))))
    missing += [f"epoch {e}'s dynamics" for e in sorted(want - epochs_held(names, r"dynamics/epoch_(\d+)\.parquet"))]
    if expect.get("epoch_checkpoints"):
        held = epochs_held(names, r"checkpoints/epoch[_=]*(\d+)\.ckpt")
        missing += [f"epoch {e}'s checkpoint" for e in sorted(want - held)]
    return missing


def entry_problem(folder: Path, expect: dict, digests: dict[str, str] | None = None) -> str | None:
    """Why the entry (or a copy of it) in `folder` cannot be used, or None when it is whole: its record
    is there, it holds what `expect` needs, and its files are exactly the recorded ones, byte for byte."""
    record_path = folder / MANIFEST
    if not record_path.is_file():
        return f"no {MANIFEST} (kept by an older nliforge or cut short)" if folder.is_dir() else "no such entry"
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        recorded, epochs = dict(record["files"]), record["expect"]
    except (ValueError, KeyError, TypeError):
        return f"{MANIFEST} is not a record nliforge wrote"
    if epochs != expect:
        return f"it was kept for {epochs}, this config needs {expect}"
    if missing := missing_parts(recorded, expect):
        return "its record lacks " + ", ".join(missing)
    actual = file_digests(folder) if digests is None else digests
    if gone := sorted(set(recorded) - set(actual)):
        return f"{len(gone)} recorded file(s) missing, first {gone[0]}"
    if extra := sorted(set(actual) - set(recorded)):
        return f"{len(extra)} file(s) not in its record, first {extra[0]}"
    if changed := [n for n in recorded if recorded[n] != actual[n]]:
        return f"{len(changed)} file(s) differ from their recorded sha256, first {changed[0]}"
    return None


def copy_kept(reuse_dir: str | Path, key: str, out: Path, expect: dict) -> bool:
    """Copy the classifier kept under `key` into `out` (absent so far); False when none is kept whole (a
    damaged or partial entry is named in a warning: the caller trains and `keep` rebuilds it)."""
    source = Path(reuse_dir) / key
    if not source.exists():
        return False
    problem = entry_problem(source, expect)
    if problem is not None:
        log.warning("classifier: kept entry %s is not used (%s); training it again and rebuilding the entry",
                    source, problem)
        return False

    def copy_checked(tmp: Path) -> None:
        shutil.copytree(source, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".run.lock"))
        problem = entry_problem(tmp, expect)   # the bytes copied are the bytes recorded
        (tmp / MANIFEST).unlink()
        if problem is not None:
            raise NLIDataError(f"pipeline.classifier.reuse: kept entry {source} changed while it was copied "
                               f"({problem}); nothing copied; run again to rebuild it")

    build_folder(out, copy_checked)
    log.info("classifier: the same config, data, code and environment were trained before; copied %s", source)
    return True


def keep(out: Path, reuse_dir: str | Path, key: str, expect: dict) -> None:
    """Keep the classifier just trained in `out` under `key` with its record (another process may have
    kept a whole one first; a damaged one is replaced)."""
    entry = Path(reuse_dir) / key

    def copy_recorded(tmp: Path) -> None:
        shutil.copytree(out, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*UNRECORDED))
        digests = file_digests(tmp)
        if missing := missing_parts(digests, expect):
            raise NLIDataError(f"pipeline.classifier.reuse: the classifier in {out} lacks {', '.join(missing)}; "
                               f"not kept as {entry}")
        record = {"key": key, "expect": expect, "files": digests}
        atomic_write_text(tmp / MANIFEST, [json.dumps(record, indent=1, sort_keys=True) + "\n"])

    try:
        build_folder(entry, copy_recorded, done=lambda folder: entry_problem(folder, expect) is None)
    except OSError as err:
        raise NLIDataError(f"pipeline.classifier.reuse: cannot keep the classifier as {entry} "
                           f"({err.strerror or err}); fix the folder or set pipeline.classifier.reuse=null") from None
