"""Text comparisons review needs: is a submitted text a revision of the original, and is a
revision only a punctuation/case/whitespace change (which the WANLI code keeps from one annotator)."""

from __future__ import annotations

import re
import string

_WS = re.compile(r"\s+")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’«»…–—")


def normalize_whitespace(text: str) -> str:
    """Runs of whitespace become one space; leading/trailing whitespace goes (a text box adds both)."""
    return _WS.sub(" ", text or "").strip()


def differs(original: str, submitted: str) -> bool:
    """True when `submitted` is a real edit of `original`, ignoring whitespace differences."""
    return normalize_whitespace(original) != normalize_whitespace(submitted)


def skeleton(text: str) -> str:
    """Lower-cased, punctuation removed, whitespace normalised: what a trivial edit leaves unchanged."""
    return normalize_whitespace(text.lower().translate(_PUNCT))


def trivial_change(original: str, submitted: str) -> bool:
    """True when the two texts differ at most in punctuation, case and whitespace."""
    return skeleton(original) == skeleton(submitted)
