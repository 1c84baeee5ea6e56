"""Shared pieces of the real-text analysis (experiments/real_text/README.md): loading the real sets, the
bootstrap over examples (1,000 resamples, 95%), per-seed verdicts and the rows of results.csv."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from nliforge.data.registry import eval_set_spec, find_set_yaml, load_set, paths_node

N_BOOT = 1000
CI = 0.95
SEEDS = (1, 2, 3)
MCCOY_KEY = "number of correct responses (out of 100)"


def load_named(name: str) -> list:
    """The records of a training set (data/train_sets/<name>.yaml in the package or the user data home) or else an eval set, by name."""
    path = find_set_yaml(name, "train_sets")
    if path is None:
        return load_set(eval_set_spec(name, name), name)
    node = OmegaConf.create({"paths": paths_node("data_cache"), "set": OmegaConf.load(path)})
    return load_set(OmegaConf.to_container(node, resolve=True)["set"][name], name)


def boot_idx(n: int, seed: int = 0) -> np.ndarray:
    """N_BOOT resamples (rows) of n example indices, with replacement, seeded."""
    return np.random.default_rng(seed).integers(0, n, size=(N_BOOT, n))


def interval(values: np.ndarray) -> tuple[float, float]:
    """The percentile interval (CI) of bootstrap values."""
    a = (1 - CI) / 2
    lo, hi = np.nanquantile(np.asarray(values, float), [a, 1 - a])
    return float(lo), float(hi)


def seed_status(lo: float, hi: float, bound: float = 0.0) -> str:
    """One seed against a stated direction 'above bound': holds (interval above), wrong (below), null."""
    return "holds" if lo > bound else ("wrong" if hi < bound else "null")


def verdict(statuses: list[str], wanted: int = len(SEEDS)) -> str:
    """The verdict words of experiments/README.md from the per-seed statuses: reproduced (holds in every
    seed), partly (in some), contradicted (wrong side in every seed), not shown (otherwise); fewer seeds
    than `wanted` ran: not tested."""
    if len(statuses) < wanted:
        return f"not tested ({len(statuses)} of {wanted} seeds ran)"
    if all(s == "holds" for s in statuses):
        return "reproduced"
    if any(s == "holds" for s in statuses):
        return "partly"
    if all(s == "wrong" for s in statuses):
        return "contradicted"
    return "not shown"


def run_dirs(scratch: Path, arm: str) -> dict[int, Path]:
    """seed -> finished run folder (one with metrics.csv) of an arm."""
    out = {}
    for s in SEEDS:
        d = scratch / arm / f"seed{s}"
        if (d / "metrics.csv").is_file():
            out[s] = d
    return out


def run_acc(run: Path, eval_set: str) -> tuple[float, int]:
    """(accuracy, n) of a run on one eval set, from its metrics.csv."""
    m = pd.read_csv(run / "metrics.csv")
    m = m[m.eval_set == eval_set].set_index("metric")["value"]
    return float(m["acc"]), int(m["n"])


def wall_times(scratch: Path) -> pd.DataFrame:
    """arm, seed, wall seconds of every finished run (the <arm>/seed<S>.done files run.sh writes)."""
    rows = []
    for done in sorted(scratch.glob("*/seed*.done")):
        fields = dict(kv.split("=") for kv in done.read_text().split())
        rows.append({"arm": done.parent.name, "seed": int(done.stem.removeprefix("seed")),
                     "rc": int(fields["rc"]), "wall_s": int(fields["wall"])})
    return pd.DataFrame(rows, columns=["arm", "seed", "rc", "wall_s"])


def row(section: str, arm: str, seed, quantity: str, value: float, lo=np.nan, hi=np.nan, note: str = "") -> dict:
    """One row of results.csv."""
    return {"criterion": section, "arm": arm, "seed": seed, "quantity": quantity, "value": value,
            "ci_low": lo, "ci_high": hi, "note": note}


def fmt(v: float, lo: float = np.nan, hi: float = np.nan, scale: float = 1.0, digits: int = 3) -> str:
    """`v [lo, hi]` scaled (e.g. 100 for %)."""
    text = f"{v * scale:.{digits}f}"
    if not np.isnan(lo):
        text += f" [{lo * scale:.{digits}f}, {hi * scale:.{digits}f}]"
    return text
