"""The local review web page and its small JSON API (aiohttp), over one ReviewStore.

Routes: `GET /` (the page, with a fresh page token), `GET /review.js`, `GET /review.css`, `GET /api/next?annotator=`,
`POST /api/judgement` (JSON: uid, annotator, label, premise, hypothesis, rubric), `GET /api/progress?annotator=`,
`GET /api/config` (whether rubric mode is on, and its criteria). Rubric mode (`rubric=True`, for long
texts) shows one 1-10 slider per RUBRIC_CRITERIA criterion and requires every judgement to score them all.

Safety rules, because the page writes to research data and may be reachable by others:
- it binds 127.0.0.1 by default; any other host needs a token (it refuses to start without one),
  and with a token every request must carry it (`X-Review-Token` header or `?token=`), else 401;
- it serves only its own three files and the store it was started with: there is no generic file
  route, unknown query parameters are refused, and anything that looks like a file path or tries to
  choose a file (`path=`, `file=`, `..`, `/abs`, `C:\\`) is refused with 400;
- on 127.0.0.1 without a token, a request whose Host header is not a local name is refused
  (a web page elsewhere cannot reach the API by DNS rebinding);
- no cross-site writes (review/csrf.py): every API request carries the page token the page got when it
  loaded (`X-Review-Page-Token`, else 403), and a POST must also come from the page's own origin
  (`Origin`, or `Referer` when there is none, else 403) as `Content-Type: application/json` (else 415);
- every error is JSON `{"error": ...}`, aiohttp's own 404/405/413 included.

    with ReviewServer(tmp / "review.sqlite", items=records) as srv:
        urllib.request.urlopen(srv.url)
    python -m nliforge.review.server --store review.sqlite --items filtered.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import os
import re
import signal
import threading
from importlib import resources
from pathlib import Path
from urllib.parse import quote, unquote

from aiohttp import web

from nliforge.errors import NLIDataError
from nliforge.review.api import ReviewAPI
from nliforge.review.csrf import PAGE_TOKEN_PLACEHOLDER, PageTokens, check_api_request, json_error
from nliforge.review.store import ReviewStore

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
TOKEN_ENV = "NLIFORGE_REVIEW_TOKEN"
PATH_KEYS = frozenset({"path", "file", "filename", "filepath", "dir", "directory", "folder", "store", "db",
                       "database", "items", "root", "static", "template"})
_PATHLIKE = re.compile(r"\.\.|^[/\\~]|\\|/|^[A-Za-z]:|^file:|\x00", re.IGNORECASE)
__all__ = ["LOCAL_HOSTS", "ReviewServer", "TOKEN_ENV", "check_bind", "make_app", "serve"]


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token (anyone reaching it could edit the store).
    NLIDataError is a ValueError: a wrong setting, reported as one line by the command-line tools."""
    if host not in LOCAL_HOSTS and not token:
        raise NLIDataError(f"refusing to serve the review page on {host!r} without a token: anyone who can reach "
                         f"it could read and change the review store. Set {TOKEN_ENV} (or pass token=...) or "
                         "bind 127.0.0.1")


def looks_like_path(value: str) -> bool:
    """True for values that name or climb to a file: `..`, slashes, `~`, drive letters, `file:`."""
    return bool(_PATHLIKE.search(unquote(value)))


def _guard(host: str, token: str | None, tokens: PageTokens):
    """Middleware: token, Host header, path-like URL and query parameters, then (for the API) the
    cross-site checks of review/csrf.py, before any handler runs; every error it lets out is JSON."""
    local = host in LOCAL_HOSTS

    @web.middleware
    async def guard(request: web.Request, handler):
        if token is not None:
            given = request.headers.get("X-Review-Token") or request.query.get("token") or ""
            if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), token.encode()):
                raise json_error(401, "missing or wrong review token; send it as the X-Review-Token header "
                                      "or ?token=")
        elif local and _hostname(request) not in LOCAL_HOSTS:
            raise json_error(400, f"unexpected Host {request.host!r}; this server answers only to "
                                  f"{', '.join(LOCAL_HOSTS)}")
        raw_path = unquote(unquote(request.raw_path.split("?", 1)[0]))
        if ".." in raw_path or "\\" in raw_path or "//" in raw_path:
            raise json_error(400, "refused: this server serves only its own page and API, not files")
        for key, value in request.query.items():
            if key == "token":
                continue
            if key.lower() in PATH_KEYS or looks_like_path(key) or looks_like_path(value):
                raise json_error(400, f"refused parameter {key!r}: this server serves only its own page and "
                                      "the store it was started with; it never reads a file named by a request")
        if request.path.startswith("/api/"):
            check_api_request(request, tokens)
        return await _as_json(handler, request)

    return guard


def _hostname(request: web.Request) -> str:
    """The host name of the Host header, without port or IPv6 brackets; '' for one that does not parse
    (e.g. `[`), which is then refused like any foreign name."""
    try:
        return (request.url.host or "").strip("[]")
    except ValueError:
        return ""


async def _as_json(handler, request: web.Request) -> web.StreamResponse:
    """Run the handler; an HTTP error of aiohttp's own (404, 405, 413 ...) gets a JSON body too."""
    try:
        return await handler(request)
    except web.HTTPException as err:
        if err.status < 400 or err.content_type == "application/json":
            raise
        message = f"{request.method} {request.path}: {err.reason}"
        if err.status == 413:
            message += " (the body may hold at most 1 MiB)"
        return web.json_response({"error": message}, status=err.status,
                                 headers={k: v for k, v in err.headers.items() if k == "Allow"})


def _static(name: str) -> bytes:
    return resources.files("nliforge.review").joinpath("static", name).read_bytes()


def _page_template(token: str | None) -> bytes:
    """review.html with its asset links carrying the access token (when there is one); the page-token
    placeholder is filled on every load (review/csrf.py)."""
    body = _static("review.html")
    if PAGE_TOKEN_PLACEHOLDER not in body:
        raise RuntimeError(f"review.html lacks the page-token placeholder {PAGE_TOKEN_PLACEHOLDER.decode()}")
    if token is not None:   # the page's own files must carry the access token too
        for ref in (b'src="review.js', b'href="review.css'):
            body = body.replace(ref, ref + b"?token=" + quote(token, safe="").encode())
    return body


def make_app(store: ReviewStore, host: str = "127.0.0.1", token: str | None = None,
             rubric: bool = False) -> web.Application:
    """The aiohttp application: the guard middleware, the page's files and the API over `store`
    (in rubric mode when `rubric`)."""
    check_bind(host, token)
    tokens = PageTokens()
    app = web.Application(middlewares=[_guard(host, token, tokens)], client_max_size=1024 * 1024)
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
               "Content-Security-Policy": "default-src 'self'; connect-src 'self'; frame-ancestors 'none'"}
    for route, name, ctype in (("/review.js", "review.js", "text/javascript"),
                               ("/review.css", "review.css", "text/css")):
        app.router.add_get(route, lambda _r, b=_static(name), c=ctype: web.Response(
            body=b, content_type=c, charset="utf-8", headers=headers))
    page = _page_template(token)
    app.router.add_get("/", lambda _r: web.Response(
        body=page.replace(PAGE_TOKEN_PLACEHOLDER, tokens.issue().encode()), content_type="text/html",
        charset="utf-8", headers=headers))
    api = ReviewAPI(store, rubric=rubric)
    app.router.add_get("/api/config", api.config)
    app.router.add_get("/api/next", api.next)
    app.router.add_get("/api/progress", api.progress)
    app.router.add_post("/api/judgement", api.judgement)
    return app


def _open_store(store_path, items, claim_ttl_s: float | None) -> ReviewStore:
    store = ReviewStore(store_path) if claim_ttl_s is None else ReviewStore(store_path, claim_ttl_s=claim_ttl_s)
    if items is not None:
        if isinstance(items, (str, os.PathLike)):
            from nliforge.data.jsonl import read_jsonl

            items = read_jsonl(items)
        store.add_items(items)
    return store


def serve(store_path: str | os.PathLike, items_path: str | os.PathLike | None = None, host: str = "127.0.0.1",
          port: int = 8765, token: str | None = None, rubric: bool = False) -> None:
    """Serve the review page until Ctrl+C / SIGTERM; `items_path` (JSONL records) is added to the store first.
    `rubric=True`: every judgement also scores RUBRIC_CRITERIA 1-10 (long-text review)."""
    check_bind(host, token)
    store = _open_store(store_path, items_path, None)
    try:
        asyncio.run(_serve_forever(make_app(store, host, token, rubric), host, port, token))
    except KeyboardInterrupt:
        pass
    finally:
        store.close()


async def _serve_forever(app: web.Application, host: str, port: int, token: str | None) -> None:
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    shown = f"[{host}]" if ":" in host else host
    suffix = "?token=<your token>" if token else ""
    print(f"review page: http://{shown}:{runner.addresses[0][1]}/{suffix}  (Ctrl+C stops)", flush=True)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


class ReviewServer:
    """The review server on a background thread (for tests); `port=0` picks a free port, see `.url`."""

    def __init__(self, store: str | os.PathLike | ReviewStore, items=None, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, claim_ttl_s: float | None = None, rubric: bool = False):
        check_bind(host, token)
        self._own_store = not isinstance(store, ReviewStore)
        self.store = _open_store(store, items, claim_ttl_s) if self._own_store else store
        if not self._own_store and items is not None:
            self.store.add_items(items)
        self.host, self.port, self.token, self.rubric = host, port, token, bool(rubric)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> ReviewServer:
        """Set up and run the server entirely on its own thread and loop, so a caller that already
        runs an event loop (Playwright's sync API does) can start it too."""
        ready, failure = threading.Event(), []
        self._thread = threading.Thread(target=self._run, args=(ready, failure), name="review-server", daemon=True)
        self._thread.start()
        ready.wait(timeout=30)
        if failure or not ready.is_set():
            self._thread.join(timeout=5)
            raise RuntimeError(f"the review server did not start on {self.host}:{self.port}: "
                               f"{failure[0] if failure else 'timed out'}")
        return self

    def _run(self, ready: threading.Event, failure: list) -> None:
        loop = asyncio.new_event_loop()
        try:
            app = make_app(self.store, self.host, self.token, self.rubric)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.TCPSite(runner, self.host, self.port).start())
        except Exception as err:  # noqa: BLE001 - handed to start(), which raises it
            failure.append(err)
            loop.close()
            ready.set()
            return
        self.port, self._loop, self._runner = runner.addresses[0][1], loop, runner
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def stop(self) -> None:
        if self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop = None
        if self._own_store:
            self.store.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Serve the local review page over a review store (SQLite).")
    ap.add_argument("--store", required=True, help="the review store (created if missing)")
    ap.add_argument("--items", default=None, help="JSONL records to add to the store before serving")
    ap.add_argument("--host", default="127.0.0.1", help=f"other than 127.0.0.1 needs {TOKEN_ENV} set")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--rubric", action="store_true", help="also score each item 1-10 on the rubric criteria")
    args = ap.parse_args(argv)
    try:
        serve(Path(args.store), args.items, args.host, args.port, os.environ.get(TOKEN_ENV) or None,
              rubric=args.rubric)
    except (ValueError, NLIDataError) as err:
        raise SystemExit(f"error: {err}") from None


if __name__ == "__main__":
    main()
