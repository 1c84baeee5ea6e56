"""Why ambiguous seeds did not matter (H2): where the full and random-seeds variants' data differ.

    python -m experiments.wanli_generated.seeds_diagnosis <scratch> <out.md>

Per world seed, from `<scratch>/world<ws>/gen_{full,randseeds}/` (the generation's `stages/seeds.jsonl`
and the review's `review/reviewed.jsonl`):
1. the seeds: count, overlap between the variants, mean variability under the D0 classifier, and each
   planted artifact's prevalence and P(target | feature) by the world's own definition;
2. transmission: P(reviewed pair has the feature | its seed has it) and P(… | its seed lacks it);
3. the reviewed W: label shares, each artifact's prevalence and P(target | feature), and the share whose
   reviewed label is the prompt's intended label.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

from nliforge.data.jsonl import read_jsonl
from nliforge.data.records import Record
from nliforge.world.artifacts import ARTIFACTS, measure_artifact

VARIANTS = {"full": "full (ambiguous seeds)", "randseeds": "random seeds"}
LABELS = ("entailment", "neutral", "contradiction")


def seed_rows(run: Path) -> dict[str, Record]:
    """The seeds stage's records by uid (the D0 pairs the prompts were built around)."""
    path = run / "stages" / "seeds.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path}: missing; run `TRAIN=0 VARIANTS=\"full randseeds\" bash {Path(__file__).parent}/run.sh` first")
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out[row["uid"]] = Record(row["uid"], row["premise"], row["hypothesis"], row["label"], row.get("source", ""),
                                     row.get("meta", {}))
    return out


def artifact_cells(records: list[Record]) -> list[str]:
    """Per artifact: `prevalence / P(target | feature)`."""
    cells = []
    for name in ARTIFACTS:
        m = measure_artifact(records, name)
        cells.append(f"{m['p_feature']:.3f} / {m['p_target_given_feature']:.2f}" if m["n_feature"] else f"{m['p_feature']:.3f} / –")
    return cells


def transmission(pairs: list[Record], seeds: dict[str, Record]) -> list[str]:
    """Per artifact: P(pair has it | seed has it) vs P(pair has it | seed lacks it), with the counts."""
    cells = []
    for art in ARTIFACTS.values():
        with_seed, without = [], []
        for rec in pairs:
            seed = seeds.get(rec.meta.get("seed_uid"))
            if seed is not None:
                (with_seed if art.present(seed.premise, seed.hypothesis) else without).append(
                    art.present(rec.premise, rec.hypothesis))
        rate = lambda xs: f"{sum(xs) / len(xs):.2f} (n={len(xs)})" if xs else "– (n=0)"  # noqa: E731
        cells.append(f"{rate(with_seed)} vs {rate(without)}")
    return cells


def world_lines(world: Path) -> list[str]:
    runs = {v: world / f"gen_{v}" for v in VARIANTS}
    seeds = {v: seed_rows(run) for v, run in runs.items()}
    reviewed = {v: read_jsonl(run / "review" / "reviewed.jsonl") for v, run in runs.items()}
    shared = len(set(seeds["full"]) & set(seeds["randseeds"]))
    arts = " | ".join(ARTIFACTS)
    lines = [f"### {world.name}", "", f"Seeds shared by the two variants: {shared} of {len(seeds['full'])} / {len(seeds['randseeds'])}.", "",
             "Seeds; each artifact as prevalence / P(target | feature).", "",
             f"| variant | seeds | mean variability | {arts} |", "|---" * (3 + len(ARTIFACTS)) + "|"]
    for v, label in VARIANTS.items():
        var = [s.meta.get("variability") for s in seeds[v].values() if s.meta.get("variability") is not None]
        lines.append(f"| {label} | {len(seeds[v])} | {statistics.mean(var):.3f} | " + " | ".join(artifact_cells(list(seeds[v].values()))) + " |")
    lines += ["", "Transmission, reviewed pairs: P(pair has the feature | its seed has it) vs P(… | its seed lacks it).", "",
              f"| variant | {arts} |", "|---" * (1 + len(ARTIFACTS)) + "|"]
    lines += [f"| {VARIANTS[v]} | " + " | ".join(transmission(reviewed[v], seeds[v])) + " |" for v in VARIANTS]
    lines += ["", "The reviewed W: label shares, the share labelled as the prompt intended, each artifact as "
              "prevalence / P(target | feature).", "",
              f"| variant | pairs | {' | '.join(LABELS)} | reviewed = intended | {arts} |",
              "|---" * (3 + len(LABELS) + len(ARTIFACTS)) + "|"]
    for v, label in VARIANTS.items():
        w = reviewed[v]
        shares = Counter(r.label for r in w)
        same = sum(r.label == r.meta.get("intended_label") for r in w)
        lines.append(f"| {label} | {len(w)} | " + " | ".join(f"{shares[lab] / len(w):.2f}" for lab in LABELS)
                     + f" | {same / len(w):.2f} | " + " | ".join(artifact_cells(w)) + " |")
    return lines


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(__doc__.splitlines()[2].strip())
    scratch, out = Path(argv[0]), Path(argv[1])
    worlds = sorted((p for p in scratch.glob("world*") if (p / "gen_randseeds").is_dir()),
                    key=lambda p: int(re.sub(r"\D", "", p.name) or 0))
    if not worlds:
        raise SystemExit(f"{scratch}: no world<seed>/gen_randseeds folder")
    text = ["# WANLI offline: where the full and random-seeds variants differ (H2 diagnosis)", "",
            "Written by `experiments/wanli_generated/seeds_diagnosis.py`. Artifacts by the world's own definitions "
            "(negation: any negation word in the hypothesis; overlap: every hypothesis word in the premise; length: a long "
            "hypothesis).", ""]
    for world in worlds:
        text += world_lines(world) + [""]
    out.write_text("\n".join(text))
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
