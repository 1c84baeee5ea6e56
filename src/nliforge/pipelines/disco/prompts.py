"""DISCO prompts (§3.1): ask an LLM for a phrase that, put in place of one premise span,
moves the pair to a target label.

Two forms, both in our own words:

* **masked** (fill-in-the-blank): the premise with the span replaced by `[blank]`, the hypothesis
  ("conclusion"), the target label as true / inconclusive / false, and `Phrase:` for the answer.
  Optional demonstrations (earlier counterfactuals) come first, in the same block format with their
  phrase filled in; they are chosen by similarity (`nearest_demonstrations`), never at random.
* **insertion**: the text before the span is the prompt and the text after it, followed by the
  conclusion and its target label, is the `suffix`, so a model with an insertion mode writes the
  phrase with both sides in view and no demonstrations. A backend without a suffix parameter gets
  the masked form instead (`render_request`).

A completion is the phrase on one line; the stop sequence is the newline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from nliforge.errors import NLIDataError

MASK = "[blank]"
TARGET_WORDS = {"entailment": "true", "neutral": "inconclusive", "contradiction": "false"}
INSTRUCTION = ("Fill the gap marked [blank] in the statement with a short phrase, so that, given the "
               "completed statement, the conclusion is as stated below it. Answer with the phrase only.")
INSERTION_LEAD = "Complete the statement so that the conclusion that follows it is {word}.\n\nStatement: "


def target_word(label: str) -> str:
    """true / inconclusive / false for entailment / neutral / contradiction."""
    try:
        return TARGET_WORDS[label]
    except KeyError:
        raise NLIDataError(f"no DISCO target word for label {label!r}; expected one of {sorted(TARGET_WORDS)}") from None


@dataclass(frozen=True)
class Demonstration:
    """One worked example for a masked prompt: a masked premise, its hypothesis, target and phrase."""

    masked_premise: str
    hypothesis: str
    target_label: str
    filler: str
    direction: str = ""


def _block(masked_premise: str, hypothesis: str, target: str, filler: str | None) -> str:
    answer = f" {filler}" if filler is not None else ""
    return (f"Statement: {masked_premise}\nConclusion: {hypothesis}\n"
            f"The conclusion is {target_word(target)}.\nPhrase:{answer}")


def masked_prompt(masked_premise: str, hypothesis: str, target: str,
                  demonstrations: Sequence[Demonstration] = ()) -> str:
    """The fill-in-the-blank prompt; demonstrations (if any) come before the query, most similar last."""
    if MASK not in masked_premise:
        raise NLIDataError(f"a masked DISCO prompt needs {MASK} in the premise: {masked_premise!r}")
    parts = [INSTRUCTION]
    parts += [_block(d.masked_premise, d.hypothesis, d.target_label, d.filler) for d in demonstrations]
    parts.append(_block(masked_premise, hypothesis, target, None))
    return "\n\n".join(parts)


def insertion_prompt(prefix: str, suffix: str, hypothesis: str, target: str) -> tuple[str, str]:
    """(prompt, suffix) for an insertion-mode backend: the phrase goes between them. `prefix` and
    `suffix` are the premise's own text before and after the span, seams untouched."""
    word = target_word(target)
    return (INSERTION_LEAD.format(word=word) + prefix,
            f"{suffix}\nConclusion: {hypothesis}\nThe conclusion is {word}.")


def chat_messages(prompt: str) -> tuple[dict[str, str], ...]:
    """The masked prompt as one user message (chat models answer; the instruction asks for the phrase only)."""
    return ({"role": "user", "content": prompt},)


def prompt_hash(prompt: str, suffix: str | None = None) -> str:
    """A short stable id of what is sent (prompt and suffix)."""
    from nliforge.engine.rows import prompt_hash as text_hash

    return text_hash(prompt if suffix is None else f"{prompt}\x00{suffix}")


def nearest_demonstrations(queries: Sequence[str], pool_texts: Sequence[str], pool_directions: Sequence[str],
                           query_directions: Sequence[str], k: int) -> list[list[int]]:
    """For each query, the indices of its k most similar pool items (TF-IDF cosine over premise and
    hypothesis), same flip direction first; ordered by increasing similarity (most similar last, next
    to the query). Deterministic: ties keep pool order."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    if k <= 0 or not pool_texts:
        return [[] for _ in queries]
    vec = TfidfVectorizer(lowercase=True).fit(list(pool_texts) + list(queries))
    sims = (vec.transform(queries) @ vec.transform(pool_texts).T).toarray()
    pool_dirs = np.asarray(pool_directions)
    out = []
    for qi, qdir in enumerate(query_directions):
        same = pool_dirs == qdir
        # same direction first (+2 lifts them above every cosine), then by similarity, stable on ties
        order = np.argsort(-(sims[qi] + 2.0 * same), kind="stable")[:k]
        out.append([int(i) for i in order[::-1]])
    return out


def demonstration_from_record(row: Mapping) -> Demonstration:
    """A Demonstration from a counterfactual record of an earlier DISCO run (its meta provenance)."""
    meta = row.get("meta") or {}
    from nliforge.pipelines.disco.splice import Span, masked

    try:
        start, end = meta["span"]
        original = meta["original_premise"]
        span = Span(start, end, meta.get("span_text", original[start:end]))
        return Demonstration(masked(original, span, MASK), row["hypothesis"], row["label"],
                             meta["filler"], meta.get("direction", ""))
    except (KeyError, TypeError, ValueError) as exc:
        raise NLIDataError(f"demonstration {row.get('uid')!r}: expected a DISCO counterfactual record with "
                           f"meta span, original_premise and filler ({exc})") from None
