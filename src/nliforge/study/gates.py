"""A study's runs as numbers: each run folder's metrics, each world's value of an arm, and the gates.

A run is done when its folder holds the completion record nliforge-train writes last: `metrics.csv`
(with `save_model`, also `model/`). A world's value of an arm is the mean over its training seeds, and
only worlds where every seed of the arm is done count.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from nliforge.evaluation.worlds import Estimate, t_interval
from nliforge.study.parts import Gate
from nliforge.study.schema import Study

TOLERANCE = 1e-6


def run_dir(attempt: Path, world, arm: str, seed: int) -> Path:
    """The deterministic folder of one (world, arm, seed) run of an attempt."""
    return attempt / "runs" / arm / f"world-{world}" / f"seed-{seed}"


def is_done(run: Path, save_model: bool = False) -> bool:
    return (run / "metrics.csv").is_file() and (not save_model or (run / "model" / "config.json").is_file())


def read_metrics(run: Path) -> dict[tuple[str, str], float]:
    """(eval set, metric) -> value from the run's metrics.csv and every rescored suite's (rescore/<suite>/)."""
    out = {}
    for path in [run / "metrics.csv", *sorted((run / "rescore").glob("*/metrics.csv"))]:
        if path.is_file():
            with path.open(newline="") as fh:
                out.update({(r["eval_set"], r["metric"]): float(r["value"]) for r in csv.DictReader(fh)})
    return out


def train_metric(run: Path, metric: str) -> float:
    """The last epoch's in-training `acc` (over the training pairs whose uid starts with the text after
    `@`, or all) or `n` (how many pairs), from the run's dynamics/."""
    import pandas as pd

    from nliforge.cartography.store import PROB_COLUMNS

    files = sorted((run / "dynamics").glob("epoch_*.parquet"))
    if not files:
        return math.nan
    d = pd.read_parquet(files[-1])
    name, _, prefix = metric.partition("@")
    if prefix:
        d = d[d["uid"].astype(str).str.startswith(prefix)]
    if name == "n":
        return float(len(d))
    if name != "acc" or d.empty:
        return math.nan
    return float((d[list(PROB_COLUMNS)].to_numpy().argmax(1) == d["gold"].to_numpy()).mean())


def largest_share(run: Path, eval_set: str) -> float:
    """The share of the set's most frequent gold label (the accuracy of always answering it), from the
    run's predictions/<set>.csv (the study runs with suite.save_predictions=true when a gate needs it)."""
    path = run / "predictions" / f"{eval_set}.csv"
    if not path.is_file():
        return math.nan
    with path.open(newline="") as fh:
        counts = Counter(r["gold"] for r in csv.DictReader(fh))
    return max(counts.values()) / sum(counts.values()) if counts else math.nan


def cell_value(run: Path, cell: str, world, cache: dict | None = None) -> float:
    """One run's value of `<set>/<metric>` (`{world}` in the set's name is the run's world) or `train/<metric>`."""
    eval_set, _, metric = cell.partition("/")
    if eval_set == "train":
        return train_metric(run, metric)
    metrics = cache.setdefault(run, read_metrics(run)) if cache is not None else read_metrics(run)
    return metrics.get((eval_set.replace("{world}", str(world)), metric), math.nan)


def world_values(study: Study, attempt: Path, arm: str, value) -> dict:
    """{world: mean over the arm's seeds of value(run, world)} for the worlds where every seed is done."""
    out = {}
    for w in study.worlds.values:
        runs = [run_dir(attempt, w, arm, s) for s in study.seeds]
        if all(is_done(r, study.save_model) for r in runs):
            out[w] = sum(value(r, w) for r in runs) / len(runs)
    return out


def display_scale(study: Study, metric: str) -> float:
    return 1.0 if metric.rsplit("/", 1)[-1].split("@")[0] == "n" else study.scale


def fmt(x: float, scale: float, signed: bool = False) -> str:
    if math.isnan(x):
        return "nan"
    digits = 1 if scale != 1.0 else 0
    return f"{scale * x:{'+' if signed else ''}.{digits}f}"


@dataclass
class GateState:
    """A gate's state so far: passed, failed or pending, and the sentence that says why, with its numbers."""
    gate: Gate
    status: str
    sentence: str
    per_world: dict = field(default_factory=dict)       # world -> value − bound
    estimate: Estimate | None = None
    short: str = ""                                     # the sentence a gated claim's verdict quotes

    def __post_init__(self) -> None:
        self.short = self.short or self.sentence


def evaluate_gate(study: Study, attempt: Path, gate: Gate) -> GateState:
    eval_set, _, metric = gate.metric.partition("/")

    def margin(run: Path, world) -> float:
        bound = gate.threshold if gate.threshold is not None \
            else largest_share(run, eval_set.replace("{world}", str(world)))
        return cell_value(run, gate.metric, world) - bound

    values = world_values(study, attempt, gate.arm, lambda r, w: cell_value(r, gate.metric, w))
    # float32 accuracies against exact shares: a margin within TOLERANCE of 0 is 0, not a pass
    margins = {w: 0.0 if abs(m) < TOLERANCE else m for w, m in world_values(study, attempt, gate.arm, margin).items()}
    scale, n_all = display_scale(study, gate.metric), len(study.worlds.values)
    if gate.scope == "every_world":
        return _every_world(gate, values, margins, scale, n_all)
    return _over_worlds(gate, margins, scale, n_all)


def _every_world(gate: Gate, values: dict, margins: dict, scale: float, n_all: int) -> GateState:
    sign = 1 if gate.op == "at_least" else -1
    rel, bad_rel = ("≥", "<") if sign > 0 else ("≤", ">")
    bad = [w for w, m in margins.items() if math.isnan(m) or sign * m < 0]
    if bad:
        parts = [f"{fmt(values[w], scale)} {bad_rel} {fmt(values[w] - margins[w], scale)} in world {w}" for w in bad]
        more = f" (and {len(bad) - 1} more world{'s' if len(bad) > 2 else ''})" if len(bad) > 1 else ""
        why = f"; {gate.why}" if gate.why else ""
        return GateState(gate, "failed", f"{gate.name}: {', '.join(parts)}{why}", margins,
                         short=f"{gate.name}: {parts[0]}{more}{why}")
    lo, hi = (fmt(f(values.values()), scale) for f in (min, max)) if values else ("", "")
    if len(margins) < n_all:
        so_far = f"; {lo}–{hi} so far, all {rel} {gate.bound}" if values else ""
        return GateState(gate, "pending", f"{gate.name}: {len(margins)} of {n_all} worlds done{so_far}", margins)
    return GateState(gate, "passed", f"{gate.name} passed in {n_all}/{n_all} worlds ({lo}–{hi}, each {rel} "
                                     f"{gate.bound})", margins)


def _over_worlds(gate: Gate, margins: dict, scale: float, n_all: int) -> GateState:
    if len(margins) < n_all:
        return GateState(gate, "pending", f"{gate.name}: {len(margins)} of {n_all} worlds done", margins)
    e = t_interval(list(margins.values()))
    sign = 1 if gate.op == "at_least" else -1
    word = "above" if sign > 0 else "below"
    numbers = (f"{gate.metric} − {gate.bound}: {fmt(e.estimate, scale, True)} [{fmt(e.low, scale, True)}, "
               f"{fmt(e.high, scale, True)}] over {n_all} worlds")
    if e.has_interval and (e.low > 0 if sign > 0 else e.high < 0):
        return GateState(gate, "passed", f"{gate.name} passed ({numbers}, {word} 0)", margins, e)
    why = f"; {gate.why}" if gate.why else ""
    return GateState(gate, "failed", f"{gate.name}: {numbers}, not entirely {word} 0{why}", margins, e)


def evaluate_gates(study: Study, attempt: Path) -> dict[str, GateState]:
    return {name: evaluate_gate(study, attempt, g) for name, g in study.gates.items()}


def missing_cells(study: Study, attempt: Path) -> list[str]:
    """A sentence per claim or gate metric that a done run of its arm does not have (a misspelt set or metric)."""
    wanted = [(c.id, arm, cell) for c in study.claims for arm in (c.a, c.b) for cell in c.cells]
    wanted += [(f"gate {g.name}", g.arm, g.metric) for g in study.gates.values()]
    out: dict[tuple, str] = {}
    for who, arm, cell in wanted:
        if (who, cell) in out:
            continue
        runs = [run_dir(attempt, w, arm, s) for w, a, s in study.run_names() if a == arm]
        done = next((r for r in runs if is_done(r, study.save_model)), None)
        if done is not None and math.isnan(cell_value(done, cell, done.parent.name.removeprefix("world-"))):
            out[(who, cell)] = f"{who}: {cell} is not in {done} (metrics.csv, rescore/ or dynamics/): its values are nan"
    return list(out.values())
