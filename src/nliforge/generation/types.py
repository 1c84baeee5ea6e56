"""The shared vocabulary of generation: sampling settings, one request, one response, and the
backend protocol every generator (OpenAI-compatible API or a local transformers model) follows."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Sampling:
    """Decoding settings sent with every request (defaults: WANLI App. C.2 / Table 5)."""

    max_tokens: int = 120
    temperature: float = 1.0
    top_p: float = 0.5
    stop: tuple[str, ...] = ("\n\n",)
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Sampling:
        known = {k: obj[k] for k in cls.__dataclass_fields__ if k in obj}
        if "stop" in known:
            stop = known["stop"]
            known["stop"] = (stop,) if isinstance(stop, str) else tuple(stop or ())
        return cls(**known)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["stop"] = list(self.stop)
        return out


@dataclass(frozen=True)
class GenerationRequest:
    """One unit of work: `n` samples for one prompt, samples numbered from `first_sample`.

    `prompt` is the completion-style text; `messages` (role/content dicts) is set for chat
    backends; `suffix` is the text after the insertion point for backends with an insertion mode
    (DISCO §3.1). `uid` names the unit in the pipeline (e.g. `<prompt uid>:<first sample>`).
    """

    uid: str
    prompt: str
    sampling: Sampling = field(default_factory=Sampling)
    n: int = 1
    first_sample: int = 0
    messages: tuple[Mapping[str, str], ...] | None = None
    seed: int | None = None
    suffix: str | None = None

    def payload_identity(self) -> dict[str, Any]:
        """Everything that determines the answer, except backend and model."""
        ident = {
            "prompt": self.prompt,
            "messages": [dict(m) for m in self.messages] if self.messages is not None else None,
            "sampling": self.sampling.as_dict(),
            "samples": [self.first_sample, self.first_sample + self.n],
            "seed": self.seed,
        }
        if self.suffix is not None:  # only when set: keys of suffix-free requests stay as they were
            ident["suffix"] = self.suffix
        return ident


def cache_key(backend: str, model: str, request: GenerationRequest) -> str:
    """sha256 of (backend, model, prompt/messages, sampling settings, sample indices, seed)."""
    ident = {"backend": backend, "model": model, **request.payload_identity()}
    return hashlib.sha256(json.dumps(ident, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass
class Response:
    """The answer to one request: one text per sample, in sample order."""

    texts: list[str]
    finish_reasons: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Response:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Failure:
    """A request that will not be answered (e.g. prompt over the model's context): kept, counted, dropped."""

    kind: str
    message: str


class GenerationError(RuntimeError):
    """A fault that stops the run (endpoint down, missing API key): the message says what to fix."""


class RetryableError(Exception):
    """A transient fault (429, 5xx, timeout, truncated body): retried with backoff.

    `retry_after` (seconds) is the server's Retry-After when it sent one; `kind` names the fault in
    the ledger (rate_limit, server_error, timeout, bad_body, connection)."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


class RequestRejected(Exception):
    """A permanent per-request fault (HTTP 400 such as a prompt over the context): becomes a Failure."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@runtime_checkable
class AsyncBackend(Protocol):
    """An API backend: one request at a time, many in flight (the runner bounds concurrency)."""

    name: str
    model: str

    async def agenerate(self, request: GenerationRequest) -> Response: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class BatchBackend(Protocol):
    """A local model: a batch of requests per call, answers independent of batch composition."""

    name: str
    model: str
    batch_size: int

    def generate_batch(self, requests: Sequence[GenerationRequest]) -> list[Response | Failure]: ...
