"""WANLI's offline stand-ins (WANLI §2.2, Fig. 2): the documents the demo's tiny prompt-continuation LM is
trained on, and a responder that answers WANLI prompts behind the local OpenAI-compatible server.

Each document is exactly what the generator sees at generation time — the Fig. 2 prompt with k+1
same-label examples ending in `{k+2}.` — followed by the completion it should write: one more same-label
pair, ` {premise}\n{Word}: {hypothesis}\n\n`. A tiny LM trained on such documents learns to continue the
format, so the demo runs the real WANLI generation path with no download. For teaching the format, random
same-label groups are enough (the real pipeline's groups are a seed and its nearest neighbours). The EOS
token is not part of the text: `train_prompt_lm` appends it to every document as a token id.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.generation.stand_in.responders import default_responder, input_text, seeded_rng
from nliforge.pipelines.wanli.prompts import LABEL_WORDS, label_word, wanli_prompt

_ITEM = re.compile(r"^\d+\.\s*(?P<premise>[^\n]+)\n(?P<word>Implication|Possibility|Contradiction):\s*(?P<hyp>[^\n]+)$",
                   re.MULTILINE)


def completion_text(premise: str, hypothesis: str, label: str) -> str:
    """What the LM should write after the prompt's final `{k+2}.`: ` premise\\nWord: hypothesis\\n\\n`."""
    return f" {premise}\n{label_word(label)}: {hypothesis}\n\n"


def _by_label(records: Iterable[Record], need: int) -> dict[str, list[tuple[str, str]]]:
    """(premise, hypothesis) pairs per prompt label, in input order; labels with too few are dropped."""
    groups: dict[str, list[tuple[str, str]]] = {label: [] for label in LABEL_WORDS}
    for rec in records:
        if rec.label in groups:
            groups[rec.label].append((rec.premise, rec.hypothesis))
    usable = {label: pairs for label, pairs in groups.items() if len(pairs) >= need}
    if not usable:
        sizes = {label: len(pairs) for label, pairs in groups.items()}
        raise NLIDataError(f"prompt documents need >= {need} records of one label (k + 2); got {sizes}")
    return usable


def prompt_documents(records: Sequence[Record], n_documents: int, k: int = 4, seed: int = 0,
                     labels: bool = True) -> list[str]:
    """`n_documents` prompt+completion documents, labels taken in turn, examples drawn with `seed`.

    Each document uses k+2 distinct same-label records: k+1 in the prompt, one as the completion.
    `labels=False` reads the records as unlabelled pairs (a generator that never learns the
    world's labels): each document's k+2 pairs are drawn from all records whatever their label, and the
    relation word is taken in turn, so it says nothing about the pairs. The LM then learns the format
    and the pairs' distribution, but no label-conditional writing.
    """
    if n_documents < 0 or k < 0:
        raise NLIDataError(f"n_documents and k must be >= 0, got n_documents={n_documents}, k={k}")
    if not labels:
        pool = [(r.premise, r.hypothesis) for r in records]
        if len(pool) < k + 2:
            raise NLIDataError(f"prompt documents need >= {k + 2} records (k + 2); got {len(pool)}")
        groups = {label: pool for label in LABEL_WORDS}
    else:
        groups = _by_label(records, need=k + 2)
    order = sorted(groups)
    rng = random.Random(seed)
    docs = []
    for i in range(n_documents):
        label = order[i % len(order)]
        chosen = rng.sample(groups[label], k + 2)
        docs.append(wanli_prompt(chosen[: k + 1], label) + completion_text(*chosen[k + 1], label))
    return docs


def stand_in_documents(records: Sequence[Record], settings: DictConfig, seed: int) -> list[str]:
    """`pipeline.generator_lm`'s documents for WANLI: `n_documents` prompt documents with `k` examples."""
    return prompt_documents(records, int(settings.n_documents), k=int(settings.get("k", 4)), seed=seed,
                            labels=bool(settings.get("labels", True)))


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
    rng = seeded_rng(prompt_or_messages, choice_index, seed)
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
