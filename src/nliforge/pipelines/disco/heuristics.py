"""DISCO's heuristic filter (§3.2; PRIOR_ART.md "DISCO"; EVAL_SETS.md 4.10).

Before the teacher model scores a counterfactual, cheap rules reject fillers that show obvious
low quality. Every rule is a function below; :func:`check` runs them in the order of
:data:`RULES` and names the first that fires, and :func:`apply_all` counts drops per rule.

Texts are compared *normalised* (:func:`words`): lowercased, apostrophes removed inside words
("isn't" -> "isnt", "doesn’t" -> "doesnt"), all other punctuation including "_" turned into
spaces, split on whitespace. All matching is on whole words and whole-word sequences; the
original code matched substrings, so "no" fired on "know" and "not" on "nothing".

* ``leftover_gap`` (f): the raw filler still contains "_" or "[blank]" (original: "large_gap").
  Checked first, on the raw text, because normalisation erases both.
* ``empty_filler``: nothing is left after normalisation (not in the original, whose substring
  tests rejected an empty filler as "contained in the premise").
* ``copied_sentence`` (a): the filler's words occur as a contiguous sequence in the premise or the
  hypothesis (this covers "equals"), or the hypothesis occurs in the filler (original:
  copied/coverd_hypothesis, coverd_by_hypothesis, coverd_by_premise). Putting back the original
  span is therefore rejected too: it occurs in the premise.
* ``overlap_hypothesis`` / ``overlap_premise`` (b): word-set Jaccard of the filler with the
  hypothesis > 0.6, or with the original premise > 0.35 (the original used textdistance's
  multiset Jaccard on word lists; sets differ only for repeated words).
* ``instruction_words`` (c): the filler contains a word or phrase of the prompt,
  :data:`INSTRUCTION_WORDS` (the original's list: "it is true/false", "[blank]", "story:",
  "conclusion:", "context:", "answer:", matched case-sensitively; here "story" is left out, since
  it hits "two-story", and the list gains the label words of both prompt styles and the
  masked-prompt field names; a module constant, since paper §3.2 asks
  "does the perturbation contain parts from the instruction or prompt?").
* ``negation_word`` (d): the target label is contradiction and the filler contains a word of
  :data:`NEGATION_WORDS` (paper §3.2: negation as a shortcut to contradiction).
* ``new_premise_overlap`` (e): the new premise's word Jaccard with the hypothesis > 0.8 (the
  PRIOR_ART value; the original code used 0.8 when editing the hypothesis and 0.5 when editing
  the premise; set ``new_premise_overlap`` to 0.5 to reproduce that).
* ``copied_demonstration`` (g): the filler equals an in-context demonstration's filler, or
  contains one of at least ``demo_min_words`` words (paper §3.2: "does the perturbation copy parts
  from the in-context examples?"; not in the original filter code). Skipped without demonstrations.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RULES: tuple[str, ...] = ("leftover_gap", "empty_filler", "copied_sentence", "overlap_hypothesis",
                          "overlap_premise", "instruction_words", "negation_word",
                          "new_premise_overlap", "copied_demonstration")
#: Words and phrases of the DISCO prompts (masked: "premise"/"hypothesis"/"[blank]", labels as
#: true/inconclusive/false; insertion: "we definitely can (not) conclude that", "it is possible
#: that"), matched as whole normalised word sequences in the filler.
INSTRUCTION_WORDS: tuple[str, ...] = (
    "blank", "fill in", "premise", "hypothesis", "conclusion", "conclude", "statement",
    "true", "false", "inconclusive", "it is possible that", "entailment", "contradiction",
    "context", "answer")
#: Negation words (normalised: "isn't" -> "isnt"), matched as whole words.
NEGATION_WORDS: tuple[str, ...] = (
    "no", "not", "never", "none", "nothing", "nobody", "noone", "nowhere", "neither", "nor",
    "cannot", "cant", "wont", "aint", "isnt", "arent", "wasnt", "werent", "dont", "doesnt",
    "didnt", "hasnt", "havent", "hadnt", "shouldnt", "wouldnt", "couldnt", "mustnt", "neednt",
    "mightnt", "shant")
GAP_MARKERS: tuple[str, ...] = ("_", "[blank]")

_APOSTROPHE = re.compile(r"(?<=\w)['’](?=\w)")
_NON_WORD = re.compile(r"[^\w\s]|_")


@dataclass(frozen=True)
class DiscoHeuristicSettings:
    """Thresholds (rejection when the Jaccard is strictly greater) and word lists of the rules."""

    hypothesis_overlap: float = 0.6
    premise_overlap: float = 0.35
    new_premise_overlap: float = 0.8
    demo_min_words: int = 2
    instruction_words: tuple[str, ...] = INSTRUCTION_WORDS
    negation_words: tuple[str, ...] = NEGATION_WORDS


def words(text: str) -> list[str]:
    """Lowercased words, apostrophes inside words dropped, other punctuation (and "_") removed."""
    return _NON_WORD.sub(" ", _APOSTROPHE.sub("", text.lower())).split()


def contains_sequence(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """`needle` (non-empty) occurs as a contiguous run of whole words in `haystack`."""
    n = len(needle)
    return n > 0 and any(list(haystack[i:i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|A ∩ B| / |A ∪ B| of the two word sets; 0.0 when both are empty."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


def _any_phrase(text_words: Sequence[str], phrases: Iterable[str]) -> bool:
    """Some phrase (normalised like the text) occurs in `text_words` as whole words."""
    return any(contains_sequence(text_words, words(p)) for p in phrases)


def leftover_gap(filler: str) -> bool:
    """(f) The raw filler still has a gap marker: an underscore or "[blank]"."""
    return any(m in filler.lower() for m in GAP_MARKERS)


def empty_filler(filler: str) -> bool:
    """The filler has no words once normalised."""
    return not words(filler)


def copied_sentence(filler: str, premise: str, hypothesis: str) -> bool:
    """(a) The filler equals or lies inside the premise or hypothesis, or contains the hypothesis."""
    f, h = words(filler), words(hypothesis)
    return contains_sequence(words(premise), f) or contains_sequence(h, f) or contains_sequence(f, h)


def overlap_hypothesis(filler: str, hypothesis: str, threshold: float = 0.6) -> bool:
    """(b) Word Jaccard of the filler with the hypothesis exceeds `threshold`."""
    return jaccard(words(filler), words(hypothesis)) > threshold


def overlap_premise(filler: str, premise: str, threshold: float = 0.35) -> bool:
    """(b) Word Jaccard of the filler with the original premise exceeds `threshold`."""
    return jaccard(words(filler), words(premise)) > threshold


def instruction_words(filler: str, phrases: Iterable[str] = INSTRUCTION_WORDS) -> bool:
    """(c) The filler contains a word or phrase of the prompt's instruction."""
    return _any_phrase(words(filler), phrases)


def negation_word(filler: str, target_label: str, negations: Iterable[str] = NEGATION_WORDS) -> bool:
    """(d) The target is contradiction and the filler has a negation word (whole words only)."""
    return target_label.strip().lower() == "contradiction" and _any_phrase(words(filler), negations)


def new_premise_overlap(new_premise: str, hypothesis: str, threshold: float = 0.8) -> bool:
    """(e) Word Jaccard of the new premise with the hypothesis exceeds `threshold`."""
    return jaccard(words(new_premise), words(hypothesis)) > threshold


def copied_demonstration(filler: str, demo_fillers: Iterable[str], min_words: int = 2) -> bool:
    """(g) The filler equals a demonstration's filler or contains one of >= `min_words` words."""
    f = words(filler)
    for demo in demo_fillers:
        d = words(demo)
        if d and (d == f or (len(d) >= min_words and contains_sequence(f, d))):
            return True
    return False


def check(filler: str, premise: str, new_premise: str, hypothesis: str, target_label: str,
          demo_fillers: Iterable[str] = (),
          settings: DiscoHeuristicSettings | None = None) -> str | None:
    """The name of the first rule (in :data:`RULES` order) that rejects the filler, or None."""
    s = settings or DiscoHeuristicSettings()
    tests = (
        ("leftover_gap", lambda: leftover_gap(filler)),
        ("empty_filler", lambda: empty_filler(filler)),
        ("copied_sentence", lambda: copied_sentence(filler, premise, hypothesis)),
        ("overlap_hypothesis", lambda: overlap_hypothesis(filler, hypothesis, s.hypothesis_overlap)),
        ("overlap_premise", lambda: overlap_premise(filler, premise, s.premise_overlap)),
        ("instruction_words", lambda: instruction_words(filler, s.instruction_words)),
        ("negation_word", lambda: negation_word(filler, target_label, s.negation_words)),
        ("new_premise_overlap", lambda: new_premise_overlap(new_premise, hypothesis,
                                                            s.new_premise_overlap)),
        ("copied_demonstration", lambda: copied_demonstration(filler, demo_fillers, s.demo_min_words)),
    )
    return next((name for name, test in tests if test()), None)


def _field(item: Any, name: str, default: Any = None) -> Any:
    """`item[name]` for mappings, `item.name` otherwise; `default` when absent."""
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def apply_all(items: Iterable[Any], settings: DiscoHeuristicSettings | None = None
              ) -> tuple[list[int], Counter[str]]:
    """Run :func:`check` on every item; return the kept positions and drops per rule.

    Items are mappings (or objects with attributes) with ``filler``, ``premise``,
    ``new_premise``, ``hypothesis``, ``target_label`` and optionally ``demo_fillers``. The counter
    lists every rule in :data:`RULES`, with 0 for those that rejected nothing, so reports show all.
    """
    kept: list[int] = []
    counts: Counter[str] = Counter({rule: 0 for rule in RULES})
    for i, item in enumerate(items):
        rule = check(_field(item, "filler"), _field(item, "premise"), _field(item, "new_premise"),
                     _field(item, "hypothesis"), _field(item, "target_label"),
                     _field(item, "demo_fillers", ()) or (), settings)
        if rule is None:
            kept.append(i)
        else:
            counts[rule] += 1
    return kept, counts
