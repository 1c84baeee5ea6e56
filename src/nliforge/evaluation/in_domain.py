"""Which eval sets are in-domain for a training set (Table 3's gray cells: not a challenge for it), read
from the run folders' config.yaml when `nliforge-report` is given no `in_domain=`.

An eval set is in-domain for a run when it comes from the same data as one of the run's training sets
(the same loader, path and config: MNLI's dev sets for a model trained on MNLI's train split, from
nyu-mll/multi_nli), or when the run's suite lists it under `suite.in_domain` (e.g. a synthetic world's
own test split, which has no path to compare). A folder without config.yaml (a hand-made sweep, an
nliforge-evaluate run, whose config names no training set) adds nothing.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml


def source(spec: Mapping) -> tuple[str, str, str] | None:
    """(loader, path, config) of a set read from a file or the Hub; None for one without a path (a world split)."""
    if not isinstance(spec, Mapping) or not spec.get("path"):
        return None
    return str(spec.get("loader")), str(spec["path"]), str(spec.get("config"))


def run_in_domain(cfg: Mapping) -> list[str]:
    """The suite's eval sets that are in-domain for the run whose resolved config is `cfg`."""
    suite = cfg.get("suite") or {}
    declared = set(suite.get("in_domain") or [])
    trained = {source(spec) for spec in ((cfg.get("data") or {}).get("train_sets") or {}).values()} - {None}
    names = []
    for key, spec in (suite.get("sets") or {}).items():
        name = str((spec or {}).get("name") or key)
        if name in declared or (source(spec) is not None and source(spec) in trained):
            names.append(name)
    return names


def infer_in_domain(run_dirs: Iterable[str | Path]) -> dict[str, list[str]]:
    """train_id -> in-domain eval sets, over every run folder that has config.yaml and metrics.csv."""
    found: dict[str, list[str]] = {}
    for folder in map(Path, run_dirs):
        if not (folder / "config.yaml").is_file() or not (folder / "metrics.csv").is_file():
            continue
        sets = run_in_domain(yaml.safe_load((folder / "config.yaml").read_text()) or {})
        if not sets:
            continue
        with (folder / "metrics.csv").open(newline="") as fh:
            train_ids = {row["train_id"] for row in csv.DictReader(fh)}
        for train_id in train_ids:
            found.setdefault(train_id, [])
            found[train_id] += [s for s in sets if s not in found[train_id]]
    return found
