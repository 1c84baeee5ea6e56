"""Empty and odd input files: an empty training set is an error naming its file before the
run folder exists (alone or inside a combination); a UTF-8 BOM is read; a JSON syntax error names the
line and the column where the parser stopped; bad bytes and duplicate uids name their line."""

from __future__ import annotations

import codecs
import json
import re

import pytest

from conftest import SMALL_WORLD, compose_config
from nliforge.data import NLIDataError, Record, read_jsonl, write_jsonl
from nliforge.data.combine import combine
from nliforge.data.files import load_file_records
from nliforge.train import train

ROWS = [Record(f"u{i}", f"A dog runs {i}.", f"An animal runs {i}.", "entailment") for i in range(3)]
GOOD = ROWS[0].to_json()


def _train_cfg(tmp_path, world_cache, sets: str, path, extra=()):
    return compose_config("train", [f"data/train_sets=[{sets}]", f"data.train_sets.jsonl.path={path}",
                                    *SMALL_WORLD, *extra], tmp_path / "run", world_cache)


@pytest.mark.parametrize("content, needle", [(b"", "is empty (0 bytes)"),
                                             (b"\n  \n\n", "holds no records (only blank lines)")])
@pytest.mark.parametrize("sets", ["jsonl", "synthetic,jsonl"])
def test_a_training_set_with_no_records_is_refused_naming_its_file_before_anything_is_written(
        tmp_path, world_cache, content, needle, sets):
    empty = tmp_path / "train.jsonl"
    empty.write_bytes(content)
    cfg = _train_cfg(tmp_path, world_cache, sets, empty)
    with pytest.raises(NLIDataError, match=re.escape(f"data.train_sets.jsonl: set 'jsonl' yields no records: "
                                                     f"{empty} {needle}")):
        train(cfg)
    assert not (tmp_path / "run").exists()


def test_limit_zero_is_named_as_the_reason(tmp_path, world_cache):
    path = write_jsonl(ROWS, tmp_path / "train.jsonl")
    cfg = _train_cfg(tmp_path, world_cache, "synthetic,jsonl", path, ["data.train_sets.jsonl.limit=0"])
    with pytest.raises(NLIDataError, match=r"yields no records: data\.train_sets\.jsonl\.limit=0"):
        train(cfg)
    assert not (tmp_path / "run").exists()


def test_combine_refuses_an_empty_part():
    with pytest.raises(NLIDataError, match=r"\['b'\] hold no records"):
        combine([("a", ROWS), ("b", [])], "augment", seed=0)


def test_a_utf8_bom_is_read_not_rejected(tmp_path):
    path = tmp_path / "excel.jsonl"
    path.write_bytes(codecs.BOM_UTF8 + "".join(r.to_json() + "\r\n" for r in ROWS).encode("utf-8"))
    assert read_jsonl(path) == ROWS
    tsv = tmp_path / "authors.tsv"
    tsv.write_bytes(codecs.BOM_UTF8 + b"sentence1\tsentence2\tgold_label\nA cat.\tAn animal.\tentailment\n")
    spec = {"name": "authors", "format": "tsv", "path": str(tsv), "label_map": {"entailment": "entailment"},
            "fields": {"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"}}
    [rec] = load_file_records(spec, "data.eval_sets.authors")
    assert (rec.premise, rec.label) == ("A cat.", "entailment")
    spec.update(format="jsonl", path=str(path), fields={})
    assert [r.premise for r in load_file_records(spec, "data.eval_sets.authors")] == [r.premise for r in ROWS]


@pytest.mark.parametrize("bad_line, column, found", [
    ('{"uid": "b", "premise": "x"', 28, "the end of the line"),           # the parser ran off the end
    ('{"uid": "b" "premise": "x"}', 13, "'\"premise\": \"x\"}'"),
    ('{"uid": "b", "premise": "x",}', 29, "'}'"),
    ('{"uid": "b", "premise": "café" ]', 32, "']'"),                      # columns count characters
    ('{"uid": "b"}  trailing', 15, "'trailing'"),
])
def test_a_json_syntax_error_names_the_column_where_the_parser_stopped(tmp_path, bad_line, column, found):
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{GOOD}\r\n{bad_line}\r\n{GOOD}\n", encoding="utf-8")
    with pytest.raises(NLIDataError) as err:
        read_jsonl(path)
    assert str(err.value).startswith(f"{path}:2: invalid JSON at column {column}: ")
    assert str(err.value).endswith(f"found {found}")


def test_the_authors_file_loader_names_line_and_column_too(tmp_path):
    path = tmp_path / "authors.jsonl"
    path.write_text('{"sentence1": "a"}\n{"sentence1": "b",\n', encoding="utf-8")
    spec = {"name": "authors", "format": "jsonl", "path": str(path), "label_map": "mnli"}
    with pytest.raises(NLIDataError, match=rf"{path}:2: invalid JSON at column 19"):
        load_file_records(spec, "data.eval_sets.authors")
    path.write_text('{"sentence1": "a"}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"{path}:2: expected a JSON object"):
        load_file_records(spec, "data.eval_sets.authors")
    path.write_text("", encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"data\.eval_sets\.authors\.path: {path} holds no rows"):
        load_file_records(spec, "data.eval_sets.authors")


def test_bad_bytes_deep_nesting_and_duplicates_name_their_line(tmp_path):
    path = tmp_path / "odd.jsonl"
    path.write_bytes(GOOD.encode() + b'\n{"uid": "caf\xe9"}\n')
    with pytest.raises(NLIDataError, match=rf"{path}:2: not UTF-8 text: byte 0xe9 at column 13"):
        read_jsonl(path)
    path.write_text(GOOD + "\n" + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"{path}:2: invalid JSON: nested too deeply"):
        read_jsonl(path)
    path.write_text(GOOD + "\n" + json.dumps({**ROWS[1].to_dict(), "premise": "\ud800"}) + "\n", encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"{path}:2: text holds an unpaired surrogate"):
        read_jsonl(path)
    path.write_text("\n".join([GOOD, ROWS[1].to_json(), "", GOOD]) + "\n", encoding="utf-8")
    with pytest.raises(NLIDataError, match=rf"{path}:4: duplicate uid 'u0' \(first at line 1\)"):
        read_jsonl(path)


def test_limit_seed_takes_a_seeded_subset_in_order_and_refuses_more_than_there_is(tmp_path):
    """`limit` with `limit_seed` is a random same-size slice (in the file's order), not the head."""
    from nliforge.data.registry import load_set

    rows = [Record(f"u{i}", f"A dog runs {i}.", f"An animal runs {i}.", "entailment") for i in range(50)]
    path = tmp_path / "set.jsonl"
    write_jsonl(rows, path)
    spec = {"name": "s", "loader": "jsonl", "path": str(path), "limit": 10}
    head = load_set(spec, "data.train_sets.s")
    assert [r.uid for r in head] == [f"u{i}" for i in range(10)]
    one = load_set({**spec, "limit_seed": 0}, "data.train_sets.s")
    assert one == load_set({**spec, "limit_seed": 0}, "data.train_sets.s") != head
    assert len(one) == 10 and [r.uid for r in one] == sorted((r.uid for r in one), key=lambda u: int(u[1:]))
    assert load_set({**spec, "limit_seed": 1}, "data.train_sets.s") != one
    with pytest.raises(NLIDataError, match=r"data\.train_sets\.s\.limit=60 with limit_seed: .* only 50"):
        load_set({**spec, "limit": 60, "limit_seed": 0}, "data.train_sets.s")


def test_records_read_from_the_data_folder_are_the_same_bytes_wherever_the_folder_is(tmp_path, monkeypatch):
    """A record names its file relative to NLIFORGE_DATA_DIR: the same release read from two folders gives
    the same digest (pinned digests and classifier reuse hold on every machine); an error still names the
    full path and line."""
    from nliforge.data.jsonl import records_digest

    digests = []
    for place in ("a/real", "b/elsewhere/real"):
        root = tmp_path / place
        (root / "hans").mkdir(parents=True)
        tsv = root / "hans" / "rows.tsv"
        tsv.write_text("sentence1\tsentence2\tgold_label\nA cat.\tAn animal.\tentailment\nA dog.\t\tneutral\n")
        monkeypatch.setenv("NLIFORGE_DATA_DIR", str(root))
        spec = {"name": "authors", "format": "tsv", "path": str(tsv), "label_map": {"entailment": "entailment"},
                "fields": {"premise": "sentence1", "hypothesis": "sentence2", "label": "gold_label"}}
        with pytest.raises(NLIDataError, match=rf"{tsv}:3: label 'neutral'"):
            load_file_records(spec, "data.eval_sets.authors")
        spec["label_map"] = {"entailment": "entailment", "neutral": "neutral"}
        records = load_file_records(spec, "data.eval_sets.authors")
        assert records[0].meta["file"] == "hans/rows.tsv"
        digests.append(records_digest(records))
    assert digests[0] == digests[1]
    monkeypatch.setenv("NLIFORGE_DATA_DIR", str(tmp_path / "a"))   # a file outside the folder keeps its path
    assert load_file_records(spec, "data.eval_sets.authors")[0].meta["file"] == str(tsv)
