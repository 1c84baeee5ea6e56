"""Stand-ins for an LLM behind the local OpenAI-compatible server.

A responder is a callable `(prompt_or_messages, choice_index, seed, sampling) -> text`, where
`prompt_or_messages` is the completion prompt (str) or the chat messages (list of dicts) and
`sampling` the request's decoding fields (max_tokens, stop, temperature, ...). It must be a pure
function of its arguments: resumed runs then reproduce the same answers. The server applies stop
strings and the max_tokens budget to whatever a responder returns.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

LABEL_WORDS = ("Implication", "Possibility", "Contradiction")
_ITEM = re.compile(r"^\d+\.\s*(?P<premise>[^\n]+)\n(?P<word>Implication|Possibility|Contradiction):\s*(?P<hyp>[^\n]+)$",
                   re.MULTILINE)
_WORDS = ("the a an of to in on with and but not some every many two three man woman child dog team "
          "city park river street house market music game picture morning evening walks runs sits plays "
          "sings reads writes watches holds carries opens waits talks laughs red blue old young tall "
          "small quiet busy happy near behind across under").split()


def input_text(prompt_or_messages: str | Sequence[Mapping[str, Any]]) -> str:
    """The text a model conditions on: the prompt, or the message contents joined by blank lines."""
    if isinstance(prompt_or_messages, str):
        return prompt_or_messages
    return "\n\n".join(str(m.get("content", "")) for m in prompt_or_messages)


def input_digest(prompt_or_messages: str | Sequence[Mapping[str, Any]]) -> str:
    """sha256 of the prompt (str) or of the messages as sorted-key JSON: names a request's input in the server log."""
    if isinstance(prompt_or_messages, str):
        data = prompt_or_messages
    else:
        data = json.dumps(list(prompt_or_messages), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def apply_stop(text: str, stop: list[str], max_tokens: int) -> tuple[str, str]:
    """Cut `text` at the first stop string ("stop") or after `max_tokens` words ("length")."""
    cut = min((i for i in (text.find(s) for s in stop if s) if i >= 0), default=-1)
    if cut >= 0:
        return text[:cut], "stop"
    words = text.split(" ")
    if len([w for w in words if w.strip()]) > max_tokens:
        kept, count = [], 0
        for w in words:
            count += bool(w.strip())
            if count > max_tokens:
                break
            kept.append(w)
        return " ".join(kept), "length"
    return text, "stop"


def _rng(prompt_or_messages, choice_index: int, seed) -> random.Random:
    key = f"{input_digest(prompt_or_messages)}|{seed}|{choice_index}"
    return random.Random(hashlib.sha256(key.encode()).hexdigest())


def pseudo_text(rng: random.Random, max_tokens: int) -> str:
    """Sentences of random words, about `max_tokens` words or fewer, sometimes split by a blank line."""
    n_words = rng.randint(3, max(3, min(max_tokens + 5, 60)))
    out, sentence = [], []
    for _ in range(n_words):
        sentence.append(rng.choice(_WORDS))
        if len(sentence) >= rng.randint(4, 12):
            out.append(" ".join(sentence).capitalize() + ".")
            out.append("\n\n" if rng.random() < 0.2 else " ")
            sentence = []
    if sentence:
        out.append(" ".join(sentence).capitalize() + ".")
    return " " + "".join(out).strip(" ")


def default_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """Deterministic pseudo-text from a hash of (input, seed, choice index)."""
    return pseudo_text(_rng(prompt_or_messages, choice_index, seed), int(sampling.get("max_tokens") or 16))


def _perturb(sentence: str, rng: random.Random) -> str:
    """Drop one word or swap two neighbours (keeps the sentence recognisably close to its source)."""
    words = sentence.rstrip(".").split()
    if len(words) < 3:
        return sentence
    i = rng.randrange(1, len(words) - 1)
    if rng.random() < 0.5:
        del words[i]
    else:
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words) + ("." if sentence.endswith(".") else "")


def wanli_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """A WANLI-prompt stand-in: a perturbed copy of one in-context item, as ` {premise}\\n{Word}: {hyp}`.

    The label word is the one the prompt's items share. About 10% of answers (seeded) are
    degenerate, as real generations sometimes are: no label line (unparseable), the instruction
    copied as the premise, or an in-context example copied verbatim. Chat answers omit the
    leading space. Prompts without WANLI items get pseudo-text."""
    text = input_text(prompt_or_messages)
    items = list(_ITEM.finditer(text))
    rng = _rng(prompt_or_messages, choice_index, seed)
    if not items:
        return default_responder(prompt_or_messages, choice_index, seed, sampling)
    lead = " " if isinstance(prompt_or_messages, str) else ""
    item = items[rng.randrange(len(items))]
    word, premise, hyp = item["word"], item["premise"].strip(), item["hyp"].strip()
    roll = rng.random()
    if roll < 0.04:
        return f"{lead}{_perturb(premise, rng)}"
    if roll < 0.07:
        first_line = text.strip().split("\n", 1)[0]
        return f"{lead}{first_line}\n{word}: {_perturb(hyp, rng)}"
    if roll < 0.10:
        return f"{lead}{premise}\n{word}: {hyp}"
    return f"{lead}{_perturb(premise, rng)}\n{word}: {_perturb(hyp, rng)}"



# -- DISCO (seed 003) stand-in ----------------------------------------------------------------------
_PHRASES = ("a tall woman", "two old men", "the small dog", "a busy market", "was sleeping", "in the park",
            "near the river", "three children", "is reading a book", "the young team", "every morning",
            "a red house")
_CONCLUSION = re.compile(r"Conclusion: ([^\n]+)")


def disco_responder(prompt_or_messages, choice_index: int, seed, sampling: Mapping[str, Any]) -> str:
    """A DISCO stand-in: a short phrase for the gap (masked prompt, or insertion with `suffix`).

    Mostly a stock phrase; about a quarter of answers (seeded) are the faults the heuristic filter
    exists for: the gap marker left in, a negation shortcut, the conclusion copied, an empty answer."""
    text = input_text(prompt_or_messages) + "\n" + str(sampling.get("suffix") or "")
    rng = _rng(prompt_or_messages, choice_index, (seed, sampling.get("suffix")))
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


# -- long-text NLI (seed 004) stand-ins ---------------------------------------------------------------
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
    from nliforge.generation.longtext_prompts import relation_of, statement_of

    text = input_text(prompt_or_messages)
    statement, label = statement_of(text), relation_of(text)
    if statement is None or label is None:
        return default_responder(prompt_or_messages, choice_index, seed, sampling)
    rng = _rng(prompt_or_messages, choice_index, seed)
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
    from nliforge.generation.longtext_prompts import RUBRIC_CRITERIA

    text = input_text(prompt_or_messages)
    if not all(c in text for c in RUBRIC_CRITERIA):
        return default_responder(prompt_or_messages, choice_index, seed, sampling)
    rng = _rng(prompt_or_messages, choice_index, seed)
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
