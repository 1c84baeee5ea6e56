"""Checks on a long-text generation (NLI-Set): did the model follow the instructions?

An answer passes when, after stripping, it is exactly two paragraphs separated by one or more blank
lines (`\\r\\n` tolerated), each with a sentence count in [min_sentences, max_sentences] and at least
`min_chars` characters, and neither names the intended relation (a word of the label's term list,
matched as a whole word, case-insensitively).

Sentences are counted with a simple splitter: a run of text ending in `.`, `!` or `?` (optionally
followed by a closing quote or bracket) and then whitespace or the end. Abbreviations such as
"e.g." or "Dr." count as sentence ends, so counts may be slightly high; the default range (3-8
around the requested five) leaves room for that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s|$)")


@dataclass(frozen=True)
class LongTextRules:
    """What an acceptable answer looks like (the `pipeline.longtext_validate` settings)."""

    min_sentences: int = 3
    max_sentences: int = 8
    min_chars: int = 80
    label_terms: Mapping[str, Sequence[str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, obj: Mapping | None, default_terms: Mapping[str, Sequence[str]]) -> LongTextRules:
        obj = dict(obj or {})
        terms = obj.get("label_terms") or default_terms
        return cls(int(obj.get("min_sentences", 3)), int(obj.get("max_sentences", 8)),
                   int(obj.get("min_chars", 80)), {k: list(v) for k, v in terms.items()})


@dataclass(frozen=True)
class Checked:
    """The outcome for one answer: the paragraphs (when there are two), counts, flags, the drop reason."""

    paragraphs: tuple[str, ...]
    sentence_counts: tuple[int, ...]
    flags: dict[str, bool]
    reason: str | None


def split_paragraphs(text: str) -> list[str]:
    """Non-empty paragraphs of `text`, split at blank lines; line breaks inside a paragraph become spaces."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    parts = (" ".join(line.strip() for line in p.split("\n") if line.strip()) for p in _BLANK_LINE.split(text))
    return [p for p in parts if p]


def count_sentences(paragraph: str) -> int:
    """Sentences in a paragraph (see the module docstring); trailing text without a full stop counts as one."""
    ends = list(_SENTENCE_END.finditer(paragraph))
    tail = paragraph[ends[-1].end():].strip() if ends else paragraph.strip()
    return len(ends) + (1 if tail else 0)


def stated_terms(text: str, terms: Sequence[str]) -> list[str]:
    """The words of `terms` that appear in `text` as whole words (case-insensitive)."""
    return [t for t in terms if re.search(rf"\b{re.escape(t)}\b", text, flags=re.IGNORECASE)]


def check_longtext(text: str, label: str, rules: LongTextRules) -> Checked:
    """Every instruction-following check on one answer; `reason` is the first failed one (or None)."""
    paragraphs = tuple(split_paragraphs(text))
    counts = tuple(count_sentences(p) for p in paragraphs)
    flags = {
        "two_paragraphs": len(paragraphs) == 2,
        "sentence_count": bool(counts) and all(rules.min_sentences <= c <= rules.max_sentences for c in counts),
        "label_not_stated": not stated_terms(text, rules.label_terms.get(label, ())),
        "long_enough": bool(paragraphs) and all(len(p) >= rules.min_chars for p in paragraphs),
    }
    reasons = {"two_paragraphs": "not_two_paragraphs", "sentence_count": "sentence_count",
               "label_not_stated": "label_word_stated", "long_enough": "too_short"}
    reason = next((reasons[k] for k, ok in flags.items() if not ok), None)
    return Checked(paragraphs, counts, flags, reason)
