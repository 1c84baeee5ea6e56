"""The record of experiments/real_effects across machines: run folders live in a scratch folder that a new
machine does not have, so analysis.py merges what it computes from the runs here into the committed results
files instead of dropping what it cannot recompute. A row (criterion, world), a level (world, arm) or a wall
time (run) computed here replaces the recorded one; the rest of the record is kept, and results.md says how
many rows came from each. Also the two readers of a finished run folder every experiment uses
(`metrics`, `finished`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def merge(new: list[dict], recorded: Path, key: list[str]) -> tuple[pd.DataFrame, int]:
    """`new` rows over the rows of the CSV `recorded` (same `key` columns: the new one wins); with the number
    of recorded rows kept. Column order: the recorded file's, then any new column."""
    fresh = pd.DataFrame(new)
    if not recorded.is_file():
        return fresh, 0
    old = pd.read_csv(recorded)
    if fresh.empty:
        return old, len(old)
    stale = old.set_index(key).index.isin(fresh.set_index(key).index)
    kept = old[~stale]
    cols = list(old.columns) + [c for c in fresh.columns if c not in old.columns]
    return pd.concat([kept, fresh], ignore_index=True)[cols], len(kept)


# the run folders of run.sh's steps (E4's map runs are diag/w<k>/mnli_3ep); a scratch folder of before E1 became
# the study hans_augmentation also holds E1's runs (e1/, e1_6ep/, diag/w<k>/plus_3ep, diamond_3ep): not read
RUNS = ("e2/w*/*.done", "e3/*.done", "e3/w*/*.done", "e4/w*/*.done", "e4_3ep/w*/*.done", "diag/w*/mnli_3ep.done")


def walls(scratch: Path) -> list[dict]:
    """The wall time of every finished run of RUNS in `scratch` (its <folder>.done)."""
    rows = []
    for done in sorted(p for pattern in RUNS for p in scratch.glob(pattern)):
        f = dict(kv.split("=", 1) for kv in done.read_text().split())
        name = done.relative_to(scratch).with_suffix("").as_posix()
        rows.append({"run": name, "wall_s": int(f["wall"]), "end": f.get("end", "")})
    return rows


def kept_text(lines: list[str], recorded: Path) -> list[str]:
    """A markdown section: the lines computed here (then also written to `recorded`), else the recorded ones."""
    if lines:
        recorded.write_text("\n".join(lines) + "\n")
        return lines
    return recorded.read_text().splitlines() if recorded.is_file() else []


def level_table(title: str, lv: pd.DataFrame, cols: list[str], arms) -> list[str]:
    """A markdown table of the mean over worlds (%) per arm, with how many worlds each mean has."""
    md = ["", f"## {title} per arm (mean over worlds, %)", "", "| arm | " + " | ".join(cols) + " |",
          "|---" * (len(cols) + 1) + "|"]
    for a in arms:
        g = lv[lv.arm == a]
        if len(g):
            n = g.world.nunique()
            md.append(f"| {a} ({n} world{'s' if n != 1 else ''}) | " + " | ".join(f"{100 * g[c].mean():.1f}" for c in cols) + " |")
    return md


def metrics(run: Path) -> dict[tuple[str, str], float]:
    m = pd.read_csv(run / "metrics.csv")
    return {(r.eval_set, r.metric): float(r.value) for r in m.itertuples()}


def finished(scratch: Path, exp: str, arms, worlds=(1, 2, 3, 4, 5)) -> dict[int, dict[str, Path]]:
    """world -> arm -> run folder, for worlds where every arm has its metrics.csv."""
    out = {}
    for w in worlds:
        runs = {a: scratch / exp / f"w{w}" / a for a in arms}
        if all((r / "metrics.csv").is_file() for r in runs.values()):
            out[w] = runs
    return out
