"""Prompt rows of the DISCO `disco_prompts` stage: one per (span, target label), in the masked or the
insertion form, with demonstrations from an earlier run's counterfactuals chosen by similarity."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.labels import flip_direction as direction
from nliforge.pipelines.disco.prompts import (
    MASK, Demonstration, chat_messages, demonstration_from_record, insertion_prompt, masked_prompt,
    nearest_demonstrations, prompt_hash)
from nliforge.pipelines.disco.splice import Span, check_span, masked

KEY = "pipeline.disco_prompts.demonstrations"


def load_demonstrations(settings: Mapping) -> list[Demonstration]:
    """Demonstrations from `demonstrations.path` (a JSONL of DISCO counterfactual records), or none."""
    from nliforge.data.jsonl import read_jsonl

    path = settings.get("path")
    if not path or int(settings.get("k", 0)) <= 0:
        return []
    if not Path(path).is_file():
        raise NLIDataError(f"{KEY}.path={str(path)!r}: no such file (expected the dataset.jsonl of a DISCO run)")
    return [demonstration_from_record(rec.to_dict()) for rec in read_jsonl(path)]


def _targets(original: str, directions: Sequence[str]) -> list[str]:
    return [t for t in LABELS if t != original and direction(original, t) in directions]


def _chosen_demos(queries: list[tuple[str, str, str]], settings: Mapping) -> list[list[Demonstration]]:
    """Per query (premise, hypothesis, direction), its k nearest demonstrations (most similar last)."""
    pool = load_demonstrations(settings)
    if not pool:
        return [[] for _ in queries]
    picks = nearest_demonstrations([f"{p} {h}" for p, h, _ in queries],
                                   [f"{d.masked_premise} {d.hypothesis}" for d in pool],
                                   [d.direction for d in pool], [q[2] for q in queries], int(settings["k"]))
    return [[pool[i] for i in idx] for idx in picks]


def build_prompt_rows(spans: Sequence[Mapping], source: Mapping[str, Mapping], directions: Sequence[str],
                      insertion: bool, demo_settings: Mapping, chat: bool = False) -> list[dict]:
    """The prompt rows for every span and wanted target; insertion rows carry a `suffix` and no demos."""
    jobs = []
    for sp in spans:
        rec = source[sp["source_uid"]]
        check_span(rec["premise"], Span(sp["start"], sp["end"], sp["text"]))
        for target in _targets(rec["label"], directions):
            jobs.append((sp, rec, target))
    queries = [(rec["premise"], rec["hypothesis"], direction(rec["label"], t)) for _, rec, t in jobs]
    demos = [[] for _ in jobs] if insertion else _chosen_demos(queries, dict(demo_settings))
    rows = []
    for (sp, rec, target), chosen in zip(jobs, demos):
        premise, start, end = rec["premise"], sp["start"], sp["end"]
        if insertion:
            prompt, suffix = insertion_prompt(premise[:start], premise[end:], rec["hypothesis"], target)
        else:
            masked_premise = masked(premise, Span(start, end, sp["text"]), MASK)
            prompt, suffix = masked_prompt(masked_premise, rec["hypothesis"], target, chosen), None
        rows.append({
            "uid": f"{sp['uid']}:{target[0].upper()}", "source_uid": rec["uid"], "span_uid": sp["uid"],
            "start": start, "end": end, "span_text": sp["text"], "premise": premise, "hypothesis": rec["hypothesis"],
            "original_label": rec["label"], "target_label": target, "direction": direction(rec["label"], target),
            "form": "insertion" if insertion else "masked", "prompt": prompt, "suffix": suffix,
            "messages": list(chat_messages(prompt)) if chat else [], "prompt_hash": prompt_hash(prompt, suffix),
            "demo_fillers": [d.filler for d in chosen]})
    return rows
