"""DISCO's offline stand-ins (DISCO §3.1): fill-in documents for the demo's tiny LM, and a responder that
writes a phrase for a prompt's gap behind the local OpenAI-compatible server."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.generation.stand_in.responders import input_text, seeded_rng


def fill_in_documents(records: Sequence[Record], n_documents: int, chunker: str = "function_words",
                      seed: int = 0, labels: bool = True) -> list[str]:
    """`n_documents` DISCO fill-in documents for the offline demo's LM: a world pair's premise with one
    chunk masked, its hypothesis and its own label as the target, completed by the chunk it hid.

    The LM so learns the format and which phrases fit a frame given a hypothesis and a truth value;
    asked for another target at generation time, whatever it writes is then judged by the teacher
    filter, as GPT-3's phrases are in the paper. `labels=False` reads the records as unlabelled pairs:
    the target is a label drawn at random, so the LM learns the format and which phrases fit a frame,
    but not what makes a phrase true or false of a hypothesis (no generator may know the labels)."""
    from nliforge.pipelines.disco.chunker import build_chunker
    from nliforge.pipelines.disco.splice import masked
    from nliforge.pipelines.disco.prompts import MASK, masked_prompt

    if n_documents < 0:
        raise NLIDataError(f"n_documents must be >= 0, got {n_documents}")
    split = build_chunker(chunker)
    usable = [(r, spans) for r in records if (r.label is not None or not labels) and (spans := split.chunks(r.premise))]
    if not usable:
        raise NLIDataError("fill-in documents: no labeled record has a chunk to mask")
    rng = random.Random(seed)
    docs = []
    for _ in range(n_documents):
        rec, spans = usable[rng.randrange(len(usable))]
        span = spans[rng.randrange(len(spans))]
        target = rec.label if labels else rng.choice(sorted(LABELS))
        docs.append(masked_prompt(masked(rec.premise, span, MASK), rec.hypothesis, target) + f" {span.text}\n")
    return docs


def stand_in_documents(records: Sequence[Record], settings: DictConfig, seed: int) -> list[str]:
    """`pipeline.generator_lm`'s documents for DISCO: `n_documents` fill-in documents cut by `chunker`."""
    return fill_in_documents(records, int(settings.n_documents), chunker=str(settings.get("chunker", "function_words")),
                             seed=seed, labels=bool(settings.get("labels", True)))


_PHRASES = ("a tall woman", "two old men", "the small dog", "a busy market", "was sleeping", "in the park",
            "near the river", "three children", "is reading a book", "the young team", "every morning",
            "a red house")
_CONCLUSION = re.compile(r"Conclusion: ([^\n]+)")


def disco_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """A DISCO stand-in: a short phrase for the gap (masked prompt, or insertion with `suffix`).

    Mostly a stock phrase; about a quarter of answers (seeded) are the faults the heuristic filter
    exists for: the gap marker left in, a negation shortcut, the conclusion copied, an empty answer."""
    text = input_text(prompt_or_messages) + "\n" + str(sampling.get("suffix") or "")
    rng = seeded_rng(prompt_or_messages, choice_index, (seed, sampling.get("suffix")))
    conclusions = _CONCLUSION.findall(text)
    roll = rng.random()
    if roll < 0.05:
        return " [blank]"
    if roll < 0.12:
        return " not " + rng.choice(_PHRASES)
    if roll < 0.20 and conclusions:
        return " " + conclusions[-1].rstrip(".")
    if roll < 0.25:
        return " \n"
    return " " + rng.choice(_PHRASES)
