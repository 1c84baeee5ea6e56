"""Readers for `experiments/summary.py` of real text and NLI-Set.

Real text's first attempts (`real_text/results.csv`, `results_r1r4.csv`) use the example as the unit on one
sample of the data (one draw of W for R4a): their `n_worlds` is 1, so the project's rule reads them as "not
shown (n_worlds = 1 < 5)" whatever their committed example-level criterion said. R5 repeats them with a world
as the unit (`RealWorlds`: disjoint parts of the data, `results_parts.csv`; draws of D0 and W,
`results_draws.csv`). NLI-Set's unit is the prompt (`nli_set/results.md`): `n_worlds` None.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from nliforge.errors import NLIDataError
from experiments.summary_sources import find, md_row, read_csv, read_text
from experiments.summary_stats import Estimate, t_interval

REAL = "real_text/results.csv"
SEEDS = ("1", "2", "3")
NEGATION = {"no", "not", "never", "nobody", "nothing"}   # and any token ending in n't (R2c's criterion)


def _real(root, name: str = REAL) -> pd.DataFrame:
    m = read_csv(root, name, {"criterion", "arm", "seed", "quantity", "value", "ci_low", "ci_high"})
    return m.astype({"seed": str})


def _cells(m: pd.DataFrame, where: str, **match: str) -> pd.DataFrame:
    cells = m
    for key, value in match.items():
        cells = cells[cells[key] == value]
    if cells.empty:
        raise NLIDataError(f"{where}: no row with {match}")
    return cells


@dataclass(frozen=True)
class RealSeeds:
    """One quantity per training seed with its 95% bootstrap interval over examples: the estimate is the
    mean over seeds, [low, high] spans every seed's interval (each must lie on the stated side), per_unit the
    seeds' values; `bound` names a quantity of the same criterion read as the reference (a majority class)."""
    criterion: str
    quantity: str
    bound: str = ""
    scale: float = 1.0
    files: tuple[str, ...] = (REAL,)

    def read(self, root) -> Estimate:
        m, where = _real(root, self.files[0]), str(root / self.files[0])
        cells = _cells(m, where, criterion=self.criterion, quantity=self.quantity)
        cells = cells[cells["seed"].isin(SEEDS)]
        if len(cells) != len(SEEDS) or cells[["ci_low", "ci_high"]].isna().any().any():
            raise NLIDataError(f"{where}: {self.criterion} {self.quantity}: expected seeds {SEEDS} with intervals")
        ref = None
        if self.bound:
            ref = self.scale * float(_cells(m, where, criterion=self.criterion, quantity=self.bound)["value"].iloc[0])
        values = tuple(self.scale * cells["value"].astype(float))
        return Estimate(sum(values) / len(values), self.scale * float(cells["ci_low"].min()),
                        self.scale * float(cells["ci_high"].max()), 1, values, ref)


@dataclass(frozen=True)
class RealPairedT:
    """`arm`'s `quantity` row over all seeds (a paired t over the 3 training seeds, in the file), points;
    per_unit: each seed's own difference of the arms `a` − `b` on `on`."""
    criterion: str
    arm: str
    quantity: str
    a: str
    b: str
    on: str = "acc_mnli_dev_test_part"
    files: tuple[str, ...] = (REAL,)

    def read(self, root) -> Estimate:
        m, where = _real(root, self.files[0]), str(root / self.files[0])
        row = _cells(m, where, criterion=self.criterion, arm=self.arm, quantity=self.quantity).iloc[0]
        a, b = (_cells(m, where, arm=arm, quantity=self.on).set_index("seed")["value"].astype(float)
                for arm in (self.a, self.b))
        seeds = tuple(100 * (a[s] - b[s]) for s in SEEDS)
        return Estimate(100 * float(row["value"]), 100 * float(row["ci_low"]), 100 * float(row["ci_high"]),
                        1, seeds)


@dataclass(frozen=True)
class RealNegationZ:
    """R2c: the largest z of a negation word among the top-10 contradiction features of `arm`, against the
    Bonferroni bound the file states (the reference); a test statistic against its bound, no interval."""
    arm: str = "mnli_dev_train_part"
    files: tuple[str, ...] = (REAL,)

    def read(self, root) -> Estimate:
        m, where = _real(root, self.files[0]), str(root / self.files[0])
        cells = _cells(m, where, criterion="R2c", arm=self.arm)
        zs = [float(v) for q, v in zip(cells["quantity"], cells["value"])
              if (w := re.fullmatch(r"top\d+_contradiction:(.+)", q)) and
              (w.group(1) in NEGATION or w.group(1).endswith("n't"))]
        bound = float(_cells(cells, where, quantity="bonferroni_z_unigrams")["value"].iloc[0])
        return Estimate(max(zs) if zs else math.nan, n_worlds=1, reference=bound)


@dataclass(frozen=True)
class R1R4:
    """One criterion's row of `real_text/results_r1r4.csv` (experiment, criterion, comparison, on, estimate,
    low, high, seed1, seed2, seed3, verdict; fractions), in points. Adding an R1/R4 claim to summary.py's
    list is one entry: `R1R4("R1a")`."""
    criterion: str
    files: tuple[str, ...] = ("real_text/results_r1r4.csv",)

    def read(self, root) -> Estimate:
        m = read_csv(root, self.files[0], {"criterion", "estimate", "low", "high", "seed1", "seed2", "seed3"})
        row = _cells(m.astype({"criterion": str}), str(root / self.files[0]), criterion=self.criterion).iloc[0]
        seeds = tuple(100 * float(row[f"seed{s}"]) for s in SEEDS)
        return Estimate(100 * float(row["estimate"]), 100 * float(row["low"]), 100 * float(row["high"]), 1, seeds)


@dataclass(frozen=True)
class RealWorlds:
    """R5: one value per world (`key`: part or draw) of `criterion` in a real-text results file; the mean over
    worlds with its t interval (n_worlds − 1 df)."""
    criterion: str
    files: tuple[str, ...] = ("real_text/results_parts.csv",)
    key: str = "part"

    def per_world(self, root) -> dict[int, float]:
        """{world: value}, in the order of the worlds."""
        m = read_csv(root, self.files[0], {"criterion", self.key, "value"})
        cells = _cells(m, str(root / self.files[0]), criterion=self.criterion).sort_values(self.key)
        if cells[self.key].duplicated().any():
            raise NLIDataError(f"{root / self.files[0]}: {self.criterion}: a {self.key} appears twice")
        return {int(k): float(v) for k, v in zip(cells[self.key], cells["value"])}

    def read(self, root) -> Estimate:
        return t_interval(list(self.per_world(root).values()))


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95% interval of a proportion k / n."""
    p, d = k / n, 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class NliSet:
    """nli_set/results.md (a markdown file only), unit: the prompt. `what`: 'h1' (the paired difference in
    instruction following, t0.3 − t0.7, points, with its Newcombe interval), 'rate:<generator>' (the share of
    answers that pass every check, %, Wilson) or 'h2' (the share of judged records with all eight scores, %,
    Wilson interval computed here from the stated counts)."""
    what: str
    files: tuple[str, ...] = ("nli_set/results.md",)

    def read(self, root) -> Estimate:
        text, where = read_text(root, self.files[0]), str(root / self.files[0])
        num = r"([+-]?[\d.]+)"
        if self.what == "h1":
            g = find(rf"\*\*H1: .* = {num} points, 95% CI \[{num}, {num}\]", text, where).groups()
            return Estimate(*(float(x) for x in g))
        if self.what.startswith("rate:"):
            cell = md_row(text, self.what.split(":", 1)[1], where)[2]
            g = find(rf"^\d+/\d+ = {num}% \[{num}, {num}\]$", cell, where).groups()
            return Estimate(*(float(x) for x in g))
        if self.what == "h2":
            k, n = (int(x) for x in find(r"\*\*H2: (\d+) of (\d+) judged records", text, where).groups())
            low, high = wilson(k, n)
            return Estimate(100 * k / n, 100 * low, 100 * high)
        raise ValueError(f"NliSet.what={self.what!r}: expected h1, h2 or rate:<generator>")
