"""Row helpers every pipeline may use, nliforge's own and those of other packages alike: the id of a
prompt (`prompt_hash`, which the shared `generate` stage reads of every prompt row), the cleaning of a
generated sentence (`clean_text`) and a per-label cap on the seeds of a small run (`over_cap`)."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping

from nliforge.data.labels import LABELS
from nliforge.data.records import Record

# Symmetric quotes, and opening -> closing brackets (curly quotes behave as brackets).
_QUOTES = ('"', "'", "`")
_BRACKETS = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’", "«": "»"}


def prompt_hash(text: str) -> str:
    """A short stable id of a prompt (first 16 hex digits of its sha256)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def over_cap(chosen: set[str], by_uid: Mapping[str, Record], cap, seed: int) -> set[str]:
    """Seeds beyond `max_per_label` (a seeded sample is kept per label), for small runs."""
    if cap is None:
        return set()
    rng, over = random.Random(seed), set()
    for label in LABELS:
        uids = sorted(u for u in chosen if by_uid[u].label == label)
        if len(uids) > int(cap):
            over |= set(uids) - set(rng.sample(uids, int(cap)))
    return over


def _closing_index(text: str, opener: str, closer: str) -> int:
    """Index of the bracket closing the one at text[0], or -1 if it is never closed."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _quote_count(text: str, quote: str) -> int:
    """Occurrences of `quote`, not counting apostrophes inside words (don't, it's)."""
    if quote != "'":
        return text.count(quote)
    return sum(1 for i, ch in enumerate(text) if ch == "'"
               and not (0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()))


def _strip_once(text: str) -> str:
    """Remove one layer of wrapping or one unmatched edge quote/bracket; unchanged if none."""
    if len(text) < 2:
        return text.strip("".join(_QUOTES) + "".join(_BRACKETS) + "".join(_BRACKETS.values()))
    first, last = text[0], text[-1]
    for q in _QUOTES:
        n = _quote_count(text, q)
        if first == last == q and n == 2:
            return text[1:-1]
        if first == q and n % 2 == 1:
            return text[1:]
        if last == q and q != "'" and n % 2 == 1:   # a trailing ' may be a possessive
            return text[:-1]
    for opener, closer in _BRACKETS.items():
        if first == opener:
            end = _closing_index(text, opener, closer)
            if end == len(text) - 1:
                return text[1:-1]
            if end == -1:
                return text[1:]
        if last == closer and closer != "’" and _closing_index(text[::-1], closer, opener) == -1:
            return text[:-1]
    return text


def clean_text(text: str) -> str:
    """Strip whitespace and stray surrounding quotes/brackets: `"A man."`, `(A man.)`, `"A man.`.

    Wrapping quotes are removed only when they are the only ones (`"A" and "B"` stays), wrapping
    brackets only when the first closes at the last (`(a) and (b)` stays), and an edge quote or
    bracket only when it is unmatched. Repeats until nothing changes.
    """
    text = text.strip()
    while True:
        new = _strip_once(text).strip()
        if new == text:
            return text
        text = new
