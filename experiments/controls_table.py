"""The table every oracle-free experiment writes: accuracy per row, and each row against
a same-size floor and ceiling — paired differences and gap closure over the units: world seed ×
training seed, or with `--unit world` the world seeds (each the mean of its training seeds: the world is the
unit of analysis, the training seeds of one world are not independent draws of it).

    python -m experiments.controls_table --scratch $R --out results.md \\
        --row 1_d0="D0" --row 2_floor="floor" --row 3_w="D0 + W" --row 4_ceiling="ceiling" \\
        --floor 2_floor --ceiling 4_ceiling [--compare 3_w:1_d0] [--unit world] [--title ...] [--note ...]

Reads `$R/world<ws>/sweep/<row>/**/metrics.csv` (one Hydra multirun folder per row and world seed).
Writes the markdown table to --out and every unit's accuracy to the same name with `.csv`.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from nliforge.evaluation.controls import format_closure, gap_closure
from nliforge.evaluation.differences import seed_difference
from nliforge.evaluation.table import collect_metrics, find_run_dirs

CHALLENGES = ["synthetic_challenge_negation", "synthetic_challenge_overlap", "synthetic_challenge_length"]
PRIMARY = "challenge mean"
SHORT = {"synthetic_dev": "dev", "synthetic_test": "test", "synthetic_challenge_negation": "negation",
         "synthetic_challenge_overlap": "overlap", "synthetic_challenge_length": "length",
         "synthetic_test_2class": "test 2-class", PRIMARY: PRIMARY}


def unit_metrics(scratch: Path, rows: dict[str, str]) -> pd.DataFrame:
    """Accuracy per (row, world_seed, seed, eval_set), the challenge mean added as an eval set."""
    frames = []
    for world in sorted(scratch.glob("world*/sweep")):
        ws = int(re.sub(r"\D", "", world.parent.name))
        for folder, name in rows.items():
            if not (world / folder).is_dir():
                continue
            m = collect_metrics(find_run_dirs(world / folder))
            m = m[m["metric"] == "acc"].assign(row=name, world_seed=ws)
            mean = m[m["eval_set"].isin(CHALLENGES)].groupby("seed", as_index=False)["value"].mean()
            frames += [m, mean.assign(row=name, world_seed=ws, eval_set=PRIMARY, metric="acc")]
    if not frames:
        raise FileNotFoundError(f"no {scratch}/world<seed>/sweep/<row> folder with metrics.csv for rows {list(rows)}")
    return pd.concat(frames, ignore_index=True)[["row", "world_seed", "seed", "eval_set", "value"]]


def per_world(m: pd.DataFrame) -> pd.DataFrame:
    """One unit per world seed: each (row, world seed, eval set) the mean over its training seeds (seed -1)."""
    means = m.groupby(["row", "world_seed", "eval_set"], as_index=False)["value"].mean()
    return means.assign(seed=-1)[["row", "world_seed", "seed", "eval_set", "value"]]


def by_unit(m: pd.DataFrame, row: str, eval_set: str) -> pd.Series:
    cell = m[(m["row"] == row) & (m["eval_set"] == eval_set)]
    return pd.Series(cell["value"].to_numpy(), index=pd.MultiIndex.from_frame(cell[["world_seed", "seed"]]))


def accuracy_lines(m: pd.DataFrame, rows: list[str]) -> list[str]:
    sets = [s for s in SHORT if s in set(m["eval_set"])]
    lines = ["| row | units | " + " | ".join(SHORT[s] for s in sets) + " |", "|---" * (len(sets) + 2) + "|"]
    for row in rows:
        cells = []
        for s in sets:
            v = by_unit(m, row, s)
            cells.append(f"{100 * v.mean():.1f} ± {100 * v.std(ddof=1):.1f}" if len(v) > 1 else f"{100 * v.mean():.1f}")
        lines.append(f"| {row} | {len(by_unit(m, row, PRIMARY))} | " + " | ".join(cells) + " |")
    return lines


def points(d: dict) -> str:
    """`+1.2 [-0.3, +2.7]` in points; the interval is left out where it cannot be formed (one unit)."""
    if d["ci_low"] != d["ci_low"]:   # NaN
        return f"{100 * d['diff']:+.1f}"
    return f"{100 * d['diff']:+.1f} [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"


def control_lines(m: pd.DataFrame, rows: list[str], floor: str, ceiling: str, eval_set: str) -> list[str]:
    """Each row − floor (paired t over units) and its gap closure (paired bootstrap) on one eval set."""
    f, c = by_unit(m, floor, eval_set), by_unit(m, ceiling, eval_set)
    lines = [f"ceiling − floor on {SHORT[eval_set]}: {points(seed_difference(c, f))} points", "",
             "| row | − floor (points) | gap closure |", "|---|---|---|"]
    for row in rows:
        if row in (floor, ceiling):
            continue
        v = by_unit(m, row, eval_set)
        lines.append(f"| {row} | {points(seed_difference(v, f))} | {format_closure(gap_closure(v, f, c))} |")
    return lines


def per_world_lines(m: pd.DataFrame, rows: list[str]) -> list[str]:
    worlds = sorted(m["world_seed"].unique())
    lines = ["| row | " + " | ".join(f"world {w}" for w in worlds) + " |", "|---" * (len(worlds) + 1) + "|"]
    for row in rows:
        cells = []
        for w in worlds:
            v = m[(m["row"] == row) & (m["eval_set"] == PRIMARY) & (m["world_seed"] == w)]["value"]
            cells.append(f"{100 * v.mean():.1f} ± {100 * v.std(ddof=1):.1f}" if len(v) > 1 else "–")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return lines


def compare_lines(m: pd.DataFrame, folders: dict[str, str], pairs: list[str]) -> list[str]:
    """`A:B` folder pairs: row A − row B on the challenge mean and test, paired t over the units."""
    lines = ["| comparison | challenge mean (points) | test (points) |", "|---|---|---|"]
    for pair in pairs:
        a, b = (folders[x] for x in pair.split(":", 1))
        cells = [points(seed_difference(by_unit(m, a, s), by_unit(m, b, s))) for s in (PRIMARY, "synthetic_test")]
        lines.append(f"| {a} − {b} | " + " | ".join(cells) + " |")
    return lines


def parse_rows(items: list[str]) -> dict[str, str]:
    rows = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"--row {item!r}: expected FOLDER=NAME")
        folder, name = item.split("=", 1)
        rows[folder] = name
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--row", action="append", required=True, help="FOLDER=NAME, in table order")
    ap.add_argument("--floor", required=True)
    ap.add_argument("--ceiling", required=True)
    ap.add_argument("--title", default="Accuracy (%) and controls")
    ap.add_argument("--note", action="append", default=[], help="a line under the title")
    ap.add_argument("--compare", action="append", default=[], help="A:B, two row folders: A − B, paired")
    ap.add_argument("--unit", choices=("run", "world"), default="run",
                    help="run: world seed x training seed; world: the world seeds (means over training seeds)")
    args = ap.parse_args(argv)
    folders = parse_rows(args.row)
    runs = unit_metrics(args.scratch, folders)
    runs.to_csv(args.out.with_suffix(".csv"), index=False)
    m = per_world(runs) if args.unit == "world" else runs
    units = "world seeds (each the mean over its training seeds)" if args.unit == "world" else \
        "units (world seed × training seed)"
    rows = [name for name in folders.values() if name in set(m["row"])]
    floor, ceiling = folders[args.floor], folders[args.ceiling]
    text = [f"# {args.title}", "", *args.note, "",
            f"Mean ± sample std over the {units}.", "", *accuracy_lines(m, rows), "",
            f"## Primary: the {PRIMARY} (negation, overlap, length) against the floor and ceiling", "",
            "Differences: paired t over units, 95%. Gap closure = (row − floor) / (ceiling − floor) on the mean "
            "paired differences, 95% paired bootstrap over units; `(no gap)`: the ceiling is not shown above the floor.",
            "", *control_lines(m, rows, floor, ceiling, PRIMARY), "",
            "## In-distribution test against the floor", "", *control_lines(m, rows, floor, ceiling, "synthetic_test"),
            *(["", "## Comparisons between rows (paired t over units, 95%)", "", *compare_lines(m, folders, args.compare)]
              if args.compare else []),
            "", f"## {PRIMARY} per world seed (mean ± std over training seeds)", "", *per_world_lines(runs, rows), ""]
    args.out.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
