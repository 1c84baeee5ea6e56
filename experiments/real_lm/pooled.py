"""Items 5 and 6 on one world preset, pooled over its world seeds (2 world seeds × 3 seeds).

    python -m experiments.real_lm.pooled [--preset snli_calibrated] [--worlds 0 1] [--tag _seeds_all] [--items wanli zaug]
                                         [--dir DIR] [--out FILE]

Reads the per-seed files the two scripts commit (`wanli_table_<preset>_w<ws>.csv`,
`zaug_table_<preset>_w<ws>.json`), so no scratch folder is needed, and writes:
1. item 6 (WANLI): accuracy per row over the units (world seed × training seed), each row − floor
   (paired t over units) and its gap closure (paired bootstrap), with `experiments/controls_table.py`'s code;
2. item 5 (Z-Aug): ul − mle teacher and oracle agreement per generator, paired over (world seed ×
   generator seed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from experiments.controls_table import CHALLENGES, PRIMARY, accuracy_lines, control_lines, per_world_lines, points
from nliforge.evaluation.differences import seed_difference

HERE = Path(__file__).resolve().parent

FLOOR, CEILING = "floor: D0 + #W biased", "ceiling: D0 + #W unbiased"
GENERATORS = {"scratch": "tiny GPT-2 from scratch", "smollm2": "SmolLM2 fine-tuned"}


def wanli_units(folder: Path, preset: str, worlds: list[int], tag: str = "", review: str = "annotator") -> pd.DataFrame:
    """Accuracy per (row, world_seed, seed, eval_set) from the committed per-world CSVs, the challenge
    mean added as an eval set (the layout of controls_table.unit_metrics)."""
    frames = []
    for ws in worlds:
        prefix = "" if review == "annotator" else f"_review_{review}"   # wanli_run.sh's file names
        path = folder / f"wanli_table{prefix}_{preset}_w{ws}{tag}.csv"
        if not path.is_file():
            raise SystemExit(f"{path}: missing; run REVIEW={review} RL_WORLD={preset} RL_WORLD_SEED={ws} bash {HERE}/wanli_run.sh")
        m = pd.read_csv(path)
        m = m[m["metric"] == "acc"].assign(world_seed=ws)
        # the challenge mean is in the file (wanli_table.py's); recomputed here as a check
        mean = m[m["eval_set"].isin(CHALLENGES)].groupby(["row", "seed"])["value"].mean()
        stored = m[m["eval_set"] == PRIMARY].set_index(["row", "seed"])["value"]
        if not ((mean - stored.reindex(mean.index)).abs() < 1e-9).all():
            raise SystemExit(f"{path}: its '{PRIMARY}' rows are not the mean of {CHALLENGES}")
        frames.append(m)
    return pd.concat(frames, ignore_index=True)[["row", "world_seed", "seed", "eval_set", "value"]]


def wanli_lines(m: pd.DataFrame) -> list[str]:
    rows = list(dict.fromkeys(m["row"]))
    return ["## Item 6: WANLI with SmolLM2 (D0 = 4,000; W as reviewed per world)", "",
            "Mean ± sample std over the units (world seed × training seed).", "", *accuracy_lines(m, rows), "",
            f"### Primary: the {PRIMARY} against the floor and ceiling (paired t over units, 95%; gap closure: "
            "paired bootstrap, `(no gap)` where the ceiling is not shown above the floor)", "",
            *control_lines(m, rows, FLOOR, CEILING, PRIMARY), "",
            "### In-distribution test against the floor", "", *control_lines(m, rows, FLOOR, CEILING, "synthetic_test"),
            "", f"### {PRIMARY} per world seed", "", *per_world_lines(m, rows)]


def zaug_units(folder: Path, preset: str, worlds: list[int], tag: str = "") -> dict[str, dict[tuple[int, int], dict]]:
    """{generator: {(world_seed, generator_seed): {"ul": ..., "mle": ...}}} from the per-world JSONs."""
    out: dict[str, dict] = {}
    for ws in worlds:
        path = folder / f"zaug_table_{preset}_w{ws}{tag}.json"
        if not path.is_file():
            raise SystemExit(f"{path}: missing; run RL_WORLD={preset} RL_WORLD_SEED={ws} bash {HERE}/zaug_run.sh")
        for gen, seeds in json.loads(path.read_text()).items():
            for seed, variants in seeds.items():
                out.setdefault(gen, {})[(ws, int(seed))] = variants
    return out


def zaug_lines(units: dict[str, dict]) -> list[str]:
    lines = ["## Item 5: the Z-Aug generator, ul (λ = 0.5) − mle (λ = 0)", "",
             "Paired t over the units (world seed × generator seed), 95%; agreement as a fraction.", "",
             "| generator | units | teacher agrees, ul | teacher agrees, mle | Δ teacher | Δ oracle |", "|---|---|---|---|---|---|"]
    for gen, per in units.items():
        keys = sorted(per)
        cols = {f"{v}_{s}": pd.Series([per[k][v][s] for k in keys], index=pd.MultiIndex.from_tuples(keys))
                for v in ("ul", "mle") for s in ("teacher", "oracle")}
        dt = seed_difference(cols["ul_teacher"], cols["mle_teacher"])
        do = seed_difference(cols["ul_oracle"], cols["mle_oracle"])
        lines.append(f"| {GENERATORS.get(gen, gen)} | {len(keys)} | {cols['ul_teacher'].mean():.3f} | "
                     f"{cols['mle_teacher'].mean():.3f} | {points(dt)} | {points(do)} |")
    lines += ["", "Δ in points (100 × the difference in agreement)."]
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="snli_calibrated")
    ap.add_argument("--worlds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--dir", type=Path, default=HERE, help="where the per-world files are (default: this folder)")
    ap.add_argument("--tag", default="", help="the files' suffix after the world seed, e.g. _seeds_all")
    ap.add_argument("--items", nargs="+", choices=["wanli", "zaug"], default=["wanli", "zaug"])
    ap.add_argument("--review", choices=["annotator", "teacher"], default="annotator", help="item 6's reviewer")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    review = "" if args.review == "annotator" else f"_review_{args.review}"
    out = args.out or args.dir / f"pooled_{args.preset}{args.tag}{review}.md"
    sections = []
    if "wanli" in args.items:
        sections += wanli_lines(wanli_units(args.dir, args.preset, args.worlds, args.tag, args.review)) + [""]
    if "zaug" in args.items:
        sections += zaug_lines(zaug_units(args.dir, args.preset, args.worlds, args.tag))
    text = [f"# Real-LM items on {args.preset}{args.tag}, world seeds {', '.join(map(str, args.worlds))} pooled", "",
            "Written by `python -m experiments.real_lm.pooled` from the per-world files of `wanli_run.sh` and "
            "`zaug_run.sh`.", "", *sections]
    out.write_text("\n".join(text) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
