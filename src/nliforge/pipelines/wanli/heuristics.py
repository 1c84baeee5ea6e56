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

Kept pairs are then cleaned of stray surrounding quotes and brackets (`nliforge.engine.rows.clean_text`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nliforge.engine.rows import clean_text

MIN_CHARS = 5
INSTRUCTION_PHRASES: tuple[str, ...] = ("pair of sentences", "previous examples", "same relationship as")
RULES: tuple[str, ...] = ("too_short", "identical", "instruction_phrase", "copies_example")

_PUNCT = re.compile(r"[^\w\s]|_")


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
