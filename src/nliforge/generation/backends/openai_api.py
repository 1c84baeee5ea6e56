"""OpenAI-compatible API backends (completions and chat completions) for the async runner.

The `openai` client is used with `max_retries=0`: retries, backoff and rate limits belong to the
runner, which needs to see every fault to count it. Each client error is mapped onto the
runner's vocabulary (types.py): transient faults become `RetryableError(kind)`, per-request
rejections `RequestRejected(kind)`, and faults that no retry can fix `GenerationError` with a
message saying what to do.

The API key is read only from the environment variable named by `api_key_env` (never from a
config); `api_key_env=None` is for local servers that need no key.

The client is created lazily inside the running event loop and dropped by `aclose()` (the runner
calls it at the end of each run), because an HTTP connection pool belongs to one loop.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import socket
import time
from typing import Any

from nliforge.generation.types import GenerationError, GenerationRequest, RequestRejected, Response, RetryableError

PLACEHOLDER_KEY = "no-key-needed"
log = logging.getLogger("nliforge.generation")


def _retry_after(headers) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date), if sent."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        try:
            return max(email.utils.parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None


def _cause_names(exc: BaseException) -> set[str]:
    names, seen = set(), 0
    while exc is not None and seen < 10:
        names.add(type(exc).__name__)
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return names


class _OpenAIBackend:
    """Shared construction, client lifecycle and error mapping of the two endpoints."""

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key_env: str | None = "OPENAI_API_KEY",
                 timeout_s: float = 60.0, connect_hint: str = "is the server running? start a local one with "
                                                                "`nliforge-vllm start` or set generator.base_url"):
        if api_key_env is not None and not os.environ.get(api_key_env):
            raise GenerationError(f"{self.name} needs an API key: set the environment variable {api_key_env} "
                                  f"(or api_key_env=null for a server that needs no key)")
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.connect_hint = connect_hint
        self._client = None

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def client(self):
        if self._client is None:
            try:
                import openai
            except ImportError:
                raise GenerationError("the OpenAI backends need the openai package: pip install 'nliforge[openai]'") from None
            key = os.environ.get(self.api_key_env) if self.api_key_env else PLACEHOLDER_KEY
            self._client = openai.AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0,
                                              timeout=self.timeout_s)
        return self._client

    def wait_until_reachable(self, seconds: float) -> None:
        """Before the first request: wait (saying so, at most `seconds`) until the endpoint's host accepts a TCP
        connection; then GenerationError naming the URL and `connect_hint` (what to start or check)."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.endpoint)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        deadline, said = time.monotonic() + max(seconds, 0.0), False
        while True:
            try:
                socket.create_connection((host, port), timeout=max(min(seconds, 5.0), 0.5)).close()
                return
            except OSError as err:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GenerationError(f"cannot reach {self.endpoint} (waited {seconds:g} s, runner.connect_wait_s; "
                                          f"{err}): {self.connect_hint}") from None
                if not said:
                    log.warning("no answer from %s yet (%s): waiting up to %g s for it to accept connections",
                                self.endpoint, err, seconds)
                    said = True
                time.sleep(min(0.5, left))

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def _sampling_args(self, request: GenerationRequest) -> dict[str, Any]:
        s = request.sampling
        args = {"model": self.model, "n": request.n, "max_tokens": s.max_tokens, "temperature": s.temperature,
                "top_p": s.top_p, "presence_penalty": s.presence_penalty, "frequency_penalty": s.frequency_penalty}
        if s.stop:
            args["stop"] = list(s.stop)
        if request.seed is not None:
            # Samples k.. of a prompt must not repeat samples 0..: shift the seed by first_sample.
            args["seed"] = request.seed + request.first_sample
        return args

    async def agenerate(self, request: GenerationRequest) -> Response:
        try:
            raw = await self._create(request)
            return self._response(json.loads(raw.content), request)
        except Exception as exc:  # noqa: BLE001 - every exception is mapped or re-raised below
            mapped = self._map_error(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    async def _create(self, request: GenerationRequest):
        """The raw HTTP answer (`with_raw_response`): parsing the JSON ourselves skips building
        pydantic models, a sizeable share of the client's CPU time per request."""
        raise NotImplementedError

    @staticmethod
    def _text(choice: dict) -> str:
        raise NotImplementedError

    def _response(self, data: Any, request: GenerationRequest) -> Response:
        try:
            choices = sorted(data["choices"], key=lambda c: c["index"])
            texts = [self._text(c) or "" for c in choices]
            finish = [c.get("finish_reason") or "" for c in choices]
            usage = data.get("usage") or {}
            tokens = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise RetryableError("bad_body", f"{self.endpoint} sent an answer without the expected "
                                             f"choices/usage fields ({type(exc).__name__}: {exc})") from exc
        if len(texts) != request.n:
            raise RetryableError("bad_body", f"{self.endpoint} returned {len(texts)} choices, expected n={request.n}")
        return Response(texts=texts, finish_reasons=finish, prompt_tokens=tokens[0], completion_tokens=tokens[1])

    def _map_error(self, exc: Exception) -> Exception:
        """The runner's exception for one client exception (see the module docstring)."""
        import openai

        if isinstance(exc, (RetryableError, RequestRejected, GenerationError)):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return RetryableError("timeout", f"{self.endpoint} did not answer within {self.timeout_s:g}s")
        if isinstance(exc, openai.APIConnectionError):
            causes = _cause_names(exc)
            if "RemoteProtocolError" in causes and "ConnectError" not in causes:
                return RetryableError("bad_body", f"{self.endpoint} closed the connection mid-answer: {exc.__cause__}")
            return RetryableError("connection", f"cannot reach {self.endpoint} ({exc.__cause__ or exc}): {self.connect_hint}")
        if isinstance(exc, openai.APIStatusError):
            return self._map_status(exc)
        if isinstance(exc, (ValueError, openai.APIResponseValidationError)):  # json.JSONDecodeError is a ValueError
            return RetryableError("bad_body", f"{self.endpoint} sent a body that is not a valid answer: {exc}")
        return GenerationError(f"{self.name} at {self.endpoint} failed: {type(exc).__name__}: {exc}")

    def _map_status(self, exc) -> Exception:
        status, headers = exc.status_code, getattr(exc.response, "headers", None)
        if status == 429:
            return RetryableError("rate_limit", f"{self.endpoint} rate limit (429): {exc.message}", _retry_after(headers))
        if status >= 500 or status in (408, 409):
            return RetryableError("server_error", f"{self.endpoint} answered {status}: {exc.message}", _retry_after(headers))
        if status == 401:
            hint = (f"set {self.api_key_env} to a valid key" if self.api_key_env
                    else "this server needs a key: set api_key_env to the variable that holds it")
            return GenerationError(f"{self.endpoint} rejected the API key (401): {hint}")
        if status in (400, 413, 422):
            code = getattr(exc, "code", None) or ""
            text = f"{code} {exc.message}".lower()
            kind = "context_length" if ("context_length" in text or "maximum context length" in text) else "bad_request"
            return RequestRejected(kind, f"{self.endpoint} rejected the request ({status}): {exc.message}")
        if status == 404:
            return GenerationError(f"{self.endpoint} does not serve model {self.model!r} (404: {exc.message}); set "
                                   f"generator.model to a name that GET {self.endpoint}/models lists")
        return GenerationError(f"{self.endpoint} answered {status} for model {self.model!r}: {exc.message}")


class OpenAICompletions(_OpenAIBackend):
    """`POST /completions`: the prompt is continued (WANLI's davinci-style generation)."""

    name = "openai_completions"

    async def _create(self, request: GenerationRequest):
        extra = {"suffix": request.suffix} if request.suffix is not None else {}
        return await self.client().completions.with_raw_response.create(
            prompt=request.prompt, **extra, **self._sampling_args(request))

    @staticmethod
    def _text(choice: dict) -> str:
        return choice["text"]


class OpenAIChat(_OpenAIBackend):
    """`POST /chat/completions`: `request.messages`, or the prompt as a single user turn."""

    name = "openai_chat"

    async def _create(self, request: GenerationRequest):
        messages = ([dict(m) for m in request.messages] if request.messages is not None
                    else [{"role": "user", "content": request.prompt}])
        return await self.client().chat.completions.with_raw_response.create(
            messages=messages, **self._sampling_args(request))

    @staticmethod
    def _text(choice: dict) -> str:
        return (choice.get("message") or {}).get("content") or ""


__all__ = ["OpenAICompletions", "OpenAIChat"]
