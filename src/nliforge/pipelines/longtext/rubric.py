"""Rubric scores for long-text generations (NLI-Set): the eight criteria, each 1-10, from an LLM
judge (`judge_rubric`) or from people (the review page); a per-model summary table with the
instruction-following rate (`rubric_table`); and its report, `rubric.md` and `rubric.png`.

The judge is asked for strict `criterion: score` lines; the parser also accepts a JSON object and
`Criterion Name - 7/10` lines. An answer without all eight integer scores in 1-10 leaves that
record unscored (the Judgement's `rubric` is None, its `extra` says why), counted in the table.

Small judges (SmolLM2-135M) do not keep an eight-line format: they answer in prose. With
`per_criterion=True` the judge gets one short call per criterion and answers one number
(`parse_score`: the only whole number 1-10 left after scale phrases such as "1 to 10" or "out of
10"; none or two different ones leave the criterion, and so the record, unscored).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.generation.answer import answer_requests, sampling_from
from nliforge.pipelines.longtext.prompts import RELATIONS
from nliforge.generation.types import Failure, GenerationRequest
from nliforge.data.judgements import RUBRIC_CRITERIA, Judgement
from nliforge.utils.atomic import atomic_write_text, save_figure
from nliforge.utils.figures import add_note

STAGE = "rubric"
CRITERIA_TEXT = {
    "content_coverage": "the paragraphs treat the subject of the context statement with enough relevant detail",
    "accuracy": "the claims are plausible and consistent, and paragraph B stands in the intended relation to A",
    "conciseness": "no padding: every sentence adds something",
    "coherence_structure": "each paragraph is well organised and the two read as one text",
    "readability": "clear, grammatical, formal prose that is easy to follow",
    "non_redundancy": "sentences do not repeat one another",
    "referential_clarity": "it is always clear what pronouns and other references point to",
    "focus": "the text stays on its subject and does not drift",
}
DEFAULT_SAMPLING = {"max_tokens": 120, "temperature": 0.0, "top_p": 1.0, "stop": []}


def judge_prompt(record: Record) -> str:
    """Our judge prompt for one record: statement, intended relation, both paragraphs, the criteria."""
    label = record_label(record)
    criteria = "\n".join(f"- {c}: {CRITERIA_TEXT[c]}" for c in RUBRIC_CRITERIA)
    statement = (record.meta or {}).get("statement", "")
    return (
        "You review texts written for a natural language inference dataset. Each text is two paragraphs, "
        "A and B, on the subject of a context statement.\n\n"
        f"Context statement: {statement}\n"
        f"What paragraph B was asked to do: {RELATIONS[label]}\n\n"
        f"Paragraph A:\n{record.premise}\n\nParagraph B:\n{record.hypothesis}\n\n"
        f"Score the text from 1 (very poor) to 10 (excellent) on each criterion:\n{criteria}\n\n"
        "Reply with exactly eight lines of the form `criterion: score`, using the criterion names above "
        "and whole numbers, and nothing else.")


def record_label(record: Record) -> str:
    """The record's label, or its intended label while it is unreviewed."""
    label = record.label or (record.meta or {}).get("intended_label")
    if label not in RELATIONS:
        raise NLIDataError(f"record {record.uid!r}: no label or meta.intended_label among {list(RELATIONS)}")
    return label


def _criterion(name: str) -> str:
    """`Coherence and Structure` / `coherence-structure` -> `coherence_structure`."""
    return "_".join(w for w in re.findall(r"[a-z]+", name.lower()) if w != "and")


_LINE = re.compile(r"^[\s*\-#>\d.)]*(?P<name>[A-Za-z][A-Za-z _\-&/]*?)\**\s*[:=\-–]\s*\**(?P<score>\d{1,2})\b")


def parse_rubric(text: str) -> dict[str, int] | None:
    """All eight scores from a judge's answer (JSON object or `name: score` lines), else None."""
    found: dict[str, object] = {}
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)
    if match:
        try:
            obj = json.loads(match.group(0))
            found = {_criterion(str(k)): v for k, v in obj.items()} if isinstance(obj, dict) else {}
        except json.JSONDecodeError:
            found = {}
    if not found:
        for line in text.splitlines():
            m = _LINE.match(line.strip())
            if m:
                found.setdefault(_criterion(m["name"]), int(m["score"]))
    scores = {c: _as_score(found.get(c)) for c in RUBRIC_CRITERIA}
    return scores if all(v is not None for v in scores.values()) else None  # type: ignore[return-value]


def _as_score(value: object) -> int | None:
    """An integer 1-10 from 7, 7.0 or "7"; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 1 <= value <= 10 else None


def criterion_prompt(record: Record, criterion: str) -> str:
    """A one-criterion judge prompt (per_criterion mode): the two paragraphs, one criterion, one number."""
    statement = (record.meta or {}).get("statement", "")
    name = criterion.replace("_", " ")
    return (f"Context statement: {statement}\n\nParagraph A:\n{record.premise}\n\nParagraph B:\n{record.hypothesis}\n\n"
            f"Rate the {name} of this text ({CRITERIA_TEXT[criterion]}) on a scale from 1 (very poor) to 10 "
            "(excellent). Answer with one whole number only.")


_SCALE = re.compile(r"\b(?:1|one)\s*(?:-|–|to)\s*10\b|\b(?:out\s+of|/)\s*10\b|\bscale\s+of\s+10\b", re.IGNORECASE)


def parse_score(text: str) -> int | None:
    """One criterion's score: the only whole number 1-10 in the answer once scale phrases ("1 to 10",
    "1-10", "out of 10", "/10") are removed ("8", "Score: 8", "8/10", "I rate it 8 out of 10."); None
    when there is none or two different ones (never a guess)."""
    numbers = {int(n) for n in re.findall(r"(?<![\d.])\d+(?!\.?\d)", _SCALE.sub(" ", text))}
    return numbers.pop() if len(numbers) == 1 and 1 <= next(iter(numbers)) <= 10 else None


def _cut_in_a_number(res) -> bool:
    """An answer stopped by max_tokens right after a digit: "... is 1" may be a cut "10", so not a score."""
    return res.finish_reasons[0] == "length" and bool(re.search(r"\d\s*$", res.texts[0]))


def _judge_requests(records: Sequence[Record], per_criterion: bool, chat: bool, samp, seed: int):
    """[(record index, criterion or None, request)]: one request per record, or one per record and criterion."""
    out = []
    for i, rec in enumerate(records):
        for k, crit in enumerate(RUBRIC_CRITERIA if per_criterion else (None,)):
            prompt = criterion_prompt(rec, crit) if crit else judge_prompt(rec)
            uid = f"{rec.uid}:judge" + (f":{crit}" if crit else "")
            req = GenerationRequest(uid=uid, prompt=prompt, sampling=samp, seed=seed + i * 8 + k,
                                    messages=({"role": "user", "content": prompt},) if chat else None)
            out.append((i, crit, req))
    return out


def judge_rubric(records: Sequence[Record], generator_cfg: Mapping, cache_path: str | Path, seed: int = 0,
                 sampling: Mapping | None = None, stage: str = STAGE, per_criterion: bool = False) -> list[Judgement]:
    """One Judgement (source llm_judge, label = the intended label) per record, scores in `rubric`; with
    `per_criterion` the judge is asked each criterion in its own call (max_tokens 24 unless set); an
    answer cut by max_tokens right after a digit leaves the record unscored (`cut_off_after_a_number`)."""
    chat = bool(generator_cfg.get("chat", False))
    base = {**DEFAULT_SAMPLING, **({"max_tokens": 24} if per_criterion else {}), **dict(sampling or {})}
    plan = _judge_requests(records, per_criterion, chat, sampling_from(base), seed)
    results, _, ident = answer_requests(generator_cfg, [req for _, _, req in plan], cache_path, stage)
    annotator = f"llm_judge:{ident['model']}"
    texts: dict[int, dict] = {}
    failed: dict[int, str] = {}
    for i, crit, req in plan:
        res = results[req.uid]
        if isinstance(res, Failure):
            failed.setdefault(i, f"request_failed:{res.kind}")
        texts.setdefault(i, {})[crit] = "" if isinstance(res, Failure) else res.texts[0]
        if per_criterion and not isinstance(res, Failure) and _cut_in_a_number(res):
            failed.setdefault(i, "cut_off_after_a_number")
    out = []
    for i, rec in enumerate(records):
        answers = texts[i]
        if per_criterion:
            parsed = {c: parse_score(answers[c]) for c in RUBRIC_CRITERIA}
            scores = parsed if all(v is not None for v in parsed.values()) else None
            text = json.dumps(answers)
        else:
            text = answers[None]
            scores = parse_rubric(text)
        why = failed.get(i) or ("unparseable" if scores is None else None)
        kept = text if per_criterion else text[:1000]   # 8 short answers are kept whole (a cut breaks the JSON)
        out.append(Judgement(rec.uid, annotator, record_label(rec), rec.premise, rec.hypothesis, source="llm_judge",
                             rubric=None if why else scores,
                             extra={"rubric_error": why, "answer": kept} if why else {}))
    return out


def judge_ledger(cache_path: str | Path, stage: str = STAGE) -> dict:
    """The judge's ledger (requests, tokens, cost) from the cache file."""
    from nliforge.generation.cache import ResponseCache

    with ResponseCache(cache_path) as cache:
        return cache.ledger(stage)


def rubric_table(records: Sequence[Record], judgements: Sequence[Judgement],
                 validated_counts: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """Per model (`meta.model` of the judged record): n scored judgements, unscored ones, mean and
    sample std (ddof=1; NaN for n < 2) per criterion, and the instruction-following rate
    passed/generated from `validated_counts` {model: (passed, generated)}. Judgements of any source
    count, each as one observation; those of uids not among `records` are ignored."""
    model_of = {r.uid: str((r.meta or {}).get("model", "unknown")) for r in records}
    scored: dict[str, list[dict]] = {}
    unscored: dict[str, int] = {}
    for j in judgements:
        model = model_of.get(j.uid)
        if model is None:
            continue
        if j.rubric and len(j.rubric) == len(RUBRIC_CRITERIA):
            scored.setdefault(model, []).append(j.rubric)
        else:
            unscored[model] = unscored.get(model, 0) + 1
    counts = dict(validated_counts or {})
    rows = []
    for model in sorted(set(scored) | set(unscored) | set(counts)):
        frame = pd.DataFrame(scored.get(model, []), columns=list(RUBRIC_CRITERIA), dtype=float)
        passed, total = counts.get(model, (math.nan, math.nan))
        row = {"model": model, "n": len(frame), "unscored": unscored.get(model, 0), "passed": passed,
               "generated": total, "instruction_following": passed / total if total else math.nan}
        for c in RUBRIC_CRITERIA:
            row[f"{c}_mean"] = frame[c].mean() if len(frame) else math.nan
            row[f"{c}_std"] = frame[c].std(ddof=1) if len(frame) > 1 else math.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("model") if rows else pd.DataFrame()


def _fmt(value: float, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def rubric_markdown(table: pd.DataFrame, note: str = "") -> str:
    """A Markdown table: one row per model, `mean ± std` per criterion."""
    head = ["model", "n", "unscored", "instruction following", *RUBRIC_CRITERIA]
    lines = ["# Rubric scores per model (1-10, mean ± std)", ""] + ([note, ""] if note else [])
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for model, r in table.iterrows():
        rate = _fmt(r["instruction_following"])
        if not math.isnan(r["generated"]):
            rate += f" ({int(r['passed'])}/{int(r['generated'])})"
        cells = [str(model), str(int(r["n"])), str(int(r["unscored"])), rate]
        cells += [f"{_fmt(r[f'{c}_mean'])} ± {_fmt(r[f'{c}_std'])}" for c in RUBRIC_CRITERIA]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_rubric_report(table: pd.DataFrame, out_dir: str | Path, note: str = "") -> tuple[Path, Path]:
    """`rubric.md` (the Markdown table) and `rubric.png` (grouped bars with std error bars) in out_dir."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = out / "rubric.md"
    atomic_write_text(md, [rubric_markdown(table, note)])
    models = list(table.index)
    x, width = np.arange(len(RUBRIC_CRITERIA)), 0.8 / max(1, len(models))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for i, model in enumerate(models):
        means = [table.loc[model, f"{c}_mean"] for c in RUBRIC_CRITERIA]
        stds = np.nan_to_num([table.loc[model, f"{c}_std"] for c in RUBRIC_CRITERIA])
        ax.bar(x + (i - (len(models) - 1) / 2) * width, means, width, yerr=stds, capsize=3, label=str(model))
    ax.set_xticks(x, [c.replace("_", "\n") for c in RUBRIC_CRITERIA], fontsize=8)
    ax.set_ylim(0, 10.5)
    ax.set_ylabel("score (1-10), mean ± std")
    ax.set_title("Rubric scores per model")
    ax.legend(fontsize=8)
    fig.tight_layout()
    add_note(fig, note)                     # a stand-in's scores say so on the PNG too
    return md, save_figure(fig, out / "rubric.png", dpi=110, bbox_inches="tight")
