"""The WANLI pattern prompt (WANLI, Fig. 2) and its chat variant.

The completion prompt lists k+1 same-label examples, the seed last, each as
`{i}. {premise}` / `{Word}: {hypothesis}`, then opens the next item with `{k+2}.`; the model
writes the premise, the label word and the hypothesis of a new pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from nliforge.errors import NLIDataError

INSTRUCTION = "Write a pair of sentences that have the same relationship as the previous examples. Examples:"
LABEL_WORDS = {"entailment": "Implication", "neutral": "Possibility", "contradiction": "Contradiction"}
# Chat models answer instead of continuing: ask for exactly the next item, in the same format.
CHAT_SYSTEM = ("You continue numbered lists of sentence pairs. Reply with exactly one new item in the "
               "same format as the examples: its premise sentence, then a new line starting with the "
               "same relation word, a colon and the second sentence. Write nothing else.")


def label_word(label: str) -> str:
    """Implication / Possibility / Contradiction for entailment / neutral / contradiction."""
    try:
        return LABEL_WORDS[label]
    except KeyError:
        raise NLIDataError(f"no prompt word for label {label!r}; expected one of {sorted(LABEL_WORDS)}") from None


def wanli_prompt(examples: Sequence[tuple[str, str]], label: str) -> str:
    """The exact Fig. 2 prompt for (premise, hypothesis) examples that share `label`, seed last."""
    if not examples:
        raise NLIDataError("a WANLI prompt needs at least one in-context example")
    word = label_word(label)
    items = [f"{i}. {premise}\n{word}: {hypothesis}" for i, (premise, hypothesis) in enumerate(examples, 1)]
    return INSTRUCTION + "\n\n" + "\n\n".join(items) + f"\n\n{len(examples) + 1}."


def wanli_chat_messages(examples: Sequence[tuple[str, str]], label: str) -> tuple[dict[str, str], ...]:
    """The chat variant: the same prompt text as the user turn, with a system turn asking for one item."""
    return ({"role": "system", "content": CHAT_SYSTEM},
            {"role": "user", "content": wanli_prompt(examples, label)})
