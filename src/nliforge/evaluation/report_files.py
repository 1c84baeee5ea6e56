"""Render the tidy summary of a sweep (evaluation.table.summary_table) as the report's files:
Markdown in Table 3's layout, a tidy CSV, a heatmap PNG (W&B: nliforge.tracking.runs.log_report),
and the differences to a baseline (evaluation.differences) as a second Markdown table and report_diff.csv."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from nliforge.evaluation.differences import row_tests
from nliforge.utils.atomic import atomic_write_text, save_figure

DAGGER = "†"
FEW = "‡"          # fewer than 3 seeds: the interval says little
SIGNIFICANT = "*"  # a difference whose interval excludes 0


def _pct(x: float, scale: float) -> str:
    return f"{scale * x:.1f}"


def format_cell(row: pd.Series, scale: float = 100.0) -> str:
    """`**mean**† ± std [low, high] n=k‡`: bold when best, dagger when in-domain, double dagger when
    n < 3, no spread for n=1."""
    mean = _pct(row["mean"], scale)
    text = (f"**{mean}**" if row["best"] else mean) + (DAGGER if row["in_domain"] else "")
    if row["n"] > 1:
        text += f" ± {_pct(row['std'], scale)} [{_pct(row['ci_low'], scale)}, {_pct(row['ci_high'], scale)}]"
    return f"{text} n={int(row['n'])}" + (FEW if row["few_seeds"] else "")


def format_difference(row: pd.Series, scale: float = 100.0) -> str:
    """`+d*† [low, high] n=k‡`: star when the interval excludes 0, interval left out when it cannot
    be formed (a side with one seed); n is the pairs (paired) or `n vs n_baseline` (Welch)."""
    text = f"{scale * row['diff']:+.1f}" + (SIGNIFICANT if row["significant"] else "")
    text += DAGGER if row["in_domain"] else ""
    if not math.isnan(row["ci_low"]):
        text += f" [{scale * row['ci_low']:+.1f}, {scale * row['ci_high']:+.1f}]"
    n = f"{int(row['n'])}" if row["test"] == "paired" else f"{int(row['n'])} vs {int(row['n_baseline'])}"
    return f"{text} n={n}" + (FEW if row["few_seeds"] else "")


def markdown_table(summary: pd.DataFrame, scale: float = 100.0, formatter=format_cell) -> str:
    """Rows training sets, columns eval sets (in the summary's order); empty cell where a training set
    was not evaluated on a set. `formatter` renders one tidy row (format_cell, format_difference)."""
    if summary.empty:
        return "(no cells)"
    cells = summary.assign(cell=summary.apply(formatter, axis=1, scale=scale))
    grid = cells.pivot(index="train_id", columns="eval_set", values="cell")
    sets = list(dict.fromkeys(summary["eval_set"]))
    grid = grid.reindex(index=list(dict.fromkeys(summary["train_id"])), columns=sets).fillna("")
    lines = ["| train set | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    lines += [f"| {tid} | " + " | ".join(grid.loc[tid]) + " |" for tid in grid.index]
    return "\n".join(lines)


def difference_caption(diff: pd.DataFrame, metric: str, ci: float, scale: float, unit: str = "seed") -> str:
    """What the differences table shows, and which test each row's intervals come from; `unit` (seed or
    world) is what n counts."""
    baseline = diff["baseline"].iloc[0] if len(diff) else "the baseline"
    per_row = "; ".join(f"{tid}: {test}" for tid, test in row_tests(diff).items())
    return (f"Cells: training set − {baseline} in {metric} ×{scale:g}, mean over {unit}s "
            f"[{ci:.0%} t-interval of the difference, clipped to the metric's range] n={unit}s. "
            f"Test per row: {per_row} (paired t on per-{unit} differences where both ran the same {unit}s, "
            f"else Welch t with Welch–Satterthwaite df). {SIGNIFICANT}: the interval excludes 0. "
            f"{DAGGER}: in-domain for that training set. {FEW}: fewer than 3 {unit}s (pairs, or the smaller "
            f"side). No interval: a side has one {unit}.")


def write_markdown(summary: pd.DataFrame, path: Path, title: str, metric: str, ci: float,
                   scale: float = 100.0, diff: pd.DataFrame | None = None, note: str = "", unit: str = "seed") -> Path:
    """report.md: the table plus a legend saying what each mark means (a table must read alone), and
    `note` (where the in-domain cells come from), and when a baseline was given the differences table
    with its caption. `unit` (seed, or world: each world's seeds averaged) is what n counts."""
    over = "worlds (each world's training seeds averaged)" if unit == "world" else "seeds"
    legend = (f"Cells: mean ± std over {over} (sample std) [{ci:.0%} t-interval, clipped to the metric's "
              f"range] n={unit}s, {metric} ×{scale:g}. **Bold**: best mean per eval set among cells not "
              f"in-domain. {DAGGER}: in-domain for that training set (not a challenge; excluded from best). "
              f"{FEW}: fewer than 3 {unit}s (the interval says little); n=1 has no interval.")
    parts = [f"# {title}\n\n", markdown_table(summary, scale), "\n\n", legend + (f" {note}" if note else ""), "\n"]
    if diff is not None:
        baseline = diff["baseline"].iloc[0] if len(diff) else "the baseline"
        parts += [f"\n## Differences to {baseline}\n\n", markdown_table(diff, scale, format_difference),
                  "\n\n", difference_caption(diff, metric, ci, scale, unit), "\n"]
    atomic_write_text(path, parts)
    return path


def write_csv(summary: pd.DataFrame, path: Path) -> Path:
    """report.csv (or report_diff.csv), tidy: one row per (train_id, eval_set), raw units as in
    metrics.csv; a missing interval is an empty field."""
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
        text = _pct(r["mean"], scale) + (DAGGER if r["in_domain"] else "") + (FEW if r["few_seeds"] else "")
        if not math.isnan(r["std"]):
            text += f"\n±{_pct(r['std'], scale)}"
        light = image.norm(scale * r["mean"]) > 0.6   # dark text on viridis' light (yellow) end
        ax.text(cols.index(r["eval_set"]), rows.index(r["train_id"]), text, ha="center", va="center",
                color="black" if light else "white", fontweight="bold" if r["best"] else "normal", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return save_figure(fig, path, dpi=120)

