"""Fuzzing: the JSONL reader and the review API, fed mutations of valid inputs.

Contract: every file gives records or an NLIDataError that starts with `path:line:` (a line of the file);
every API request gives a 200 or a 4xx whose body is JSON `{"error": ...}`. Nothing else may escape: no
other exception type from the reader, no 5xx or non-JSON answer from the server. Hypothesis runs
derandomized (the same examples on every run) and keeps no example database in the repository.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from nliforge.data import NLIDataError, Record, read_jsonl
from nliforge.review.server import ReviewServer

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ROWS = [Record(f"u{i}", f"A dog runs {i}.", f"An animal moves {i}.", "entailment", "src", {"k": [i]})
        for i in range(3)]
VALID_FILE = ("\n".join(r.to_json() for r in ROWS) + "\n\n").encode("utf-8")
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                           max_leaves=8)


@st.composite
def mutated_bytes(draw, valid: bytes) -> bytes:
    """`valid` after 1-6 random edits: delete, insert or replace a span of bytes, or duplicate a line."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "duplicate_line"]))
        at = draw(st.integers(0, len(data)))
        if op == "delete":
            del data[at: at + draw(st.integers(1, 8))]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from(
                [b"\n", b"\r", b"\xef\xbb\xbf", b"\\ud800", b'"', b"{", b"]", b"\x00", b"\xff", b"[" * 2000]))
        elif op == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "duplicate_line":
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            data = bytearray(b"\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1:]))
    return bytes(data)


@st.composite
def mutated_records(draw) -> bytes:
    """Valid records with fields replaced by arbitrary JSON values, dropped or added."""
    lines = []
    for rec in ROWS:
        obj = rec.to_dict()
        for key in draw(st.lists(st.sampled_from([*obj, "extra"]), max_size=3)):
            if draw(st.booleans()):
                obj[key] = draw(JSON_VALUES)
            else:
                obj.pop(key, None)
        lines.append(json.dumps(obj, ensure_ascii=draw(st.booleans())))
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@FUZZ
@given(content=mutated_bytes(VALID_FILE) | mutated_records() | st.binary(max_size=200))
@example(content=b"\xef\xbb\xbf" + VALID_FILE)
@example(content=VALID_FILE.replace(b"A dog", b"\\ud800 dog", 1))
@example(content=b"[" * 100_000)
@example(content=b'{"uid": 1' + b"1" * 5000 + b"}")
def test_the_jsonl_reader_gives_records_or_a_file_line_error(fuzz_dir, content):
    path = fuzz_dir / "fuzzed.jsonl"
    path.write_bytes(content)
    n_lines = content.count(b"\n") + 1
    try:
        records = read_jsonl(path)
    except NLIDataError as err:
        match = re.match(rf"{re.escape(str(path))}:(\d+): \S", str(err))
        assert match, f"error without file:line: {err}"
        assert 1 <= int(match.group(1)) <= n_lines, str(err)
        event(f"error: {str(err)[len(match.group(0)) - 1:][:24]}")
        return
    event(f"{len(records)} records")
    assert all(isinstance(r, Record) and r.premise.strip() and r.hypothesis.strip() for r in records)
    assert len({r.uid for r in records}) == len(records)


# ----- the review API -----

ITEMS = [Record(f"u{i}", f"Premise {i} is here.", f"Hypothesis {i}.", None) for i in range(40)]
PAGE_TOKEN = re.compile(rb'<meta name="nliforge-page-token" content="([^"]+)">')
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=40)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """A real review server and the headers its own page would send."""
    with ReviewServer(tmp_path_factory.mktemp("api") / "review.sqlite", items=ITEMS) as srv:
        status, _, page = _send(srv.port, "GET", "/", None, {})
        assert status == 200
        yield srv, {"X-Review-Page-Token": PAGE_TOKEN.search(page).group(1).decode(),
                    "Origin": f"http://127.0.0.1:{srv.port}", "Content-Type": "application/json"}


def _send(port: int, method: str, path: str, body: bytes | None, headers: dict) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type", ""), resp.read()
    finally:
        conn.close()


def _assert_answer(status: int, ctype: str, body: bytes, what) -> None:
    """200 with JSON, or a 4xx with `{"error": "..."}`; anything else (5xx, HTML, text) fails."""
    event(f"status {status}")
    assert status == 200 or 400 <= status < 500, (status, body[:300], what)
    assert ctype.startswith("application/json"), (status, ctype, body[:300], what)
    if status != 200:
        error = json.loads(body)["error"]
        assert isinstance(error, str) and error, (body[:300], what)


@st.composite
def judgement_bodies(draw) -> bytes:
    """Valid judgements with fields replaced, dropped or added, then maybe mangled as bytes."""
    obj = {"uid": draw(st.sampled_from([i.uid for i in ITEMS])), "annotator": draw(st.sampled_from(["a", "b", "c"])),
           "label": draw(st.sampled_from(["entailment", "neutral", "contradiction", "discard"])),
           "premise": "Premise 0 is here.", "hypothesis": "A revised hypothesis."}
    for key in draw(st.lists(st.sampled_from([*obj, "rubric", "path", "extra"]), max_size=3)):
        if draw(st.booleans()):
            obj[key] = draw(JSON_VALUES)
        else:
            obj.pop(key, None)
    raw = json.dumps(obj, ensure_ascii=draw(st.booleans())).encode("utf-8")
    return draw(st.just(raw) | mutated_bytes(raw))


@FUZZ
@given(body=judgement_bodies())
@example(body=b"[" * 100_000)
@example(body=b'{"uid": "u1", "annotator": "a", "label": "neutral", "premise": "\\ud800"}')
@example(body=b'{"uid": "\\udfff", "annotator": "a", "label": "neutral"}')
@example(body=b'{"uid": "u1", "annotator": "a", "label": ["neutral"]}')
@example(body=b"\xff\xfe")
def test_the_judgement_endpoint_answers_every_body_with_200_or_a_json_4xx(api, body):
    srv, headers = api
    _assert_answer(*_send(srv.port, "POST", "/api/judgement", body, headers), body)


@FUZZ
@given(changes=st.dictionaries(st.sampled_from(["X-Review-Page-Token", "Origin", "Referer", "Content-Type",
                                                "X-Review-Token", "Host"]), HEADER_TEXT | st.none(), max_size=4))
def test_the_guard_answers_every_header_mix_with_200_or_a_json_4xx(api, changes):
    srv, headers = api
    sent = {k: v for k, v in {**headers, **changes}.items() if v is not None}
    body = json.dumps({"uid": "u39", "annotator": "z", "label": "neutral"}).encode()
    _assert_answer(*_send(srv.port, "POST", "/api/judgement", body, sent), changes)


@FUZZ
@given(path=st.sampled_from(["/api/next", "/api/progress", "/api/config", "/api/judgement", "/api/x", "/x"]),
       query=st.lists(st.tuples(st.text(max_size=12), st.text(max_size=24)), max_size=3),
       method=st.sampled_from(["GET", "GET", "POST", "PUT", "DELETE"]))
def test_every_route_and_query_answers_with_200_or_a_json_4xx(api, path, query, method):
    srv, headers = api
    target = path + ("?" + urllib.parse.urlencode(query) if query else "")
    body = b"{}" if method != "GET" else None
    _assert_answer(*_send(srv.port, method, target, body, headers), (method, target))
