"""R3 (experiments/real_text/README.md): MiniLM's data map of mnli_dev_train_part against McCoy et al.'s
(2020) correctness of 100 BERT-base runs, per training seed and on the seed-averaged metrics.

Spearman's rho (scipy) of confidence, variability and correctness with McCoy's c / 100, each with a
percentile bootstrap over examples; McCoy's mean in the three cartography regions (select_region,
1/3 each) and the two differences easy - ambiguous and ambiguous - hard, bootstrapped over the examples
of the training part with each example's region membership fixed (the regions may overlap)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from scipy.stats import spearmanr

from nliforge.cartography.metrics import compute_metrics
from nliforge.cartography.select import select_region
from nliforge.cartography.store import load_dynamics
from nliforge.utils.atomic import save_figure

from experiments.real_text.common import MCCOY_KEY, boot_idx, fmt, interval, load_named, row, run_dirs, seed_status, verdict

matplotlib.use("Agg")
METRICS = ("confidence", "variability", "correctness_frac")
REGIONS = ("easy", "ambiguous", "hard")
FRACTION = 1 / 3


def mccoy() -> pd.Series:
    """uid -> McCoy's correctness c / 100 for the pairs of mnli_dev_train_part."""
    recs = load_named("mnli_dev_train_part")
    return pd.Series({r.uid: int(r.meta[MCCOY_KEY]) / 100 for r in recs}, name="mccoy")


def seed_frames(scratch: Path) -> dict:
    """seed (or 'mean') -> the cartography metrics of the run joined with McCoy's correctness."""
    truth = mccoy()
    frames = {}
    for s, run in run_dirs(scratch, "r3").items():
        m = compute_metrics(load_dynamics(run / "dynamics"))
        m["correctness_frac"] = m["correctness_frac"].astype(float)
        frames[s] = m[list(METRICS)].join(truth, how="inner")
    if len(frames) > 1:
        stacked = pd.concat([f[list(METRICS)] for f in frames.values()])
        frames["mean"] = stacked.groupby(level=0).mean().join(truth, how="inner")
    return frames


def boot_spearman(x: np.ndarray, y: np.ndarray, idx: np.ndarray) -> tuple[float, float, float]:
    """rho and its bootstrap interval over the resamples `idx`."""
    rho = float(spearmanr(x, y).statistic)
    reps = np.array([spearmanr(x[i], y[i]).statistic for i in idx])
    return (rho, *interval(reps))


def regions(frame: pd.DataFrame, idx: np.ndarray) -> dict:
    """Per region: McCoy's mean and n; the two differences with their bootstrap intervals."""
    y = frame["mccoy"].to_numpy(float)
    df = frame.rename_axis("uid")
    masks = {r: frame.index.isin(select_region(df, r, FRACTION)) for r in REGIONS}
    out = {r: {"mean": float(y[m].mean()), "n": int(m.sum())} for r, m in masks.items()}
    boot = {r: (y[idx] * m[idx]).sum(1) / m[idx].sum(1) for r, m in masks.items()}
    for a, b in (("easy", "ambiguous"), ("ambiguous", "hard")):
        d = out[a]["mean"] - out[b]["mean"]
        out[f"{a}-{b}"] = {"mean": d, "ci": interval(boot[a] - boot[b])}
    return out


def analyse(scratch: Path) -> tuple[list[dict], list[str], dict]:
    """results.csv rows, the R3 markdown lines, and the frames (for the data map)."""
    frames = seed_frames(scratch)
    rows, rho_lines, reg_lines, st_a, st_b = [], [], [], [], []
    for key, frame in frames.items():
        idx = boot_idx(len(frame), seed=0)
        y = frame["mccoy"].to_numpy(float)
        cells = []
        for col in METRICS:
            rho, lo, hi = boot_spearman(frame[col].to_numpy(float), y, idx)
            rows.append(row("R3", "r3", key, f"spearman_{col}_mccoy", rho, lo, hi, f"n={len(frame)}"))
            cells.append(fmt(rho, lo, hi))
            if col == "confidence" and key != "mean":
                st_a.append(seed_status(lo, hi))
        rho_lines.append(f"| {key} | {len(frame)} | " + " | ".join(cells) + " |")
        reg = regions(frame, idx)
        for r in REGIONS:
            rows.append(row("R3", "r3", key, f"mccoy_mean_{r}", reg[r]["mean"], note=f"n={reg[r]['n']}"))
        diffs = [reg["easy-ambiguous"], reg["ambiguous-hard"]]
        for name, d in zip(("easy-ambiguous", "ambiguous-hard"), diffs):
            rows.append(row("R3", "r3", key, f"mccoy_diff_{name}", d["mean"], *d["ci"]))
        if key != "mean":
            per = [seed_status(*d["ci"]) for d in diffs]
            st_b.append("holds" if all(p == "holds" for p in per) else "wrong" if "wrong" in per else "null")
        reg_lines.append(f"| {key} | " + " | ".join(f"{reg[r]['mean']:.3f} (n={reg[r]['n']})" for r in REGIONS)
                         + " | " + " | ".join(fmt(d["mean"], *d["ci"]) for d in diffs) + " |")
    va, vb = verdict(st_a), verdict(st_b)
    rows += [row("R3a", "r3", "all", "verdict", np.nan, note=va), row("R3b", "r3", "all", "verdict", np.nan, note=vb)]
    lines = ["## R3: data map of mnli_dev_train_part against McCoy et al.'s correctness", "",
             "Spearman's rho with McCoy's c / 100 [95% bootstrap over examples, 1,000 resamples]; `mean` = the "
             "metrics averaged over the seeds that ran.", "",
             "| seed | n | confidence | variability | correctness |", "|---|---|---|---|---|", *rho_lines, "",
             f"**R3a** (rho(confidence, McCoy) > 0, interval above 0, each seed): per seed {st_a} -> **{va}**", "",
             "McCoy's mean correctness by region (select_region, 1/3 each) and the differences [95% bootstrap]:", "",
             "| seed | easy | ambiguous | hard | easy - ambiguous | ambiguous - hard |", "|---|---|---|---|---|---|",
             *reg_lines, "",
             f"**R3b** (easy > ambiguous > hard, both intervals above 0, each seed): per seed {st_b} -> **{vb}**", ""]
    return rows, lines, frames


def plot_mccoy_map(frame: pd.DataFrame, path: Path, title: str) -> Path:
    """Variability (x) against confidence (y), each pair coloured by McCoy's correctness."""
    fig = Figure(figsize=(8, 6.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    order = frame.sort_values("mccoy", ascending=False)   # the hard (low McCoy) pairs drawn last, on top
    sc = ax.scatter(order["variability"], order["confidence"], c=order["mccoy"], cmap="RdYlGn", s=5,
                    alpha=0.7, vmin=0, vmax=1, linewidths=0)
    fig.colorbar(sc, ax=ax, label="McCoy et al. (2020): share of 100 BERT-base runs correct")
    ax.set_xlabel("variability (MiniLM, 3 epochs)")
    ax.set_ylabel("confidence (MiniLM, 3 epochs)")
    ax.set_title(title)
    return save_figure(fig, path, close=False, bbox_inches="tight")
