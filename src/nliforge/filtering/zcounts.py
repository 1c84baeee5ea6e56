"""Incrementally maintained feature x label counts and biased-feature sets for z-filtering.

Adding a batch of accepted examples touches only the features they contain, so only those
features' z change: counts, n and the ranking keys are updated for them alone. Finding B(l)
each batch must not scan all features either (millions of n-grams). It uses a bound: a feature
seen n times has z <= zmax(n) = (1 - p0) / sqrt(p0 (1 - p0) / n) (p̂ = 1), increasing in n. If the
k-th best z among a "hot" subset H_l is L and every feature outside H_l has n < n*(L) = the
smallest n with zmax(n) >= L, then no outside feature can reach L, so the top k of H_l is the
exact global top k (ties included). H_l = features with n >= n_h; n only grows, so features join
H_l as batches touch them. When the bound fails (L fell below what H_l covers) the label's top k
is taken over all features and H_l is rebuilt with n_h = n*(L) / 2, leaving room for L to fall;
when L has grown enough that n*(L) >= 4 n_h, H_l is shrunk. The result is always exactly what a
full scan would give (tested against the from-scratch reference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nliforge.filtering.zstats import eligible_keys, exact_top_k


class IncrementalBias:
    """Counts of Z and its biased sets B(l), updated batch by batch.

    Invariant: hot[l] == {features with n >= n_hot[l]} (as an unordered id array).
    """

    def __init__(self, n_features: int, n_labels: int, k: int, names: Sequence[str], p0: float,
                 ties: str = "name"):
        self.k, self.names, self.p0, self.ties = k, names, p0, ties
        self.counts = np.zeros((n_features, n_labels), np.int64)
        self.n = np.zeros(n_features, np.int64)
        self.keys = np.full((n_features, n_labels), -np.inf)
        self.hot = [np.zeros(0, np.int64) for _ in range(n_labels)]
        self.n_hot = [1] * n_labels
        self.full_scans = 0

    def add(self, cols: np.ndarray, labs: np.ndarray) -> None:
        """Add accepted examples, given as their (feature id, label id) entries."""
        if not len(cols):
            return
        touched = np.unique(cols)
        n_before_touched = self.n[touched].copy()
        np.add.at(self.counts, (cols, labs), 1)
        np.add.at(self.n, cols, 1)
        n_now = self.n[touched]
        self.keys[touched] = eligible_keys(self.counts[touched], n_now, self.p0)
        for li, n_h in enumerate(self.n_hot):
            joins = touched[(n_before_touched < n_h) & (n_now >= n_h)]
            if len(joins):
                self.hot[li] = np.concatenate([self.hot[li], joins])

    def zmax(self, n: int) -> float:
        """The largest z a feature seen n times can have (same float operations as its z)."""
        p0 = self.p0
        return (n / n - p0) / math.sqrt(p0 * (1 - p0) / n)

    def n_star(self, bound: float) -> int:
        """Smallest n >= 1 with zmax(n) >= bound."""
        q = self.p0 * (1 - self.p0)
        n = max(1, int(bound * bound * q / (1 - self.p0) ** 2) - 3)
        while n > 1 and self.zmax(n - 1) >= bound:
            n -= 1
        while self.zmax(n) < bound:
            n += 1
        return n

    def biased(self, li: int) -> list[int]:
        """B(label li) on the current counts: feature ids, highest z first (ties: `self.ties`).

        With `ties="include"` the top may hold more than k; its last feature still has the k-th z, and
        every feature outside H_l has a z strictly below it, so none can tie."""
        hot = self.hot[li]
        if len(hot) >= self.k:
            top = exact_top_k(hot, self.keys[hot, li], self.k, self.names, self.ties)
            if len(top) >= self.k:
                n_star = self.n_star(self.keys[top[-1], li])
                if n_star >= self.n_hot[li]:
                    if n_star >= 4 * self.n_hot[li]:
                        self._rebuild(li, n_star // 2, hot)
                    return top
        self.full_scans += 1
        top = exact_top_k(np.arange(len(self.n)), self.keys[:, li], self.k, self.names, self.ties)
        n_star = self.n_star(self.keys[top[-1], li]) if len(top) >= self.k else 1
        self._rebuild(li, max(1, n_star // 2), None)
        return top

    def _rebuild(self, li: int, n_h: int, within: np.ndarray | None) -> None:
        """H_li := features (of `within`, or all) seen at least n_h times."""
        self.n_hot[li] = n_h
        if within is None:
            self.hot[li] = np.flatnonzero(self.n >= n_h)
        else:
            self.hot[li] = within[self.n[within] >= n_h]
