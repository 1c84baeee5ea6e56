"""The first difference between two plain configs, for the refusal to resume a run folder (training or
generation) under a config other than the one it started with."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

# Keys that change how a run goes, not what it produces: they may differ between starts.
# `*` matches one key or list index (pipeline.generators is a list of generator nodes).
VOLATILE_KEYS = ("paths", "hydra", "task_name", "logger", "generator.runner", "pipeline.stages",
                 "trainer.enable_progress_bar", "pipeline.progress", "pipeline.generators.*.runner",
                 "pipeline.rubric.judge.runner", "allow_empty")


def _volatile(path: str, volatile: Sequence[str] = VOLATILE_KEYS) -> bool:
    parts = path.split(".")
    for pattern in volatile:
        pat = pattern.split(".")
        if len(parts) >= len(pat) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat)):
            return True
    return False


def first_difference(old: Any, new: Any, prefix: str = "", volatile: Sequence[str] = VOLATILE_KEYS) -> str | None:
    """Dotted key of the first difference between two plain configs (None when equal), skipping the
    `volatile` key patterns. A key present on one side only with the value null is no difference: a
    setting added to the code later, whose null default means "off", must not lock the runs made before
    it out of resuming."""
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        old, new = dict(enumerate(old)), dict(enumerate(new))
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if _volatile(path, volatile):
                continue
            if key not in old or key not in new:
                if (old.get(key) if key in old else new.get(key)) is None:
                    continue
                return path
            diff = first_difference(old[key], new[key], path, volatile)
            if diff:
                return diff
        return None
    return None if old == new else (prefix or "<root>")


def config_difference(old: Any, new: Any, volatile: Sequence[str] = VOLATILE_KEYS) -> str | None:
    """`key was <old>, now <new>` for the first difference between two plain configs, or None."""
    key = first_difference(old, new, volatile=volatile)
    return None if key is None else f"{key} was {_get(old, key)!r}, now {_get(new, key)!r}"


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, Mapping) or part not in obj:
            return "<absent>"
        obj = obj[part]
    return obj


def moved_paths(value: Any, old_dir: str, new_dir: str) -> Any:
    """`value` with every path under a run folder's old place (`old_dir`) moved to its new one: the path
    keys that follow the folder (`callbacks.checkpoint.dirpath`, a stage's run dirs) are where the run is,
    not what it makes, so a moved or copied run folder resumes."""
    old = old_dir.rstrip("/")
    if isinstance(value, Mapping):
        return {k: moved_paths(v, old_dir, new_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [moved_paths(v, old_dir, new_dir) for v in value]
    if old and isinstance(value, str) and (value == old or value.startswith(old + "/")):
        return new_dir.rstrip("/") + value[len(old):]
    return value
