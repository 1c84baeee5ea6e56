"""Rendering token attributions: an HTML page (tokens coloured red for positive, blue for negative
attribution, opacity by size relative to the largest in the pair) and a PNG per pair (the same
colours as a heatmap of token cells, rows of `per_row` tokens, with the token text drawn in).
`render_attributions` does both for a classifier folder and a list of pairs."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nliforge.analysis.attributions import Attribution, attribute_pair
from nliforge.models.predict import load_classifier
from nliforge.utils.atomic import atomic_write_text, save_figure

METHOD_NAMES = {"ig": "integrated gradients", "gxi": "gradient x input"}


def _colour(score: float, scale: float) -> str:
    alpha = min(1.0, abs(score) / scale) if scale > 0 else 0.0
    rgb = "220,38,38" if score > 0 else "37,99,235"
    return f"rgba({rgb},{alpha:.3f})"


def _header(a: Attribution, index: int) -> str:
    probs = ", ".join(f"{k} {v:.3f}" for k, v in a.probs.items())
    bits = [f"pair {index}" + (f", window {a.window}" if a.window else ""),
            f"attribution towards <b>{html.escape(a.target)}</b> ({METHOD_NAMES[a.method]})",
            f"p: {probs}"]
    if a.delta is not None:
        bits.append(f"completeness gap {a.delta:+.2e}")
    return " &middot; ".join(bits)


def attribution_html(attributions: Sequence[tuple[int, Attribution]]) -> str:
    """One page with every (pair index, attribution): a header line and the coloured tokens."""
    blocks = []
    for index, a in attributions:
        scale = float(np.abs(a.scores).max()) if len(a.scores) else 0.0
        spans = "".join(f'<span class="t" style="background:{_colour(s, scale)}" title="{s:+.4f}">'
                        f"{html.escape(t)}</span>" for t, s in zip(a.tokens, a.scores))
        blocks.append(f'<div class="pair"><div class="h">{_header(a, index)}</div><div class="x">{spans}</div></div>')
    style = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}.pair{margin:1.5em 0}"
             ".h{font-size:.85em;color:#333;margin-bottom:.4em}.x{line-height:1.9}"
             ".t{white-space:pre;padding:1px 0;border-radius:2px}")
    legend = ('<p>Red: the token raises the score of the named label; blue: it lowers it. '
              'Hover a token for its attribution.</p>')
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>Token attributions</title>"
            f"<style>{style}</style></head><body><h1>Token attributions</h1>{legend}{''.join(blocks)}</body></html>\n")


def attribution_png(a: Attribution, path: str | Path, per_row: int = 16) -> Path:
    """A heatmap of token cells (bwr colours, symmetric scale) with the tokens written in."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(a.tokens)
    rows = max(1, math.ceil(n / per_row))
    grid = np.full((rows, per_row), np.nan)
    grid.flat[:n] = a.scores
    scale = float(np.abs(a.scores).max()) or 1.0
    fig, ax = plt.subplots(figsize=(per_row * 0.75, 0.9 + rows * 0.38))
    image = ax.imshow(grid, cmap="bwr", vmin=-scale, vmax=scale, aspect="auto")
    for i, tok in enumerate(a.tokens):
        ax.text(i % per_row, i // per_row, tok.strip()[:10] or "␣", ha="center", va="center", fontsize=6.5)
    ax.set_xticks([])
    ax.set_yticks([])
    probs = "  ".join(f"{k[:4]} {v:.2f}" for k, v in a.probs.items())
    ax.set_title(f"{METHOD_NAMES[a.method]} towards {a.target}   ({probs})", fontsize=8)
    fig.colorbar(image, ax=ax, fraction=0.02, pad=0.01)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)


def write_page(attributions: Sequence[tuple[int, Attribution]], path: str | Path) -> Path:
    atomic_write_text(Path(path), [attribution_html(attributions)])
    return Path(path)


def render_attributions(model_dir: str | Path, pairs, out_dir: str | Path, method: str = "ig",
                        **settings) -> list[Path]:
    """Attribute every (premise, hypothesis) pair with the classifier in `model_dir`; write
    `attributions.html` (all pairs) and one `attribution_<pair>[_w<window>].png` per pair or window
    into out_dir. `settings` go to `attribute_pair` (target, max_length, long_inputs, n_steps, ...).
    Returns [html, png, ...]."""
    model, tokenizer, perm = load_classifier(model_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    done, pngs = [], []
    for i, (premise, hypothesis) in enumerate(pairs, 1):
        for j, a in enumerate(attribute_pair(model, tokenizer, perm, premise, hypothesis, method, **settings), 1):
            done.append((i, a))
            pngs.append(attribution_png(a, out / (f"attribution_{i}" + (f"_w{j}" if a.window else "") + ".png")))
    return [write_page(done, out / "attributions.html"), *pngs]
