"""Parse one WANLI completion into (premise, hypothesis), or say why it is dropped.

The completion continues the prompt after `{k+2}.`, so it reads ` {premise}\\n{Word}: {hypothesis}`
where Word is the seed label's prompt word. As in the original pipeline, the text is split on
`\\n{Word}: ` and must give exactly two parts; anything else is dropped and counted under a short
stable reason (the manifest counts them). Sides are stripped of surrounding whitespace; a side
left empty is dropped as `empty_side`, so every parsed pair is a valid record of the data model even
with no heuristic filter after it (the no-filter ablation of experiments/wanli_generated); short sides are the heuristic
filter's `too_short`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nliforge.pipelines.wanli.prompts import label_word

EMPTY = "empty"
NO_SEPARATOR = "no_separator"
TOO_MANY_PARTS = "too_many_parts"
EMPTY_SIDE = "empty_side"
DROP_REASONS: tuple[str, ...] = (EMPTY, NO_SEPARATOR, TOO_MANY_PARTS, EMPTY_SIDE)

# A chat model answers instead of continuing, and often repeats the item number: "6. A man ...".
_LEADING_NUMBER = re.compile(r"^\s*\d+\s*[.)]\s*")


@dataclass(frozen=True)
class ParseDrop:
    """A completion that gives no pair; `reason` is one of DROP_REASONS."""

    reason: str


def parse_completion(text: str | None, label: str, chat: bool = False) -> tuple[str, str] | ParseDrop:
    """(premise, hypothesis) from a completion for a prompt of `label`, or a ParseDrop.

    `chat=True` also removes a leading item number (`6.` or `6)`) that chat replies tend to
    repeat; completion replies start right after the prompt's own `6.` and are left as they are.
    """
    word = label_word(label)
    if text is None or not text.strip():
        return ParseDrop(EMPTY)
    text = text.replace("\r\n", "\n")
    if chat:
        text = _LEADING_NUMBER.sub("", text, count=1)
    parts = text.split(f"\n{word}: ")
    if len(parts) == 1:
        return ParseDrop(NO_SEPARATOR)
    if len(parts) > 2:
        return ParseDrop(TOO_MANY_PARTS)
    premise, hypothesis = parts[0].strip(), parts[1].strip()
    if not premise or not hypothesis:
        return ParseDrop(EMPTY_SIDE)
    return premise, hypothesis
