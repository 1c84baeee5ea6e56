"""Render the tidy summary of a sweep (evaluation.table.summary_table) as the report's files:
Markdown in Table 3's layout, a tidy CSV and a heatmap PNG (W&B: nliforge.utils.wandb_log.log_report)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from nliforge.utils.atomic import atomic_write_text, save_figure

DAGGER = "†"


def _pct(x: float, scale: float) -> str:
    return f"{scale * x:.1f}"


def format_cell(row: pd.Series, scale: float = 100.0) -> str:
    """`**mean**† ± std [low, high] n=k`: bold when best, dagger when in-domain, no spread for n=1."""
    mean = _pct(row["mean"], scale)
    text = (f"**{mean}**" if row["best"] else mean) + (DAGGER if row["in_domain"] else "")
    if row["n"] > 1:
        text += f" ± {_pct(row['std'], scale)} [{_pct(row['ci_low'], scale)}, {_pct(row['ci_high'], scale)}]"
    return f"{text} n={int(row['n'])}"


def markdown_table(summary: pd.DataFrame, scale: float = 100.0) -> str:
    """Rows training sets, columns eval sets (in the summary's order); empty cell where a training set
    was not evaluated on a set."""
    cells = summary.assign(cell=summary.apply(format_cell, axis=1, scale=scale))
    grid = cells.pivot(index="train_id", columns="eval_set", values="cell")
    sets = list(dict.fromkeys(summary["eval_set"]))
    grid = grid.reindex(index=list(dict.fromkeys(summary["train_id"])), columns=sets).fillna("")
    lines = ["| train set | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    lines += [f"| {tid} | " + " | ".join(grid.loc[tid]) + " |" for tid in grid.index]
    return "\n".join(lines)


def write_markdown(summary: pd.DataFrame, path: Path, title: str, metric: str, ci: float,
                   scale: float = 100.0) -> Path:
    """report.md: the table plus a legend saying what each mark means (a table must read alone)."""
    legend = (f"Cells: mean ± std over seeds (sample std) [{ci:.0%} t-interval] n=seeds, "
              f"{metric} ×{scale:g}. **Bold**: best mean per eval set among cells not in-domain. "
              f"{DAGGER}: in-domain for that training set (not a challenge; excluded from best).")
    atomic_write_text(path, [f"# {title}\n\n", markdown_table(summary, scale), "\n\n", legend, "\n"])
    return path


def write_csv(summary: pd.DataFrame, path: Path) -> Path:
    """report.csv, tidy: one row per (train_id, eval_set), raw units as in metrics.csv."""
    atomic_write_text(path, [summary.to_csv(index=False)])
    return path


def write_heatmap(summary: pd.DataFrame, path: Path, title: str, scale: float = 100.0) -> Path:
    """report.png: means as colours, each cell annotated with mean ± std (bold best, dagger in-domain)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, cols = list(dict.fromkeys(summary["train_id"])), list(dict.fromkeys(summary["eval_set"]))
    grid = summary.pivot(index="train_id", columns="eval_set", values="mean").reindex(index=rows, columns=cols)
    fig, ax = plt.subplots(figsize=(1.6 * len(cols) + 2.5, 0.6 * len(rows) + 1.8))
    image = ax.imshow(scale * grid.to_numpy(dtype=float), cmap="viridis", aspect="auto")
    fig.colorbar(image, ax=ax)
    ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    for _, r in summary.iterrows():
        text = _pct(r["mean"], scale) + (DAGGER if r["in_domain"] else "")
        if not math.isnan(r["std"]):
            text += f"\n±{_pct(r['std'], scale)}"
        light = image.norm(scale * r["mean"]) > 0.6   # dark text on viridis' light (yellow) end
        ax.text(cols.index(r["eval_set"]), rows.index(r["train_id"]), text, ha="center", va="center",
                color="black" if light else "white", fontweight="bold" if r["best"] else "normal", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return save_figure(fig, path, dpi=120)

