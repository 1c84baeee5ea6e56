"""A note written on a figure itself, for what a reader of the PNG alone must know (e.g. that its
numbers come from a stand-in model or server, not a real LLM): captions in a README get separated
from the image, the text drawn on it does not."""

from __future__ import annotations


def add_note(fig, note: str | None) -> None:
    """Draw `note` in small red type just below `fig`'s bottom edge, clear of its axes (nothing when empty);
    save with bbox_inches="tight" so the saved image grows to hold it."""
    if note:
        fig.text(0.5, -0.01, note, ha="center", va="top", fontsize=8, color="firebrick")
