"""A local OpenAI-compatible server (127.0.0.1 only) for testing and benchmarking the API backends.

Endpoints: `POST /v1/completions`, `POST /v1/chat/completions`, `GET /v1/models`, answering in
OpenAI's JSON shape. Answers come from a responder (see `responders.py`), a pure function of
(input, seed, choice index), so a resumed run reproduces an uninterrupted one.

Injected faults, for retry tests: `fault_rate` of attempts fail with one of `FAULT_KINDS`:
  rate_limit    429 with `retry-after-ms` and `Retry-After` headers
  server_error  500 in OpenAI's error shape
  timeout       the request hangs for `hang_s` (far past any client timeout)
  truncated     a Content-Length longer than the bytes written, then the connection is closed
  bad_json      a complete HTTP answer whose JSON body is cut short
Faults are decided by a RNG seeded with (fault_seed, body sha256, attempt number), so a test run
is reproducible, and an attempt after `max_faults_per_request` faulty ones always succeeds.
`context_tokens` rejects prompts whose whitespace-token count + max_tokens exceeds it (400,
`context_length_exceeded`), and `api_key` requires `Authorization: Bearer <key>` (401 otherwise).

Every request is appended to `log_path` (JSONL, flushed per line) when it arrives (event
"received") and when it is answered (event "answered"): time, endpoint, body sha256, input sha256
(`responders.input_digest`), attempt, status and fault, so tests can count how often each request
was sent and answered (a request whose client died mid-wait is received but never answered).

    with LocalOpenAIServer(latency_s=0.01, fault_rate=0.2) as srv:
        OpenAICompletions("local-model", base_url=srv.base_url, api_key_env=None)
    python -m nliforge.generation.stand_in.server --port 8123 --latency 0.1 --log server.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import signal
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from aiohttp import web

from nliforge.generation.stand_in.responders import apply_stop, default_responder, input_digest, input_text, responders
from nliforge.generation.stand_in.threaded import ThreadedServer

FAULT_KINDS = ("rate_limit", "server_error", "timeout", "truncated", "bad_json")
__all__ = ["FAULT_KINDS", "LocalOpenAIServer", "ServerSettings", "apply_stop"]


@dataclass
class ServerSettings:
    """Behaviour of the local server (see the module docstring)."""

    latency_s: float = 0.1
    max_concurrency: int = 64
    fault_rate: float = 0.0
    fault_kinds: tuple[str, ...] = FAULT_KINDS
    fault_seed: int = 0
    max_faults_per_request: int = 2
    retry_after_s: float = 0.05
    hang_s: float = 300.0
    context_tokens: int | None = None
    api_key: str | None = None
    responder: Callable[..., str] = default_responder
    log_path: str | Path | None = None
    model: str = "local-model"

    def __post_init__(self):
        unknown = sorted(set(self.fault_kinds) - set(FAULT_KINDS))
        if unknown:
            raise ValueError(f"unknown fault kind(s) {unknown}; expected some of {list(FAULT_KINDS)}")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {self.fault_rate}")


def _error(status: int, message: str, type_: str, code: str | None = None, param: str | None = None,
           headers: dict | None = None) -> web.Response:
    body = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return web.json_response(body, status=status, headers=headers)


class _Handler:
    """The aiohttp application state: settings, attempt counters, the log, the concurrency gate."""

    def __init__(self, settings: ServerSettings):
        self.s = settings
        self.attempts: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()
        self.sem = asyncio.Semaphore(settings.max_concurrency)
        self.closing = asyncio.Event()
        self.log = open(settings.log_path, "a", encoding="utf-8") if settings.log_path else None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/completions", lambda r: self.handle(r, "completions"))
        app.router.add_post("/v1/chat/completions", lambda r: self.handle(r, "chat"))
        app.router.add_get("/v1/models", self.models)
        return app

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": self.s.model, "object": "model", "created": 0, "owned_by": "nliforge"}]})

    def record(self, endpoint: str, digest: str, source: str | None, attempt: int, status, fault,
               event: str = "answered") -> None:
        if event != "received":
            self.stats[str(status) if fault is None else fault] += 1
        if self.log is not None:
            self.log.write(json.dumps({"t": time.time(), "event": event, "endpoint": endpoint, "sha256": digest,
                                       "input": source, "attempt": attempt, "status": status, "fault": fault}) + "\n")
            self.log.flush()

    def fault_for(self, digest: str, attempt: int) -> str | None:
        if self.s.fault_rate <= 0 or attempt >= self.s.max_faults_per_request or not self.s.fault_kinds:
            return None
        rng = random.Random(f"{self.s.fault_seed}:{digest}:{attempt}")
        return rng.choice(self.s.fault_kinds) if rng.random() < self.s.fault_rate else None

    def check(self, request: web.Request, body: Any, endpoint: str) -> web.Response | None:
        """Auth, then the request shape, then the context budget: an error answer, or None."""
        if self.s.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.s.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        field_name = "prompt" if endpoint == "completions" else "messages"
        value = body.get(field_name) if isinstance(body, dict) else None
        ok = isinstance(value, str) if endpoint == "completions" else (
            isinstance(value, list) and all(isinstance(m, dict) and "content" in m for m in value))
        if not ok or "model" not in body:
            return _error(400, f"'model' and '{field_name}' are required ({field_name} must be "
                               f"{'a string' if endpoint == 'completions' else 'a list of messages'})",
                          "invalid_request_error", None, field_name)
        max_tokens = int(body.get("max_tokens") or 16)
        used = len(input_text(value).split())
        if self.s.context_tokens is not None and used + max_tokens > self.s.context_tokens:
            return _error(400, f"This model's maximum context length is {self.s.context_tokens} tokens. However, you "
                               f"requested {used + max_tokens} tokens ({used} in the {field_name}, {max_tokens} in the "
                               "completion). Please reduce the length of the prompt or completion.",
                          "invalid_request_error", "context_length_exceeded", field_name)
        return None

    def answer(self, body: dict, endpoint: str, digest: str) -> dict:
        """The OpenAI-shaped completion for a valid request."""
        source = body["prompt"] if endpoint == "completions" else body["messages"]
        stop = body.get("stop") or []
        stop = [stop] if isinstance(stop, str) else list(stop)
        max_tokens = int(body.get("max_tokens") or 16)
        sampling = {k: body.get(k) for k in ("max_tokens", "temperature", "top_p", "presence_penalty",
                                              "frequency_penalty")}
        sampling["stop"] = stop
        if endpoint == "completions" and body.get("suffix") is not None:
            sampling["suffix"] = str(body["suffix"])  # insertion mode: the responder sees the text after the gap
        choices, completion_tokens = [], 0
        for i in range(int(body.get("n") or 1)):
            text, finish = apply_stop(self.s.responder(source, i, body.get("seed"), sampling), stop, max_tokens)
            completion_tokens += len(text.split())
            content = {"text": text, "logprobs": None} if endpoint == "completions" else {
                "message": {"role": "assistant", "content": text}, "logprobs": None}
            choices.append({"index": i, **content, "finish_reason": finish})
        prompt_tokens = len(input_text(source).split())
        return {"id": ("cmpl-" if endpoint == "completions" else "chatcmpl-") + digest[:24],
                "object": "text_completion" if endpoint == "completions" else "chat.completion",
                "created": int(time.time()), "model": body["model"], "choices": choices,
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens}}

    async def handle(self, request: web.Request, endpoint: str) -> web.StreamResponse:
        raw = await request.read()
        digest = hashlib.sha256(raw).hexdigest()
        path = request.path
        try:
            body = json.loads(raw)
        except ValueError:
            self.record(path, digest, None, 0, 400, None)
            return _error(400, "We could not parse the JSON body of your request.", "invalid_request_error")
        source = body.get("prompt" if endpoint == "completions" else "messages") if isinstance(body, dict) else None
        source_digest = input_digest(source) if isinstance(source, (str, list)) else None
        attempt = self.attempts[digest]
        self.attempts[digest] += 1
        self.record(path, digest, source_digest, attempt, None, None, event="received")
        fault = self.fault_for(digest, attempt)
        if fault == "timeout":
            self.record(path, digest, source_digest, attempt, None, fault, event="hang")
            try:
                await asyncio.wait_for(self.closing.wait(), self.s.hang_s)
            except asyncio.TimeoutError:
                pass
            return _error(504, "gateway timeout (injected hang)", "server_error")
        async with self.sem:
            await asyncio.sleep(self.s.latency_s)
            return await self._respond(request, body, endpoint, path, digest, source_digest, attempt, fault)

    async def _respond(self, request, body, endpoint, path, digest, source_digest, attempt, fault):
        rejected = self.check(request, body, endpoint)
        if rejected is not None:
            self.record(path, digest, source_digest, attempt, rejected.status, None)
            return rejected
        self.record(path, digest, source_digest, attempt, {"rate_limit": 429, "server_error": 500}.get(fault, 200), fault)
        if fault == "rate_limit":
            wait = self.s.retry_after_s
            return _error(429, "Rate limit reached (injected).", "requests", "rate_limit_exceeded",
                          headers={"retry-after-ms": str(int(wait * 1000)), "Retry-After": f"{wait:g}"})
        if fault == "server_error":
            return _error(500, "The server had an error while processing your request (injected).", "server_error")
        data = json.dumps(self.answer(body, endpoint, digest)).encode()
        if fault == "bad_json":
            return web.Response(body=data[: len(data) // 2], content_type="application/json")
        if fault == "truncated":
            resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            resp.content_length = len(data)
            await resp.prepare(request)
            await resp.write(data[: len(data) // 2])
            request.transport.close()
            return resp
        return web.Response(body=data, content_type="application/json")


class LocalOpenAIServer(ThreadedServer):
    """The server on a background thread with its own event loop; `port=0` picks a free port."""

    thread_name = "local-openai-server"

    def __init__(self, port: int = 0, **settings: Any):
        known = {f.name for f in fields(ServerSettings)}
        unknown = sorted(set(settings) - known)
        if unknown:
            raise ValueError(f"unknown server setting(s) {unknown}; expected some of {sorted(known)}")
        self.settings = ServerSettings(**settings)
        self.port = port
        super().__init__()
        self._handler: _Handler | None = None
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def stats(self) -> Counter:
        """Answered attempts by status ("200", "400", ...) or injected fault kind."""
        return Counter(self._handler.stats) if self._handler else Counter()

    async def start_async(self) -> None:
        """Start listening on the current loop (used by the thread and by the command line)."""
        self._handler = _Handler(self.settings)
        self._runner = web.AppRunner(self._handler.app(), access_log=None, shutdown_timeout=1.0,
                                     handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=1024)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop_async(self) -> None:
        if self._handler is not None:
            self._handler.closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._handler is not None and self._handler.log is not None:
            self._handler.log.close()



def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="A local OpenAI-compatible server on 127.0.0.1 (tests, benchmarks).")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port; the base URL is printed")
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per answer")
    ap.add_argument("--max-concurrency", type=int, default=64, help="answers in progress; more requests queue")
    ap.add_argument("--fault-rate", type=float, default=0.0)
    ap.add_argument("--fault-kinds", default=",".join(FAULT_KINDS), help="comma-separated subset of " + ",".join(FAULT_KINDS))
    ap.add_argument("--fault-seed", type=int, default=0)
    ap.add_argument("--retry-after", type=float, default=0.05, help="seconds sent with 429s")
    ap.add_argument("--context-tokens", type=int, default=None)
    ap.add_argument("--responder", choices=sorted(responders()), default="default")
    ap.add_argument("--log", default=None, help="JSONL log of every request received and answered")
    args = ap.parse_args(argv)
    server = LocalOpenAIServer(
        port=args.port, latency_s=args.latency, max_concurrency=args.max_concurrency, fault_rate=args.fault_rate,
        fault_kinds=tuple(k for k in args.fault_kinds.split(",") if k), fault_seed=args.fault_seed,
        retry_after_s=args.retry_after, context_tokens=args.context_tokens, responder=responders()[args.responder],
        log_path=args.log)
    asyncio.run(_serve_forever(server))


async def _serve_forever(server: LocalOpenAIServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await server.start_async()
    print(server.base_url, flush=True)
    await stop.wait()
    await server.stop_async()


if __name__ == "__main__":
    main()
