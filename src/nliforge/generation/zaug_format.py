"""The Z-Aug generator's sequence format (Wu et al. 2022, §2.1): premise, label, hypothesis, in that order.

One training sequence is, as text,

    <|endoftext|>{premise}<|{label}|>{hypothesis}<|endoftext|>

`<|endoftext|>` is the tokenizer's BOS/EOS (as in GPT-2: the leading one lets the model learn
p(premise) from the first token on, the trailing one ends the sample). The label token —
`<|entailment|>`, `<|neutral|>` or `<|contradiction|>`, one added token each — is also the
separator between premise and hypothesis, so no other separator is needed and replacing it with
another label (the consistency loss's perturbed label l') keeps every other position in place.
No spaces surround the label token: premise and hypothesis are tokenized exactly as they read.

Prompts for sampling are prefixes of that text without the leading BOS (the backend adds it):
`""` samples a whole instance, `format_prefix(premise, label)` a hypothesis for a given premise
and label. `parse_generated` reads a whole sample back.
"""

from __future__ import annotations

from nliforge.data.labels import LABELS

LABEL_TOKENS: dict[str, str] = {name: f"<|{name}|>" for name in LABELS}
TOKEN_LABELS: dict[str, str] = {tok: name for name, tok in LABEL_TOKENS.items()}


def label_token(label: str) -> str:
    """The added token that stands for `label` (a label name)."""
    try:
        return LABEL_TOKENS[label]
    except KeyError:
        raise ValueError(f"Z-Aug generator: label {label!r} is not one of {list(LABEL_TOKENS)}") from None


def format_prefix(premise: str = "", label: str | None = None) -> str:
    """The prompt that makes the generator continue from a premise (and a label, when given)."""
    return premise + (label_token(label) if label is not None else "")


def parse_generated(text: str) -> tuple[str, str, str] | None:
    """(premise, label, hypothesis) from a sampled `{premise}<|{label}|>{hypothesis}`, else None.

    None when the text holds no label token or more than one, or when the premise or the
    hypothesis is empty after stripping whitespace (a sample cut at max_tokens usually is).
    """
    found = [(text.find(tok), tok) for tok in TOKEN_LABELS if tok in text]
    if len(found) != 1 or text.count(found[0][1]) != 1:
        return None
    at, tok = found[0]
    premise, hypothesis = text[:at].strip(), text[at + len(tok):].strip()
    if not premise or not hypothesis:
        return None
    return premise, TOKEN_LABELS[tok], hypothesis
