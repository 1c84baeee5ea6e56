"""E3's per-world values (README.md "E3 criteria"), for analysis.py: the yield of each world's DISCO run
(`e3/w<k>/generate`), the accuracies of its three arms (`e3/w<k>/<arm>`, read as E2's), the gates G3-N and
G3-<arm>, the criterion E3a, what is reported beside it, and 20 kept counterfactuals with their originals."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pandas as pd

from experiments.real_effects.analysis_e2 import LEVEL_COLUMNS, arm_levels, largest_share
from experiments.real_effects.analysis_record import kept_text, level_table

ARMS = ("disco", "human_at", "mnli_at")
MIN_N = 100
FAMILIES = {"E3a": ["E3a"]}
GATES = ("G3-N", *(f"G3-{a}" for a in ARMS))
EVERY_WORLD = ("G3-N",)   # gates read per world (every world ≥ 0), not by their interval
DESCRIPTION = {
    "G3-N": f"gate: the world's kept counterfactuals N_k − {MIN_N} (every world ≥ 0)",
    **{f"G3-{a}": f"gate: {a}'s accuracy on the original test pairs − their largest class (points)" for a in ARMS},
    "E3a": "(disco − mnli_at) on the revised tests − (disco − mnli_at) on their originals (points)",
}
STAGES = ("disco_prompts", "disco_generate", "splice", "disco_heuristics", "teacher_filter")


def disco_run(scratch: Path, w: int) -> Path:
    return scratch / "e3" / f"w{w}" / "generate"


def kept(run: Path) -> list[dict]:
    """The counterfactuals the world's DISCO run kept (D^c), as written by its augment stage."""
    with open(run / "augment" / "counterfactuals.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def world_yield(run: Path) -> dict:
    """Per stage the count out, the heuristics' drop reasons, and the kept pairs per target label."""
    stages = json.loads((run / "manifest.json").read_text())["stages"]
    out = {"world": int(run.parent.name.removeprefix("w")), "originals": stages["disco_source"]["count_out"]}
    out.update({s: stages[s]["count_out"] for s in STAGES})
    out["heuristic_drops"] = ", ".join(f"{k.removeprefix('heuristic:')} {v}" for k, v in
                                       sorted(stages["disco_heuristics"]["drops"].items(), key=lambda kv: -kv[1]))
    out.update({f"kept_{lab}": n for lab, n in sorted(Counter(r["label"] for r in kept(run)).items())})
    return out


def e3_rows(scratch: Path, original_labels: list[str], worlds=(1, 2, 3, 4, 5)) -> tuple[list[dict], list[dict], list[dict]]:
    """Rows (criterion, world, value) for worlds where the DISCO run and every arm finished, the per-arm
    levels, and the per-world yields (for every world whose DISCO run finished)."""
    rows, levels, yields = [], [], []
    largest = largest_share(original_labels)
    for w in worlds:
        if not (disco_run(scratch, w) / "augment" / "counterfactuals.jsonl").is_file():
            continue   # not run, or still running (its augment stage writes D^c last)
        y = world_yield(disco_run(scratch, w))
        yields.append(y)
        runs = {a: scratch / "e3" / f"w{w}" / a for a in ARMS}
        if not all((r / "metrics.csv").is_file() for r in runs.values()):
            continue
        lev = {a: arm_levels(r) for a, r in runs.items()}
        levels += [{"world": w, "arm": a, "n": y["teacher_filter"], **v} for a, v in lev.items()]
        rows.append({"criterion": "G3-N", "world": w, "value": y["teacher_filter"] - MIN_N})
        rows += [{"criterion": f"G3-{a}", "world": w, "value": 100 * (v["orig"] - largest)} for a, v in lev.items()]
        d, h, m = lev["disco"], lev["human_at"], lev["mnli_at"]
        rows.append({"criterion": "E3a", "world": w, "value": 100 * ((d["rev"] - m["rev"]) - (d["orig"] - m["orig"]))})
        for k in ("rev", "rp", "rh", "orig", "cf_rp", "cf_rh"):
            rows.append({"criterion": f"E3-disco−mnli-{k}", "world": w, "value": 100 * (d[k] - m[k])})
            rows.append({"criterion": f"E3-disco−human-{k}", "world": w, "value": 100 * (d[k] - h[k])})
        rows.append({"criterion": "E3-human−mnli-rev", "world": w, "value": 100 * (h["rev"] - m["rev"])})
    return rows, levels, yields


def gap_closure(rows: list[dict]) -> float:
    """(disco − mnli_at) / (human_at − mnli_at) on the revised tests: the ratio of the world means."""
    def mean(c):
        v = [r["value"] for r in rows if r["criterion"] == c]
        return sum(v) / len(v) if v else float("nan")
    den = mean("E3-human−mnli-rev")
    return mean("E3-disco−mnli-rev") / den if den else float("nan")


def samples(scratch: Path, worlds=(1, 2, 3, 4, 5), k: int = 20, seed: int = 0) -> list[dict]:
    """k kept counterfactuals drawn with `seed` from all finished worlds (in world order before the draw)."""
    pool = [(w, r) for w in worlds if (disco_run(scratch, w) / "augment" / "counterfactuals.jsonl").is_file()
            for r in kept(disco_run(scratch, w))]
    return [{"world": w, **r} for w, r in random.Random(seed).sample(pool, min(k, len(pool)))]


def sections(scratch: Path, out: Path, rows: pd.DataFrame, lv: pd.DataFrame, yields: pd.DataFrame) -> list[str]:
    md = level_table("E3", lv, LEVEL_COLUMNS, ARMS) if len(lv) else []
    if len(rows):
        md += ["", f"Gap closure (disco − mnli_at) / (human_at − mnli_at) on the revised tests, ratio of the world "
               f"means: {gap_closure(rows.to_dict('records')):.2f}"]
    if len(yields):
        md += ["", "## E3 yield per world (DISCO run with SmolLM2, 3 samples per prompt)", "",
               "| " + " | ".join(yields.columns) + " |", "|---" * len(yields.columns) + "|"]
        md += ["| " + " | ".join(str(v) for v in r) + " |" for r in yields.itertuples(index=False)]
    drawn = [f"| {r['world']} | {r['meta']['original_premise']} | {r['meta']['original_label']} | {r['premise']} | "
             f"{r['hypothesis']} | {r['label']} |" for r in samples(scratch)]
    head = ["", "## E3: 20 kept counterfactuals (seed 0, all worlds)", "",
            "| world | original premise | original label | new premise | hypothesis | target label |", "|---|---|---|---|---|---|"]
    return md + kept_text(head + drawn if drawn else [], out / "results_e3_samples.md")
