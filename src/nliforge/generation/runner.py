"""The exactly-once generation runner: send every request not yet answered, cache each answer the
moment it arrives, and resume after any interruption without re-sending an answered request.

API backends (`AsyncBackend`) run on one asyncio loop with bounded concurrency, client-side rate
limits, per-request timeouts and retries (exponential backoff with full jitter, never sooner
than the server's Retry-After). Local models (`BatchBackend`) run their pending requests in order,
`batch_size` at a time. Either way the cache (`ResponseCache`) is the only record of progress.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from nliforge.generation.cache import ResponseCache
from nliforge.generation.ratelimit import RateLimiter
from nliforge.generation.shard import OTHER_SHARD, SIGNAL_ENV, active_shard, send_forbidden, signal_self_if_asked
from nliforge.generation.types import (Failure, GenerationError, GenerationRequest, RequestRejected,
                                       Response, RetryableError, cache_key)
from nliforge.utils.progress import progress as progress_bar

Result = Response | Failure
_TEST_SIGNAL = bool(os.environ.get(SIGNAL_ENV))   # read once: a test's fault injection, else off


@dataclass
class RunnerSettings:
    """How hard to push an API: concurrency, rate limits, retries, timeout, and prices for the ledger."""

    concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 8
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    timeout_s: float = 60.0
    connect_wait_s: float = 10.0   # before the first request: how long to wait for a server to accept connections
    price_per_1k_prompt: float = 0.0
    price_per_1k_completion: float = 0.0
    progress: bool = True

    @classmethod
    def from_dict(cls, obj: Mapping | None) -> RunnerSettings:
        """Settings from a config mapping; an unknown key is an error that names it."""
        obj = dict(obj or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise ValueError(f"unknown runner setting(s) {unknown}; expected some of {sorted(known)}")
        settings = cls(**obj)
        if settings.concurrency < 1:
            raise ValueError(f"runner concurrency must be >= 1, got {settings.concurrency}")
        return settings

    def backoff(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Full jitter: uniform(0, min(max, base * 2**(attempt-1))), but never below Retry-After."""
        delay = rng.uniform(0.0, min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1)))
        return max(delay, retry_after) if retry_after is not None else delay


def _is_batch_backend(backend) -> bool:
    return callable(getattr(backend, "generate_batch", None)) and hasattr(backend, "batch_size")


def _check_unique(requests: Sequence[GenerationRequest]) -> None:
    seen: set[str] = set()
    for r in requests:
        if r.uid in seen:
            raise ValueError(f"duplicate request uid {r.uid!r}: every request needs its own uid")
        seen.add(r.uid)


def run_requests(backend, requests: Sequence[GenerationRequest], cache: ResponseCache, stage: str,
                 settings: RunnerSettings | None = None) -> dict[str, Result]:
    """Answer every request (from the cache when already answered), keyed by `request.uid`.

    Requests with the same cache key are sent once. Raises GenerationError when a request runs
    out of retries or the backend reports a fault that stops the run; everything answered until
    then stays in the cache, so calling again resumes."""
    settings = settings or RunnerSettings()
    _check_unique(requests)
    keys = {r.uid: cache_key(backend.name, backend.model, r) for r in requests}
    done, shard = cache.keys(), active_shard()
    others = {k for k in keys.values() if k not in done and shard is not None and not shard.holds(k)}
    pending: dict[str, GenerationRequest] = {}
    for r in requests:
        if keys[r.uid] not in done and keys[r.uid] not in others:
            pending.setdefault(keys[r.uid], r)
    _check_sending(pending, stage)
    n_waiting = sum(1 for r in requests if keys[r.uid] in pending)
    n_others = sum(1 for r in requests if keys[r.uid] in others)
    cache.count(stage, "cached", len(requests) - n_waiting - n_others)
    if n_others:
        cache.count(stage, OTHER_SHARD, n_others)
    cache.flush()  # one commit, so the count survives a kill before the first answer
    bar = progress_bar(total=len(requests), initial=len(requests) - n_waiting, desc=f"generate[{stage}]", unit="req",
                       disable=not settings.progress, mininterval=0.5, dynamic_ncols=True)
    run = _Run(backend, cache, stage, settings, bar)
    try:
        if pending and _is_batch_backend(backend):
            run.batches(pending)
        elif pending:
            wait = getattr(backend, "wait_until_reachable", None)
            if wait is not None:   # an endpoint not listening: a bounded, announced wait, then one error line
                wait(settings.connect_wait_s)
            asyncio.run(run.all_async(pending))
    finally:
        bar.close()
        cache.flush()
    other = Failure(OTHER_SHARD, f"shard {shard}: another shard sends this request")
    return {r.uid: other if keys[r.uid] in others else run.answers.get(keys[r.uid]) or _lookup(cache, keys[r.uid], r.uid)
            for r in requests}


def _check_sending(pending: dict[str, GenerationRequest], stage: str) -> None:
    """A merge sends nothing: a request no shard answered means a shard is not finished."""
    why = send_forbidden()
    if why and pending:
        first = next(iter(pending.values()))
        raise GenerationError(f"{why}: {len(pending)} request(s) of stage {stage} have no answer in any shard's "
                              f"cache (the first: {first.uid}); finish the shards (rerun them) and merge again")


def _lookup(cache: ResponseCache, key: str, uid: str) -> Result:
    result = cache.get(key)
    if result is None:  # cannot happen unless the cache file was changed under us
        raise GenerationError(f"request {uid} finished but its answer (key {key}) is not in {cache.path}")
    return result


class _Run:
    """The state one `run_requests` call shares between its requests; `answers` holds what it stored."""

    def __init__(self, backend, cache: ResponseCache, stage: str, settings: RunnerSettings, bar):
        self.backend, self.cache, self.stage, self.settings, self.bar = backend, cache, stage, settings, bar
        self.answers: dict[str, Result] = {}
        self.rng = random.Random()
        self.started, self.new_tokens = time.monotonic(), 0  # for the bar's generated tokens/s

    def show_rate(self, tokens: int) -> None:
        """Put the generated tokens/s since the run started on the progress bar."""
        self.new_tokens += tokens
        elapsed = time.monotonic() - self.started
        if elapsed > 0:
            self.bar.set_postfix_str(f"{self.new_tokens / elapsed:.1f} tok/s", refresh=False)

    def record(self, key: str, result: Result) -> None:
        """Ledger the answer's tokens/cost or failure, then commit answer and counters together."""
        cache, stage, s = self.cache, self.stage, self.settings
        if isinstance(result, Response):
            cache.count(stage, "prompt_tokens", result.prompt_tokens)
            cache.count(stage, "completion_tokens", result.completion_tokens)
            self.show_rate(result.completion_tokens)
            cost = (result.prompt_tokens * s.price_per_1k_prompt + result.completion_tokens * s.price_per_1k_completion)
            if cost:
                cache.count(stage, "cost", cost / 1000.0)
        else:
            cache.count(stage, f"failure:{result.kind}")
        if cache.put(key, stage, result):
            self.answers[key] = result  # else an earlier answer to the same key is kept (and looked up)
        if _TEST_SIGNAL:   # fault injection for the Slurm shard tests only (generation/shard.py)
            signal_self_if_asked(len(self.answers))

    def batches(self, pending: dict[str, GenerationRequest]) -> None:
        """A local model: pending requests in order, `batch_size` per call, each answer cached."""
        size = int(self.backend.batch_size)
        if size < 1:
            raise ValueError(f"{self.backend.name} batch_size must be >= 1, got {size}")
        items = list(pending.items())
        for start in range(0, len(items), size):
            chunk = items[start:start + size]
            answers = self.backend.generate_batch([r for _, r in chunk])
            if len(answers) != len(chunk):
                raise GenerationError(f"{self.backend.name} returned {len(answers)} answers for a batch "
                                      f"of {len(chunk)} requests")
            self.cache.count(self.stage, "sent", len(chunk))
            for (key, _), answer in zip(chunk, answers):
                self.record(key, answer)
            self.bar.update(len(chunk))

    async def all_async(self, pending: dict[str, GenerationRequest]) -> None:
        """All pending requests as tasks behind one semaphore; the first fatal error cancels the rest.
        SIGTERM (Slurm's preemption, `scancel`, `timeout`) sends nothing more, lets the requests in flight
        finish and cache their answers, then stops the run: a rerun resends none of them."""
        # several endpoints: as many requests at once as they have slots together
        self.sem = asyncio.Semaphore(getattr(self.backend, "total_slots", self.settings.concurrency))
        self.limiter = RateLimiter(self.settings.requests_per_minute, self.settings.tokens_per_minute)
        self.stopping = asyncio.Event()
        tasks = [asyncio.ensure_future(self.one(key, req)) for key, req in pending.items()]
        previous = signal.getsignal(signal.SIGTERM)
        handled = _on_sigterm(self.stopping.set)
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()
            if self.stopping.is_set():
                raise GenerationError(f"stopped by SIGTERM; every answer that arrived is cached ({len(self.answers)} "
                                      "in this start): rerun the same command to resume")
        finally:
            if handled:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
                signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.backend.aclose()

    async def one(self, key: str, request: GenerationRequest) -> None:
        """Send one request until it is answered or rejected; back off (outside the semaphore) on faults."""
        attempt = 0
        while not self.stopping.is_set():
            async with self.sem:
                if self.stopping.is_set():
                    return
                await self.limiter.acquire(request)
                fault = await self.attempt(key, request)
            if fault is None:
                self.bar.update(1)
                return
            attempt += 1
            self.cache.count(self.stage, f"fault:{fault.kind}")
            if attempt > self.settings.max_retries:
                raise GenerationError(f"request {request.uid} failed {attempt} times (last: {fault.kind}): {fault}")
            self.cache.count(self.stage, "retries")
            await asyncio.sleep(self.settings.backoff(attempt, fault.retry_after, self.rng))

    async def attempt(self, key: str, request: GenerationRequest) -> RetryableError | None:
        """One try: cache the answer (or the rejection) and return None, or return the retryable fault."""
        self.cache.count(self.stage, "sent")
        try:
            response = await _with_timeout(self.backend.agenerate(request), self.settings.timeout_s)
        except asyncio.TimeoutError:
            return RetryableError("timeout", f"no answer within {self.settings.timeout_s:g}s")
        except RetryableError as fault:
            return fault
        except RequestRejected as rejected:
            self.record(key, Failure(rejected.kind, str(rejected)))
            return None
        finally:
            self.take_counts()
        self.record(key, response)
        return None

    def take_counts(self) -> None:
        """A backend's own counters (several endpoints: per endpoint) into the ledger."""
        for name, amount in getattr(self.backend, "take_counts", lambda: [])():
            self.cache.count(self.stage, name, amount)


def _on_sigterm(callback) -> bool:
    """Call `callback` on SIGTERM while the loop runs (main thread only); whether the handler was set."""
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, callback)
    except (ValueError, RuntimeError, NotImplementedError):   # not the main thread, or no signals here
        return False
    return True


async def _with_timeout(coro, seconds: float):
    """`asyncio.timeout` where available (no extra task per request), else `asyncio.wait_for`."""
    if hasattr(asyncio, "timeout"):
        async with asyncio.timeout(seconds):
            return await coro
    return await asyncio.wait_for(coro, seconds)
