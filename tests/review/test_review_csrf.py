"""Issue 19 item 1 over plain HTTP: no cross-site writes. What a foreign page can send (another origin,
text/plain, no page token) is refused with nothing stored; the page's own request is stored. The page
token is fresh per load and bound to its server; every error, aiohttp's own included, is JSON."""

from __future__ import annotations

import http.client
import json

import pytest

from nliforge.review.server import ReviewServer
from test_review_server import ITEMS, _page_headers, _request


@pytest.fixture
def server(tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS) as srv:
        yield srv


def _post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    """POST /api/judgement with exactly these headers (http.client adds only Host and Content-Length)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", "/api/judgement", body=body, headers=headers)
    resp = conn.getresponse()
    out = resp.status, json.loads(resp.read())
    conn.close()
    return out


def _tampered(token: str) -> str:
    """The token with its last character changed (to one it is not)."""
    return token[:-1] + ("1" if token[-1] == "0" else "0")


JUDGED = json.dumps({"uid": "u0", "annotator": "mallory", "label": "contradiction"}).encode()


def test_cross_site_writes_are_refused_and_the_page_s_own_write_is_stored(server):
    """Issue 19 item 1: what a foreign page can send (another origin, text/plain, no page token) is refused
    with nothing stored; the page's own request (its origin, JSON, the token it got on load) is stored."""
    own = f"http://127.0.0.1:{server.port}"
    page = _page_headers(server.url)
    json_ct = {"Content-Type": "application/json"}
    refused = [
        ({**page, "Origin": "http://127.0.0.1:9"}, 403, "not this page's origin"),          # another local port
        ({**page, "Origin": "http://evil.example"}, 403, "not this page's origin"),
        ({**page, "Origin": "null"}, 403, "not this page's origin"),                          # sandboxed / file page
        ({**page, "Origin": "", "Referer": "http://evil.example/x.html"}, 403, "Referer"),
        ({"X-Review-Page-Token": page["X-Review-Page-Token"], **json_ct}, 403, "no Origin or Referer"),
        ({**page, "Content-Type": "text/plain"}, 415, "expected application/json"),         # a no-cors fetch
        ({**page, "Content-Type": "application/x-www-form-urlencoded"}, 415, "application/json"),  # a form
        ({"Origin": own, **json_ct}, 403, "missing page token"),
        ({"Origin": own, "X-Review-Page-Token": "made.up", **json_ct}, 403, "wrong page token"),
        ({"Origin": own, "X-Review-Page-Token": _tampered(page["X-Review-Page-Token"]), **json_ct}, 403,
         "wrong page token"),
    ]
    for headers, status, needle in refused:
        got, body = _post(server.port, JUDGED, {**json_ct, **headers})
        assert (got, needle in body["error"]) == (status, True), (headers, got, body)
    assert server.store.judgements() == []
    got, body = _post(server.port, JUDGED, {**page, **json_ct, "Referer": own + "/"})
    assert got == 200 and body["saved"]["label"] == "contradiction"
    assert [(j.uid, j.annotator) for j in server.store.judgements()] == [("u0", "mallory")]


def test_the_page_token_is_fresh_per_load_and_bound_to_its_server(server, tmp_path):
    first, second = _page_headers(server.url), _page_headers(server.url)
    assert first["X-Review-Page-Token"] != second["X-Review-Page-Token"]
    with ReviewServer(tmp_path / "other.sqlite", items=ITEMS) as other:   # another server's token is refused
        stranger = {**_page_headers(other.url), "Origin": f"http://127.0.0.1:{server.port}"}
        got, body = _post(server.port, JUDGED, {**stranger, "Content-Type": "application/json"})
        assert got == 403 and "wrong page token" in body["error"]
    for headers in (first, second):
        assert _request(server.url + "api/next?annotator=alice", headers=headers, as_page=False)[0] == 200
    assert _request(server.url + "api/next?annotator=alice", as_page=False)[0] == 403   # claims need it too
    assert server.store.judgements() == []


def test_every_error_is_json_even_aiohttp_s_own(server):
    page = {**_page_headers(server.url), "Content-Type": "application/json"}
    for method, path in (("GET", "/nope"), ("DELETE", "/api/judgement"), ("PUT", "/api/judgement")):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request(method, path, body=b"{}" if method != "GET" else None, headers=page)
        resp = conn.getresponse()
        assert resp.status in (404, 405) and "error" in json.loads(resp.read()), (method, path)
        conn.close()
    got, body = _post(server.port, b'{"uid": "' + b"x" * (2 << 20) + b'"}', page)
    assert got == 413 and "1 MiB" in body["error"]
