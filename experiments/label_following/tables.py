"""The tables of the label-following experiment (README) from its scratch folder:

    python -m experiments.label_following.tables SCRATCH OUT_DIR [--name NAME ...] [--worlds 0 1 2 3 4]

For each generator NAME (a folder R/world<ws>/<NAME>/dataset.jsonl; `offline` is the WANLI pipeline's), the
label-following of every world that has it and its judge, measured by `nliforge-analyze label-following`
(into R/measure/<NAME>/), then OUT_DIR/results.md (per world and over worlds; F1: trained_mle - offline) and
OUT_DIR/samples.md (20 kept pairs per world and generator, drawn by random.Random(world seed)).
`--f2 GUIDED BASE`: attempt 2's F2 (GUIDED − BASE, paired by world); `--suffix _x` writes results_x.md, samples_x.md
and units_x.csv (every generator's raw and corrected share per world, the rows summary.csv reads).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

import numpy as np

from nliforge.analysis.label_following import label_following
from nliforge.analyze import main as analyze
from nliforge.data.jsonl import read_jsonl
from nliforge.evaluation.worlds import t_interval

N_SAMPLES = 20
WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def lexicon(world: Path) -> set[str]:
    """Every word of the world's D0 text (premises and hypotheses)."""
    from experiments.label_following.steps import N_D0, world_split

    d0 = world_split(int(world.name.removeprefix("world")), N_D0, "train_biased", world.parent / "worlds")
    return {w for r in d0 for w in words(r.premise) + words(r.hypothesis)}


def in_lexicon(records, vocab: set[str] | None) -> float:
    """Share of hypotheses whose every word occurs in D0's text (nan without a lexicon)."""
    if vocab is None or not records:
        return float("nan")
    return float(np.mean([set(words(r.hypothesis)) <= vocab for r in records]))


def measure(scratch: Path, name: str, worlds: list[int]) -> tuple[list[int], dict] | None:
    """Run the action over the worlds that have this generator's set and a judge; (worlds, its json)."""
    have = [ws for ws in worlds if (scratch / f"world{ws}" / name / "dataset.jsonl").is_file()
            and (scratch / f"world{ws}" / "judge" / "model" / "config.json").is_file()]
    if not have:
        return None
    out = scratch / "measure" / name
    w = [scratch / f"world{ws}" for ws in have]
    analyze(["label-following", *[str(x / name / "dataset.jsonl") for x in w],
             "--judge", *[str(x / "judge") for x in w],
             "--heldout", *[str(x / "heldout.jsonl") for x in w], "--out", str(out)])
    return have, json.loads((out / "label_following.json").read_text())


def subset_share(row: dict, records, keep) -> float:
    """Corrected share on the records for which keep(record) holds (the same judge, the same C)."""
    sub = [r for r in records if keep(r)]
    if not sub:
        return float("nan")
    return label_following([r.meta["intended_label"] for r in sub], [row["judged"][r.uid] for r in sub],
                           np.array(row["confusion"])).corrected


def cost_of(world: Path, name: str) -> str:
    if name == "offline":
        path = world / "offline_cost.json"
        return f"{json.loads(path.read_text())['cpu_seconds'] / 60:.1f}" if path.is_file() else "–"
    path = world / name / "cost.json"
    if not path.is_file():
        return "–"
    c = json.loads(path.read_text())
    return f"{(c['train_cpu_s'] + c['sample_cpu_s']) / 60:.1f}"


def pct(x: float) -> str:
    return "–" if np.isnan(x) else f"{100 * x:.1f}"


def fmt_interval(values: list[float]) -> str:
    e = t_interval(values)
    if not e.has_interval:
        return f"{100 * e.estimate:.1f} (n = {e.n_worlds})"
    return f"{100 * e.estimate:.1f} [{100 * e.low:.1f}, {100 * e.high:.1f}] (n = {e.n_worlds})"


def unit_rows(name: str, have: list[int], data: dict) -> list[str]:
    """CSV rows (row, world_seed, seed, eval_set, value) of one generator: its raw and corrected share per world."""
    return [f"{name},{ws},0,{kind},{row[kind]:.6f}" for ws, row in zip(have, data["per_world"])
            for kind in ("raw", "corrected")]


def generator_lines(scratch: Path, name: str, have: list[int], data: dict) -> tuple[list[str], dict[int, float]]:
    lines = [f"### `{name}`", "", "| world | kept pairs | judge acc. (held-out) | raw | corrected | G2 | corrected, "
             "own-label prompts | corrected, counterfactual prompts | copied from D0 | in D0's lexicon | words | CPU-min |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per = {}
    for ws, row in zip(have, data["per_world"]):
        world = scratch / f"world{ws}"
        records = read_jsonl(world / name / "dataset.jsonl")
        cf = subset_share(row, records, lambda r: r.meta.get("counterfactual"))
        own = subset_share(row, records, lambda r: r.meta.get("counterfactual") is False)
        copied = np.mean([bool(r.meta.get("copied")) for r in records]) if "copied" in records[0].meta else float("nan")
        lex = in_lexicon(records, lexicon(world))
        length = np.mean([len(words(r.hypothesis)) for r in records])
        per[ws] = row["corrected"]
        lines.append(f"| {ws} | {row['n']} | {100 * row['judge_accuracy']:.1f} | {100 * row['raw']:.1f} | "
                     f"{100 * row['corrected']:.1f} | {'pass' if row['corrected'] >= 0.6 else 'FAIL'} | "
                     f"{pct(own)} | {pct(cf)} | "
                     f"{'–' if np.isnan(copied) else f'{100 * copied:.1f}'} | {pct(lex)} | {length:.1f} | "
                     f"{cost_of(world, name)} |")
    raw = [r["raw"] for r in data["per_world"]]
    lines += ["", f"Over worlds (mean, 95% t interval): raw {fmt_interval(raw)}, corrected "
              f"{fmt_interval(list(per.values()))}.", ""]
    return lines, per


def sample_lines(scratch: Path, name: str, have: list[int], data: dict) -> list[str]:
    lines = [f"## `{name}`", ""]
    for ws, row in zip(have, data["per_world"]):
        records = read_jsonl(scratch / f"world{ws}" / name / "dataset.jsonl")
        picked = random.Random(ws).sample(records, min(N_SAMPLES, len(records)))
        lines += [f"World {ws}:", "", "| premise | hypothesis | intended | judge |", "|---|---|---|---|"]
        for r in picked:
            cell = lambda t: t.replace("|", "\\|").replace("\n", " ")  # noqa: E731
            lines.append(f"| {cell(r.premise)} | {cell(r.hypothesis)} | {r.meta['intended_label']} | "
                         f"{row['judged'][r.uid]} |")
        lines.append("")
    return lines


def paired_claim(per: dict, a: str, b: str, title: str) -> list[str]:
    """A − B over the worlds both have: the per-world differences, the t interval, the verdict."""
    if a not in per or b not in per:
        return []
    both = sorted(set(per[a]) & set(per[b]))
    diff = [per[a][ws] - per[b][ws] for ws in both]
    e = t_interval(diff)
    verdict = ("not shown" if not e.has_interval or e.low <= 0 <= e.high
               else "reproduced" if e.low > 0 else "contradicted")
    return [f"## {title}", "", f"Worlds {both}: per world {', '.join(f'{100 * d:+.1f}' for d in diff)}; mean "
            f"{fmt_interval(diff)} points: **{verdict}**.", ""]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("scratch", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--name", action="append", default=None)
    p.add_argument("--worlds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--f2", nargs=2, action="append", default=[], metavar=("GUIDED", "BASE"),
                   help="F2: GUIDED − BASE by world (repeatable)")
    p.add_argument("--diff", nargs=2, action="append", default=[], metavar=("A", "B"),
                   help="A − B by world, descriptive (no criterion; repeatable)")
    p.add_argument("--suffix", default="", help="results<suffix>.md, samples<suffix>.md")
    args = p.parse_args(argv)
    names = args.name or ["trained_mle", "trained_ul", "zaug_ul_e3", "offline"]
    results, samples, per = [f"# Label-following ({args.scratch}, worlds {args.worlds})", "",
                             "Shares in %. corrected: by the judge's confusion matrix on the world's held-out test "
                             "pairs (`nliforge-analyze label-following`). G2: corrected ≥ 60%.", ""], [
                             "# Sampled kept pairs (20 per world, random.Random(world seed))", ""], {}
    units = ["row,world_seed,seed,eval_set,value"]
    for name in names:
        got = measure(args.scratch, name, args.worlds)
        if got is None:
            continue
        units += unit_rows(name, *got)
        lines, per[name] = generator_lines(args.scratch, name, *got)
        results += lines
        samples += sample_lines(args.scratch, name, *got)
    results += paired_claim(per, "trained_mle", "offline", "F1: trained (MLE) − offline, corrected share")
    for a, b in args.f2:
        results += paired_claim(per, a, b, f"F2: {a} − {b}, corrected share")
    for a, b in args.diff:
        results += paired_claim(per, a, b, f"{a} − {b}, corrected share (descriptive: the verdict word is the "
                                           "interval's position, no criterion was stated)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"results{args.suffix}.md").write_text("\n".join(results) + "\n")
    (args.out / f"samples{args.suffix}.md").write_text("\n".join(samples) + "\n")
    (args.out / f"units{args.suffix}.csv").write_text("\n".join(units) + "\n")
    print("\n".join(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
