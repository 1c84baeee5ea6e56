"""Cross-site write protection for the review page: what a request must show before it may change the store.

A browser lets any web page send a "simple" cross-origin request (a form post, or a `no-cors` fetch with
`Content-Type: text/plain`) to 127.0.0.1 without asking anyone, and attaches no proof of where it came
from beyond the `Origin` / `Referer` headers. So every API request must carry a page token, and every
state-changing request (anything but GET/HEAD) must also:

1. come from the page's own origin: `Origin` (or, when a browser sends none, `Referer`) must name the
   host the request was sent to (the `Host` header, which the server has already checked);
2. be `Content-Type: application/json` (a cross-origin page can send that only after a CORS preflight,
   which this server never grants);
3. carry the page token in the `X-Review-Page-Token` header.

The page token is issued into the served HTML on every load (`<meta name="nliforge-page-token">`), signed
with a secret that lives only in this server process (HMAC-SHA256 over a random nonce), so a token from
another server, or one made up, is refused. A foreign page cannot read the HTML (the same-origin policy),
and cannot set a custom header without a preflight, so it cannot present a token.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from urllib.parse import urlsplit

from aiohttp import web

PAGE_TOKEN_HEADER = "X-Review-Page-Token"
PAGE_TOKEN_PLACEHOLDER = b"__NLIFORGE_PAGE_TOKEN__"
SAFE_METHODS = frozenset({"GET", "HEAD"})
__all__ = ["PAGE_TOKEN_HEADER", "PAGE_TOKEN_PLACEHOLDER", "PageTokens", "check_api_request", "json_error"]

_ERRORS = {400: web.HTTPBadRequest, 401: web.HTTPUnauthorized, 403: web.HTTPForbidden,
           415: web.HTTPUnsupportedMediaType}


def json_error(status: int, message: str) -> web.HTTPException:
    """An HTTP error whose body is `{"error": message}`, like every other answer of this server."""
    return _ERRORS[status](text=json.dumps({"error": message}), content_type="application/json")


class PageTokens:
    """Issue and check page tokens: `<nonce>.<hmac(secret, nonce)>`, the secret made once per server."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def _sign(self, nonce: str) -> str:
        return hmac.new(self._secret, nonce.encode("ascii"), hashlib.sha256).hexdigest()

    def issue(self) -> str:
        """A fresh token for one page load."""
        nonce = secrets.token_urlsafe(18)
        return f"{nonce}.{self._sign(nonce)}"

    def valid(self, token: str) -> bool:
        """True only for a token this server issued (constant-time comparison of the signature)."""
        nonce, _, tag = token.partition(".")
        if not nonce or not tag or not nonce.isascii():
            return False
        return hmac.compare_digest(tag.encode("utf-8", "surrogateescape"), self._sign(nonce).encode("ascii"))


def _claimed_origin(request: web.Request) -> tuple[str, str]:
    """(header name, host:port) of where the browser says the request comes from; ('', '') if it says nothing."""
    for name in ("Origin", "Referer"):
        value = request.headers.get(name)
        if value:
            try:
                parts = urlsplit(value)
            except ValueError:
                return name, "?"
            if parts.scheme not in ("http", "https"):
                return name, value                           # e.g. Origin: null (a sandboxed or file page)
            return name, parts.netloc.lower()
    return "", ""


def _check_origin(request: web.Request) -> None:
    own = request.host.lower()
    name, claimed = _claimed_origin(request)
    if not name:
        raise json_error(403, f"refused {request.method} {request.path}: no Origin or Referer header; a write "
                              f"must come from the review page itself (http://{request.host}/)")
    if claimed != own:
        raise json_error(403, f"refused {request.method} {request.path}: {name} {request.headers[name]!r} is not "
                              f"this page's origin (http://{request.host}); cross-site writes are not allowed")


def check_api_request(request: web.Request, tokens: PageTokens) -> None:
    """Refuse an API request that did not come from this server's own page (see the module docstring)."""
    if request.method not in SAFE_METHODS:
        _check_origin(request)
        if request.content_type != "application/json":
            raise json_error(415, f"refused {request.method} {request.path}: Content-Type "
                                  f"{request.headers.get('Content-Type', '(none)')!r}; expected application/json")
    given = request.headers.get(PAGE_TOKEN_HEADER, "")
    if not tokens.valid(given):
        what = "missing" if not given else "wrong"
        raise json_error(403, f"{what} page token: send the {PAGE_TOKEN_HEADER} header the review page received "
                              "when it loaded (reload the page to get a new one)")
