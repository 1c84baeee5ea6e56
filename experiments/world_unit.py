"""Comparisons with the world as the unit of analysis, and Holm's correction over a family of them.

D0, W, the floor and the ceiling are drawn once per world seed, so training seeds within a world are not
independent units: each world gives one number (the mean over its training seeds of row − baseline on the
challenge mean), and the estimate is the mean over worlds with a Student t interval (n_worlds − 1 df) and a
one-sided t test in the stated direction. Several claims tested on the same runs are one family: Holm's
step-down correction of their p values. The verdict words are the package's one rule
(`nliforge.evaluation.verdict`, five worlds at least); a new comparison is a study (`nliforge-study`,
docs/studies.md).

    python -m experiments.world_unit --scratch $R --out mechanism.md \\
        --row 2_floor --row 3_full --row 4_randseeds --row 5_randkeep --row 6_nofilter \\
        --claim M1=3_full:2_floor --claim M2=3_full:4_randseeds --claim M3=3_full:5_randkeep \\
        --claim M4=3_full:6_nofilter

Reads what `controls_table.py` reads: `$R/world<ws>/sweep/<row>/**/metrics.csv`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from experiments.controls_table import PRIMARY, unit_metrics
from nliforge.evaluation.verdict import verdict
from nliforge.evaluation.worlds import holm, one_sided_p, t_interval


def per_world_difference(m: pd.DataFrame, row: str, baseline: str, eval_set: str = PRIMARY) -> pd.Series:
    """row − baseline per world seed: the mean over that world's training seeds of the difference (seeds
    paired where both rows have them)."""
    cell = m[m["eval_set"] == eval_set].pivot_table(index=["world_seed", "seed"], columns="row", values="value")
    both = cell[[row, baseline]].dropna()
    return (both[row] - both[baseline]).groupby(level="world_seed").mean()


def world_test(per_world: pd.Series | list[float], ci: float = 0.95) -> dict:
    """Mean over worlds, its t interval (n − 1 df) and the one-sided p value of 'mean > 0'.
    [1.0, 3.0, 5.0]: mean 3.0, sd 2.0, se 2/sqrt(3) = 1.1547; t_{0.975,2} = 4.3027 -> [-1.968, 7.968];
    t = 2.598 on 2 df -> one-sided p = 0.0608."""
    e = t_interval(list(per_world), ci)
    return {"n_worlds": e.n_worlds, "estimate": e.estimate, "low": e.low, "high": e.high, "p_one_sided": one_sided_p(e),
            "per_world": list(e.per_unit)}


def table(m: pd.DataFrame, claims: dict[str, tuple[str, str]], gates: dict[str, str] | None = None) -> list[str]:
    """One markdown row per claim. `gates`: claim -> the sentence of its failed gate; such a claim is `not tested
    (gate …)` by the package's rule and left out of Holm's family (its Holm p a dash)."""
    gates = gates or {}
    tests = {name: world_test(per_world_difference(m, row, base)) for name, (row, base) in claims.items()}
    adjusted = holm({name: t["p_one_sided"] for name, t in tests.items() if not gates.get(name)})
    lines = ["| claim | comparison | n_worlds | estimate [95% t over worlds], points | one-sided p | Holm p | verdict |",
             "|---|---|---|---|---|---|---|"]
    for name, (row, base) in claims.items():
        t, holm_p = tests[name], adjusted.get(name)
        word = verdict('tested', t_interval(t['per_world']), holm_p=holm_p, gate=gates.get(name))
        lines.append(f"| {name} | {row} − {base} | {t['n_worlds']} | {100 * t['estimate']:+.1f} "
                     f"[{100 * t['low']:+.1f}, {100 * t['high']:+.1f}] | {t['p_one_sided']:.3f} | "
                     f"{'–' if holm_p is None else f'{holm_p:.3f}'} | {word} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scratch", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--row", action="append", required=True, help="a row folder under world<ws>/sweep/")
    ap.add_argument("--claim", action="append", required=True, help="NAME=ROW:BASELINE (ROW − BASELINE > 0)")
    ap.add_argument("--csv", type=Path, help="also write every unit's accuracy (row, world_seed, seed, eval_set, "
                                             "value; rows by folder name), the layout experiments/summary.py reads")
    args = ap.parse_args()
    claims = {}
    for c in args.claim:
        name, _, pair = c.partition("=")
        row, _, base = pair.partition(":")
        if not (name and row in args.row and base in args.row):
            sys.exit(f"error: --claim {c!r}: expected NAME=ROW:BASELINE with both rows among --row")
        claims[name] = (row, base)
    m = unit_metrics(args.scratch, {r: r for r in args.row})
    lines = [f"# Comparisons with the world as the unit ({args.scratch})", "",
             "Per world: the mean over its training seeds of row − baseline on the challenge mean; over worlds: "
             "mean, 95% t interval, one-sided t test, Holm's correction over the claims below.", "",
             *table(m, claims)]
    args.out.write_text("\n".join(lines) + "\n")
    if args.csv:
        m.sort_values(["row", "world_seed", "seed", "eval_set"]).to_csv(args.csv, index=False)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
