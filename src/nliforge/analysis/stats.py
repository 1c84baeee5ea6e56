"""Dataset statistics (WANLI Table 2 style) and a data-map helper over saved training dynamics.

Definitions (words are `world.artifacts.words`: lowercased regex words, punctuation
dropped, the unit every artifact and z-statistic in nliforge uses):
- lengths: words per premise / hypothesis; mean, median, p95 (numpy's linear interpolation);
- `lexical_overlap`: mean over examples of the share of hypothesis words (positions) whose word
  occurs in the premise (0 for a hypothesis without words), the App. B `lex-overlap` ratio;
  `full_overlap_rate`: share of examples where that ratio is 1 (every hypothesis word in the
  premise: the world's `overlap` artifact);
- `duplicate_pairs`: records whose (premise, hypothesis) word sequences already occurred in an
  earlier record (so k copies count k - 1); `conflicting_duplicates`: those among them whose
  label differs from the first copy's;
- `vocabulary`: distinct words over premises and hypotheses; `hypothesis_vocabulary` alone.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import atomic_write_text
from nliforge.world.artifacts import words

UNLABELED = "unlabeled"


def length_summary(lengths: list[int]) -> dict[str, float]:
    """Mean, median and 95th percentile of a list of lengths."""
    arr = np.asarray(lengths, dtype=np.float64)
    return {"mean": float(arr.mean()), "median": float(np.median(arr)),
            "p95": float(np.percentile(arr, 95))}


def overlap_ratio(premise_words: list[str], hypothesis_words: list[str]) -> float:
    """Share of hypothesis word positions whose word is in the premise (0 when no words)."""
    if not hypothesis_words:
        return 0.0
    pset = set(premise_words)
    return sum(w in pset for w in hypothesis_words) / len(hypothesis_words)


def duplicate_counts(records, tokens) -> tuple[int, int]:
    """(duplicate pairs, duplicates whose label differs from the first copy's)."""
    first_label: dict[tuple, object] = {}
    dup = conflict = 0
    for rec, (p, h) in zip(records, tokens):
        key = (tuple(p), tuple(h))
        if key in first_label:
            dup += 1
            conflict += first_label[key] != rec.label
        else:
            first_label[key] = rec.label
    return dup, conflict


def dataset_stats(records, where: str = "records") -> dict:
    """All statistics of the module docstring as a JSON-able dict."""
    if not records:
        raise NLIDataError(f"{where}: no records to describe")
    tokens = [(words(r.premise), words(r.hypothesis)) for r in records]
    labels = Counter(r.label if r.label is not None else UNLABELED for r in records)
    order = [lab for lab in LABELS if lab in labels] + sorted(set(labels) - set(LABELS))
    ratios = [overlap_ratio(p, h) for p, h in tokens]
    dup, conflict = duplicate_counts(records, tokens)
    n = len(records)
    return {
        "n": n,
        "labels": {lab: labels[lab] for lab in order},
        "label_share": {lab: labels[lab] / n for lab in order},
        "premise_words": length_summary([len(p) for p, _ in tokens]),
        "hypothesis_words": length_summary([len(h) for _, h in tokens]),
        "lexical_overlap": float(np.mean(ratios)),
        "full_overlap_rate": float(np.mean([r == 1.0 for r in ratios])),
        "duplicate_pairs": dup,
        "conflicting_duplicates": conflict,
        "vocabulary": len({w for p, h in tokens for w in p + h}),
        "hypothesis_vocabulary": len({w for _, h in tokens for w in h}),
    }


def stats_markdown(stats: dict, name: str = "dataset") -> str:
    """A two-column markdown table of `dataset_stats` output."""
    rows = [("examples", f"{stats['n']:,}")]
    for lab, count in stats["labels"].items():
        rows.append((f"label {lab}", f"{count:,} ({stats['label_share'][lab]:.1%})"))
    for side in ("premise", "hypothesis"):
        s = stats[f"{side}_words"]
        rows.append((f"{side} words mean / median / p95",
                     f"{s['mean']:.1f} / {s['median']:.1f} / {s['p95']:.1f}"))
    rows += [
        ("lexical overlap (mean share of hypothesis words in premise)", f"{stats['lexical_overlap']:.3f}"),
        ("full lexical overlap rate", f"{stats['full_overlap_rate']:.3f}"),
        ("duplicate pairs (conflicting labels)",
         f"{stats['duplicate_pairs']:,} ({stats['conflicting_duplicates']:,})"),
        ("vocabulary (hypothesis only)", f"{stats['vocabulary']:,} ({stats['hypothesis_vocabulary']:,})"),
    ]
    lines = [f"| {name} | value |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def write_stats(stats: dict, out_dir: str | os.PathLike, name: str = "dataset") -> dict[str, Path]:
    """Write stats.json and stats.md into `out_dir` (atomically)."""
    out_dir = Path(out_dir)
    return {
        "json": atomic_write_text(out_dir / "stats.json", [json.dumps(stats, indent=2) + "\n"]),
        "markdown": atomic_write_text(out_dir / "stats.md", [stats_markdown(stats, name)]),
    }


def write_data_map(dynamics_dir: str | os.PathLike, out_dir: str | os.PathLike,
                   title: str = "Data map", allow_missing: bool = False) -> dict:
    """Data map PNG and metrics.parquet of a dynamics folder, written into `out_dir`.

    Same computation as `cartography.summarize`, but the input folder is left untouched (an
    analysis should not write into a finished run's outputs).
    """
    from nliforge.cartography import compute_metrics, load_dynamics, plot_data_map
    from nliforge.cartography.store import frame_to_parquet_bytes
    from nliforge.utils.atomic import atomic_write_bytes

    folder = Path(dynamics_dir)
    if not folder.is_dir():
        raise NLIDataError(f"{folder}: not a folder; expected a training-dynamics folder with "
                           "epoch_NNN.parquet files (written by callbacks.dynamics)")
    try:
        metrics = compute_metrics(load_dynamics(folder, allow_missing=allow_missing))
    except (FileNotFoundError, ValueError) as err:
        raise NLIDataError(f"{folder}: cannot read training dynamics: {err}") from None
    out_dir = Path(out_dir)
    return {
        "metrics": atomic_write_bytes(out_dir / "metrics.parquet",
                                      frame_to_parquet_bytes(metrics, index=True)),
        "plot": plot_data_map(metrics, out_dir / "data_map.png", title=title),
        "n": len(metrics),
    }
