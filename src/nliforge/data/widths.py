"""Static batch widths (`data.static_widths=N`): at most N padded widths chosen from the training set's lengths,
so that a compiled training step sees a few fixed shapes (nliforge.models.graphs compiles one graph per width)."""

from __future__ import annotations

from collections.abc import Sequence

from nliforge.errors import NLIDataError

MAX_STATIC_WIDTHS = 8


def static_widths(lengths: Sequence[int], n: int, multiple: int = 8, weights: Sequence[int] | None = None) -> list[int]:
    """At most `n` padded widths (multiples of `multiple`, the largest covering the longest length) that
    minimise the padded tokens when each length is padded to the smallest width >= it, `weights[i]` rows
    at `lengths[i]` (one each by default): an exact 1-D partition, by dynamic programming over the
    distinct rounded lengths."""
    if not 1 <= int(n) <= MAX_STATIC_WIDTHS:
        raise NLIDataError(f"data.static_widths={n}: expected an integer from 1 to {MAX_STATIC_WIDTHS}, or null")
    if not len(lengths):
        raise NLIDataError("data.static_widths: the training set is empty")
    m = max(int(multiple), 1)
    rows: dict[int, int] = {}
    for x, w in zip(lengths, weights if weights is not None else [1] * len(lengths)):
        key = -(-int(x) // m) * m
        rows[key] = rows.get(key, 0) + int(w)
    cands = sorted(rows)
    prefix = [0]
    for w in cands:
        prefix.append(prefix[-1] + rows[w])

    def cost(i: int, j: int) -> int:   # the rows at cands[i..j], all padded to cands[j]
        return cands[j] * (prefix[j + 1] - prefix[i])

    k, last = min(int(n), len(cands)), len(cands) - 1
    # best[b][j]: least cost covering cands[0..j] with b widths, the largest cands[j]; back: the one before
    best = [[float("inf")] * len(cands) for _ in range(k + 1)]
    back = [[-1] * len(cands) for _ in range(k + 1)]
    best[1] = [cost(0, j) for j in range(len(cands))]
    for b in range(2, k + 1):
        for j in range(len(cands)):
            for i in range(j):
                c = best[b - 1][i] + cost(i + 1, j)
                if c < best[b][j]:
                    best[b][j], back[b][j] = c, i
    widths, j, b = [], last, k
    while j >= 0:
        widths.append(cands[j])
        j, b = back[b][j], b - 1
    return sorted(widths)
