"""`disco_report` (side stage): the seed's Table 1 per flip direction — how many prompts, phrases,
splices and survivors of each filter; label flip rate and soft flip rate of the accepted
counterfactuals; Self-BLEU of the new premises; the OT distance between original and new pairs —
written as `<run>/disco_report.md` and `.json`.

Flip rates need a review label per counterfactual: `review_file` (an `nliforge-review aggregate`
output) when given; otherwise the teacher's argmax stands in, and the report says so, because a
teacher that also did the filtering is not an independent judge."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from nliforge.data.labels import FLIP_DIRECTIONS as ALL_DIRECTIONS
from nliforge.data.labels import LABELS
from nliforge.engine.stages import StageContext, StageOutput, stage

COUNTED = ("disco_prompts", "disco_generate", "splice", "disco_heuristics", "teacher_filter")


def _direction(row: Mapping) -> str:
    return row.get("direction") or (row.get("meta") or {}).get("direction", "")


def stage_counts(ctx: StageContext) -> dict[str, Counter]:
    """Rows per direction after each stage (generated rows get their prompt's direction)."""
    prompts = {p["uid"]: p["direction"] for p in ctx.rows("disco_prompts")}
    out = {}
    for name in COUNTED:
        rows = ctx.rows(name)
        out[name] = Counter(prompts[r["prompt_uid"]] if name == "disco_generate" else _direction(r) for r in rows)
    return out


def review_labels(accepted: Sequence[Mapping], review_file: str | None) -> tuple[list[str | None], str]:
    """The review label of each accepted counterfactual and where it came from."""
    if review_file:
        from nliforge.data.jsonl import read_jsonl

        reviewed = {r.uid: r.label for r in read_jsonl(review_file)}
        return [reviewed.get(r["uid"]) for r in accepted], f"review file {review_file}"
    labels = [LABELS[int(np.argmax(r["meta"]["scores"]["teacher_new"]))] for r in accepted]
    return labels, "teacher argmax (no review file: the filtering teacher stands in for annotators)"


def _finite(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)


def _mean_present(values: Sequence[float | None]) -> float | None:
    """The mean of the values that exist (the paper's Avg. over directions), None if none does."""
    present = [v for v in values if v is not None]
    return _finite(float(np.mean(present))) if present else None


def direction_metrics(accepted: Sequence[Mapping], s: Mapping, seed: int) -> dict[str, dict]:
    """Self-BLEU of new premises and OT distance (original vs new pairs) per direction, when ≥ 2 items."""
    from nliforge.evaluation.counterfactual import dataset_distance, self_bleu

    out = {}
    for d in ALL_DIRECTIONS:
        rows = [r for r in accepted if r["meta"]["direction"] == d]
        if len(rows) < 2:
            out[d] = {"self_bleu": None, "distance": None}
            continue
        new = [f"{r['premise']} {r['hypothesis']}" for r in rows]
        old = sorted({f"{r['meta']['original_premise']} {r['hypothesis']}" for r in rows})
        out[d] = {"self_bleu": _finite(self_bleu([r["premise"] for r in rows], int(s["self_bleu_max"]), seed)),
                  "distance": _finite(dataset_distance(old, new, kind=str(s["distance_embedding"]),
                                                       max_items=int(s["distance_max"]), seed=seed))}
    return out


def render(report: Mapping) -> str:
    """The Markdown table: one row per direction plus the average row."""
    head = ("| direction | prompts | phrases | spliced | after heuristics | after teacher | LFR | SLFR | "
            "Self-BLEU | OT distance |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [f"# DISCO report\n\nReview labels: {report['review_source']}.\n", head]
    for d in (*ALL_DIRECTIONS, "avg"):
        r = report["directions"][d]
        cells = [r["counts"].get(k, "") for k in COUNTED] + [r.get("lfr"), r.get("slfr"), r.get("self_bleu"),
                                                               r.get("distance")]
        lines.append("| " + " | ".join([d] + ["–" if c is None else f"{c:.3f}" if isinstance(c, float) else str(c)
                                            for c in cells]) + " |")
    rules = ", ".join(f"{k}={v}" for k, v in sorted(report["heuristic_rules"].items())) or "none"
    return "\n".join(lines) + f"\n\nHeuristic drops by rule: {rules}.\n"


@stage("disco_report", inputs=COUNTED, side=True,
       reads=("uid", "direction", "prompt_uid", "premise", "hypothesis", "label", "meta"),
       writes=("uid", "counts", "lfr", "slfr", "reviewed", "self_bleu", "distance"))
def disco_report_stage(ctx: StageContext) -> StageOutput:
    """Per-direction counts and the Table 1 metrics of the accepted counterfactuals."""
    from nliforge.utils.atomic import atomic_write_text
    from nliforge.evaluation.counterfactual import flip_rates

    s = dict(ctx.settings)
    accepted = ctx.rows("teacher_filter")
    counts = stage_counts(ctx)
    labels, source = review_labels(accepted, s.get("review_file"))
    flips = flip_rates([r["meta"]["original_label"] for r in accepted], [r["label"] for r in accepted], labels)
    per_dir = direction_metrics(accepted, s, int(ctx.cfg.seed))
    directions = {}
    for d in (*ALL_DIRECTIONS, "avg"):
        metrics = per_dir.get(d) or {k: _mean_present([per_dir[x][k] for x in ALL_DIRECTIONS])
                                     for k in ("self_bleu", "distance")}
        n = {k: (sum(c.values()) if d == "avg" else c.get(d, 0)) for k, c in counts.items()}
        directions[d] = {"counts": n, "lfr": _finite(flips[d]["lfr"]), "slfr": _finite(flips[d]["slfr"]),
                         "reviewed": flips[d]["n"], **metrics}
    rules = ctx.folder.stage_entry("disco_heuristics").get("extra", {}).get("rule_counts", {})
    report = {"review_source": source, "directions": directions, "heuristic_rules": rules}
    atomic_write_text(ctx.folder.root / "disco_report.json", [json.dumps(report, indent=2) + "\n"])
    atomic_write_text(ctx.folder.root / "disco_report.md", [render(report)])
    rows = [{"uid": d, **directions[d]} for d in (*ALL_DIRECTIONS, "avg")]
    return StageOutput(rows, count_in=len(accepted))
