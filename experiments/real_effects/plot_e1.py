"""E1's three attempts in one picture (README "Results: E1 ..."): per heuristic, plus − mnli in HANS
non-entailment accuracy and in balanced accuracy, each world a dot, the mean with its 95% t interval, at 1, 3
and 6 epochs. Read from results.csv's per-world rows; written by analysis.py as `e1_attempts.png`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nliforge.evaluation.worlds import t_interval

from experiments.real_effects.analysis_e1 import HEUR

ATTEMPTS = (("", "1 epoch"), ("3ep:", "3 epochs"), ("6ep:", "6 epochs"))
PANELS = (("", "HANS non-entailment accuracy"), ("-bal", "HANS balanced accuracy (mean of both cells)"))


def plot_attempts(rows: pd.DataFrame, path: Path) -> Path | None:
    """plus − mnli per world (points) by attempt and heuristic; None when no attempt has rows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows.criterion.str.match(r"(3ep:|6ep:)?E1a-").any():
        return None
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 4), sharey=True)
    for ax, (suffix, title) in zip(axes, PANELS):
        for i, (prefix, _) in enumerate(ATTEMPTS):
            for j, (h, name) in enumerate(HEUR.items()):
                vals = rows[rows.criterion == f"{prefix}E1a-{h}{suffix}"].sort_values("world")["value"].tolist()
                if not vals:
                    continue
                x = i * 4 + j
                ax.scatter([x] * len(vals), vals, s=12, color=f"C{j}", alpha=0.6,
                           label=name.replace("_", " ") if i == 0 else None)
                e = t_interval(vals)
                ax.errorbar(x + 0.25, e.estimate, yerr=[[e.estimate - e.low], [e.high - e.estimate]],
                            fmt="o", color=f"C{j}", capsize=3)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks([i * 4 + 1 for i in range(len(ATTEMPTS))], [lab for _, lab in ATTEMPTS])
        ax.set_title(title, fontsize=10)
    axes[0].set_ylabel("plus − mnli (points)")
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle("E1: 500 HANS-like pairs added to 1,000 MNLI pairs, MiniLM; dots: worlds (5; 3 epochs: 4), "
                 "bars: mean and 95% t interval", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
