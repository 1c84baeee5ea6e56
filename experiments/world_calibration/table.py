"""Collect the calibration runs into results.csv (one row per run) and results.md (one per world).

    python -m experiments.world_calibration.table SCRATCH OUT_DIR

SCRATCH holds one folder per world setting (grid_s<strength>, preset_<name>), each with tfidf.json
(the world's config and the TF-IDF baseline) and s<seed>/metrics.csv of `nliforge-train`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from nliforge.utils.atomic import atomic_write_text

TARGETS = {"snli_calibrated": 67.0, "mnli_calibrated": 53.0}  # percent, README's criterion: +- 2
TOLERANCE = 2.0


def run_rows(scratch: Path) -> pd.DataFrame:
    """One row per (world setting, seed): its strengths, feature rate and accuracies in percent."""
    rows = []
    for info in sorted(scratch.glob("*/tfidf.json")):
        meta = json.loads(info.read_text(encoding="utf-8"))
        strengths = sorted(set(meta["world"]["strengths"].values()))
        for metrics in sorted(info.parent.glob("s*/metrics.csv")):
            m = pd.read_csv(metrics)
            acc = m[m.metric == "acc"].set_index("eval_set")["value"]
            rows.append({"world": info.parent.name, "strength": "/".join(f"{s:g}" for s in strengths),
                         "feature_rate": meta["world"]["feature_rate"], "seed": int(m.seed.iloc[0]),
                         "hyp_only_biased_test": 100 * acc["heldout_biased"],
                         "hyp_only_synthetic_test": 100 * acc["synthetic_test"],
                         "tfidf_hyp_only_biased_test": 100 * meta["tfidf_hypothesis_accuracy"]})
    if not rows:
        sys.exit(f"error: no runs under {scratch} (expected <world>/tfidf.json and <world>/s<seed>/metrics.csv)")
    return pd.DataFrame(rows)


def verdict(world: str, mean: float, n: int) -> str:
    """'meets' / 'misses' for a confirmed preset (3 seeds), '' otherwise."""
    name = world.removeprefix("preset_").split("_world")[0]   # preset_snli_calibrated_world1: another world seed
    if name not in TARGETS or n < 3:
        return ""
    ok = abs(mean - TARGETS[name]) <= TOLERANCE
    return f"{'meets' if ok else 'misses'} {TARGETS[name]:g} ± {TOLERANCE:g}"


def summary(runs: pd.DataFrame) -> str:
    """Markdown table: per world setting, seeds and mean ± std (sample std; 0 for one seed)."""
    lines = ["| world | strength | feature_rate | seeds | hyp-only, biased test (%) | hyp-only, "
             "synthetic_test (%) | TF-IDF hyp-only, biased test (%) | criterion |", "|---" * 8 + "|"]
    for world, g in runs.groupby("world", sort=False):
        acc = g.hyp_only_biased_test
        std = acc.std() if len(g) > 1 else 0.0
        lines.append(f"| {world} | {g.strength.iloc[0]} | {g.feature_rate.iloc[0]:g} | {len(g)} | "
                     f"{acc.mean():.1f} ± {std:.1f} | {g.hyp_only_synthetic_test.mean():.1f} | "
                     f"{g.tfidf_hyp_only_biased_test.iloc[0]:.1f} | {verdict(world, acc.mean(), len(g))} |")
    return "\n".join(lines) + "\n"


def main(scratch: str, out: str) -> None:
    runs = run_rows(Path(scratch))
    atomic_write_text(Path(out) / "results.csv", [runs.to_csv(index=False, float_format="%.2f")])
    table = summary(runs)
    atomic_write_text(Path(out) / "results.md", [table])
    print(table)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
