"""The world as the unit of analysis (`nliforge-report ... unit=world`, and `experiments/`).

D0, the generated sets, the floor and the ceiling are drawn once per world seed, so training seeds within a
world are not independent units. Each world gives one number per cell (the mean over its training seeds),
intervals are Student t intervals over worlds (n_worlds - 1 df), the one-sided t test asks whether a
training set lies on the stated side of the baseline, and the claims tested together (a declared family)
get Holm's step-down correction. The world of a run is a key of its config.yaml (`world.seed` by default).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from scipy import stats

WORLD_KEY = "world.seed"
SIDES = {"greater": 1, "less": -1}


@dataclass(frozen=True)
class Estimate:
    """One claim's number: `estimate` [`low`, `high`], `n_worlds` (None: the unit is the example or the
    prompt, no worlds), `per_unit` (per world; per training seed on real text), `reference` (a bound read
    from the results file, e.g. a majority class; None: the claim's own)."""
    estimate: float
    low: float = math.nan
    high: float = math.nan
    n_worlds: int | None = None
    per_unit: tuple[float, ...] = field(default=())
    reference: float | None = None

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


def t_interval(per_world: Sequence[float], ci: float = 0.95) -> Estimate:
    """Mean of the per-world estimates with its Student t interval over worlds (n - 1 df); one world: no
    interval. per_world [1.0, 5.0] -> 3.0 [-22.41, 28.41] (t_{0.975,1} = 12.706, sd/sqrt(2) = 2)."""
    values = [float(v) for v in per_world]
    if not values:
        return Estimate(math.nan, n_worlds=0)
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return Estimate(mean, n_worlds=n, per_unit=tuple(values))
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(stats.t.ppf(0.5 + ci / 2, n - 1)) * sd / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n, tuple(values))


def one_sided_p(e: Estimate, direction: int = 1, reference: float = 0.0) -> float:
    """The one-sided t test over worlds of 'the mean is on the stated side of `reference`' (n - 1 df); nan
    with fewer than 2 worlds. per_unit [1.0, 3.0, 5.0], direction +1: t = 3/(2/sqrt 3) = 2.598 on 2 df -> 0.0608."""
    n = len(e.per_unit)
    if n < 2:
        return math.nan
    mean = sum(e.per_unit) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in e.per_unit) / (n - 1))
    if sd == 0:
        return float((mean - reference) * direction <= 0)
    return float(stats.t.sf((mean - reference) * direction / (sd / math.sqrt(n)), n - 1))


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p values: sorted ascending, p_(i) * (m − i + 1) (i from 1), made
    monotone and capped at 1. {a: 0.01, b: 0.04, c: 0.03} -> a 0.03, c 0.06, b 0.06."""
    order = sorted(p_values, key=p_values.get)
    m, running, out = len(order), 0.0, {}
    for i, name in enumerate(order):
        running = max(running, min(1.0, (m - i) * p_values[name]))
        out[name] = running
    return out


def world_of(run_dir: str | Path, key: str = WORLD_KEY):
    """The value of `key` (e.g. world.seed) in the run's config.yaml; a ValueError naming the file and key
    when the file or the key is missing."""
    from omegaconf import OmegaConf

    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise ValueError(f"unit=world: {path} does not exist; the world of a run is read from its config.yaml")
    value = OmegaConf.select(OmegaConf.load(path), key)
    if value is None:
        raise ValueError(f"unit=world: {path} has no {key}; name the key that tells worlds apart with world_key=")
    return value


def per_world(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (train_id, world, eval_set, metric): the mean over that world's training seeds, with the
    world in `seed` (so every interval built on the result counts worlds) and `n_seeds`."""
    keys = ["train_id", "world_seed", "eval_set", "metric"]
    out = metrics.groupby(keys, sort=False)["value"].agg(value="mean", n_seeds="count").reset_index()
    return out.rename(columns={"world_seed": "seed"})


def world_tests(diff: pd.DataFrame, worlds: pd.DataFrame, metric: str, side: str = "greater",
                family: Iterable[str] | None = None) -> pd.DataFrame:
    """`diff` (a difference table over worlds) with `p_one_sided` (each training set on the `side` of the
    baseline, over its per-world differences), `in_family` and `holm_p` (Holm over the family's cells:
    `family` lists train_ids or train_id:eval_set cells; None: every cell of the table)."""
    if side not in SIDES:
        raise ValueError(f"side={side!r}; valid: {', '.join(SIDES)}")
    rows = worlds[worlds["metric"] == metric]
    cells = {key: g.set_index("seed")["value"] for key, g in rows.groupby(["train_id", "eval_set"])}
    diff = diff.copy()
    p = []
    for tid, name, base in zip(diff["train_id"], diff["eval_set"], diff["baseline"]):
        both = pd.concat([cells[(tid, name)], cells[(base, name)]], axis=1, join="inner")
        p.append(one_sided_p(t_interval((both.iloc[:, 0] - both.iloc[:, 1]).tolist()), SIDES[side]))
    diff["p_one_sided"] = p
    diff["in_family"] = _family_mask(diff, family)
    chosen = {i: p[i] for i in range(len(diff)) if diff["in_family"].iloc[i] and not math.isnan(p[i])}
    adjusted = holm(chosen)
    diff["holm_p"] = [adjusted.get(i, math.nan) for i in range(len(diff))]
    return diff


def _family_mask(diff: pd.DataFrame, family: Iterable[str] | None) -> list[bool]:
    if family is None:
        return [True] * len(diff)
    names = [str(f) for f in family]
    cells = {f"{t}:{s}" for t, s in zip(diff["train_id"], diff["eval_set"])}
    unknown = [f for f in names if f not in cells and f not in set(diff["train_id"])]
    if unknown:
        raise ValueError(f"family: {unknown} name no train_id or train_id:eval_set of the differences table; "
                         f"present: {sorted(set(diff['train_id']))}")
    return [t in names or f"{t}:{s}" in names for t, s in zip(diff["train_id"], diff["eval_set"])]


def world_markdown(diff: pd.DataFrame, side: str, ci: float, scale: float = 100.0) -> str:
    """report.md's section of the world tests: each cell's difference [ci interval over worlds], n_worlds,
    one-sided p and Holm-adjusted p (blank outside the family)."""
    word = {"greater": "above", "less": "below"}[side]
    lines = ["", "## Over worlds: one-sided tests", "",
             "unit=world: every n and interval above counts worlds (each world's training seeds averaged, the "
             f"world read from each run's config.yaml); [{ci:.0%} t interval over worlds], one-sided t test of "
             f"the training set lying {word} the baseline, Holm's correction over the declared family.", "",
             "| training set | eval set | difference | n_worlds | one-sided p | Holm p |", "|---|---|---|---|---|---|"]
    for _, r in diff.iterrows():
        interval = "" if pd.isna(r["ci_low"]) else f" [{scale * r['ci_low']:+.1f}, {scale * r['ci_high']:+.1f}]"
        holm_p = "" if pd.isna(r["holm_p"]) else f"{r['holm_p']:.3f}"
        p = "" if pd.isna(r["p_one_sided"]) else f"{r['p_one_sided']:.3f}"
        lines.append(f"| {r['train_id']} | {r['eval_set']} | {scale * r['diff']:+.1f}{interval} | {r['n']} | {p} "
                     f"| {holm_p} |")
    return "\n".join(lines) + "\n"
