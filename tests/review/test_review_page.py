"""The review page in a real headless browser (Debian chromium driven by Playwright).

Skipped, with the reason, where /usr/bin/chromium or the playwright package is missing; CI
installs both (.ci/run) and sets NLIFORGE_REQUIRE_BROWSER=1, so there they run or fail.
"""

from __future__ import annotations

import http.server
import os
import shutil
import threading
import time
from collections import defaultdict

import pytest

from nliforge.data.records import Record
from nliforge.pipelines.longtext.rubric import rubric_table
from nliforge.review.server import ReviewServer
from nliforge.data.judgements import RUBRIC_CRITERIA, Judgement

CHROMIUM = os.environ.get("NLIFORGE_CHROMIUM", "/usr/bin/chromium")
try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

pytestmark = pytest.mark.browser
if sync_playwright is None:
    MISSING = "the playwright Python package is not installed (pip install playwright; never `playwright install`)"
elif not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
    MISSING = f"no chromium at {CHROMIUM} (apt-get install chromium)"
else:
    MISSING = None
ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
ITEMS = [Record(f"u{i}", f"Premise number {i} about the harbour.", f"Hypothesis {i}.", None) for i in range(6)]


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless. Skipped where missing; CI sets NLIFORGE_REQUIRE_BROWSER=1 so
    that there a missing browser fails instead of silently skipping."""
    if MISSING is not None:
        if os.environ.get("NLIFORGE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required but {MISSING}", pytrace=False)
        pytest.skip(MISSING)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _loads(page) -> int:
    return int(page.get_attribute("body", "data-loads"))


def _press(page, key: str) -> None:
    """Press a key that should label the item, then wait until the next item (or 'done') is shown."""
    before = _loads(page)
    page.keyboard.press(key)
    # Attribute selectors, not wait_for_function: the page's CSP (rightly) forbids eval.
    page.wait_for_selector(f'body:not([data-loads="{before}"])', state="attached", timeout=5000)


def _click_and_wait(page, selector: str) -> None:
    before = _loads(page)
    page.click(selector)
    page.wait_for_selector(f'body:not([data-loads="{before}"])', state="attached", timeout=5000)


def _open(context, url: str, who: str | None):
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda err: page.js_errors.append(str(err)))
    page.goto(url)
    if who is not None:
        page.fill("#annotator", who)
        page.press("#annotator", "Enter")
    page.wait_for_selector('body[data-state="ready"], body[data-state="done"]', state="attached", timeout=5000)
    return page


def test_label_by_keyboard_revise_and_reload(browser, tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS) as srv:
        context = browser.new_context()
        page = _open(context, srv.url, "alice")
        assert page.get_attribute("#item", "data-uid") == "u0"
        assert page.input_value("#premise") == ITEMS[0].premise
        _press(page, "1")                                    # u0: entailment by digit
        _press(page, "n")                                    # u1: neutral by letter
        assert page.get_attribute("#item", "data-uid") == "u2"
        page.fill("#hypothesis", "Hypothesis two, made clearer.")
        page.keyboard.type(" 4 d")                           # inside a text box these are just text
        assert page.get_attribute("#item", "data-uid") == "u2"
        assert page.is_visible("#revised-note")
        _press(page, "Alt+3")                                # u2: revised, contradiction from the box
        page.click("#premise")
        page.keyboard.press("End")
        page.keyboard.type(" Really.")
        page.keyboard.press("Escape")                        # leave the box, then a plain key labels
        _press(page, "e")                                    # u3: revised premise, entailment
        assert "4 done" in page.inner_text("#progress")

        page.reload()
        page.wait_for_selector('body[data-state="ready"]', state="attached", timeout=5000)
        assert page.input_value("#annotator") == "alice"     # remembered in localStorage
        assert page.inner_text("#progress").startswith("4 done · 0/6 fully reviewed")
        assert page.get_attribute("#item", "data-uid") == "u4"
        got = {j.uid: j for j in srv.store.judgements()}
        assert {uid: (j.label, j.revised) for uid, j in got.items()} == {
            "u0": ("entailment", False), "u1": ("neutral", False),
            "u2": ("contradiction", True), "u3": ("entailment", True)}
        assert got["u2"].hypothesis == "Hypothesis two, made clearer. 4 d"
        assert got["u3"].premise == ITEMS[3].premise + " Really."
        assert got["u2"].premise == ITEMS[2].premise
        assert page.js_errors == []
        context.close()


def test_annotators_working_at_once_give_every_item_exactly_two(browser, tmp_path):
    """Three reviewers in separate browser contexts, interleaved key by key, until each sees 'done'.

    Three (not two) so that the cap matters: someone must be turned away from each item.
    """
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS) as srv:
        contexts = {who: browser.new_context() for who in ("alice", "bob", "carol")}
        pages = {who: _open(ctx, srv.url, who) for who, ctx in contexts.items()}
        pressed = defaultdict(list)
        for _round in range(len(ITEMS) * 2):
            active = [w for w, p in pages.items() if p.get_attribute("body", "data-state") == "ready"]
            if not active:
                break
            for who in active:
                pressed[who].append(pages[who].get_attribute("#item", "data-uid"))
                _press(pages[who], "123"[len(pressed[who]) % 3])
        assert all(p.get_attribute("body", "data-state") == "done" for p in pages.values())
        assert all(p.is_visible("#done") for p in pages.values())
        per_item = defaultdict(list)
        for j in srv.store.judgements():
            per_item[j.uid].append(j.annotator)
        assert {uid: sorted(set(w)) == sorted(w) and len(w) for uid, w in per_item.items()} == \
            {r.uid: 2 for r in ITEMS}
        for who, uids in pressed.items():                    # nothing lost: every key press was stored
            assert sorted(uids) == sorted(j.uid for j in srv.store.judgements() if j.annotator == who)
            _click_and_wait(pages[who], "#again")              # a reviewer who finished early sees the end
            assert pages[who].inner_text("#progress").startswith(f"{len(uids)} done · 6/6 fully reviewed")
        for ctx in contexts.values():
            ctx.close()


def test_an_item_taken_over_while_open_is_refused_and_the_page_moves_on(browser, tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS, claim_ttl_s=0.3) as srv:
        context = browser.new_context()
        page = _open(context, srv.url, "alice")
        assert page.get_attribute("#item", "data-uid") == "u0"
        time.sleep(0.4)                                      # alice's claim lapses; two others finish u0
        for who in ("bob", "carol"):
            assert srv.store.next_item(who).uid == "u0"
            srv.store.save(Judgement("u0", who, "neutral", ITEMS[0].premise, ITEMS[0].hypothesis))
        _press(page, "2")
        assert "Not saved" in page.inner_text("#status") and "already has 2" in page.inner_text("#status")
        assert page.get_attribute("#item", "data-uid") == "u1"
        assert sorted(j.annotator for j in srv.store.judgements("u0")) == ["bob", "carol"]
        assert page.js_errors == []
        context.close()


def test_rubric_mode_sliders_are_saved_with_a_keyboard_label(browser, tmp_path):
    """Rubric mode: set some sliders, label by key; unset sliders send their default 5 and every
    new item starts again from 5. The stored scores feed rubric_table like any other judgement."""
    items = [Record(f"r{i}", f"A long paragraph {i} about the vote.", f"Hypothesis {i}.", None,
                    meta={"model": "m1"}) for i in range(2)]
    with ReviewServer(tmp_path / "review.sqlite", items=items, rubric=True) as srv:
        context = browser.new_context()
        page = _open(context, srv.url, "alice")
        assert page.is_visible("#rubric")
        assert page.locator("#rubric input[type=range]").count() == len(RUBRIC_CRITERIA)
        assert "Referential clarity" in page.inner_text("#rubric")
        page.locator("#rubric-accuracy").fill("9")
        page.locator("#rubric-focus").fill("2")
        assert page.inner_text("#rubric-accuracy-value") == "9"
        assert page.evaluate("document.activeElement.id") == "rubric-focus"
        _press(page, "1")                                    # a focused slider does not block the keys
        assert page.get_attribute("#item", "data-uid") == "r1"
        assert page.input_value("#rubric-accuracy") == "5"   # reset for the new item
        page.locator("#rubric-accuracy").fill("7")
        page.locator("#rubric-readability").fill("10")
        page.keyboard.press("Escape")
        _press(page, "n")
        assert page.get_attribute("body", "data-state") == "done"
        got = {j.uid: j for j in srv.store.judgements()}
        first = {**{c: 5 for c in RUBRIC_CRITERIA}, "accuracy": 9, "focus": 2}
        second = {**{c: 5 for c in RUBRIC_CRITERIA}, "accuracy": 7, "readability": 10}
        assert (got["r0"].label, got["r0"].rubric) == ("entailment", first)
        assert (got["r1"].label, got["r1"].rubric) == ("neutral", second)
        table = rubric_table(items, srv.store.judgements())
        assert table.loc["m1", "n"] == 2 and table.loc["m1", "unscored"] == 0
        assert {c: table.loc["m1", f"{c}_mean"] for c in RUBRIC_CRITERIA} == {
            c: (first[c] + second[c]) / 2 for c in RUBRIC_CRITERIA}
        assert page.js_errors == []
        context.close()


def test_without_rubric_mode_no_sliders_are_shown(browser, tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS[:1]) as srv:
        context = browser.new_context()
        page = _open(context, srv.url, "alice")
        assert not page.is_visible("#rubric") and page.locator("#rubric input").count() == 0
        _press(page, "2")
        assert [j.rubric for j in srv.store.judgements()] == [None]
        context.close()


FOREIGN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>somewhere else</title></head>
<body data-sent="no"><script>
  // What any web site a reviewer visits could run: requests that need no CORS permission.
  const target = "%(target)sapi/judgement";
  const body = JSON.stringify({uid: "u0", annotator: "mallory", label: "contradiction"});
  const plain = fetch(target, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body});
  const asJson = fetch(target, {method: "POST", headers: {"Content-Type": "application/json"}, body});
  Promise.allSettled([plain, asJson]).then((r) => { document.body.dataset.sent = r.map((x) => x.status).join(","); });
</script></body></html>"""


class _ForeignSite:
    """A page on another 127.0.0.1 port (another origin), served by the standard library's HTTP server."""

    def __init__(self, target: str):
        page = (FOREIGN_PAGE % {"target": target}).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server API
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_foreign_page_cannot_write_but_the_real_page_can(browser, tmp_path):
    """Issue 19 item 1: a page from another origin sends a no-cors text/plain POST (and a JSON one) to
    /api/judgement; the server receives the first and refuses it, the browser stops the second at its
    preflight; nothing is stored. Then the real page, in the same browser, saves a judgement."""
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS) as srv, _ForeignSite(srv.url) as site:
        context = browser.new_context()
        page = context.new_page()
        seen = []
        page.on("response", lambda r: seen.append((r.request.method, r.status)) if "/api/judgement" in r.url else None)
        page.goto(site.url)
        page.wait_for_selector('body:not([data-sent="no"])', state="attached", timeout=5000)
        assert page.get_attribute("body", "data-sent") == "fulfilled,rejected"   # opaque answer; preflight fails
        assert seen == [("POST", 403)]                       # the server got the text/plain POST and refused it
        assert srv.store.judgements() == []
        real = _open(context, srv.url, "alice")
        _press(real, "3")
        assert [(j.uid, j.annotator, j.label) for j in srv.store.judgements()] == [("u0", "alice", "contradiction")]
        assert real.js_errors == []
        context.close()
