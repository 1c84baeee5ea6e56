"""Spans for DISCO (§3.1): the places in a premise where the LLM may write a perturbation.

The paper split sentences with a neural chunker (Akbik et al., 2019) that was never published;
PRIOR_ART.md asks for any chunker whose spans are contiguous phrases, documented. Two are offered,
chosen by the setting ``pipeline.spans.chunker`` through :func:`build_chunker`:

``function_words`` (:class:`FunctionWordChunker`, the default; pure Python, nothing to download)
    1. Tokens are words: runs of letters/digits/underscores, joined across inner hyphens and
       apostrophes ("t-shirt", "baby's", "isn't") and, for numbers, inner "." or "," ("3.5").
       Everything else (punctuation, symbols, whitespace) separates tokens.
    2. Each word is a *function word* if it is in :data:`FUNCTION_WORDS` (a fixed English list of
       determiners, prepositions, conjunctions, auxiliaries and their "n't" forms, pronouns,
       relative/question words and "not"/"never"), matched case-insensitively; otherwise it is a
       *content word*.
    3. Chunks are built left to right. Punctuation or any other non-space character between two
       words closes the current chunk. A content word always joins the current chunk (so adjacent
       content words are never separated: "man playing guitar" is one chunk). A function word
       starts a new chunk when the current chunk already has a content word; when the current
       chunk holds only function words, it joins only if the previous word's category allows it
       (:data:`_ATTACH`): after a preposition a determiner, preposition or pronoun ("in a",
       "out of the"); after a determiner another determiner ("all the"); after an auxiliary
       another auxiliary or a negation ("has been", "is not"); after a negation an auxiliary.
    4. Chunks with no content word ("he", "who", "has") are dropped.
    So "A man in a red shirt is playing the guitar." gives "A man", "in a red shirt",
    "is playing", "the guitar". A span starts at its first word and ends at its last, so it never
    has surrounding whitespace or trailing punctuation, and ``span.text == sentence[start:end]``.

``spacy`` (:class:`SpacyChunker`; needs ``pip install spacy`` and the model download)
    spaCy's noun chunks plus verb groups (maximal runs of AUX/VERB tokens and negation particles
    outside noun chunks), in document order, dropping chunks without a content word as above.

:func:`select_spans` then keeps a seeded subset of at most ``max_spans`` spans in document order.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

CHUNKER_SETTING = "pipeline.spans.chunker"
CHUNKER_KINDS: tuple[str, ...] = ("function_words", "spacy")

_AUX_BASES = ("is are was were am be been being has have had do does did will would shall should "
              "can could may might must need ought").split()
_NEGATED_AUX = [w + "n't" for w in _AUX_BASES if w not in ("am", "be", "been", "being", "may")]
_CATEGORIES: dict[str, list[str]] = {
    "det": ("a an the this that these those some any each every either neither all both another "
            "other such no my your his her its our their whose").split(),
    "prep": ("in on at by with from to of for into onto upon over under underneath near behind "
             "beside besides between among through throughout across along around about after "
             "before during without within against toward towards above below beneath beyond "
             "inside outside past via per than like off out up down").split(),
    "conj": "and or but nor so yet because while although though if unless whereas as".split(),
    "aux": _AUX_BASES + _NEGATED_AUX + ["can't", "won't", "ain't", "cannot"],
    "neg": ["not", "never", "n't"],
    "pron": ("i me you he him she it we us they them myself yourself himself herself itself "
             "ourselves themselves someone somebody something anyone anybody anything "
             "everyone everybody everything nobody nothing none there").split(),
    "rel": "who whom which what where when why how whether whoever whatever".split(),
}
#: Every function word with its category; a word listed under two categories keeps the first.
FUNCTION_WORDS: dict[str, str] = {}
for _cat, _words in _CATEGORIES.items():
    for _w in _words:
        FUNCTION_WORDS.setdefault(_w, _cat)
# Which function-word categories may join a function-only chunk, by the category of its last word.
_ATTACH: dict[str, frozenset[str]] = {
    "prep": frozenset({"det", "prep", "pron"}),
    "det": frozenset({"det"}),
    "aux": frozenset({"aux", "neg"}),
    "neg": frozenset({"aux"}),
}
_WORD = re.compile(r"\d+(?:[.,]\d+)+|\w+(?:[-'’]\w+)*")


@dataclass(frozen=True)
class Span:
    """A contiguous piece of a sentence: ``text == sentence[start:end]`` (character offsets)."""

    start: int
    end: int
    text: str


@runtime_checkable
class Chunker(Protocol):
    """Anything that splits a sentence into phrase spans, in document order."""

    def chunks(self, text: str) -> list[Span]: ...


def function_category(word: str) -> str | None:
    """The function-word category of `word` (case- and apostrophe-style-insensitive), or None."""
    return FUNCTION_WORDS.get(word.lower().replace("’", "'"))


def is_content_word(word: str) -> bool:
    """A word with a letter or digit that is not in :data:`FUNCTION_WORDS`."""
    return any(ch.isalnum() for ch in word) and function_category(word) is None


def _starts_new_chunk(category: str | None, chunk: list[re.Match[str]], has_content: bool) -> bool:
    """Whether a word of `category` (None = content word) opens a new chunk (rule 3)."""
    if not chunk or category is None:
        return False
    if has_content:
        return True
    return category not in _ATTACH.get(function_category(chunk[-1].group()) or "", frozenset())


class FunctionWordChunker:
    """Phrase chunks split at punctuation and before function words (see the module docstring)."""

    def chunks(self, text: str) -> list[Span]:
        """The content-bearing chunks of `text` as spans, in document order."""
        groups: list[list[re.Match[str]]] = []
        chunk: list[re.Match[str]] = []
        has_content = False
        for match in _WORD.finditer(text):
            gap = text[chunk[-1].end():match.start()] if chunk else ""
            category = function_category(match.group())
            if gap.strip() or _starts_new_chunk(category, chunk, has_content):
                groups.append(chunk)
                chunk, has_content = [], False
            chunk.append(match)
            has_content = has_content or category is None
        groups.append(chunk)
        return [Span(g[0].start(), g[-1].end(), text[g[0].start():g[-1].end()])
                for g in groups if g and any(is_content_word(m.group()) for m in g)]


class SpacyChunker:
    """spaCy noun chunks plus verb groups; spaCy and its model are loaded when constructed."""

    def __init__(self, model: str = "en_core_web_sm") -> None:
        hint = (f"install it with `pip install spacy && python -m spacy download {model}`, or set "
                f"{CHUNKER_SETTING}=function_words, which needs no download")
        try:
            import spacy
        except ImportError as err:
            raise ImportError(f"the spacy chunker needs spaCy, which is not installed: {hint}") from err
        try:
            self._nlp = spacy.load(model)
        except OSError as err:
            raise ImportError(f"the spacy chunker needs the spaCy model {model!r}, which is not "
                              f"installed: {hint}") from err

    def chunks(self, text: str) -> list[Span]:
        """Noun chunks and verb groups with a content word, sorted by position."""
        doc = self._nlp(text)
        pieces = [(c.start, c.end) for c in doc.noun_chunks]
        in_noun = {i for s, e in pieces for i in range(s, e)}
        run: list[int] = []
        for tok in list(doc) + [None]:
            verbal = tok is not None and tok.i not in in_noun and (
                tok.pos_ in ("AUX", "VERB") or (tok.pos_ == "PART" and tok.dep_ == "neg"))
            if verbal:
                run.append(tok.i)
            elif run:
                pieces.append((run[0], run[-1] + 1))
                run = []
        spans = []
        for s, e in sorted(pieces):
            part = doc[s:e]
            if any(is_content_word(t.text) for t in part):
                spans.append(Span(part.start_char, part.end_char, text[part.start_char:part.end_char]))
        return spans


def build_chunker(kind: str, **kw) -> Chunker:
    """The chunker named by ``pipeline.spans.chunker``; keyword arguments go to its constructor."""
    if kind == "function_words":
        return FunctionWordChunker(**kw)
    if kind == "spacy":
        return SpacyChunker(**kw)
    raise ValueError(f"unknown {CHUNKER_SETTING} {kind!r}; expected one of {', '.join(CHUNKER_KINDS)}")


def select_spans(spans: Sequence[Span], max_spans: int | None, rng: random.Random) -> list[Span]:
    """At most `max_spans` spans drawn with `rng`, kept in their input (document) order.

    None keeps them all; so does a limit at least as large as the number of spans (the rng is then
    not consumed, so adding spans elsewhere does not shift later draws needlessly).
    """
    if max_spans is not None and max_spans < 0:
        raise ValueError(f"max_spans must be >= 0 or None, got {max_spans}")
    if max_spans is None or max_spans >= len(spans):
        return list(spans)
    keep = sorted(rng.sample(range(len(spans)), max_spans))
    return [spans[i] for i in keep]
