"""JSONL reading validates every line and names file:line; writing is atomic."""

import json

import pytest

from nliforge.data import NLIDataError, Record, read_jsonl, records_digest, write_jsonl


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = json.dumps({"uid": "a", "premise": "A man sleeps.", "hypothesis": "A man rests.", "label": "entailment"})


def test_roundtrip_is_byte_identical(tmp_path):
    recs = [Record("u1", "P é", "H", "neutral", "src", {"k": [1, 2]}), Record("u2", "P2", "H2", None)]
    a = write_jsonl(recs, tmp_path / "a.jsonl")
    assert read_jsonl(a) == recs
    b = write_jsonl(read_jsonl(a), tmp_path / "b.jsonl")
    assert a.read_bytes() == b.read_bytes()
    assert records_digest(recs) != records_digest(recs[:1])


@pytest.mark.parametrize("bad_line,message", [
    ('{"uid": "b", "premise": "x"', r"bad.jsonl:2: invalid JSON"),
    ('{"uid": "b", "premise": "x", "label": "neutral"}', r"bad.jsonl:2: missing field\(s\) \['hypothesis'\]"),
    ('{"uid": "b", "premise": "  ", "hypothesis": "y", "label": "neutral"}', r"bad.jsonl:2: field 'premise' is empty"),
    ('{"uid": "b", "premise": "x", "hypothesis": "", "label": "neutral"}', r"bad.jsonl:2: field 'hypothesis' is empty"),
    ('{"uid": "b", "premise": "x", "hypothesis": "y", "label": "maybe"}',
     r"bad.jsonl:2: unknown label 'maybe'; valid labels: entailment, neutral, contradiction"),
    ('{"uid": "b", "premise": "x", "hypothesis": "y", "label": 1}', r"bad.jsonl:2: unknown label 1"),
    ('[1, 2]', r"bad.jsonl:2: expected a JSON object"),
    ('{"uid": "a", "premise": "x", "hypothesis": "y", "label": "neutral"}', r"bad.jsonl:2: duplicate uid 'a' \(first at line 1\)"),
    ('{"uid": "b", "premise": "x", "hypothesis": "y", "label": "neutral", "extra": 1}', r"unknown field\(s\) \['extra'\]"),
])
def test_bad_lines_name_file_and_line(tmp_path, bad_line, message):
    path = _write(tmp_path / "bad.jsonl", [GOOD, bad_line])
    with pytest.raises(NLIDataError, match=message):
        read_jsonl(path, allowed_labels=("entailment", "neutral", "contradiction"))


def test_missing_file(tmp_path):
    with pytest.raises(NLIDataError, match="nope.jsonl: file not found"):
        read_jsonl(tmp_path / "nope.jsonl")


def test_failed_write_leaves_nothing(tmp_path):
    class Boom(Exception):
        pass

    def records():
        yield Record("u1", "p", "h", "neutral")
        raise Boom

    with pytest.raises(Boom):
        write_jsonl(records(), tmp_path / "out.jsonl")
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_previous_file(tmp_path):
    target = write_jsonl([Record("u1", "p", "h", "neutral")], tmp_path / "out.jsonl")
    before = target.read_bytes()

    def records():
        yield Record("u2", "p", "h", "neutral")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_jsonl(records(), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]
