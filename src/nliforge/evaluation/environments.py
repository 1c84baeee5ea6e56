"""Do the runs a report compares share one environment? One warning line per key in which they differ.

Each run folder records `environment.json` (nliforge.utils.environment): package versions, the lock's
sha256, Python, torch's CPU capability, the kernel-path variables, the CPU model, threads and the git
commit. Two runs that differ in one of these may differ in their numbers for that reason alone (a
different CPU kernel path moved the demo's challenge split by several points, docs/reproducibility.md),
so a table that puts them side by side says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

FILE = "environment.json"


def flatten(record: Mapping, prefix: str = "") -> dict[str, object]:
    """{"packages.torch": "2.13.0+cpu", "env.MKL_CBWR": "COMPATIBLE", "python": "3.11.7", ...}."""
    out: dict[str, object] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def read_environment(run: Path) -> dict | None:
    """The run folder's environment.json, flattened; None when it has none (or an unreadable one)."""
    try:
        return flatten(json.loads((Path(run) / FILE).read_text()))
    except (OSError, ValueError, AttributeError):
        return None


def _values(key: str, records: Mapping[Path, Mapping]) -> str:
    """`a (3 runs) vs b (1 run: <its folder>)`: each value of `key` with its count and a folder holding it."""
    seen: dict[str, list[Path]] = {}
    for run, record in records.items():
        seen.setdefault(json.dumps(record.get(key, "absent")).strip('"'), []).append(run)
    parts = [f"{value} ({len(runs)} run{'s' * (len(runs) > 1)}: {runs[0]}{', ...' if len(runs) > 1 else ''})"
             for value, runs in sorted(seen.items(), key=lambda kv: -len(kv[1]))]
    return " vs ".join(parts)


def environment_differences(runs: Sequence[Path]) -> list[str]:
    """One line per environment key whose value is not the same in every run (a key some runs lack counts
    as differing), and one line when some runs record no environment at all while others do."""
    records = {Path(run): read_environment(run) for run in runs}
    known = {run: rec for run, rec in records.items() if rec is not None}
    lines = []
    unknown = [run for run, rec in records.items() if rec is None]
    if known and unknown:
        lines.append(f"{len(unknown)} of {len(records)} runs record no {FILE} (e.g. {unknown[0]}): "
                     "their environment cannot be compared")
    keys = sorted({key for rec in known.values() for key in rec})
    for key in keys:
        if len({json.dumps(rec.get(key, "absent")) for rec in known.values()}) > 1:
            lines.append(f"runs differ in {key}: {_values(key, known)}")
    return lines
