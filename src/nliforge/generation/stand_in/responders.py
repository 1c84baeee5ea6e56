"""Stand-ins for an LLM behind the local OpenAI-compatible server.

A responder is a callable `(prompt_or_messages, choice_index, seed, sampling) -> text`, where
`prompt_or_messages` is the completion prompt (str) or the chat messages (list of dicts) and
`sampling` the request's decoding fields (max_tokens, stop, temperature, ...). It must be a pure
function of its arguments: resumed runs then reproduce the same answers. The server applies stop
strings and the max_tokens budget to whatever a responder returns.

`default_responder` (pseudo-text) lives here; each paper's pipeline ships its own responder in its
`stand_in.py` and names it under the entry-point group `nliforge.stand_in_responders` (`responders()`).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

RESPONDER_GROUP = "nliforge.stand_in_responders"

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


def seeded_rng(prompt_or_messages, choice_index: int, seed) -> random.Random:
    """A random generator seeded by (input, seed, choice index): a responder's answers are a pure function of them."""
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
    return pseudo_text(seeded_rng(prompt_or_messages, choice_index, seed), int(sampling.get("max_tokens") or 16))


def responders() -> dict[str, Any]:
    """Every responder by name: `default` and those the pipelines declare (entry points
    `nliforge.stand_in_responders`, e.g. `wanli = "nliforge.pipelines.wanli.stand_in:wanli_responder"`)."""
    found = {"default": default_responder}
    for ep in entry_points(group=RESPONDER_GROUP):
        found.setdefault(ep.name, ep.load())
    return found
