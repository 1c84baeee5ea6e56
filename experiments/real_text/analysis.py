"""The real-text experiment's tables (criteria: experiments/real_text/README.md).

    python -m experiments.real_text.analysis SCRATCH OUT_DIR

Reads the runs under SCRATCH (<arm>/seed<S>/, written by run.sh) and writes OUT_DIR/results.md,
OUT_DIR/results.csv and OUT_DIR/data_map_mccoy.png (the seed-averaged data map coloured by McCoy's
correctness). Needs NLIFORGE_DATA_DIR (the real sets). Arms that have not run are reported as not tested.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from experiments.real_text import artifacts, datamap
from experiments.real_text.common import fmt, run_acc, run_dirs, wall_times


def wall_lines(scratch: Path) -> list[str]:
    w = wall_times(scratch)
    lines = ["## Wall time of each run (s)", "", "| arm | seed | wall s |", "|---|---|---|"]
    lines += [f"| {r.arm} | {r.seed} | {r.wall_s} |" for r in w.itertuples()]
    return lines + [""]


def r3_accuracy(scratch: Path) -> list[str]:
    """Context, no criterion: the full-input R3 runs' test accuracy."""
    lines = ["Full-input MiniLM of R3 (no criterion; context): accuracy % on the test sets.", "",
             "| seed | mnli_dev_test_part | snli_cad_original_test |", "|---|---|---|"]
    for s, run in run_dirs(scratch, "r3").items():
        cells = [fmt(run_acc(run, t)[0], scale=100, digits=1) for t in ("mnli_dev_test_part", "snli_cad_original_test")]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines + [""]


def main(scratch: Path, out: Path) -> None:
    rows, lines = [], ["# Real text: results (written by analysis.py)", ""]
    r3_rows, r3_lines, frames = datamap.analyse(scratch)
    rows += r3_rows
    lines += r3_lines
    if frames:
        key = "mean" if "mean" in frames else min(frames)
        seeds = "averaged over seeds " + ", ".join(str(k) for k in frames if k != "mean") if key == "mean" else f"seed {key}"
        datamap.plot_mccoy_map(frames[key], out / "data_map_mccoy.png",
                               f"MiniLM data map of mnli_dev_train_part ({seeds})")
        lines += ["Data map coloured by McCoy's correctness: `data_map_mccoy.png`.", ""]
    lines += r3_accuracy(scratch)
    for part in (artifacts.hyp_only(scratch), artifacts.r2c(), artifacts.r2d(scratch)):
        rows += part[0]
        lines += part[1]
    lines += wall_lines(scratch)
    pd.DataFrame(rows).to_csv(out / "results.csv", index=False, float_format="%.6g")
    (out / "results.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m experiments.real_text.analysis SCRATCH OUT_DIR")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
