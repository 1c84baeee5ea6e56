"""Sentence helpers and the label-preserving rewrites that set a pair's artifact features.

A phenomenon proposes (premise, hypothesis) pairs with a known label; the rewrites here change
the surface features without changing that label:
- `add_negation`: attach a negated description ("who never smokes") to an entity both sentences
  mention, in both sentences — the hypothesis gains a negation word, the label is unchanged;
- `break_overlap`: a synonym, a spelled-out number or an asserting prefix ("In fact,") in the
  hypothesis only, so some hypothesis word is no longer in the premise;
- `lengthen`: shared descriptions and asserting frames ("It is true that") until the hypothesis
  is long, optionally mirrored in the premise so that full overlap survives.
"""

from __future__ import annotations

import random
import re

from nliforge.world import vocab
from nliforge.world.artifacts import LONG_HYPOTHESIS_WORDS, words

_PROPER = frozenset(vocab.NAMES + vocab.TOWNS)
_FRAMEABLE_STARTS = frozenset({"the", "all", "some", "none", "not", "nobody", "someone", "no", "if"})
_ALL_FRAMES = vocab.FRAMES + vocab.SHORT_FRAMES
_PEOPLE_RE = re.compile(
    r"\b(?:" + "|".join(vocab.NAMES) + r")\b|\b[Tt]he (?:" + "|".join(vocab.PROFESSIONS) + r")\b"
)
_TOWN_RE = re.compile(r"\b(?:" + "|".join(vocab.TOWNS) + r")\b")


def sentence(*parts: str) -> str:
    """Join parts with spaces, capitalise the first letter and end with a period."""
    text = " ".join(p for p in parts if p)
    return text[0].upper() + text[1:] + "."


def article(noun: str) -> str:
    """'a' or 'an' by the first letter (the vocabularies avoid the exceptions)."""
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _anchors(text: str) -> list[str]:
    """Singular entities a description can attach to, lowercased, in order of appearance."""
    found = [m.group(0).lower() for m in _PEOPLE_RE.finditer(text)]
    found += [m.group(0).lower() for m in _TOWN_RE.finditer(text)]
    return list(dict.fromkeys(found))


def _find(text: str, anchor: str) -> re.Match | None:
    return re.search(r"\b" + re.escape(anchor) + r"\b", text, flags=re.IGNORECASE)


def _described(text: str, anchor: str) -> bool:
    """Already described, or followed by a modifier a description must not split off."""
    m = _find(text, anchor)
    return m is not None and text[m.end():].startswith(
        (", who", ", which", " who ", " near ", " beside ", " behind ")
    )


def attach(text: str, anchor: str, description: str) -> str:
    """Insert ', description,' right after the first mention of anchor (commas as needed)."""
    m = _find(text, anchor)
    head, rest = text[: m.end()], text[m.end():]
    if rest.startswith((".", ",")):
        return f"{head}, {description}{rest}"
    return f"{head}, {description},{rest}"


def _shared_anchors(premise: str, hypothesis: str) -> list[str]:
    """Entities mentioned in both sentences and not yet described in either."""
    in_premise = set(_anchors(premise))
    return [a for a in _anchors(hypothesis)
            if a in in_premise and not _described(premise, a) and not _described(hypothesis, a)]


def _describe_shared(rng: random.Random, premise: str, hypothesis: str, negated: bool):
    anchors = _shared_anchors(premise, hypothesis)
    if not anchors:
        return None
    anchor = rng.choice(anchors)
    is_town = anchor.capitalize() in vocab.TOWNS
    if is_town:
        pool = vocab.TOWN_NEG_DESCRIPTIONS if negated else vocab.TOWN_DESCRIPTIONS
    else:
        pool = vocab.PERSON_NEG_DESCRIPTIONS if negated else vocab.PERSON_DESCRIPTIONS
    desc = rng.choice(pool)
    return attach(premise, anchor, desc), attach(hypothesis, anchor, desc)


def add_negation(rng: random.Random, premise: str, hypothesis: str):
    """Give the hypothesis a negation word without changing the label, or None if impossible."""
    return _describe_shared(rng, premise, hypothesis, negated=True)


def _frameable(text: str) -> bool:
    """One plain sentence that does not already start with a frame, adverb or conditional."""
    first = text.split(" ", 1)[0].rstrip(",")
    if text.count(".") != 1 or text.startswith(_ALL_FRAMES):
        return False
    return first.lower() in _FRAMEABLE_STARTS or first in _PROPER or first[0].isdigit()


def frame(text: str, prefix: str) -> str:
    """Prefix an asserting frame, lowercasing the old first word unless it is a proper noun."""
    first = text.split(" ", 1)[0].rstrip(",")
    if first not in _PROPER and not first[0].isdigit():
        text = text[0].lower() + text[1:]
    return f"{prefix} {text}"


def _swap_word(hypothesis: str, old: str, new: str) -> str:
    def repl(m: re.Match) -> str:
        return new.capitalize() if m.group(0)[0].isupper() else new

    return re.sub(r"(?<![\w%])" + re.escape(old) + r"(?![\w%])", repl, hypothesis, count=1,
                  flags=re.IGNORECASE)


def _overlap_breakers(premise: str, hypothesis: str) -> list[tuple[str, str]]:
    """Candidate (old, new) word swaps that keep the meaning and add a word absent from the premise."""
    in_premise = set(words(premise))
    swaps = []
    for w in dict.fromkeys(words(hypothesis)):
        if w in vocab.SYNONYMS and vocab.SYNONYMS[w] not in in_premise:
            swaps.append((w, vocab.SYNONYMS[w]))
        elif w.endswith("%"):
            swaps.append((w, w[:-1] + " percent"))
        elif w.isdigit() and int(w) in vocab.NUMBER_WORDS and vocab.NUMBER_WORDS[int(w)] not in in_premise:
            swaps.append((w, vocab.NUMBER_WORDS[int(w)]))
    return swaps


def break_overlap(rng: random.Random, premise: str, hypothesis: str):
    """Make some hypothesis word absent from the premise, keeping the label; None if impossible."""
    options = [("swap", s) for s in _overlap_breakers(premise, hypothesis)]
    if _frameable(hypothesis):
        options.append(("frame", rng.choice(vocab.SHORT_FRAMES)))
    if not options:
        return None
    kind, arg = rng.choice(options)
    if kind == "swap":
        return premise, _swap_word(hypothesis, *arg)
    return premise, frame(hypothesis, arg)


def lengthen(rng: random.Random, premise: str, hypothesis: str, keep_overlap: bool):
    """Elaborate until the hypothesis is long; mirror additions in the premise if keep_overlap."""
    for _ in range(6):
        if len(words(hypothesis)) >= LONG_HYPOTHESIS_WORDS:
            return premise, hypothesis
        options = []
        if _shared_anchors(premise, hypothesis):
            options.append("describe")
        if _frameable(hypothesis) and (not keep_overlap or _frameable(premise)):
            options.append("frame")
        if not options:
            return None
        if rng.choice(options) == "describe":
            premise, hypothesis = _describe_shared(rng, premise, hypothesis, negated=False)
        else:
            prefix = rng.choice(vocab.FRAMES)
            hypothesis = frame(hypothesis, prefix)
            if keep_overlap or rng.random() < 0.5:
                premise = frame(premise, prefix) if _frameable(premise) else premise
    return (premise, hypothesis) if len(words(hypothesis)) >= LONG_HYPOTHESIS_WORDS else None
