"""Q3 of experiments/nli_set: does NLI-Set's own prompt (appendix 0.1) or an explicit layout line for
the blank line raise SmolLM2's validation pass rate? The same statements, labels, sampling and checks
(pipelines/longtext/checks.py, unchanged) for three user prompts; prints and writes a Markdown table.

    python -m experiments.nli_set.prompt_variants --n 3 --out experiments/nli_set/prompt_variants.md
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from omegaconf import OmegaConf

from nliforge.pipelines.longtext.checks import LongTextRules, check_longtext
from nliforge.generation.answer import answer_requests, sampling_from
from nliforge.pipelines.longtext.prompts import (LABEL_TERMS, LABELS, SYSTEM, longtext_messages,
                                                  read_statements)
from nliforge.generation.types import Failure, GenerationRequest
from nliforge.utils.atomic import atomic_write_text

CONF = Path(__file__).resolve().parents[2] / "conf" / "generator"
# Seed 004, appendix 0.1, verbatim except the statement filled in, the Brexit line and the closing
# "store these instructions / confirm" turn left out (it asks for an acknowledgement, not a text).
PAPER = (
    "You, as an LLM, are tasked with generating text passages to aid in the creation of a NLI data set for the "
    "understanding of entailment, neutrality, and contradiction in natural language processing.\n\n"
    "Based on the statement below, you are to write a text consisting of two paragraphs. Each paragraph must be "
    "approximately five sentences long. The paragraphs must form a single uniform unit, yet they must be "
    "inter-connected via {relation}.\n\n"
    "It is crucial that the nature of the relationship is evident through the context and content of the "
    "paragraphs but is not directly stated or labelled within the text.\n\n"
    "Guidelines:\nThe text must consist of two paragraphs. The paragraphs must be separated by a blank line to "
    "maintain clear structure.\nThe paragraphs should be approximately five sentences each, ensuring sufficient "
    "detail and context.\nDo not explicitly mention which type of relationship the paragraphs are representing.\n\n"
    "Statement: {statement}\n\nYour task: Based on the statement provided above, write two paragraphs as described.")
LAYOUT = ("\n\nLay out your answer exactly like this, with nothing else:\n"
          "<first paragraph, five sentences>\n\n<second paragraph, five sentences>")
PAPER_RELATION = {"entailment": "entailment", "neutral": "neutrality", "contradiction": "contradiction"}


def smollm2_node() -> dict:
    """The `generator=smollm2` node with chat on (hf_local defaults, then smollm2.yaml)."""
    base = OmegaConf.load(CONF / "hf_local.yaml")
    own = OmegaConf.load(CONF / "smollm2.yaml")
    own.pop("defaults", None)
    node = OmegaConf.to_container(OmegaConf.merge(base, own, {"chat": True}), resolve=True)
    node["runner"] = {**node.get("runner", {}), "progress": False}
    return node


def variant_messages(variant: str, statement: str, label: str) -> tuple[dict, ...]:
    """The chat turns of one variant: `ours` (the pipeline's), `ours_layout`, `paper`."""
    if variant == "paper":
        text = PAPER.format(relation=PAPER_RELATION[label], statement=statement)
        return ({"role": "user", "content": text},)
    system, user = longtext_messages(statement, label)
    if variant == "ours_layout":
        user = {**user, "content": user["content"] + LAYOUT}
    return (system, user)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3, help="first n shipped statements")
    ap.add_argument("--cache", default="/tmp/nliforge_exp/nli_set_prompts/llm_cache.sqlite")
    ap.add_argument("--out", default=str(Path(__file__).with_name("prompt_variants.md")))
    args = ap.parse_args()
    Path(args.cache).parent.mkdir(parents=True, exist_ok=True)
    statements = read_statements(None)[: args.n]
    sampling = sampling_from({"max_tokens": 600, "temperature": 0.7, "top_p": 1.0, "stop": []})
    rules = LongTextRules.from_dict(None, LABEL_TERMS)
    lines = ["| prompt | answers | pass | not_two_paragraphs | sentence_count | label_word_stated | too_short |",
             "|---|---|---|---|---|---|---|"]
    assert SYSTEM  # the pipeline's system turn is part of `ours` and `ours_layout`
    for variant in ("ours", "ours_layout", "paper"):
        reqs = [GenerationRequest(uid=f"{variant}:{i}:{lab}", prompt=m[-1]["content"], sampling=sampling,
                                  messages=m, seed=1000 * i + j)
                for i, s in enumerate(statements) for j, lab in enumerate(LABELS)
                for m in [variant_messages(variant, s, lab)]]
        results, _, _ = answer_requests(smollm2_node(), reqs, args.cache, f"variants:{variant}")
        reasons = Counter()
        for r in reqs:
            res = results[r.uid]
            text = "" if isinstance(res, Failure) else res.texts[0]
            reasons[check_longtext(text, r.uid.rsplit(":", 1)[1], rules).reason or "pass"] += 1
        cells = [variant, str(len(reqs)), str(reasons["pass"])]
        cells += [str(reasons[k]) for k in ("not_two_paragraphs", "sentence_count", "label_word_stated", "too_short")]
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    atomic_write_text(args.out, ["\n".join(lines) + "\n"])


if __name__ == "__main__":
    main()
