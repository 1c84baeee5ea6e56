"""WANLI's released annotation records (WorkerId, the generation's intended `label`, the worker's `gold`,
`revised_premise`/`revised_hypothesis`) import as the pipeline's own judgements and aggregate by the
WANLI rules; a file of another format is refused naming the format it should be imported as."""

from __future__ import annotations

import csv
import json

import pytest

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.records import Record
from nliforge.review import crowd
from nliforge.review.aggregate import aggregate
from nliforge.review.cli import review
from nliforge.review.wanli_annotations import import_wanli

ITEMS = [Record("101", "The river floods every spring.", "The river never floods.", None, "wanli"),
         Record("102", "She sold the car last week.", "She owns the car.", None, "wanli"),
         Record("103", "The museum opens at nine.", "The museum is open at ten.", None, "wanli")]


def annotation(worker, item, gold, premise=None, hypothesis=None, intended="contradiction"):
    """One record as the release writes it (field names and order of data/wanli/README.md)."""
    return {"WorkerId": worker, "id": int(item.uid), "nearest_neighbors": [7, 8, 9, 10, 11],
            "premise": item.premise, "hypothesis": item.hypothesis, "label": intended,
            "revised_premise": premise or item.premise, "revised_hypothesis": hypothesis or item.hypothesis,
            "gold": gold, "revised": premise is not None or hypothesis is not None}


ROWS = [annotation("EUJ", ITEMS[0], "contradiction"), annotation("BHP", ITEMS[0], "contradiction"),
        annotation("EUJ", ITEMS[1], "neutral", hypothesis="She owned the car until last week."),
        annotation("DLA", ITEMS[1], "contradiction", hypothesis="She still owns the car."),
        annotation("BHP", ITEMS[2], "discard"), annotation("DLA", ITEMS[2], "entailment")]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_records_become_judgements_with_the_worker_s_gold_label_and_revision(tmp_path):
    got = import_wanli(write(tmp_path / "a.jsonl", ROWS), ITEMS)
    assert [(j.uid, j.annotator, j.label, j.revised, j.source) for j in got] == [
        ("101", "EUJ", "contradiction", False, "amt"), ("101", "BHP", "contradiction", False, "amt"),
        ("102", "EUJ", "neutral", True, "amt"), ("102", "DLA", "contradiction", True, "amt"),
        ("103", "BHP", "discard", False, "amt"), ("103", "DLA", "entailment", False, "amt")]
    assert got[2].hypothesis == "She owned the car until last week." and got[2].premise == ITEMS[1].premise
    assert got[0].extra == {"format": "wanli", "wanli_id": 101, "intended_label": "contradiction",
                            "revised_flag": False, "line": "1"}
    assert got.counts == {"annotations": 6, "judgements": 6}
    res = aggregate(ITEMS, got, seed=0)
    assert res.counts["agreed"] == 1 and res.counts["both_revised"] == 1 and res.counts["discarded"] == 1
    assert [r.uid for r in res.records] == ["101", "102"]


def test_items_with_other_uids_are_matched_by_their_texts(tmp_path):
    renamed = [Record(f"gen-{r.uid}", f"  {r.premise}", r.hypothesis, None, "wanli") for r in ITEMS]
    got = import_wanli(write(tmp_path / "a.jsonl", ROWS[:2]), renamed)
    assert {j.uid for j in got} == {"gen-101"}


@pytest.mark.parametrize("rows,message", [
    ([{k: v for k, v in ROWS[0].items() if k != "gold"}], r"a.jsonl:1: missing field\(s\) \['gold'\]"),
    ([ROWS[0], {**ROWS[1], "gold": "maybe"}], r"a.jsonl:2: field gold: label 'maybe'; expected one of"),
    ([{**ROWS[0], "id": 999, "premise": "Other."}], r"a.jsonl:1: example id 999 is not among the review items"),
    ([[ROWS[0]]], r"a.jsonl:1: a JSON list \(a Label Studio export is import.format=label_studio\)"),
    ([], r"a.jsonl: no annotation records"),
])
def test_bad_records_name_the_line_and_the_field(tmp_path, rows, message):
    with pytest.raises(NLIDataError, match=message):
        import_wanli(write(tmp_path / "a.jsonl", rows), ITEMS)


def test_the_wrong_format_either_way_is_named(tmp_path):
    jsonl = write(tmp_path / "a.jsonl", ROWS)
    with pytest.raises(NLIDataError, match=r"a.jsonl:1: JSON, not an AMT results CSV; WANLI's released annotations "
                                           r".* are import.format=wanli"):
        crowd.import_amt(jsonl, ITEMS)
    with open(tmp_path / "r.csv", "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([["HITId", "AssignmentId", "WorkerId", "AssignmentStatus"], ["H", "A", "W", "x"]])
    with pytest.raises(NLIDataError, match=r"r.csv:1: not a JSON object .*AMT results file is import.format=amt"):
        import_wanli(tmp_path / "r.csv", ITEMS)


def test_nliforge_review_import_wanli_then_aggregate(tmp_path):
    run = tmp_path / "gen"
    write_jsonl(ITEMS, run / "dataset.jsonl")
    args = [f"run={run}"]
    cfg = compose_config("review", ["action=import", *args, "import.format=wanli",
                                    f"import.file={write(tmp_path / 'a.jsonl', ROWS)}"], tmp_path / "o", tmp_path / "c")
    assert review(cfg) == {"judgements": 6}
    cfg = compose_config("review", ["action=aggregate", *args, f"aggregate.register_dir={tmp_path / 'conf'}"],
                         tmp_path / "o", tmp_path / "c")
    assert review(cfg)["kept"] == 2
    kept = read_jsonl(run / "review" / "reviewed.jsonl")
    assert [r.meta["review"]["annotators"] for r in kept] == [["EUJ", "BHP"], ["EUJ", "DLA"]]
