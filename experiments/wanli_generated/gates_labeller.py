"""The gates of the redesigned WANLI mechanism test (README, "The mechanism test, redesigned"), per world,
read before any comparison:

    python -m experiments.wanli_generated.gates_labeller <scratch> <out.md>

G1: the labeller's accuracy on the world's artifact-free test (`synthetic_test`) >= the floor row's mean over
its training seeds on that test. G2: the share of W's pairs (before the cut) whose label from the labeller is
the label the prompt asked for (`meta.intended_label`) >= 60%; the same share on G (no filter) beside it.
Beside them, no threshold: the ceiling's seed-1 run (the labeller's data and seed) and the label shares.
Reads `<scratch>/world<ws>/{labeller,gen_full,gen_nofilter,sweep/2_floor,sweep/9_ceiling}`; a world that has
not got as far as a gate shows a dash there.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from experiments.summary_gates import EveryWorld, OverWorlds
from experiments.summary_sources import Paired
from nliforge.data.jsonl import read_jsonl
from nliforge.errors import NLIDataError
from nliforge.evaluation.table import collect_metrics, find_run_dirs

TEST = "synthetic_test"
G2_MIN = 0.60
LABELS = ("entailment", "neutral", "contradiction")


def test_acc(run_dirs: list[Path]) -> dict[int, float]:
    """Accuracy on the artifact-free test per training seed of the given run folders."""
    if not run_dirs:
        return {}
    m = collect_metrics(run_dirs)
    m = m[(m["metric"] == "acc") & (m["eval_set"] == TEST)]
    return {int(s): float(v) for s, v in zip(m["seed"], m["value"])}


def row_acc(world: Path, row: str) -> dict[int, float]:
    folder = world / "sweep" / row
    try:
        return test_acc(find_run_dirs(folder))
    except FileNotFoundError:   # not trained yet, or still running
        return {}


def intended_share(run: Path) -> tuple[int, float, dict[str, float]] | None:
    """(pairs, share labelled as the prompt intended, label shares) of a run's reviewed pairs."""
    path = run / "review" / "reviewed.jsonl"
    if not path.is_file():
        return None
    records = list(read_jsonl(path))
    if not records:
        return 0, float("nan"), {}
    same = sum(r.label == r.meta.get("intended_label") for r in records)
    counts = Counter(r.label for r in records)
    return len(records), same / len(records), {k: counts[k] / len(records) for k in LABELS}


def world_lines(world: Path) -> tuple[str, str]:
    ws = world.name[len("world"):]
    n = (world / "n_add").read_text().strip() if (world / "n_add").is_file() else "–"
    lab = test_acc([world / "labeller"]) if (world / "labeller" / "metrics.csv").is_file() else {}
    floor = row_acc(world, "2_floor")
    ceil = row_acc(world, "9_ceiling")
    lab_acc = next(iter(lab.values())) if lab else None
    floor_mean = sum(floor.values()) / len(floor) if len(floor) >= 3 else None
    if lab_acc is None or floor_mean is None:
        g1 = "–"
    else:
        g1 = "pass" if lab_acc >= floor_mean else "FAIL"
    full, nofilter = intended_share(world / "gen_full"), intended_share(world / "gen_nofilter")
    g2 = "–" if full is None else ("pass" if full[1] >= G2_MIN else "FAIL")
    fmt = lambda x: "–" if x is None else f"{100 * x:.1f}"  # noqa: E731
    shares = lambda s: "–" if s is None else " / ".join(f"{100 * s[2].get(k, 0):.0f}" for k in LABELS)  # noqa: E731
    gate = (f"| {ws} | {n} | {fmt(lab_acc)} | {fmt(floor_mean)} | **{g1}** | "
            f"{'–' if full is None else f'{full[0]}'} | {fmt(full[1] if full else None)} | **{g2}** | "
            f"{fmt(nofilter[1] if nofilter else None)} | {fmt(ceil.get(1))} |")
    label = f"| {ws} | {shares(full)} | {shares(nofilter)} |"
    return gate, label


def read_g1(path: Path) -> dict[int, tuple[float, float]]:
    """Gate G1 as `main` wrote it to `path` (gates_labeller.md): {world: (the labeller's test accuracy, the
    floor's mean), %} for each world where G1 was checked; the G1 cell must be the verdict of these numbers."""
    if not path.is_file():
        raise NLIDataError(f"{path}: missing; gate G1 is read from the committed gates file")
    out = {}
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or not re.fullmatch(r"\d+", cells[0]) or cells[4] == "**–**":
            continue
        if cells[4] not in ("**pass**", "**FAIL**"):
            raise NLIDataError(f"{path}:{i}: G1 cell {cells[4]!r}: expected **pass**, **FAIL** or **–**")
        lab, floor = float(cells[2]), float(cells[3])
        if (lab >= floor) != (cells[4] == "**pass**"):
            raise NLIDataError(f"{path}:{i}: G1 says {cells[4]} for the labeller {lab} against the floor {floor}")
        out[int(cells[0])] = (lab, floor)
    if not out:
        raise NLIDataError(f"{path}: no world row with G1 checked")
    return out


@dataclass(frozen=True)
class G1Values:
    """G1's numbers as the committed gates file states them (`read_g1`), for `summary_gates.EveryWorld`;
    `files` relative to experiments/."""
    files: tuple[str, ...] = ("wanli_generated/gates_labeller.md",)

    def per_world(self, root: Path) -> dict[int, tuple[float, float]]:
        return read_g1(root / self.files[0])


# what L1-L3 need (README, "The mechanism test, redesigned"): G1 in every world, and the manipulation check
# (ceiling − floor above 0 over worlds, else "L1-L3 are reported but not decidable"); G2 is not theirs
UNITS = "wanli_generated/results_labeller.csv"
G1 = EveryWorld("G1", "the labeller's artifact-free test accuracy", G1Values(), bound_what="the floor's mean",
                why="the labeller is not worth asking", unit="%")
MANIPULATION = OverWorlds("manipulation check", "ceiling − floor, challenge mean",
                          Paired((UNITS,), "9_ceiling", "2_floor", arms_only=True), "L1-L3 are not decidable")
L_GATES = (G1, MANIPULATION)


def main(scratch: Path, out: Path) -> None:
    worlds = sorted((p for p in scratch.glob("world*") if p.is_dir()), key=lambda p: int(p.name[5:]))
    pairs = [world_lines(w) for w in worlds]
    lines = [f"# Gates of the redesigned WANLI mechanism test ({scratch})", "",
             "G1: the labeller (D0 + K artifact-free pairs, seed 1) at least as accurate on the artifact-free test as "
             "the floor (mean of its 3 training seeds). G2: W's pairs labelled as the prompt intended ≥ 60%. "
             "Accuracies and shares in %.", "",
             "| world | N = K | labeller test | floor test (mean) | G1 | W pairs | W = intended | G2 | G = intended "
             "| ceiling seed 1 test |", "|---|---|---|---|---|---|---|---|---|---|",
             *(g for g, _ in pairs), "",
             "Label shares of the labelled sets (entailment / neutral / contradiction, %):", "",
             "| world | W | G (no filter) |", "|---|---|---|", *(lab for _, lab in pairs)]
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
