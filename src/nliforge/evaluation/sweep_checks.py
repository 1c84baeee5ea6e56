"""What `nliforge-report` checks in a sweep before it tabulates it: a torn metrics.csv is refused naming
the file and line; a job folder without results (preempted, failed, still running) and a seed missing
cells its training set's other seeds have are named in a warning; runs pooled as seeds of one training
set that differ in a setting other than a seed or a path are refused, naming the keys and the folders.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import yaml

from nliforge.utils.config_diff import VOLATILE_KEYS, _volatile, moved_paths

SUITE_COLUMNS = ("train_id", "seed", "eval_set", "metric", "value")
# How a run went, not what it trained (as a resume may change them), besides VOLATILE_KEYS' paths and logger.
RUN_KEYS = ("ckpt_path", "num_threads", "progress_every_s", "allow_config_change", "overwrite_output",
            "trainer.enable_progress_bar", "callbacks.progress", "wandb*", "save_model", "train_id")
PATH_LEAVES = ("dir", "dirpath", "root", "output_dir", "model_dir", "run_dir", "cache_dir")   # a `path` is judged by its value


def check_metrics_file(path: Path) -> None:
    """A ValueError naming `path` (and the line) when it is torn: no newline at its end (cut short while
    written by an older version or copied), a row with another number of fields, an empty field, a seed
    that is not an integer or a value that is not a number."""
    data = Path(path).read_bytes()
    if data and not data.endswith(b"\n"):
        raise ValueError(f"{path}: torn (its last line has no line end: the file was cut short); rerun that "
                         "job's evaluation or move its folder out of the sweep")
    rows = list(csv.reader(data.decode("utf-8", "replace").split("\n")[1:]))
    for n, row in enumerate(rows, start=2):
        if not row:
            continue
        bad = (f"{len(row)} fields, expected {len(SUITE_COLUMNS)}" if len(row) != len(SUITE_COLUMNS)
               else "an empty field" if any(not f.strip() for f in row)
               else f"seed {row[1]!r} is not an integer" if not row[1].strip().lstrip("-").isdigit()
               else f"value {row[4]!r} is not a number" if not _number(row[4]) else None)
        if bad:
            raise ValueError(f"{path}:{n}: torn or foreign row ({bad}); rerun that job's evaluation or move its "
                             "folder out of the sweep")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def unfinished_jobs(sweep: Path, run_dirs: Sequence[Path]) -> list[Path]:
    """Job folders under `sweep` (a folder with Hydra's `.hydra/` or nliforge's config.yaml) that hold no
    results, outside every run folder that has them: preempted, failed or still running jobs."""
    runs = {Path(d).resolve() for d in run_dirs}
    found = []
    for marker in [*sweep.rglob(".hydra"), *sweep.rglob("config.yaml")]:
        job = marker.parent.resolve()
        if job in runs or any(parent in runs for parent in job.parents) or job == sweep.resolve():
            continue
        if job.name != ".hydra" and job not in found:
            found.append(job)
    return sorted(found)


def missing_cells(metrics: pd.DataFrame) -> list[str]:
    """One line per (train_id, seed) lacking (eval_set, metric) cells the training set's other seeds have:
    the table's cells would then count different seeds in different columns."""
    lines = []
    for train_id, group in metrics.groupby("train_id", sort=False):
        cells = {seed: set(zip(g["eval_set"], g["metric"])) for seed, g in group.groupby("seed", sort=False)}
        union = set().union(*cells.values())
        for seed, have in cells.items():
            lacking = sorted(f"{s}/{m}" for s, m in union - have)
            if lacking:
                lines.append(f"train_id {train_id!r} seed {seed} has no {', '.join(lacking[:6])}"
                             f"{' ...' if len(lacking) > 6 else ''} that its other seeds have: those columns "
                             "count one seed fewer")
    return lines


def _ignored(key: str, old, new, ignore: Sequence[str]) -> bool:
    leaf = key.rsplit(".", 1)[-1]
    if _volatile(key, (*VOLATILE_KEYS, *RUN_KEYS, *ignore)) or leaf == "seed" or leaf.endswith("_seed"):
        return True
    paths = [v for v in (old, new) if isinstance(v, str) and "/" in v]
    return (leaf in PATH_LEAVES or leaf.endswith("_dir") or len(paths) == 2 and (
        all(p.startswith("/") for p in paths) or any(Path(p).exists() for p in paths)))   # a Hub id is no path


def differing_keys(a, b, ignore: Sequence[str] = (), prefix: str = "") -> list[str]:
    """Every dotted key in which two plain configs differ, other than seeds, paths and how the run went."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out += differing_keys(a.get(key), b.get(key), ignore, path)
        return out
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    return [] if a == b or _ignored(prefix, a, b, ignore) else [prefix]


def _config(run: Path) -> dict | None:
    path = run / "config.yaml"
    if not path.is_file():
        return None
    plain = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    where = str((plain.get("paths") or {}).get("output_dir") or "")
    return moved_paths(plain, where, "<run>")


def mixed_settings(train_ids: Mapping[Path, Sequence[str]], ignore: Sequence[str] = ()) -> str | None:
    """A sentence naming the first training set whose runs (their config.yaml) differ in a setting other than a
    seed or a path, with each key's values and a folder holding each; None when every set's runs agree."""
    by_id: dict[str, list[tuple[Path, dict]]] = {}
    for run, ids in train_ids.items():
        cfg = _config(run)
        for tid in ids if cfg is not None else ():
            by_id.setdefault(str(tid), []).append((run, cfg))
    for tid, runs in by_id.items():
        keys = list(dict.fromkeys(k for _, c in runs[1:] for k in differing_keys(runs[0][1], c, ignore)))
        if keys:
            return f"train_id {tid!r} pools runs that differ in " + "; ".join(_values(k, runs) for k in keys[:5])
    return None


def _values(key: str, runs: Sequence[tuple[Path, dict]]) -> str:
    seen: dict[str, list[Path]] = {}
    for run, cfg in runs:
        value = cfg
        for part in key.split("."):
            value = value.get(part, "<absent>") if isinstance(value, Mapping) else "<absent>"
        seen.setdefault(repr(value), []).append(run)
    return f"{key}: " + " vs ".join(f"{v} ({len(r)} run{'s' * (len(r) > 1)}, e.g. {r[0]})" for v, r in seen.items())
