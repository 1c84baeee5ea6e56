"""Readers of the committed results files for `experiments/summary.py`: each source names its files
(relative to `experiments/`) and returns an `Estimate` read from them, never a typed-in number.

Synthetic worlds: the per-world estimate is the mean over training seeds of the paired difference, and the
claim's estimate and interval are over worlds (`summary_stats.t_interval`). Real text: the unit is the
example (`n_worlds` None).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from nliforge.errors import NLIDataError
from experiments.summary_stats import Estimate, t_interval

CHALLENGE, TEST = "challenge mean", "synthetic_test"


def read_csv(root: Path, name: str, columns: set[str],
             holds: str = "summary.py reads the committed results files") -> pd.DataFrame:
    """A committed results file with at least `columns`; a missing one is an error saying what it `holds`."""
    path = root / name
    if not path.is_file():
        raise NLIDataError(f"{path}: missing; {holds}")
    frame = pd.read_csv(path)
    if not columns <= set(frame.columns):
        raise NLIDataError(f"{path}: expected columns {sorted(columns)}, found {list(frame.columns)}")
    return frame


def read_text(root: Path, name: str) -> str:
    path = root / name
    if not path.is_file():
        raise NLIDataError(f"{path}: missing; summary.py reads the committed results files")
    return path.read_text()


def find(pattern: str, text: str, where: str) -> re.Match:
    """The first match of `pattern` (multiline) in a markdown file's text; an error names the file."""
    match = re.search(pattern, text, flags=re.M)
    if match is None:
        raise NLIDataError(f"{where}: no line matches {pattern!r}")
    return match


def md_row(text: str, first_cell: str, where: str) -> list[str]:
    """The cells of the first markdown table row whose first cell is `first_cell`."""
    line = find(rf"^\| {re.escape(first_cell)} \|.*$", text, where).group(0)
    return [c.strip() for c in line.strip().strip("|").split("|")]


@dataclass(frozen=True)
class Paired:
    """`row` − `minus` on one eval set of per-unit accuracy CSVs: `experiments/controls_table.py`'s layout
    (row, world_seed, seed, eval_set, value) or `real_lm/wanli_table.py`'s (no world_seed: one world per
    file, given by `worlds`). Points (100 × accuracy). With `arms_only`, a
    world without runs of one of the two rows (one that stopped after its gates) is left out."""
    files: tuple[str, ...]
    row: str
    minus: str
    eval_set: str = CHALLENGE
    worlds: tuple[int, ...] = ()
    arms_only: bool = False

    def read(self, root: Path) -> Estimate:
        per_world: dict[int, float] = {}
        for i, name in enumerate(self.files):
            m = read_csv(root, name, {"row", "seed", "eval_set", "value"})
            if "world_seed" not in m.columns:
                m = m.assign(world_seed=self.worlds[i])
            m = m[m["eval_set"] == self.eval_set]
            for ws, cell in m.groupby("world_seed"):
                a, b = (cell[cell["row"] == r].set_index("seed")["value"] for r in (self.row, self.minus))
                if self.arms_only and (a.empty or b.empty):
                    continue
                if a.empty or b.empty or set(a.index) != set(b.index):
                    raise NLIDataError(f"{root / name}: world {ws}, {self.eval_set!r}: rows {self.row!r} and "
                                       f"{self.minus!r} need the same training seeds; found {sorted(a.index)} "
                                       f"and {sorted(b.index)}")
                per_world[int(ws)] = 100 * float((a - b.reindex(a.index)).mean())
        return t_interval([per_world[w] for w in sorted(per_world)])


@dataclass(frozen=True)
class UnitRow:
    """One row's value on one eval set of a per-unit CSV (the layout `Paired` reads), in points, per world; over
    worlds the mean and t interval (a generator's label-following share, `label_following/units_*.csv`)."""
    files: tuple[str, ...]
    row: str
    eval_set: str

    def per_world(self, root: Path) -> dict[int, float]:
        m = read_csv(root, self.files[0], {"row", "world_seed", "eval_set", "value"})
        m = m[(m["row"] == self.row) & (m["eval_set"] == self.eval_set)]
        if m.empty:
            raise NLIDataError(f"{root / self.files[0]}: no row {self.row!r} on {self.eval_set!r}")
        return {int(ws): 100 * float(cell["value"].mean()) for ws, cell in m.groupby("world_seed")}

    def read(self, root: Path) -> Estimate:
        values = self.per_world(root)
        return t_interval([values[w] for w in sorted(values)])


@dataclass(frozen=True)
class SeedColumn:
    """Mean over training seeds of `column` (minus |`minus_abs`|), per world: one CSV per world."""
    files: tuple[str, ...]
    column: str
    minus_abs: str = ""

    def read(self, root: Path) -> Estimate:
        per_world = []
        for name in self.files:
            m = read_csv(root, name, {self.column} | ({self.minus_abs} if self.minus_abs else set()))
            value = m[self.column] - (m[self.minus_abs].abs() if self.minus_abs else 0)
            per_world.append(float(value.mean()))
        return t_interval(per_world)


@dataclass(frozen=True)
class Calibration:
    """world_calibration/results.csv: the hypothesis-only accuracy (%) of each named world, mean over seeds."""
    rows: tuple[str, ...]
    files: tuple[str, ...] = ("world_calibration/results.csv",)

    def read(self, root: Path) -> Estimate:
        m = read_csv(root, self.files[0], {"world", "hyp_only_biased_test"})
        per_world = []
        for row in self.rows:
            cell = m.loc[m["world"] == row, "hyp_only_biased_test"]
            if cell.empty:
                raise NLIDataError(f"{root / self.files[0]}: no row with world = {row!r}")
            per_world.append(float(cell.mean()))
        return t_interval(per_world)


@dataclass(frozen=True)
class ZaugAgreement:
    """real_lm/zaug_table*.json: ul − mle agreement (points) of one generator with the teacher or the
    oracle scorer, mean over generator seeds per world (seeds where a variant parsed nothing are left out)."""
    files: tuple[str, ...]
    generator: str
    scorer: str = "teacher"

    def read(self, root: Path) -> Estimate:
        per_world = []
        for name in self.files:
            data = json.loads(read_text(root, name))
            if self.generator not in data:
                raise NLIDataError(f"{root / name}: no generator {self.generator!r}; found {sorted(data)}")
            diffs = [v["ul"][self.scorer] - v["mle"][self.scorer] for v in data[self.generator].values()
                     if v["ul"].get(self.scorer) is not None and v["mle"].get(self.scorer) is not None]
            if diffs:
                per_world.append(100 * sum(diffs) / len(diffs))
        return t_interval(per_world) if per_world else Estimate(math.nan, n_worlds=len(self.files))


@dataclass(frozen=True)
class ResultsZ:
    """zfilter_training/results_z.md (a markdown file only): per world, the ul − mle agreement (points)
    with `scorer` ('teacher' or 'oracle'), or with scorer 'z' the largest world-defined z* of the three
    planted artifacts in the set `zset`, against the significance bound the file states (the reference)."""
    scorer: str
    zset: str = "seq_z"
    files: tuple[str, ...] = ("zfilter_training/results_z.md",)

    def read(self, root: Path) -> Estimate:
        where = str(root / self.files[0])
        per_world = []
        for section in re.split(r"^## world\d+\s*$", read_text(root, self.files[0]), flags=re.M)[1:]:
            if self.scorer == "z":
                cells = md_row(section, self.zset, where)[1:]
                zs = [float(z) for c in cells for z in re.findall(r"/ (-?[\d.]+) \(p̂=[\d.]+, [\d.]+%\)$", c)]
                if len(zs) != 3:
                    raise NLIDataError(f"{where}: row {self.zset!r}: expected 3 world-defined z*, found {zs}")
                per_world.append(max(zs))
            else:
                col = {"teacher": 2, "oracle": 3}[self.scorer]
                ul, mle = (float(md_row(section, v, where)[col].rstrip("%")) for v in ("ul", "mle"))
                per_world.append(ul - mle)
        if not per_world:
            raise NLIDataError(f"{where}: no '## world<seed>' section")
        if self.scorer != "z":
            return t_interval(per_world)
        bound = float(find(r"significant at \|z\*\| > ([\d.]+)", read_text(root, self.files[0]), where).group(1))
        return replace(t_interval(per_world), reference=bound)


@dataclass(frozen=True)
class Sizes:
    """A set's size per world, from one line of a five-world results markdown: `Sizes per world seed: world 0:
    <key>=179 …` (zfilter_training/five_worlds/results_*.md), or with no key `N per world seed (…): world 0:
    1574; …` (disco_table3/five_worlds/results.md, `line` its first words): {world: pairs}."""
    key: str
    files: tuple[str, ...]
    line: str = "Sizes per world seed"

    def per_world(self, root: Path) -> dict[int, float]:
        where = str(root / self.files[0])
        text = find(rf"^{re.escape(self.line)}.*$", read_text(root, self.files[0]), where).group(0)
        each = rf"world (\d+): [^;]*\b{re.escape(self.key)}=(\d+)" if self.key else r"world (\d+): (\d+)"
        sizes = {int(w): float(n) for w, n in re.findall(each, text)}
        if not sizes:
            raise NLIDataError(f"{where}: no world's size in its {self.line!r} line")
        return sizes
