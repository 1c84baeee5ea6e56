"""Word-label correlations of a dataset (Gardner et al. 2021; WANLI §4.1, Fig. 3).

Under the competency-problem view no single word should tell the label. For every word x of the
hypotheses (or premises) and every label l we count n(x) (examples containing x) and c(x, l),
and test p̂(l|x) = c/n against the base rate p0 = 1/|labels| with the z-statistic of
`nliforge.filtering.zstats` (one-sided, normal approximation). Words are the App. B feature
space's unigrams (`filtering.features`), so this plot and z-filtering see the same tokens.

Threshold: either a fixed z (default 3.0), or `alpha`: a Bonferroni-corrected one-sided test at
family-wise level alpha over the m words observed, i.e. z > Φ⁻¹(1 − alpha / m). This is Gardner
et al.'s choice (alpha = 0.01 over the vocabulary); with tens of thousands of words it gives
z ≈ 5, so only strong correlations pass. A word significant for several labels is listed once
per label.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nliforge.analysis.partial_input import balance_labels, check_labeled
from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.filtering.features import FeatureSpace
from nliforge.filtering.zstats import (bonferroni_threshold, feature_label_counts, label_ids, word_label_plot,
                                      z_scores)
from nliforge.utils.atomic import atomic_write_text

SIDES = ("hypothesis", "premise")
CSV_COLUMNS = ("word", "label", "n", "count", "p_label_given_word", "z")


@dataclass
class WordLabelResult:
    """Counts and z* of every word; `significant` lists (word, label, n, count, p̂, z) rows."""

    names: list[str]
    counts: np.ndarray  # (words x labels)
    z: np.ndarray  # (words x labels), NaN for unseen words
    labels: tuple[str, ...]
    threshold: float
    significant: list[tuple[str, str, int, int, float, float]]


def unigram_matrix(records, side: str = "hypothesis"):
    """(binary CSR examples x words, word names) from the App. B feature space's unigrams."""
    if side not in SIDES:
        raise NLIDataError(f"side must be one of {SIDES}, got {side!r}")
    space = FeatureSpace()
    matrix = space.featurise_records(records).tocsc()
    suffix = f"@{side}"
    cols = [i for i, name in enumerate(space.names) if name.endswith(suffix) and " " not in name]
    names = [space.names[i][: -len(suffix)] for i in cols]
    return matrix[:, cols].tocsr(), names


def word_label_correlations(records, *, side: str = "hypothesis", threshold: float = 3.0,
                            alpha: float | None = None, min_count: int = 1,
                            balance: bool = False, seed: int = 0,
                            labels: Sequence[str] = LABELS,
                            where: str = "records") -> WordLabelResult:
    """z* of every (word, label) and the words above the threshold (or Bonferroni at `alpha`).

    `balance` first downsamples labels to the rarest (as WANLI does before Fig. 3), so a skewed
    label distribution does not make every frequent word look biased. Words seen in fewer than
    `min_count` examples are dropped before counting the tests.
    """
    check_labeled(records, where, labels)
    if balance:
        records = balance_labels(records, seed)
    matrix, names = unigram_matrix(records, side)
    counts = feature_label_counts(matrix, label_ids(records, labels, where), len(labels))
    keep = np.flatnonzero(counts.sum(axis=1) >= max(1, min_count))
    counts, names = counts[keep], [names[i] for i in keep]
    if not names:
        raise NLIDataError(f"{where}: no {side} word is seen in at least min_count={min_count} "
                           "examples; lower `min_count`")
    if alpha is not None:
        threshold = bonferroni_threshold(alpha, len(names))
    z = z_scores(counts)
    rows = []
    n = counts.sum(axis=1)
    for f, li in zip(*np.nonzero(np.nan_to_num(z, nan=-np.inf) > threshold)):
        rows.append((names[f], labels[li], int(n[f]), int(counts[f, li]),
                     float(counts[f, li] / n[f]), float(z[f, li])))
    rows.sort(key=lambda r: (-r[5], r[0], r[1]))
    return WordLabelResult(names, counts, z, tuple(labels), float(threshold), rows)


def write_word_label(result: WordLabelResult, out_dir: str | os.PathLike,
                     annotate: int = 8) -> dict[str, Path]:
    """Write `word_label_significant.csv` and one `word_label_<label>.png` per label."""
    out_dir = Path(out_dir)
    lines = [",".join(CSV_COLUMNS) + "\n"]
    for word, label, n, c, p, z in result.significant:
        lines.append(_csv_line([word, label, n, c, f"{p:.6f}", f"{z:.4f}"]))
    paths = {"csv": atomic_write_text(out_dir / "word_label_significant.csv", lines)}
    for label in result.labels:
        paths[label] = word_label_plot(result.counts, out_dir / f"word_label_{label}.png",
                                       label, result.threshold, result.labels, result.names,
                                       annotate)
    return paths


def _csv_line(values) -> str:
    """One CSV row (quoted where needed) ending in a newline."""
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(values)
    return buf.getvalue()
