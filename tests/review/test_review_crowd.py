"""Crowd formats: AMT batch CSV and Label Studio tasks out, worker answers back in as Judgements."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET

import pytest

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.review import crowd
from nliforge.review.aggregate import aggregate

RECORDS = [Record(f"g{i}", f"Premise number {i} is about a dog, in the park.", f"Hypothesis {i} is short.", None,
                  "wanli") for i in range(7)]
BY_UID = {r.uid: r for r in RECORDS}
# Fixed worker answers per uid: (label, premise answer, hypothesis answer); None = the pre-filled original.
ANSWERS = {
    "W1": {"g0": ("entailment", None, None), "g1": ("discard", None, None), "g2": ("neutral", None, "A new hyp."),
           "g3": ("contradiction", "  Premise number 3 is about a dog,   in the park. ", None),   # whitespace only
           "g4": ("neutral", "", ""), "g5": ("entailment", None, None), "g6": ("neutral", None, None)},
    "W2": {"g0": ("entailment", None, None), "g1": ("neutral", None, None), "g2": ("neutral", None, "Other hyp."),
           "g3": ("neutral", None, None), "g4": ("neutral", None, None), "g5": ("contradiction", None, None),
           "g6": ("neutral", "A revised premise.", None)},
}


def expected(worker):
    out = set()
    for uid, (label, p, h) in ANSWERS[worker].items():
        rec = BY_UID[uid]
        premise = p.strip() if p and p.split() != rec.premise.split() else rec.premise
        hypothesis = h if h else rec.hypothesis
        revised = (premise, hypothesis) != (rec.premise, rec.hypothesis)
        out.add((uid, worker, label, premise, hypothesis, revised))
    return out


def as_tuples(judgements):
    return {(j.uid, j.annotator, j.label, j.premise, j.hypothesis, j.revised) for j in judgements}


# ---------------------------------------------------------------------------------------- AMT
def fabricate_amt_results(batch_csv, out_csv, rejected_worker="W3", mutate=None):
    """What AMT returns for a batch: one row per assignment, inputs as Input.*, answers as Answer.*."""
    with open(batch_csv, newline="", encoding="utf-8") as fh:
        hits = list(csv.DictReader(fh))
    rows = []
    for h, hit in enumerate(hits):
        for worker in ("W1", "W2", rejected_worker):
            row = {"HITId": f"HIT{h}", "AssignmentId": f"A{h}{worker}", "WorkerId": worker,
                   "AssignmentStatus": "Rejected" if worker == rejected_worker else "Approved",
                   "SubmitTime": f"Wed Nov 20 10:1{h}:0{len(rows) % 10} PST 2024"}
            row.update({f"Input.{k}": v for k, v in hit.items()})
            for i in range(1, 6):
                uid = hit[f"uid_{i}"]
                label, p, h_ = ANSWERS.get(worker, {}).get(uid, ("neutral", None, None)) if uid else ("", "", "")
                row[f"Answer.label_{i}"] = label
                row[f"Answer.premise_{i}"] = hit[f"premise_{i}"] if p is None else p
                row[f"Answer.hypothesis_{i}"] = hit[f"hypothesis_{i}"] if h_ is None else h_
            rows.append(mutate(row) if mutate else row)
    with open(out_csv, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_export_amt_layout(tmp_path):
    path = crowd.export_amt(RECORDS, tmp_path / "batch.csv", per_hit=5)
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and list(rows[0])[:4] == ["uid_1", "premise_1", "hypothesis_1", "uid_2"]
    assert len(rows[0]) == 15
    assert [rows[1][f"uid_{i}"] for i in range(1, 6)] == ["g5", "g6", "", "", ""]
    assert rows[0]["premise_2"] == RECORDS[1].premise
    assert [p.name for p in tmp_path.iterdir()] == ["batch.csv"]   # no temp file left behind
    layout = crowd.amt_layout(5)
    assert "${premise_5}" in layout and 'name="label_5"' in layout and 'value="discard"' in layout
    with pytest.raises(NLIDataError, match="per_hit"):
        crowd.export_amt(RECORDS, tmp_path / "x.csv", per_hit=0)


def test_amt_round_trip(tmp_path):
    crowd.export_amt(RECORDS, tmp_path / "batch.csv")
    fabricate_amt_results(tmp_path / "batch.csv", tmp_path / "results.csv")
    got = crowd.import_amt(tmp_path / "results.csv", RECORDS)
    assert as_tuples(got) == expected("W1") | expected("W2")
    assert got.counts == {"assignments": 6, "rejected": 2, "judgements": 14}
    assert all(j.source == "amt" and j.created_at > 0 for j in got)
    g6 = next(j for j in got if j.uid == "g6" and j.annotator == "W2")
    assert g6.revised and g6.premise == "A revised premise." and g6.extra["hit_id"] == "HIT1"
    res = aggregate(RECORDS, got, seed=0)
    assert res.counts["complete"] == 7 and res.counts["discarded"] == 1 and res.counts["both_revised"] == 1


def test_amt_radio_group_columns(tmp_path):
    def to_radio(row):
        for i in range(1, 6):
            label = row.pop(f"Answer.label_{i}")
            for choice in ("entailment", "neutral", "contradiction", "discard"):
                row[f"Answer.label_{i}.{choice}"] = "true" if choice == label else "false"
        return row

    crowd.export_amt(RECORDS, tmp_path / "batch.csv")
    fabricate_amt_results(tmp_path / "batch.csv", tmp_path / "results.csv", mutate=to_radio)
    assert as_tuples(crowd.import_amt(tmp_path / "results.csv", RECORDS)) == expected("W1") | expected("W2")


def test_amt_errors_name_file_line_and_column(tmp_path):
    records = [Record("m0", "A premise\nwith two lines.", "A hypothesis.", None), *RECORDS[:4]]
    crowd.export_amt(records, tmp_path / "batch.csv", per_hit=5)
    bad = tmp_path / "results.csv"

    def bad_label(row):
        if row["WorkerId"] == "W2":
            row["Answer.label_2"] = "maybe"
        return row

    # Row 1 (W1) spans lines 2-4 (two quoted newlines: Input.premise_1 and Answer.premise_1), so W2 starts at 5.
    fabricate_amt_results(tmp_path / "batch.csv", bad, mutate=bad_label)
    with pytest.raises(NLIDataError, match=rf"{bad}:5: column Answer.label_2: label 'maybe'"):
        crowd.import_amt(bad, records)
    fabricate_amt_results(tmp_path / "batch.csv", bad, mutate=lambda r: {**r, "Input.uid_3": "nope"})
    with pytest.raises(NLIDataError, match=rf"{bad}:2: column Input.uid_3: uid 'nope'"):
        crowd.import_amt(bad, records)
    fabricate_amt_results(tmp_path / "batch.csv", bad, mutate=lambda r: {**r, "SubmitTime": "yesterday"})
    with pytest.raises(NLIDataError, match=rf"{bad}:2: column SubmitTime"):
        crowd.import_amt(bad, records)
    bad.write_text("HITId,WorkerId\nH1,W1\n", encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"{bad}:1: missing column\(s\) \['AssignmentId', 'AssignmentStatus'\]"):
        crowd.import_amt(bad, records)
    with pytest.raises(NLIDataError, match="file not found"):
        crowd.import_amt(tmp_path / "absent.csv", records)


# ------------------------------------------------------------------------------- Label Studio
def fabricate_label_studio_export(tasks_json, out_json):
    """Label Studio's JSON export: each task with its annotations (one cancelled by user 3)."""
    tasks = json.loads(tasks_json.read_text(encoding="utf-8"))
    users = {"W1": 1, "W2": {"id": 2, "email": "w2@example.org"}}
    for task in tasks:
        uid, anns = task["data"]["uid"], []
        for n, (worker, user) in enumerate(users.items()):
            label, p, h = ANSWERS[worker][uid]
            result = [{"from_name": "label", "to_name": "premise_text", "type": "choices",
                       "value": {"choices": [label.capitalize()]}}]
            for name, text in (("premise", p), ("hypothesis", h)):
                if text is not None:   # an untouched text area sends no result
                    result.append({"from_name": name, "to_name": f"{name}_text", "type": "textarea",
                                   "value": {"text": [text]}})
            anns.append({"id": 10 * task["id"] + n, "completed_by": user, "result": result,
                         "was_cancelled": False, "created_at": f"2024-11-20T10:0{n}:00.000000Z"})
        anns.append({"id": 0, "completed_by": 3, "result": [], "was_cancelled": True})
        task["annotations"] = anns
    out_json.write_text(json.dumps(tasks), encoding="utf-8")
    return tasks


def test_label_studio_config_matches_the_importer():
    root = ET.fromstring(crowd.label_studio_config())
    choices = root.find("Choices")
    assert choices.get("name") == "label"
    assert [c.get("value") for c in choices] == ["Entailment", "Neutral", "Contradiction", "Discard"]
    assert sorted(t.get("name") for t in root.iter("TextArea")) == ["hypothesis", "premise"]
    assert {t.get("value") for t in root.iter("Text")} == {"$premise", "$hypothesis"}


def test_label_studio_round_trip(tmp_path):
    path = crowd.export_label_studio(RECORDS, tmp_path / "tasks.json")
    tasks = json.loads(path.read_text(encoding="utf-8"))
    assert tasks[0] == {"id": 1, "data": {"uid": "g0", "premise": RECORDS[0].premise,
                                          "hypothesis": RECORDS[0].hypothesis}}
    fabricate_label_studio_export(path, tmp_path / "export.json")
    got = crowd.import_label_studio(tmp_path / "export.json", RECORDS)
    want = {(u, {"W1": "1", "W2": "w2@example.org"}[w], *rest) for (u, w, *rest) in expected("W1") | expected("W2")}
    assert as_tuples(got) == want
    assert got.counts == {"tasks": 7, "cancelled": 7, "judgements": 14}
    assert all(j.source == "label_studio" for j in got)
    assert min(j.created_at for j in got if j.annotator != "1") > max(j.created_at for j in got if j.annotator == "1")


def test_label_studio_errors(tmp_path):
    path = crowd.export_label_studio(RECORDS, tmp_path / "tasks.json")
    tasks = fabricate_label_studio_export(path, tmp_path / "export.json")
    tasks[2]["annotations"][1]["result"][0]["value"]["choices"] = ["Unsure"]
    (tmp_path / "bad.json").write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(NLIDataError, match=r"task\[2\] \(uid 'g2'\) annotations\[1\].*label 'Unsure'"):
        crowd.import_label_studio(tmp_path / "bad.json", RECORDS)
    tasks[2]["data"]["uid"] = "ghost"
    (tmp_path / "bad.json").write_text(json.dumps(tasks), encoding="utf-8")
    with pytest.raises(NLIDataError, match=r"task\[2\]: data.uid 'ghost'"):
        crowd.import_label_studio(tmp_path / "bad.json", RECORDS)
    (tmp_path / "bad.json").write_text("[{\n  oops", encoding="utf-8")
    with pytest.raises(NLIDataError, match=r"bad.json:2: invalid JSON"):
        crowd.import_label_studio(tmp_path / "bad.json", RECORDS)
