"""WANLI Stage 3 heuristics (§2.3): drop generations that show GPT-3's failure modes.

Four rules, checked in this order on the parsed (whitespace-stripped) text; the first that fires
names the drop, and the names are stable because the manifest counts them:

* ``too_short``: the premise or the hypothesis has fewer than 5 characters;
* ``identical``: premise equals hypothesis after lowercasing, removing punctuation and
  normalising whitespace;
* ``instruction_phrase``: either side contains a phrase of the instruction ("pair of sentences",
  "previous examples", "same relationship as"), case-insensitively (the original code matched
  case-sensitively and also banned "The speaker"; pass ``phrases`` to change the list);
* ``copies_example``: premise and hypothesis both equal those of one in-context example, compared
  normalised as for ``identical`` (the original compared exact stripped strings, which misses
  copies that differ only in case or punctuation).

Kept pairs are then cleaned of stray surrounding quotes and brackets (:func:`clean_text`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MIN_CHARS = 5
INSTRUCTION_PHRASES: tuple[str, ...] = ("pair of sentences", "previous examples", "same relationship as")
RULES: tuple[str, ...] = ("too_short", "identical", "instruction_phrase", "copies_example")

_PUNCT = re.compile(r"[^\w\s]|_")
# Symmetric quotes, and opening -> closing brackets (curly quotes behave as brackets).
_QUOTES = ('"', "'", "`")
_BRACKETS = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’", "«": "»"}


def normalise(text: str) -> str:
    """Lowercased, punctuation removed (ASCII and Unicode), whitespace collapsed."""
    return " ".join(_PUNCT.sub("", text.lower()).split())


def too_short(premise: str, hypothesis: str, min_chars: int = MIN_CHARS) -> bool:
    """Either side has fewer than `min_chars` characters once surrounding whitespace is gone."""
    return min(len(premise.strip()), len(hypothesis.strip())) < min_chars


def identical(premise: str, hypothesis: str) -> bool:
    """The hypothesis repeats the premise, ignoring case, punctuation and spacing."""
    return normalise(premise) == normalise(hypothesis)


def instruction_phrase(premise: str, hypothesis: str, phrases: Sequence[str] = INSTRUCTION_PHRASES) -> bool:
    """Either side contains a phrase of the prompt's instruction (case-insensitive)."""
    sides = [" ".join(s.lower().split()) for s in (premise, hypothesis)]
    return any(p.lower() in side for p in phrases for side in sides)


def copies_example(premise: str, hypothesis: str, in_context: Sequence[tuple[str, str]]) -> bool:
    """The pair is one of the in-context examples (both sides equal after normalisation)."""
    pair = (normalise(premise), normalise(hypothesis))
    return any((normalise(p), normalise(h)) == pair for p, h in in_context)


def apply_heuristics(premise: str, hypothesis: str, in_context: Sequence[tuple[str, str]] = (),
                     phrases: Sequence[str] = INSTRUCTION_PHRASES) -> str | None:
    """The name of the first rule that drops the pair, or None if it is kept."""
    if too_short(premise, hypothesis):
        return "too_short"
    if identical(premise, hypothesis):
        return "identical"
    if instruction_phrase(premise, hypothesis, phrases):
        return "instruction_phrase"
    if copies_example(premise, hypothesis, in_context):
        return "copies_example"
    return None


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


@dataclass
class HeuristicResult:
    """Kept pairs (cleaned) with their input positions, and (input position, rule) for every drop."""

    kept: list[int] = field(default_factory=list)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    drops: list[tuple[int, str]] = field(default_factory=list)

    @property
    def dropped(self) -> Counter:
        """Drops per rule."""
        return Counter(rule for _, rule in self.drops)


def filter_pairs(items: Iterable[tuple[str, str, Sequence[tuple[str, str]]]],
                 phrases: Sequence[str] = INSTRUCTION_PHRASES) -> HeuristicResult:
    """Clean each (premise, hypothesis, in-context examples) item, then apply the rules to the cleaned
    pair (the WANLI pipeline's `heuristics` stage).

    So a pair that cleaning shortens below 5 characters (e.g. `"(ab)"`) is ``too_short``: the original
    pipeline let it through, but a record needs real text.
    """
    result = HeuristicResult()
    for i, (premise, hypothesis, in_context) in enumerate(items):
        cleaned = (clean_text(premise), clean_text(hypothesis))
        rule = apply_heuristics(*cleaned, in_context, phrases)
        if rule is not None:
            result.drops.append((i, rule))
            continue
        result.kept.append(i)
        result.pairs.append(cleaned)
    return result
