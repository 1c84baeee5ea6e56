"""NLI-Set's offline stand-ins: a long-text writer and a rubric judge behind the local OpenAI-compatible
server, and `use_generator`: a chosen `generator=` replaces them."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from omegaconf import DictConfig, OmegaConf

from nliforge.generation.stand_in.responders import default_responder, input_text, seeded_rng

_STOP = set("the a an of to in on at for from with and or but not is are was were be been has have had "
            "will would can could now more most many some all every each this that these those their its "
            "than as by over under after before since next last new year years about into also them they "
            "there here three two four forty thousand".split())
_P1 = ("Recent reports about {a} have drawn the attention of local officials.",
       "According to the council, {a} and {b} are now discussed at every public meeting.",
       "Residents who were asked about {b} described a clear change over the past year.",
       "Figures published in the spring suggest that {c} has become part of daily routines.",
       "Observers expect the discussion about {a} to continue for some time.",
       "Several organisations have published guidance on {c} for the wider public.")
_P2 = {
    "entailment": ("It is therefore clear that {a} receives public attention.",
                   "Officials have, in other words, taken note of {b}.",
                   "People in the area are aware of the changes concerning {c}.",
                   "The question of {a} is part of the local debate.",
                   "Some change related to {b} has indeed taken place."),
    "neutral": ("A separate survey on {c} will be published next autumn.",
                "The neighbouring region is also reviewing its budget for {b}.",
                "A university team has begun a study of how families spend their weekends.",
                "Its results are expected to be presented at a conference.",
                "Local newspapers have announced a series of articles on {a}."),
    "contradiction": ("In fact, nobody in the area has ever discussed {a}.",
                      "Officials have not received a single report about {b}.",
                      "The published figures show no change at all in {c}.",
                      "Residents describe daily life as exactly the same as it always was.",
                      "No organisation has issued any guidance on {a}."),
}


def _topic_words(statement: str) -> list[str]:
    """Phrases to write about: adjacent content-word pairs of the statement ("tram line"), else single words."""
    words = [w.strip(".,;:'\"()").lower() for w in statement.split()]
    content = [len(w) >= 4 and w not in _STOP for w in words]
    pairs = [f"{words[i]} {words[i + 1]}" for i in range(len(words) - 1) if content[i] and content[i + 1]]
    singles = [w for w, c in zip(words, content) if c]
    found = list(dict.fromkeys(pairs or singles))
    return found + ["the plan", "the change", "the service"][:max(0, 3 - len(found))]


def _paragraph(templates, words, rng: random.Random, k: int) -> str:
    picks = rng.sample(list(templates), min(k, len(templates)))
    return " ".join(t.format(a=rng.choice(words), b=rng.choice(words), c=rng.choice(words)) for t in picks)


def longtext_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """A long-text-prompt stand-in: two template paragraphs built from the statement's words, the second
    consistent with, unrelated to, or opposed to the first as the prompt's relation asks.

    About 15% of answers (seeded) break an instruction, as real generations sometimes do: one
    paragraph, three paragraphs, the relation named, or a second paragraph of two sentences.
    Prompts that are not long-text prompts get pseudo-text."""
    from nliforge.pipelines.longtext.prompts import relation_of, statement_of

    text = input_text(prompt_or_messages)
    statement, label = statement_of(text), relation_of(text)
    if statement is None or label is None:
        return default_responder(prompt_or_messages, choice_index, seed, sampling)
    rng = seeded_rng(prompt_or_messages, choice_index, seed)
    words = _topic_words(statement)
    first = _paragraph(_P1, words, rng, rng.randint(4, 6))
    second = _paragraph(_P2[label], words, rng, rng.randint(4, 5))
    roll = rng.random()
    if roll < 0.04:
        return f"{first} {second}"
    if roll < 0.08:
        return f"{first}\n\n{second}\n\n{_paragraph(_P1, words, rng, 4)}"
    if roll < 0.11:
        return f"{first}\n\n{second} This paragraph is meant as a {label} of the first one."
    if roll < 0.15:
        return f"{first}\n\n{_paragraph(_P2[label], words, rng, 2)}"
    return f"{first}\n\n{second}"


def rubric_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """An LLM-judge stand-in for rubric prompts (every RUBRIC_CRITERIA name in the input): seeded scores
    5-9, two lower for conciseness past 1200 characters, written as `name: score` lines, a JSON object
    or `Name - score/10` lines; about 5% are refusals with no scores. Other prompts get pseudo-text."""
    from nliforge.data.judgements import RUBRIC_CRITERIA

    text = input_text(prompt_or_messages)
    if not all(c in text for c in RUBRIC_CRITERIA):
        return default_responder(prompt_or_messages, choice_index, seed, sampling)
    rng = seeded_rng(prompt_or_messages, choice_index, seed)
    scores = {c: rng.randint(5, 9) for c in RUBRIC_CRITERIA}
    if len(text) > 1200 + 2000:   # the judge prompt's own instructions are about 2000 characters
        scores["conciseness"] = max(1, scores["conciseness"] - 2)
    roll = rng.random()
    if roll < 0.05:
        return "I am sorry, but I cannot score this text."
    if roll < 0.35:
        return json.dumps(scores)
    if roll < 0.55:
        return "\n".join(f"{c.replace('_', ' ').title()} - {s}/10" for c, s in scores.items())
    return "\n".join(f"{c}: {s}" for c, s in scores.items())


def use_generator(cfg: DictConfig) -> None:
    """A chosen `generator=` writes every long text (`pipeline.generators`) and judges them (the rubric's
    `judge`), in place of the stand-in nodes the demo puts there."""
    pipeline = cfg.pipeline
    name = str(cfg.generator.get("name") or str(cfg.generator.model).rstrip("/").split("/")[-1])
    if "generators" in pipeline:
        pipeline.generators = [OmegaConf.merge(cfg.generator, {"name": name})]
    rubric = pipeline.get("rubric")
    if rubric is not None and "judge" in rubric:
        rubric.judge = OmegaConf.merge(cfg.generator, {"name": "judge"})
