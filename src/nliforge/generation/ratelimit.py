"""Client-side rate limits: token buckets for requests per minute and tokens per minute.

Providers enforce both limits; staying under them on our side avoids a storm of 429s (each of
which costs a retry and a backoff). A bucket refills continuously at `rate_per_minute / 60` per
second up to `burst` units (default: one second's worth, so sending is smooth, not bursty).

Each acquire *reserves* its units at once (the level may go negative) and sleeps until the
level it would have had is back at zero. That keeps waiters in arrival order without a lock, and
a request larger than the whole bucket still goes through (it just waits longer).

Token estimate for one request (`estimate_tokens`): prompt characters / 4 (≈ GPT tokens for
English; for chat, the characters of all message contents) plus `n × max_tokens` (providers
count the completion budget against the limit when the request is made).
"""

from __future__ import annotations

import asyncio
import math
import time

from nliforge.generation.types import GenerationRequest


def estimate_tokens(request: GenerationRequest) -> int:
    """ceil(prompt chars / 4) + n * max_tokens (see the module docstring)."""
    if request.messages is not None:
        chars = sum(len(m.get("content", "")) for m in request.messages)
    else:
        chars = len(request.prompt)
    return math.ceil(chars / 4) + request.n * request.sampling.max_tokens


class TokenBucket:
    """`rate_per_minute` units per minute, at most `burst` banked; `None` rate = unlimited."""

    def __init__(self, rate_per_minute: float | None, burst: float | None = None, clock=time.monotonic):
        if rate_per_minute is not None and rate_per_minute <= 0:
            raise ValueError(f"a rate limit must be a positive number per minute or None, got {rate_per_minute}")
        self.rate_per_minute = rate_per_minute
        self.per_second = rate_per_minute / 60.0 if rate_per_minute else math.inf
        self.burst = burst if burst is not None else (max(self.per_second, 1.0) if rate_per_minute else math.inf)
        self.clock = clock
        self.level = self.burst
        self.stamp = clock()

    def reserve(self, amount: float, now: float | None = None) -> float:
        """Take `amount` units now; return how many seconds the caller must wait before using them."""
        if self.rate_per_minute is None:
            return 0.0
        now = self.clock() if now is None else now
        self.level = min(self.burst, self.level + (now - self.stamp) * self.per_second)
        self.stamp = now
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.per_second

    async def acquire(self, amount: float = 1.0) -> None:
        delay = self.reserve(amount)
        if delay > 0:
            await asyncio.sleep(delay)


class RateLimiter:
    """Both limits at once: a request waits for the later of its two reservations."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 clock=time.monotonic):
        self.requests = TokenBucket(requests_per_minute, clock=clock)
        self.tokens = TokenBucket(tokens_per_minute, clock=clock)

    @property
    def unlimited(self) -> bool:
        return self.requests.rate_per_minute is None and self.tokens.rate_per_minute is None

    def reserve(self, request: GenerationRequest, now: float | None = None) -> float:
        if self.unlimited:
            return 0.0
        return max(self.requests.reserve(1, now), self.tokens.reserve(estimate_tokens(request), now))

    async def acquire(self, request: GenerationRequest) -> None:
        delay = self.reserve(request)
        if delay > 0:
            await asyncio.sleep(delay)
