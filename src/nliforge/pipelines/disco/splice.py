"""Putting a DISCO filler into a premise by span offsets (§3.1; PRIOR_ART.md "DISCO").

The original code built the new premise with ``premise.replace(span, filler)``, which rewrites
*every* occurrence of the span text ("a man ... a man"); here the edit is made only at the span's
character offsets, and the offsets are checked against the span's text first.

* :func:`splice` replaces ``text[span.start:span.end]`` with a filler and tidies the two seams;
* :func:`masked` is the masked-prompt premise (the span replaced by ``[blank]``);
* :func:`prefix_suffix` is the text before and after the span, for the insertion mode;
* :func:`clean_filler` extracts the filler from a raw LLM completion.
"""

from __future__ import annotations

from nliforge.engine.rows import clean_text
from nliforge.pipelines.disco.chunker import Span

MASK = "[blank]"
# No space goes before these (when they start the right side of a seam) ...
_CLOSING = set(",.;:!?)]}%”’…")
# ... nor after these (when they end the left side).
_OPENING = set("([{“‘")


def check_span(text: str, span: Span) -> None:
    """Raise ValueError unless `span`'s offsets lie in `text` and select exactly `span.text`."""
    if not 0 <= span.start <= span.end <= len(text) or text[span.start:span.end] != span.text:
        found = text[span.start:span.end] if 0 <= span.start <= span.end <= len(text) else None
        raise ValueError(f"span offsets [{span.start}, {span.end}) select {found!r} in {text!r}, "
                         f"not the span text {span.text!r}")


def _join(left: str, right: str, spaced: bool) -> str:
    """`left` + `right` with one space between them if the original seam had whitespace
    (`spaced`), except before closing punctuation or after an opening bracket/quote."""
    if not left or not right:
        return left + right
    if right[0] in _CLOSING or left[-1] in _OPENING or not spaced:
        return left + right
    return f"{left} {right}"


def splice(text: str, span: Span, filler: str) -> str:
    """`text` with the span's characters (only that occurrence) replaced by `filler`.

    Whitespace at the seams is normalised: the filler's inner whitespace collapses to single
    spaces; each seam gets one space if the original had whitespace there and none otherwise
    (so "dog's" -> "cat's" keeps its apostrophe attached); never a space before punctuation that
    follows ("the guitar ." cannot happen). An empty filler deletes the span and leaves one seam.
    Raises ValueError if the span's offsets do not select its text.
    """
    check_span(text, span)
    left, right = text[:span.start], text[span.end:]
    left_core, right_core = left.rstrip(), right.lstrip()
    left_spaced, right_spaced = left != left_core, right != right_core
    filler = " ".join(filler.split())
    if not filler:
        return _join(left_core, right_core, left_spaced or right_spaced)
    return _join(_join(left_core, filler, left_spaced), right_core, right_spaced)


def masked(text: str, span: Span, mask: str = MASK) -> str:
    """The masked-prompt premise: `text` with the span replaced by `mask` (offsets, as splice)."""
    return splice(text, span, mask)


def prefix_suffix(text: str, span: Span) -> tuple[str, str]:
    """Text before and after the span, whitespace at the gap stripped, for the insertion mode.

    The seams are restored by :func:`splice` when the generated filler is put back.
    """
    check_span(text, span)
    return text[:span.start].rstrip(), text[span.end:].lstrip()


def clean_filler(completion: str, *, sentence_final: bool = False) -> str | None:
    """The filler in a raw completion, or None if nothing is left.

    Steps: take the first non-blank line (completions often start with a newline); strip
    whitespace and wrapping or stray edge quotes/brackets (``nliforge.engine.rows.clean_text``,
    as WANLI's heuristics do); then, unless `sentence_final`, drop trailing periods, because a span that does
    not end its sentence must not end in one (the model often closes a sentence anyway). Pass
    ``sentence_final=True`` when nothing but whitespace follows the span (``prefix_suffix`` gives
    an empty suffix); chunker spans never include the sentence's own final period, which stays in
    the suffix, so for them the default is right.
    """
    line = next((ln for ln in completion.splitlines() if ln.strip()), "")
    filler = clean_text(line)
    if not sentence_final:
        filler = clean_text(filler.rstrip(". \t"))
    return filler or None
