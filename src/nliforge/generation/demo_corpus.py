"""Training documents for the offline demo's prompt-continuation LM, in the WANLI prompt format.

Each document is exactly what the generator sees at generation time — the Fig. 2 prompt with
k+1 same-label examples ending in `{k+2}.` — followed by the completion it should write: one more
same-label pair, ` {premise}\n{Word}: {hypothesis}\n\n`. A tiny LM trained on such documents
learns to continue the format, so the demo runs the real WANLI generation path with no download.

In the real pipeline the in-context examples are a seed and its nearest same-label neighbours;
for teaching the LM the format, random same-label groups are enough (and cheaper), so that is
what is sampled here. The EOS token is not part of the text: `train_prompt_lm` appends it to
every document as a token id (a literal eos string could be split differently by a tokenizer).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.generation.prompts import LABEL_WORDS, label_word, wanli_prompt


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
    `labels=False` reads the records as unlabelled pairs (issue 22: a generator that never learns the
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


def fill_in_documents(records: Sequence[Record], n_documents: int, chunker: str = "function_words",
                      seed: int = 0, labels: bool = True) -> list[str]:
    """`n_documents` DISCO fill-in documents for the offline demo's LM: a world pair's premise with one
    chunk masked, its hypothesis and its own label as the target, completed by the chunk it hid.

    The LM so learns the format and which phrases fit a frame given a hypothesis and a truth value;
    asked for another target at generation time, whatever it writes is then judged by the teacher
    filter, as GPT-3's phrases are in the paper. `labels=False` reads the records as unlabelled pairs:
    the target is a label drawn at random, so the LM learns the format and which phrases fit a frame,
    but not what makes a phrase true or false of a hypothesis (issue 22: no generator knows the labels)."""
    from nliforge.generation.chunker import build_chunker
    from nliforge.generation.splice import masked
    from nliforge.generation.disco_prompts import MASK, masked_prompt

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
        target = rec.label if labels else rng.choice(sorted(LABEL_WORDS))
        docs.append(masked_prompt(masked(rec.premise, span, MASK), rec.hypothesis, target) + f" {span.text}\n")
    return docs
