"""`results_labeller.md` and `results_labeller_check.md` of the redesigned WANLI mechanism test (README, "The
mechanism test, redesigned"), from committed files alone: the per-unit accuracies `results_labeller.csv` (which
run_labeller.sh has `experiments.world_unit --csv` write from the runs) and the gates `gates_labeller.md`.

L1-L3 get the package's verdict (`world_unit.table`, `nliforge.evaluation.verdict`); where a gate they need
failed (G1 in every world; the manipulation check, ceiling − floor above 0 over worlds) they read
`not tested (gate …)`, the gate's sentence computed from its file (`gates_labeller.L_GATES`). The manipulation
check is a gate: it is reported as passed or not, never as a claim.

    python -m experiments.wanli_generated.results_labeller    # rewrites both files in this folder
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from experiments.summary_gates import failed
from experiments.summary_sources import read_csv
from experiments.wanli_generated.gates_labeller import L_GATES, MANIPULATION, UNITS
from experiments.world_unit import per_world_difference, table, world_test
from nliforge.errors import NLIDataError

EXPERIMENTS = Path(__file__).resolve().parent.parent
CLAIMS = {"L1": ("3_full", "2_floor"), "L2": ("3_full", "4_random"), "L3": ("3_full", "9_ceiling")}
COLUMNS = {"row", "world_seed", "seed", "eval_set", "value"}
INTRO = ("Per world: the mean over its training seeds of row − baseline on the challenge mean; over worlds: mean, "
         "95% t interval, one-sided t test, Holm's correction over the tested claims below.")


def units(root: Path) -> pd.DataFrame:
    return read_csv(root, UNITS, COLUMNS, "it holds the runs' per-unit accuracies (run_labeller.sh writes it)")


def gate_lines(root: Path) -> list[str]:
    """One line per gate L1-L3 need: its failure sentence, or that it passed."""
    return [f"- {g.failure(root) or f'{g.name}: passed'}" for g in L_GATES]


def results_md(root: Path) -> str:
    m, gate = units(root), failed(L_GATES, root)
    lines = [f"# Comparisons with the world as the unit ({UNITS})", "", INTRO, "",
             "Gates L1-L3 need (`gates_labeller.md`, `results_labeller_check.md`), checked before any claim is read:",
             "", *gate_lines(root), "", *table(m, CLAIMS, {name: gate for name in CLAIMS} if gate else None)]
    return "\n".join(lines) + "\n"


def check_md(root: Path) -> str:
    row, base = MANIPULATION.source.row, MANIPULATION.source.minus
    t = world_test(per_world_difference(units(root), row, base))
    sentence = MANIPULATION.failure(root)
    state = f"not passed ({sentence})" if sentence else "passed"
    lines = [f"# The manipulation check of L1-L3, a gate ({UNITS})", "",
             "Ceiling − floor on the challenge mean, per world the mean over its training seeds, over worlds a 95% t "
             "interval: L1-L3 are read only where it lies above 0.", "",
             "| gate | comparison | n_worlds | estimate [95% t over worlds], points | state |", "|---|---|---|---|---|",
             f"| {MANIPULATION.name} | {row} − {base} | {t['n_worlds']} | {100 * t['estimate']:+.1f} "
             f"[{100 * t['low']:+.1f}, {100 * t['high']:+.1f}] | {state} |"]
    return "\n".join(lines) + "\n"


def main(root: Path = EXPERIMENTS) -> None:
    texts = {root / "wanli_generated/results_labeller.md": results_md(root),
             root / "wanli_generated/results_labeller_check.md": check_md(root)}
    for path, text in texts.items():   # both computed before either is written
        path.write_text(text)
        print(f"wrote {path}")


if __name__ == "__main__":
    try:
        main()
    except NLIDataError as e:
        sys.exit(f"error: {e}")
