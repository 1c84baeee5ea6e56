"""WANLI's released crowd annotations (Liu et al., 2022, dataset card "Data Instances":
`data/wanli/anonymized_annotations.jsonl`) as review judgements.

One JSON object per line, one per (worker, example): `WorkerId` (an anonymised worker id), `id` (the
generated example), `premise`/`hypothesis` (GPT-3's texts), `label` (the label the in-context examples
shared: what the generation *intended*, not the worker's answer), `revised_premise`/`revised_hypothesis`
(the texts after the worker's review), `gold` (the worker's label for the possibly revised example;
`discard` when they discarded it), `revised` and `nearest_neighbors`. Two distinct workers reviewed each
example (§2.4), so the judgements aggregate by the same rules as the review page's and AMT's.

Each record becomes a Judgement of source `amt` (the annotations were collected on Amazon Mechanical
Turk): annotator `WorkerId`, label `gold`, the revised texts (a revision when they differ from the
originals, as for every crowd import); `id`, the intended `label`, `revised` and the line go into
`extra`. The review item is the one whose uid is the `id`, else the one with the same original texts.
A file in another format (an AMT results CSV, a Label Studio export) is refused naming its first line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import jsonl_lines
from nliforge.data.records import Record, check_unique_uids
from nliforge.review.crowd import ImportedJudgements, review_judgement
from nliforge.review.text import normalize_whitespace
from nliforge.data.judgements import Judgement

WANLI_REQUIRED = ("WorkerId", "id", "premise", "hypothesis", "revised_premise", "revised_hypothesis", "gold")
EXPECTED = ("WANLI's anonymized_annotations.jsonl: one JSON object per line with "
            + ", ".join(WANLI_REQUIRED))


def _texts(premise: str, hypothesis: str) -> tuple[str, str]:
    return normalize_whitespace(premise), normalize_whitespace(hypothesis)


def _object(line: str, where: str) -> dict:
    """One line's JSON object; anything else names what the file looks like instead."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as err:
        looks = (" (it looks like a CSV file: an AMT results file is import.format=amt)"
                 if "," in line and not line.lstrip().startswith(("{", "[")) else "")
        raise NLIDataError(f"{where}: not a JSON object ({err}){looks}; expected {EXPECTED}") from None
    if not isinstance(obj, dict):
        hint = " (a Label Studio export is import.format=label_studio)" if isinstance(obj, list) else ""
        raise NLIDataError(f"{where}: a JSON {type(obj).__name__}{hint}; expected {EXPECTED}")
    missing = [k for k in WANLI_REQUIRED if k not in obj]
    if missing:
        raise NLIDataError(f"{where}: missing field(s) {missing}; expected {EXPECTED}")
    for key in ("WorkerId", "premise", "hypothesis", "revised_premise", "revised_hypothesis", "gold"):
        if not isinstance(obj[key], str):
            raise NLIDataError(f"{where}: field {key} is {obj[key]!r}; expected a string")
    if not obj["WorkerId"].strip():
        raise NLIDataError(f"{where}: field WorkerId is empty; expected the (anonymised) worker id")
    return obj


def _item(obj: Mapping, by_uid: Mapping[str, Record], by_text: Mapping[tuple[str, str], Record],
          where: str) -> Record:
    rec = by_uid.get(str(obj["id"])) or by_text.get(_texts(obj["premise"], obj["hypothesis"]))
    if rec is None:
        raise NLIDataError(f"{where}: example id {obj['id']!r} is not among the review items (no item with uid "
                           f"{str(obj['id'])!r} or with the same premise and hypothesis)")
    return rec


def wanli_judgement(obj: Mapping, rec: Record, where: str) -> Judgement:
    """The judgement one annotation record gives `rec` (see the module docstring)."""
    extra = {"format": "wanli", "wanli_id": obj["id"], "intended_label": obj.get("label"),
             "revised_flag": obj.get("revised"), "line": where.rsplit(":", 1)[-1]}
    return review_judgement(rec, obj["WorkerId"].strip(), obj["gold"], obj["revised_premise"],
                            obj["revised_hypothesis"], "amt", 0.0, extra, f"{where}: field gold")


def import_wanli(path: str | os.PathLike, records: Sequence[Record]) -> ImportedJudgements:
    """Judgements from WANLI's released annotation file (blank lines skipped)."""
    path = Path(path)
    check_unique_uids(records, "review items")
    by_uid = {r.uid: r for r in records}
    by_text = {_texts(r.premise, r.hypothesis): r for r in records}
    if not path.is_file():
        raise NLIDataError(f"{path}: file not found; expected {EXPECTED}")
    out = ImportedJudgements(counts={"annotations": 0})
    for n, line in jsonl_lines(path):   # split on "\n" only: a U+2028 inside a text is no line break
        where = f"{path}:{n}"
        obj = _object(line, where)
        out.append(wanli_judgement(obj, _item(obj, by_uid, by_text, where), where))
        out.counts["annotations"] += 1
    if not out:
        raise NLIDataError(f"{path}: no annotation records; expected {EXPECTED}")
    out.counts["judgements"] = len(out)
    return out
