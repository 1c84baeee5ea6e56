"""What reading says: a large training JSONL prints progress while it is read (a 1,000,000-row file took
98 s with nothing on the console), and an eval file's rows labelled `-` (no gold label) are dropped with
a count (before: silently)."""

from __future__ import annotations

import json
import logging

from nliforge.data import jsonl
from nliforge.data.files import load_file_records


def test_a_large_jsonl_says_how_its_reading_goes(tmp_path, caplog, monkeypatch):
    path = tmp_path / "train.jsonl"
    rows = [{"uid": f"u{i}", "premise": f"A premise {i}.", "hypothesis": "A hypothesis.", "label": "neutral"}
            for i in range(2000)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(jsonl, "LARGE_FILE", 10_000)   # this file counts as large
    with caplog.at_level(logging.INFO, logger="nliforge.progress"):
        assert len(jsonl.read_jsonl(path)) == 2000
    lines = [r.getMessage() for r in caplog.records if r.name == "nliforge.progress"]
    assert lines and lines[-1].startswith("read train.jsonl: ") and "(100%)" in lines[-1], lines
    caplog.clear()
    monkeypatch.setattr(jsonl, "LARGE_FILE", 10**9)     # a small file reads quietly
    with caplog.at_level(logging.INFO, logger="nliforge.progress"):
        jsonl.read_jsonl(path)
    assert not [r for r in caplog.records if r.name == "nliforge.progress"]


def test_rows_without_a_gold_label_are_dropped_with_a_count(tmp_path, caplog):
    path = tmp_path / "dev.tsv"
    lines = ["index\tpremise\thypothesis\tgold_label"]
    lines += [f"{i}\tPremise {i}.\tHypothesis {i}.\t{'-' if i % 4 == 0 else 'neutral'}" for i in range(12)]
    path.write_text("\n".join(lines) + "\n")
    spec = {"name": "probe_dev", "loader": "file", "format": "tsv", "path": str(path), "label_map": "nli_names",
            "fields": {"uid": "index", "premise": "premise", "hypothesis": "hypothesis", "label": "gold_label"}}
    with caplog.at_level(logging.INFO):
        records = load_file_records(spec, "data.eval_sets.probe_dev")
    assert len(records) == 9
    assert (f"data.eval_sets.probe_dev: dropped 3 row(s) without a gold label (label '-', first at {path}:2), "
            "as the papers do") in caplog.text
