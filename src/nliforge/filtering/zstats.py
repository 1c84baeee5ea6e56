"""z-statistics of feature-label correlations (Gardner et al. 2021; Z-Aug, Wu et al. §3.1).

For a feature x seen in n examples, of which c have label l:

    z*(x, l) = (p̂(l|x) - p0) / sqrt(p0 (1 - p0) / n),   p̂(l|x) = c / n,   p0 = 1 / |labels|

p0 uses the number of labels in the configuration (3 for NLI), not the number observed. z is
undefined for a feature never seen (n = 0). The biased set B(l) holds the k features with the
highest z for label l among those with n > 0 and z > 0 (a feature seen less often than the base
rate with l is not biased *towards* l; with k = 20 on real data the top ranks are all far above
0 anyway).

Ties at the k-th rank (features with the same counts have bit-identical z, and counts are small
integers, so ties are common) follow `ties` (`TIES`):
- `name` (default): B(l) holds exactly k features; among those tied at the k-th z, the ones whose
  names sort first (Python string order, by code point) enter. The paper defines B(l) as a top k
  and leaves ties open; this keeps |B(l)| = k and makes the result independent of feature ids and
  data order, but which of the tied features enter depends on their names (an implementation that
  breaks ties the other way: a measurement counted up to 256 of 3,000 decisions differing with k = 20).
- `include`: every feature tied at the k-th z enters, so B(l) may hold more than k features and
  nothing depends on names. Within one batch it rejects every instance `name` rejects, and more.
Within B(l) features are listed by (-z, name).

All float arithmetic follows the formula's order exactly, in numpy and in `z_value`, so the
vectorised and the plain-Python paths give bit-identical z (IEEE division and sqrt are
correctly rounded); `zfilter.z_filter` and `zfilter.z_filter_reference` rely on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.utils.atomic import save_figure


def base_rate(n_labels: int) -> float:
    """p0 = 1 / number of labels; at least two labels are needed for a correlation to exist."""
    if n_labels < 2:
        raise NLIDataError(f"z-statistics need at least two labels (setting `labels`), got {n_labels}")
    return 1.0 / n_labels


def z_value(c: int, n: int, p0: float) -> float:
    """z*(x, l) for one feature in plain Python (n > 0)."""
    return (c / n - p0) / math.sqrt(p0 * (1 - p0) / n)


def z_scores(counts: np.ndarray) -> np.ndarray:
    """z* for a (features x labels) count array; NaN where the feature was never seen (n = 0)."""
    counts = np.asarray(counts)
    if counts.ndim != 2:
        raise NLIDataError(f"counts must be a (features x labels) array, got shape {counts.shape}")
    p0 = base_rate(counts.shape[1])
    n = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (counts / n - p0) / np.sqrt(p0 * (1 - p0) / n)
    return np.where(n > 0, z, np.nan)


def eligible_keys(counts: np.ndarray, n: np.ndarray, p0: float) -> np.ndarray:
    """z where the feature may be biased (n > 0 and z > 0), else -inf: the ranking key of B(l)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (counts / n[:, None] - p0) / np.sqrt(p0 * (1 - p0) / n[:, None])
    return np.where((n[:, None] > 0) & (z > 0), z, -np.inf)


TIES = ("name", "include")   # the tie rules at the k-th rank (module docstring)


def check_ties(ties: str, key: str = "ties") -> str:
    """A valid tie rule, or an NLIDataError naming the setting `key` and the choices."""
    if ties not in TIES:
        raise NLIDataError(f"{key}={ties!r}; valid: {', '.join(TIES)} (how features tied at the k-th z "
                           "enter B(l))")
    return ties


def exact_top_k(ids: np.ndarray, key: np.ndarray, k: int, names: Sequence[str], ties: str = "name") -> list[int]:
    """Ids of the k highest keys above -inf, ordered by (-key, name): deterministic. Features tied at
    the k-th key: the first by name (`ties="name"`, exactly k) or all of them (`ties="include"`)."""
    ok = key > -np.inf
    ids, key = ids[ok], key[ok]
    if len(ids) > k:
        t = key[np.argpartition(-key, k - 1)[k - 1]]
        above = np.flatnonzero(key > t)
        tied = np.flatnonzero(key == t).tolist()
        tied.sort(key=lambda i: names[ids[i]])
        pos = above.tolist() + (tied if check_ties(ties) == "include" else tied[: k - len(above)])
    else:
        pos = list(range(len(ids)))
    keys, fids = key.tolist(), ids.tolist()
    pos.sort(key=lambda i: (-keys[i], names[fids[i]]))
    return [fids[i] for i in pos]


def bonferroni_threshold(alpha: float, n_tests: int) -> float:
    """z above which a one-sided test is significant at family-wise level `alpha` over `n_tests`
    tests (Bonferroni), the significance curve of Gardner et al.'s word-label plots."""
    from scipy.stats import norm

    if not 0 < alpha < 1:
        raise NLIDataError(f"alpha must be in (0, 1), got {alpha!r}")
    if n_tests < 1:
        raise NLIDataError("no features to test: the texts have no tokens")
    return float(norm.isf(alpha / n_tests))


def check_k(k: int, n_features: int) -> None:
    """k must be a positive integer no larger than the number of features."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise NLIDataError(f"k (biased features per label) must be a positive integer, got {k!r}")
    if n_features == 0:
        raise NLIDataError("the feature set is empty: no features to rank (need at least k = "
                           f"{k} features)")
    if k > n_features:
        raise NLIDataError(f"k = {k} biased features per label, but only {n_features} features exist; "
                           "lower `k`")


def top_biased(counts: np.ndarray, names: Sequence[str], k: int = 20,
               labels: Sequence[str] = LABELS, ties: str = "name") -> dict[str, list[tuple[str, float]]]:
    """B(l) for every label: the k (name, z) pairs with the highest z, best first (`ties`: module docstring)."""
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != len(labels) or counts.shape[0] != len(names):
        raise NLIDataError(f"counts shape {counts.shape} does not match {len(names)} names x "
                           f"{len(labels)} labels (setting `labels`)")
    check_k(k, counts.shape[0])
    p0 = base_rate(len(labels))
    keys = eligible_keys(counts, counts.sum(axis=1), p0)
    ids = np.arange(counts.shape[0])
    out = {}
    for li, label in enumerate(labels):
        top = exact_top_k(ids, keys[:, li], k, names, ties)
        out[label] = [(names[f], float(keys[f, li])) for f in top]
    return out


def label_ids(records, labels: Sequence[str] = LABELS, where: str = "records") -> np.ndarray:
    """Label ids of records in `labels` order; unlabeled or foreign labels are errors."""
    index = {lab: i for i, lab in enumerate(labels)}
    out = np.empty(len(records), np.int64)
    for i, rec in enumerate(records):
        li = index.get(rec.label)
        if li is None:
            raise NLIDataError(f"{where}: record {rec.uid!r} has label {rec.label!r}; z-statistics "
                               f"need one of the configured `labels` {list(labels)}")
        out[i] = li
    return out


def feature_label_counts(matrix: sp.csr_matrix, labs: np.ndarray, n_labels: int) -> np.ndarray:
    """(features x labels) counts of examples having each feature, from a binary CSR matrix."""
    lab_per_entry = np.repeat(labs, np.diff(matrix.indptr))
    flat = np.bincount(matrix.indices.astype(np.int64) * n_labels + lab_per_entry,
                       minlength=matrix.shape[1] * n_labels)
    return flat.reshape(matrix.shape[1], n_labels)


def dataset_counts(records, labels: Sequence[str] = LABELS, hypo_preds=None,
                   single_label_ok: bool = False) -> tuple[np.ndarray, list[str]]:
    """(features x labels) counts of a labelled dataset over the App. B feature space, and the names.
    A dataset with fewer than two labels is an error (it has no z) unless `single_label_ok`."""
    from nliforge.filtering.features import FeatureSpace

    labs = label_ids(records, labels)
    if len(set(labs.tolist())) < 2 and not single_label_ok:
        raise NLIDataError(f"the dataset has a single label ({sorted({r.label for r in records})}); "
                           "z-statistics measure label skew and need at least two labels present")
    space = FeatureSpace(labels)
    matrix = space.featurise_records(records, hypo_preds)
    return feature_label_counts(matrix, labs, len(labels)), list(space.names)


def dataset_biased(records, k: int = 20, labels: Sequence[str] = LABELS, hypo_preds=None):
    """B(l) of a labelled dataset (Table 12 style): {label: [(feature, z), ...]}."""
    counts, names = dataset_counts(records, labels, hypo_preds)
    return top_biased(counts, names, k, labels)


def draw_word_label(ax, counts: np.ndarray, label: str, threshold: float = 3.0,
                    labels: Sequence[str] = LABELS, names: Sequence[str] | None = None,
                    annotate: int = 5, title: str | None = None) -> None:
    """Gardner-style plot for one label on a matplotlib axis: x = n (log), y = p̂(label|x).

    The curve p0 + threshold * sqrt(p0 (1 - p0) / n) is where z* = threshold: features above it
    are significantly correlated with `label`. With `names`, the `annotate` highest-z features
    are labelled.
    """
    counts = np.asarray(counts)
    if label not in labels:
        raise NLIDataError(f"word_label_plot: label {label!r} not in `labels` {list(labels)}")
    li, p0 = list(labels).index(label), base_rate(counts.shape[1])
    n = counts.sum(axis=1)
    seen = n > 0
    ax.scatter(n[seen], counts[seen, li] / n[seen], s=4, alpha=0.4, color="tab:blue", label="features")
    grid = np.logspace(0, np.log10(max(n.max(), 10)), 200)
    ax.plot(grid, p0 + threshold * np.sqrt(p0 * (1 - p0) / grid), color="tab:red",
            label=f"z* = {threshold:.3g}")
    ax.axhline(p0, color="grey", lw=0.8, ls="--")
    if names is not None and annotate:
        z = z_scores(counts)[:, li]
        best = np.argsort(-np.nan_to_num(z, nan=-np.inf))[:annotate]
        for i, f in enumerate(best[n[best] > 0]):  # stacked, so features at one point stay legible
            ax.annotate(names[f], (n[f], counts[f, li] / n[f]), xytext=(4, 2 - 9 * i),
                        textcoords="offset points", fontsize=7)
    ax.set(xscale="log", xlabel="n (examples with the feature)", ylabel=f"p̂({label} | feature)",
           ylim=(0, 1.02), title=title or f"feature-label correlation: {label}")
    ax.legend(loc="lower right", fontsize=8)


def word_label_plot(counts: np.ndarray, path: str | Path, label: str, threshold: float = 3.0,
                    labels: Sequence[str] = LABELS, names: Sequence[str] | None = None,
                    annotate: int = 5) -> Path:
    """`draw_word_label` for one label, saved as a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if label not in labels:
        raise NLIDataError(f"word_label_plot: label {label!r} not in `labels` {list(labels)}")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    draw_word_label(ax, counts, label, threshold, labels, names, annotate)
    return save_figure(fig, path, dpi=120)
