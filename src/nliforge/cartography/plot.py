"""Data map plot: variability (x) against confidence (y), coloured by correctness.

Uses matplotlib's object API with the Agg canvas (no pyplot, no global backend switch), so
it works headless and does not disturb a caller's own figures.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nliforge.cartography.select import select_region
from nliforge.utils.atomic import save_figure
from nliforge.utils.figures import add_note

MAX_POINTS = 25_000
REGION_FRACTION = 0.1    # a region's label sits at the median point of its most typical tenth
_REGION_NOTES = {  # region of cartography.select: (label, box colour)
    "ambiguous": ("ambiguous", "#fde0c5"),
    "easy": ("easy-to-learn", "#d4ecd0"),
    "hard": ("hard-to-learn", "#f6cfd2"),
}


def _subsample(frame: pd.DataFrame, max_points: int, seed: int) -> pd.DataFrame:
    """At most ``max_points`` rows, chosen reproducibly (sorted by uid, fixed seed)."""
    frame = frame.sort_index(kind="mergesort")
    if len(frame) <= max_points:
        return frame
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(len(frame), size=max_points, replace=False))
    return frame.iloc[keep]


def region_label_positions(frame: pd.DataFrame, fraction: float = REGION_FRACTION) -> dict[str, tuple[float, float]]:
    """(variability, confidence) where each region's label goes: the median of the region's points as
    cartography.select_region picks them (its most typical `fraction`), so the label sits on the points
    it names wherever training put them; a region with no point gets no label."""
    positions = {}
    for region in _REGION_NOTES:
        uids = select_region(frame, region, fraction)
        if uids:
            part = frame.loc[uids] if "uid" not in frame.columns else frame.set_index("uid").loc[uids]
            positions[region] = (float(part["variability"].median()), float(part["confidence"].median()))
    return positions


def _scatter(ax, frame: pd.DataFrame) -> None:
    """Main panel: one colour and marker per correctness level, with a legend."""
    levels = np.sort(frame["correctness_frac"].dropna().unique())
    palette = colormaps["RdYlGn"]
    markers = "ovs^Dp*hX<>"
    for i, level in enumerate(levels):
        part = frame[frame["correctness_frac"] == level]
        colour = palette(0.1 + 0.8 * (level if len(levels) > 1 else 1.0))
        ax.scatter(part["variability"], part["confidence"], s=9, alpha=0.6, color=colour,
                   marker=markers[i % len(markers)], linewidths=0, label=f"{level:.2f}")
    for region, (x, y) in region_label_positions(frame).items():
        text, colour = _REGION_NOTES[region]
        ax.text(x, y, text, ha="center", va="center", fontsize=10, alpha=0.9,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": colour, "edgecolor": "grey", "alpha": 0.85})
    ax.set_xlabel("variability")
    ax.set_ylabel("confidence")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(-0.01, max(0.5, float(frame["variability"].max()) + 0.02) if len(frame) else 0.5)


def _histograms(fig: Figure, grid, main_ax, frame: pd.DataFrame) -> None:
    """Marginal histograms: variability above the map, confidence to its right."""
    top = fig.add_subplot(grid[0, 0], sharex=main_ax)
    right = fig.add_subplot(grid[1, 1], sharey=main_ax)
    top.hist(frame["variability"], bins=40, color="#7a8fb5")
    right.hist(frame["confidence"], bins=40, orientation="horizontal", color="#7a8fb5")
    top.tick_params(labelbottom=False)
    right.tick_params(labelleft=False)
    top.set_ylabel("count")
    right.set_xlabel("count")


def plot_data_map(df: pd.DataFrame, path: str | os.PathLike, title: str = "Data map",
                  max_points: int = MAX_POINTS, seed: int = 0, note: str = "") -> Path:
    """Draw the data map of a metrics frame to a PNG at ``path`` (written atomically); ``note`` is drawn
    under the map (e.g. that the dynamics come from a stand-in model).

    Unlabeled rows (NaN confidence) are left out. Frames larger than ``max_points`` are
    subsampled deterministically; the histograms still use every labeled example.
    Returns the path written.
    """
    needed = ["confidence", "variability", "correctness_frac"]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"data map needs columns {needed}; missing {missing}")
    if max_points < 1:
        raise ValueError(f"max_points must be >= 1; got {max_points}")
    labeled = df.dropna(subset=needed)
    shown = _subsample(labeled, max_points, seed)
    fig = Figure(figsize=(9, 7.5), dpi=110)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4),
                            hspace=0.05, wspace=0.05)
    main_ax = fig.add_subplot(grid[1, 0])
    _scatter(main_ax, shown)
    corner = fig.add_subplot(grid[0, 1])
    corner.axis("off")
    handles, labels = main_ax.get_legend_handles_labels()
    if handles:  # the empty top-right cell holds the correctness legend
        corner.legend(handles, labels, title="correctness", loc="center", fontsize="x-small",
                      title_fontsize="small", markerscale=2, frameon=False, ncol=2 if len(handles) > 6 else 1)
    _histograms(fig, grid, main_ax, labeled)
    size = f"{len(labeled)} examples" + (f", {len(shown)} shown" if len(shown) < len(labeled) else "")
    fig.suptitle(f"{title} ({size})")
    add_note(fig, note)
    return save_figure(fig, path, close=False, bbox_inches="tight")  # a Figure of its own: pyplot never saw it
