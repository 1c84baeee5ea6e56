"""Crowd review formats: Amazon Mechanical Turk batches and Label Studio projects.

AMT (WANLI App. D: five examples per HIT, text boxes pre-filled with the original texts, one
label or "discard" per example):
- `export_amt` writes the batch-input CSV: one row per HIT, columns `uid_i, premise_i,
  hypothesis_i` for i = 1..per_hit (a short last HIT has blank slots; a cell a spreadsheet would run
  as a formula gets a leading `'`, taken off again on import: review/csv_cells.py); `amt_layout()` is a
  matching HIT layout whose answer fields are `label_i`, `premise_i`, `hypothesis_i`.
- `import_amt` reads the batch-results CSV (`HITId, AssignmentId, WorkerId, AssignmentStatus,
  SubmitTime, Input.<col>, Answer.<field>`). `Answer.label_i` holds the label; a radio group may
  instead give one boolean column per choice (`Answer.label_i.neutral = true`), read as well.
  Rejected assignments are skipped and counted.

Label Studio: `export_label_studio` writes the task list, `label_studio_config()` the labeling
config that goes with it, and `import_label_studio` reads the project's JSON export.

Both importers return `ImportedJudgements` (a list of Judgement with a `counts` dict). A text is
a revision when it differs from the original after whitespace normalisation; a blank answer means
unchanged. Bad input raises NLIDataError naming the file, the line (CSV) or task, and the column.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.records import Record, check_unique_uids
from nliforge.review.csv_cells import from_spreadsheet, spreadsheet_safe
from nliforge.review.text import differs, normalize_whitespace
from nliforge.data.judgements import REVIEW_LABELS, Judgement
from nliforge.utils.atomic import atomic_write_text

AMT_REQUIRED = ("HITId", "AssignmentId", "WorkerId", "AssignmentStatus")
SLOT_FIELDS = ("uid", "premise", "hypothesis")


class ImportedJudgements(list):
    """The judgements read from a crowd file, plus `counts` (assignments, rejected, judgements ...)."""

    def __init__(self, judgements: Iterable[Judgement] = (), counts: Mapping[str, int] | None = None):
        super().__init__(judgements)
        self.counts = dict(counts or {})


def _index(records: Sequence[Record]) -> dict[str, Record]:
    check_unique_uids(records, "review items")
    return {r.uid: r for r in records}


def review_judgement(rec: Record, annotator: str, label: str, premise: str, hypothesis: str, source: str,
                     created_at: float, extra: dict, where: str) -> Judgement:
    """A Judgement from raw crowd answers: label normalised, blank text = unchanged, `revised` from the text."""
    name = (label or "").strip().lower()
    if name not in REVIEW_LABELS:
        raise NLIDataError(f"{where}: label {label!r}; expected one of {', '.join(REVIEW_LABELS)}")
    premise = normalize_whitespace(premise) or rec.premise
    hypothesis = normalize_whitespace(hypothesis) or rec.hypothesis
    revised = differs(rec.premise, premise) or differs(rec.hypothesis, hypothesis)
    if not revised:
        premise, hypothesis = rec.premise, rec.hypothesis
    return Judgement(rec.uid, annotator, name, premise, hypothesis, revised=revised, source=source,
                     created_at=created_at, extra=extra)


# ---------------------------------------------------------------------------------------- AMT
def export_amt(records: Sequence[Record], path: str | os.PathLike, per_hit: int = 5) -> Path:
    """The AMT batch-input CSV: `per_hit` examples per row (HIT), blanks after the last example."""
    if per_hit < 1:
        raise NLIDataError(f"per_hit={per_hit}: expected at least 1 example per HIT")
    _index(records)
    header = [f"{name}_{i}" for i in range(1, per_hit + 1) for name in SLOT_FIELDS]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")   # RFC 4180: a CR or LF inside a text is then quoted
    writer.writerow(header)
    for start in range(0, len(records), per_hit):
        row = []
        for rec in records[start:start + per_hit]:
            row += [spreadsheet_safe(text) for text in (rec.uid, rec.premise, rec.hypothesis)]
        writer.writerow(row + [""] * (len(header) - len(row)))
    return atomic_write_text(path, [buf.getvalue()])


def amt_layout(per_hit: int = 5) -> str:
    """An AMT HIT layout (HTML in a crowd-form) for the batch `export_amt` writes: per example two
    text boxes pre-filled with the original texts and one radio group (answer fields as import_amt reads)."""
    items = []
    for i in range(1, per_hit + 1):
        radios = " ".join(f'<label><input type="radio" name="label_{i}" value="{v}"> {v}</label>'
                          for v in REVIEW_LABELS)
        items.append(f'<fieldset><legend>Example {i}</legend>\n'
                     f'<p>Premise</p><textarea name="premise_{i}" rows="3" cols="90">${{premise_{i}}}</textarea>\n'
                     f'<p>Hypothesis</p><textarea name="hypothesis_{i}" rows="2" cols="90">'
                     f'${{hypothesis_{i}}}</textarea>\n'
                     f'<p>{radios}</p></fieldset>')
    return ('<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>\n<crowd-form>\n'
            '<p>Optionally revise each example (minimal edits that keep its meaning), then choose the relation '
            'of the hypothesis to the premise, or discard the example if it would need heavy revision or is '
            'offensive.</p>\n' + "\n".join(items) + "\n</crowd-form>\n")


def _submit_time(value: str, where: str) -> float:
    """AMT's `Wed Nov 20 10:11:12 PST 2024` (zone name ignored) or ISO 8601 -> seconds; blank -> 0."""
    value = (value or "").strip()
    if not value:
        return 0.0
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        parts = value.split()
        if len(parts) == 6:
            parts.pop(4)
        try:
            stamp = datetime.strptime(" ".join(parts), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            raise NLIDataError(f"{where}: column SubmitTime: {value!r} is not a time; expected AMT's "
                               "'Wed Nov 20 10:11:12 PST 2024' or ISO 8601") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


def _amt_label(row: Mapping[str, str], i: int, where: str) -> str:
    """`Answer.label_i`, or the one true `Answer.label_i.<choice>` column of a radio group."""
    direct = (row.get(f"Answer.label_{i}") or "").strip()
    if direct:
        return direct
    ticked = [c for c in REVIEW_LABELS if (row.get(f"Answer.label_{i}.{c}") or "").strip().lower() == "true"]
    if len(ticked) != 1:
        raise NLIDataError(f"{where}: column Answer.label_{i}: {len(ticked)} choices given; expected exactly one "
                           f"of {', '.join(REVIEW_LABELS)}")
    return ticked[0]


def _amt_row(row: Mapping[str, str], index: Mapping[str, Record], where: str) -> list[Judgement]:
    """The judgements of one approved/submitted assignment (one per filled slot)."""
    worker = (row.get("WorkerId") or "").strip()
    if not worker:
        raise NLIDataError(f"{where}: column WorkerId is empty; expected the worker's id")
    created = _submit_time(row.get("SubmitTime", ""), where)
    out, i = [], 1
    while f"Input.uid_{i}" in row:
        uid = from_spreadsheet((row[f"Input.uid_{i}"] or "").strip())
        if uid:
            if uid not in index:
                raise NLIDataError(f"{where}: column Input.uid_{i}: uid {uid!r} is not among the review items")
            extra = {"hit_id": row["HITId"], "assignment_id": row["AssignmentId"], "slot": i}
            out.append(review_judgement(index[uid], worker, _amt_label(row, i, where),
                                        from_spreadsheet(row.get(f"Answer.premise_{i}") or ""),
                                        from_spreadsheet(row.get(f"Answer.hypothesis_{i}") or ""),
                                        "amt", created, extra, f"{where}: column Answer.label_{i}"))
        i += 1
    if i == 1:
        raise NLIDataError(f"{where}: no Input.uid_1 column; expected a results file of an export_amt batch")
    return out


def import_amt(path: str | os.PathLike, records: Sequence[Record]) -> ImportedJudgements:
    """Judgements from an AMT batch-results CSV (rejected assignments skipped, counted)."""
    path, index = Path(path), _index(records)
    if not path.is_file():
        raise NLIDataError(f"{path}: file not found; expected an AMT batch results CSV")
    out = ImportedJudgements(counts={"assignments": 0, "rejected": 0})
    with path.open(encoding="utf-8-sig", newline="") as fh:
        if fh.readline().lstrip().startswith(("{", "[")):   # JSON: WANLI's annotations, a Label Studio export
            raise NLIDataError(f"{path}:1: JSON, not an AMT results CSV; WANLI's released annotations "
                               "(WorkerId, gold, revised_premise, ...) are import.format=wanli, a Label Studio "
                               "export import.format=label_studio")
        fh.seek(0)
        reader = csv.DictReader(fh)
        missing = [c for c in AMT_REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise NLIDataError(f"{path}:1: missing column(s) {missing}; an AMT results file has {list(AMT_REQUIRED)}")
        line = reader.line_num
        for row in reader:
            where, line = f"{path}:{line + 1}", reader.line_num
            if None in row:
                raise NLIDataError(f"{where}: more fields than the {len(reader.fieldnames)} header columns")
            out.counts["assignments"] += 1
            if (row["AssignmentStatus"] or "").strip().lower() == "rejected":
                out.counts["rejected"] += 1
                continue
            out.extend(_amt_row(row, index, where))
    out.counts["judgements"] = len(out)
    return out


# ------------------------------------------------------------------------------- Label Studio
def label_studio_config() -> str:
    """The labeling config for `export_label_studio` tasks: editable texts and one choice."""
    choices = "\n".join(f'    <Choice value="{c.capitalize()}"/>' for c in REVIEW_LABELS)
    return f"""<View>
  <Header value="Premise"/>
  <Text name="premise_text" value="$premise"/>
  <Header value="Hypothesis"/>
  <Text name="hypothesis_text" value="$hypothesis"/>
  <Header value="Revised premise (optional: leave empty to keep it)"/>
  <TextArea name="premise" toName="premise_text" value="$premise" editable="true" maxSubmissions="1" rows="3"/>
  <Header value="Revised hypothesis (optional: leave empty to keep it)"/>
  <TextArea name="hypothesis" toName="hypothesis_text" value="$hypothesis" editable="true" maxSubmissions="1" rows="2"/>
  <Header value="Relation (discard: needs heavy revision or is offensive)"/>
  <Choices name="label" toName="premise_text" choice="single" showInline="true" required="true">
{choices}
  </Choices>
</View>
"""


def export_label_studio(records: Sequence[Record], path: str | os.PathLike) -> Path:
    """Label Studio tasks: `[{"id": n, "data": {"uid", "premise", "hypothesis"}}]`, written atomically."""
    _index(records)
    tasks = [{"id": n, "data": {"uid": r.uid, "premise": r.premise, "hypothesis": r.hypothesis}}
             for n, r in enumerate(records, 1)]
    return atomic_write_text(path, [json.dumps(tasks, ensure_ascii=False, indent=1) + "\n"])


def _ls_annotator(value, where: str) -> str:
    """`completed_by` is a user id, or a user object in some exports (email, else id)."""
    if isinstance(value, Mapping):
        value = value.get("email") or value.get("id")
    if value is None or str(value).strip() == "":
        raise NLIDataError(f"{where}: field completed_by is empty; expected the annotator's user id")
    return str(value)


def _ls_results(results, where: str) -> tuple[str, str, str]:
    """(label, premise, hypothesis) from one annotation's `result` list (texts blank when absent)."""
    found = {"label": "", "premise": "", "hypothesis": ""}
    for k, item in enumerate(results if isinstance(results, list) else []):
        name, value = item.get("from_name"), item.get("value") or {}
        if name == "label" and item.get("type") == "choices":
            picked = value.get("choices") or []
            if len(picked) != 1:
                raise NLIDataError(f"{where} result[{k}]: {len(picked)} choices; expected exactly one")
            found["label"] = str(picked[0])
        elif name in ("premise", "hypothesis") and item.get("type") == "textarea":
            texts = [t for t in value.get("text") or [] if str(t).strip()]
            found[name] = str(texts[-1]) if texts else ""
    if not found["label"]:
        raise NLIDataError(f"{where}: no result from 'label' (choices); expected one of {', '.join(REVIEW_LABELS)}")
    return found["label"], found["premise"], found["hypothesis"]


def _ls_time(value, where: str) -> float:
    if not value:
        return 0.0
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise NLIDataError(f"{where}: created_at {value!r} is not an ISO 8601 time") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()


def _ls_task(task, n: int, index: Mapping[str, Record], path: Path, counts: dict) -> list[Judgement]:
    where = f"{path}: task[{n}]"
    uid = (task.get("data") or {}).get("uid") if isinstance(task, Mapping) else None
    if uid not in index:
        raise NLIDataError(f"{where}: data.uid {uid!r} is not among the review items")
    out = []
    for k, ann in enumerate(task.get("annotations") or []):
        at = f"{where} (uid {uid!r}) annotations[{k}]"
        if ann.get("was_cancelled"):
            counts["cancelled"] += 1
            continue
        label, premise, hypothesis = _ls_results(ann.get("result"), at)
        extra = {"task_id": task.get("id"), "annotation_id": ann.get("id")}
        out.append(review_judgement(index[uid], _ls_annotator(ann.get("completed_by"), at), label, premise,
                                    hypothesis, "label_studio", _ls_time(ann.get("created_at"), at), extra, at))
    return out


def import_label_studio(path: str | os.PathLike, records: Sequence[Record]) -> ImportedJudgements:
    """Judgements from a Label Studio JSON export (cancelled annotations skipped, counted)."""
    path, index = Path(path), _index(records)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NLIDataError(f"{path}: file not found; expected a Label Studio JSON export") from None
    except json.JSONDecodeError as err:
        raise NLIDataError(f"{path}:{err.lineno}: invalid JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(tasks, list):
        raise NLIDataError(f"{path}: expected a JSON list of tasks (Label Studio's JSON export)")
    out = ImportedJudgements(counts={"tasks": len(tasks), "cancelled": 0})
    for n, task in enumerate(tasks):
        out.extend(_ls_task(task, n, index, path, out.counts))
    out.counts["judgements"] = len(out)
    return out
