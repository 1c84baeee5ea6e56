"""Several OpenAI-compatible servers of one model as one backend (`generator.base_url` a list, or
`generator.endpoints` with a concurrency each).

Each request goes to the endpoint with the most free slots (ties: the first listed). An endpoint that
cannot be reached, closes a connection mid-answer, times out or answers 5xx is marked down for a
cooldown (doubling while it keeps failing, reset by its next answer) and the request is sent at once to
another endpoint; only when every endpoint has failed it does the fault reach the runner, which backs
off as it does for one server. The backend's `name` and `model` are those of one server, so the cache
keys, and so the dataset, do not depend on which server answered; the runner's cache keeps the first
answer of a key, so a request is never answered twice in the dataset.

Per endpoint the backend counts requests, answers, prompt and completion tokens, errors by kind and
latency; the runner drains the counts (`take_counts`) into the run's ledger as
`endpoint:<url>|<field>` counters (`ResponseCache.ledger` groups them under `endpoints`).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from nliforge.errors import NLIDataError
from nliforge.generation.types import GenerationRequest, RequestRejected, Response, RetryableError

FAILOVER_KINDS = frozenset({"connection", "timeout", "server_error", "bad_body"})   # the server, not the request
COOLDOWN_S, COOLDOWN_MAX_S = 2.0, 60.0


def endpoint_specs(cfg: Mapping[str, Any], default_slots: int) -> list[tuple[str, int]] | None:
    """[(base_url, slots)] when the node names several endpoints (`base_url` a list, or `endpoints`:
    a list of {base_url, concurrency}), None for the usual single `base_url`."""
    endpoints, base = cfg.get("endpoints"), cfg.get("base_url")   # endpoints win over base_url
    if endpoints:
        specs = []
        for i, ep in enumerate(endpoints):
            url = ep.get("base_url") if isinstance(ep, Mapping) else ep
            slots = ep.get("concurrency") if isinstance(ep, Mapping) else None
            slots = default_slots if slots is None else slots
            if not isinstance(url, str) or not url or not isinstance(slots, int) or slots < 1:
                raise NLIDataError(f"generator.endpoints[{i}]: expected {{base_url: <url>, concurrency: <int >= 1>}}, "
                                   f"got {ep!r}")
            specs.append((url, slots))
    elif isinstance(base, (list, tuple)):
        if not base or not all(isinstance(u, str) and u for u in base):
            raise NLIDataError(f"generator.base_url: expected a URL or a non-empty list of URLs, got {list(base)!r}")
        specs = [(u, default_slots) for u in base]
    else:
        return None
    urls = [u for u, _ in specs]
    if len(set(urls)) != len(urls):
        raise NLIDataError(f"generator endpoints: each URL once, got {urls}")
    return specs


class _Endpoint:
    def __init__(self, url: str, backend, slots: int):
        self.url, self.backend, self.slots = url, backend, slots
        self.busy, self.down_until, self.failures = 0, 0.0, 0

    def up(self, now: float) -> bool:
        return now >= self.down_until


class Endpoints:
    """One model behind several servers (see the module docstring); `backends`: one per URL."""

    def __init__(self, backends: Sequence, urls: Sequence[str], slots: Sequence[int]):
        self.eps = [_Endpoint(u, b, s) for u, b, s in zip(urls, backends, slots)]
        first = backends[0]
        self.name, self.model = first.name, first.model
        self.counts: Counter[str] = Counter()

    @property
    def total_slots(self) -> int:
        """The runner's concurrency: every endpoint's slots."""
        return sum(ep.slots for ep in self.eps)

    @property
    def endpoint(self) -> str:
        return ", ".join(ep.url for ep in self.eps)

    def pick(self, tried: set[int]) -> int | None:
        """The untried endpoint that is up with the most free slots; if none is up, the untried one that
        comes back soonest (a probe); None when every endpoint was tried."""
        now = time.monotonic()
        untried = [i for i in range(len(self.eps)) if i not in tried]
        if not untried:
            return None
        up = [i for i in untried if self.eps[i].up(now)]
        if up:
            return max(up, key=lambda i: (self.eps[i].slots - self.eps[i].busy, -i))
        return min(untried, key=lambda i: self.eps[i].down_until)

    def _count(self, ep: _Endpoint, field: str, amount: float = 1) -> None:
        self.counts[f"endpoint:{ep.url}|{field}"] += amount

    def take_counts(self) -> list[tuple[str, float]]:
        """The per-endpoint counts since the last call (the runner adds them to the ledger)."""
        out, self.counts = list(self.counts.items()), Counter()
        return out

    async def agenerate(self, request: GenerationRequest) -> Response:
        tried: set[int] = set()
        fault: RetryableError | None = None
        while (i := self.pick(tried)) is not None:
            tried.add(i)
            try:
                return await self._one(self.eps[i], request)
            except RetryableError as exc:
                fault = exc
                if exc.kind not in FAILOVER_KINDS:   # rate limits: the runner backs off and tries again
                    raise
        raise fault

    async def _one(self, ep: _Endpoint, request: GenerationRequest) -> Response:
        ep.busy += 1
        self._count(ep, "requests")
        start = time.monotonic()
        try:
            response = await ep.backend.agenerate(request)
        except RetryableError as exc:
            self._fail(ep, exc.kind)
            raise
        except RequestRejected as exc:
            self._count(ep, f"error:{exc.kind}")
            raise
        except asyncio.CancelledError:   # the runner's timeout: this server took too long
            self._fail(ep, "timeout")
            raise
        finally:
            ep.busy -= 1
        ep.failures, ep.down_until = 0, 0.0
        self._count(ep, "answers")
        self._count(ep, "prompt_tokens", response.prompt_tokens)
        self._count(ep, "completion_tokens", response.completion_tokens)
        self._count(ep, "latency_s", time.monotonic() - start)
        return response

    def _fail(self, ep: _Endpoint, kind: str) -> None:
        self._count(ep, f"error:{kind}")
        if kind in FAILOVER_KINDS:
            ep.failures += 1
            ep.down_until = time.monotonic() + min(COOLDOWN_MAX_S, COOLDOWN_S * 2 ** (ep.failures - 1))

    async def aclose(self) -> None:
        for ep in self.eps:
            await ep.backend.aclose()
