"""The review server over plain HTTP: binding and token rules, path refusal, JSON validation."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

from nliforge.data.records import Record
from nliforge.review.server import ReviewServer, check_bind, serve
from nliforge.data.judgements import RUBRIC_CRITERIA

ITEMS = [Record(f"u{i}", f"Premise {i} is here.", f"Hypothesis {i}.", None) for i in range(3)]


PAGE_TOKEN = re.compile(rb'<meta name="nliforge-page-token" content="([^"]+)">')


def _page_headers(url: str, headers: dict | None = None) -> dict[str, str]:
    """What the real page sends with its API calls: the page token it received on load, and (as a
    browser does) its own origin. Loads the page like a browser, with the access token if the URL
    or `headers` (X-Review-Token) has one."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    root = f"{parts.scheme}://{parts.netloc}/" + (f"?token={query['token'][0]}" if "token" in query else "")
    access = {k: v for k, v in (headers or {}).items() if k == "X-Review-Token"}
    with urllib.request.urlopen(urllib.request.Request(root, headers=access), timeout=10) as resp:
        token = PAGE_TOKEN.search(resp.read()).group(1).decode()
    return {"X-Review-Page-Token": token, "Origin": f"{parts.scheme}://{parts.netloc}"}


def _request(url: str, body: dict | bytes | None = None, headers: dict | None = None,
             as_page: bool = True) -> tuple[int, bytes]:
    """GET (no body) or POST JSON; `as_page`: API calls carry the page's token and origin like the real page."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"}
    if as_page and "/api/" in url:
        sent.update(_page_headers(url, headers))
    req = urllib.request.Request(url, data=data, headers={**sent, **(headers or {})},
                                 method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def _raw_get(port: int, path: str, host_header: str | None = None) -> tuple[int, bytes]:
    """GET a path exactly as written (no client-side normalisation of `..`)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("GET", path, skip_host=host_header is not None)
    if host_header is not None:
        conn.putheader("Host", host_header)
    conn.endheaders()
    resp = conn.getresponse()
    out = resp.status, resp.read()
    conn.close()
    return out


@pytest.fixture
def server(tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS) as srv:
        yield srv


def test_binding_beyond_localhost_needs_a_token(tmp_path):
    with pytest.raises(ValueError, match="without a token"):
        check_bind("0.0.0.0", None)
    with pytest.raises(ValueError, match="NLIFORGE_REVIEW_TOKEN"):
        ReviewServer(tmp_path / "a.sqlite", host="0.0.0.0")
    with pytest.raises(ValueError, match="without a token"):
        serve(tmp_path / "b.sqlite", host="192.168.1.5", port=0)
    assert not (tmp_path / "b.sqlite").exists()      # refused before touching anything
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", "s3cret")


def test_with_a_token_every_request_must_carry_it(tmp_path):
    with ReviewServer(tmp_path / "t.sqlite", items=ITEMS, token="s3cret") as srv:
        assert _request(srv.url)[0] == 401
        assert _request(srv.url + "review.js")[0] == 401
        assert _request(srv.url + "api/next?annotator=alice", as_page=False)[0] == 401
        assert _request(srv.url + "api/next?annotator=alice&token=wrong", as_page=False)[0] == 401
        assert _request(srv.url + "api/next?annotator=alice", headers={"X-Review-Token": "wrong"},
                        as_page=False)[0] == 401
        status, page = _request(srv.url + "?token=s3cret")
        assert status == 200 and b'src="review.js?token=s3cret"' in page   # the page's own files carry it
        assert _request(srv.url + "review.js?token=s3cret")[0] == 200
        status, body = _request(srv.url + "api/next?annotator=alice&token=s3cret")
        assert status == 200 and json.loads(body)["item"]["uid"] == "u0"
        status, _ = _request(srv.url + "api/judgement?token=s3cret",
                             {"uid": "u0", "annotator": "alice", "label": "neutral"})
        assert status == 200 and len(srv.store.judgements()) == 1


def test_page_and_assets_are_served_offline(server):
    status, page = _request(server.url)
    assert status == 200 and b"Entailment" in page and b"Point of view" in page
    assert b"http://" not in page and b"https://" not in page            # no external resources
    for asset in ("review.js", "review.css"):
        status, body = _request(server.url + asset)
        assert status == 200 and b"http" not in body
    assert _request(server.url + "review.sqlite")[0] == 404


@pytest.mark.parametrize("path", [
    "/api/next?annotator=alice&path=/etc/passwd",
    "/api/next?annotator=alice&file=review.sqlite",
    "/api/progress?annotator=alice&store=other.sqlite",
    "/api/next?annotator=..%2F..%2Fetc%2Fpasswd",
    "/api/next?annotator=/etc/passwd",
    "/api/next?annotator=C:%5Cwindows",
    "/api/next?annotator=~root",
    "/../../etc/passwd",
    "/..%2f..%2fetc%2fpasswd",
    "/static/..%252f..%252fstore.py",
    "/?template=../../etc/passwd",
])
def test_anything_that_names_a_file_is_refused(server, path):
    status, body = _raw_get(server.port, path)
    assert status == 400, (path, status, body)
    assert b"root:" not in body and b"import" not in body
    assert "error" in json.loads(body)


def test_unknown_query_parameters_are_refused(server):
    status, body = _request(server.url + "api/next?annotator=alice&extra=1")
    assert status == 400 and b"unknown parameter" in body


def test_a_foreign_host_header_is_refused_on_localhost(server):
    assert _raw_get(server.port, "/api/progress?annotator=a", host_header="evil.example:80")[0] == 400
    assert _raw_get(server.port, "/", host_header="evil.example:80")[0] == 400
    for unparsable in ("a[b", "[::1]x"):                   # found by tests/data/test_fuzz.py: these were a 500
        status, body = _raw_get(server.port, "/", host_header=unparsable)
        assert status == 400 and "unexpected Host" in json.loads(body)["error"]
    assert _raw_get(server.port, "/", host_header=f"localhost:{server.port}")[0] == 200


@pytest.mark.parametrize("body, status, needle", [
    ({"uid": "nope", "annotator": "alice", "label": "neutral"}, 404, "no item with uid 'nope'"),
    ({"uid": "u0", "annotator": "alice", "label": "maybe"}, 400, "entailment, neutral, contradiction, discard"),
    ({"uid": "u0", "label": "neutral"}, 400, "annotator is required"),
    ({"uid": "u0", "annotator": "a/b", "label": "neutral"}, 400, "no slashes"),
    ({"annotator": "alice", "label": "neutral"}, 400, "'uid' is required"),
    ({"uid": "u0", "annotator": "alice", "label": "neutral", "path": "/tmp/x"}, 400, "unknown field"),
    ({"uid": "u0", "annotator": "alice", "label": "neutral", "hypothesis": "  "}, 400, "'hypothesis' is empty"),
    ({"uid": "u0", "annotator": "alice", "label": "neutral", "premise": 3}, 400, "must be a string"),
    (b"not json", 400, "JSON object"),
    (b"[1, 2]", 400, "JSON object"),
])
def test_bad_judgements_are_refused_with_a_clear_reason(server, body, status, needle):
    got, text = _request(server.url + "api/judgement", body)
    assert got == status and needle in json.loads(text)["error"]
    assert server.store.judgements() == []


FULL_RUBRIC = {c: 5 for c in RUBRIC_CRITERIA}


def _judged(rubric, **extra) -> dict:
    return {"uid": "u0", "annotator": "alice", "label": "neutral", "rubric": rubric, **extra}


def test_rubric_is_refused_when_rubric_mode_is_off(server):
    assert json.loads(_request(server.url + "api/config")[1]) == {"rubric": None}
    got, text = _request(server.url + "api/judgement", _judged(FULL_RUBRIC))
    assert got == 400 and "not in rubric mode" in json.loads(text)["error"]
    assert server.store.judgements() == []


@pytest.fixture
def rubric_server(tmp_path):
    with ReviewServer(tmp_path / "rubric.sqlite", items=ITEMS, rubric=True) as srv:
        yield srv


@pytest.mark.parametrize("rubric, needle", [
    (None, "'rubric' is required in rubric mode"),
    ([5] * 8, "'rubric' is required in rubric mode"),
    ({c: 5 for c in RUBRIC_CRITERIA if c != "focus"}, "criterion 'focus' is missing"),
    ({**FULL_RUBRIC, "accuracy": 11}, "criterion 'accuracy' has score 11"),
    ({**FULL_RUBRIC, "readability": 0}, "criterion 'readability' has score 0"),
    ({**FULL_RUBRIC, "conciseness": 4.5}, "criterion 'conciseness' has score 4.5"),
    ({**FULL_RUBRIC, "coherence_structure": "7"}, "criterion 'coherence_structure' has score '7'"),
    ({**FULL_RUBRIC, "non_redundancy": True}, "criterion 'non_redundancy' has score True"),
    ({**FULL_RUBRIC, "fluency": 5}, "unknown criterion 'fluency'"),
])
def test_rubric_mode_validates_every_criterion(rubric_server, rubric, needle):
    body = _judged(rubric) if rubric is not None else {"uid": "u0", "annotator": "alice", "label": "neutral"}
    got, text = _request(rubric_server.url + "api/judgement", body)
    assert got == 400 and needle in json.loads(text)["error"]
    assert rubric_server.store.judgements() == []


def test_rubric_mode_stores_the_scores(rubric_server):
    status, config = _request(rubric_server.url + "api/config")
    shown = json.loads(config)["rubric"]
    assert status == 200 and [c["name"] for c in shown] == list(RUBRIC_CRITERIA)
    assert all(c["title"] and c["description"] for c in shown)
    scores = {c: i + 1 for i, c in enumerate(RUBRIC_CRITERIA)}
    status, _ = _request(rubric_server.url + "api/judgement", _judged(scores))
    assert status == 200
    [saved] = rubric_server.store.judgements()
    assert saved.rubric == scores and saved.source == "page"


def test_the_server_decides_revised_from_the_items_own_texts(server):
    url = server.url + "api/judgement"
    assert _request(url, {"uid": "u0", "annotator": "alice", "label": "entailment",
                          "premise": "  Premise 0 is here.\n", "hypothesis": "Hypothesis 0. "})[0] == 200
    status, body = _request(url, {"uid": "u1", "annotator": "alice", "label": "contradiction",
                                  "premise": "Premise 1 is here.", "hypothesis": " Hypothesis one, revised. "})
    assert status == 200 and json.loads(body)["saved"]["revised"] is True
    assert _request(url, {"uid": "u2", "annotator": "alice", "label": "discard", "hypothesis": ""})[0] == 200
    got = {j.uid: j for j in server.store.judgements()}
    assert (got["u0"].revised, got["u0"].premise) == (False, "Premise 0 is here.")
    assert (got["u1"].revised, got["u1"].hypothesis) == (True, "Hypothesis one, revised.")
    assert (got["u2"].revised, got["u2"].hypothesis, got["u2"].label) == (False, "Hypothesis 2.", "discard")
    assert {j.source for j in got.values()} == {"page"}
    status, body = _request(server.url + "api/progress?annotator=alice")
    assert status == 200 and json.loads(body)["done"] == 3


def test_a_third_annotator_is_told_the_item_is_full(server):
    url = server.url + "api/judgement"
    for who in ("alice", "bob"):
        assert _request(url, {"uid": "u0", "annotator": who, "label": "neutral"})[0] == 200
    status, body = _request(url, {"uid": "u0", "annotator": "carol", "label": "neutral"})
    assert status == 409 and "already has 2 annotators" in json.loads(body)["error"]
    status, body = _request(server.url + "api/next?annotator=carol")
    assert json.loads(body)["item"]["uid"] == "u1"


def test_the_command_line_serves_until_terminated_and_keeps_the_token_out_of_its_output(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(r.to_json() + "\n" for r in ITEMS), encoding="utf-8")
    env = {**os.environ, "NLIFORGE_REVIEW_TOKEN": "s3cret-value"}
    proc = subprocess.Popen([sys.executable, "-m", "nliforge.review.server", "--store", str(tmp_path / "r.sqlite"),
                             "--items", str(items), "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert "s3cret-value" not in line
        status, body = _request(url + "api/progress?annotator=alice", headers={"X-Review-Token": "s3cret-value"})
        assert status == 200 and json.loads(body)["total"] == 3
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
