"""One run's suite results as the Markdown table that `nliforge-train` prints at its end and the
README shows (written there by `scripts/readme_numbers.py` from the run's metrics.csv)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path


def run_table(results: Mapping[str, Mapping[str, float]], metric: str = "acc", scale: float = 100.0) -> str:
    """Eval sets as columns (suite order), `metric` × `scale` to one decimal; sets without the
    metric are left out. Empty string when there is nothing to show."""
    cells = [(name, m[metric]) for name, m in results.items() if metric in m]
    if not cells:
        return ""
    header = "| " + " | ".join(name for name, _ in cells) + " |"
    rule = "|" + "---|" * len(cells)
    row = "| " + " | ".join(f"{scale * float(v):.1f}" for _, v in cells) + " |"
    return "\n".join([header, rule, row])


def results_from_csv(path: str | Path) -> dict[str, dict[str, float]]:
    """metrics.csv (one run: train_id, seed, eval_set, metric, value) back into {set: {metric: value}},
    in file order."""
    out: dict[str, dict[str, float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["eval_set"], {})[row["metric"]] = float(row["value"])
    return out
