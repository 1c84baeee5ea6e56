"""HANS's own breakdown (McCoy et al. 2019, Table/Figure of results): accuracy per heuristic x gold label (six
cells: lexical_overlap / subsequence / constituent x entailment / non-entailment) and per subcase, on 2-class
predictions after the 3-to-2 collapse (evaluation/collapse.py).

`cell_scores` gives metric names `acc@<heuristic>@<label>` and `acc@subcase@<subcase>` (with their `n@...`),
which score_set adds to a set's metrics when every record carries meta `heuristic` and `subcase`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from nliforge.data.records import Record


def is_hans_like(records: Sequence[Record]) -> bool:
    return bool(records) and all("heuristic" in r.meta and "subcase" in r.meta for r in records)


def cell_counts(records: Sequence[Record], correct: Sequence[bool]) -> dict[tuple[str, str], list[int]]:
    """(group, value) -> [right, n] for every heuristic x label cell (group = heuristic, value = gold label)
    and every subcase (group = 'subcase', value = the subcase)."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r, ok in zip(records, correct, strict=True):
        for key in ((str(r.meta["heuristic"]), str(r.label)), ("subcase", str(r.meta["subcase"]))):
            out[key][0] += int(bool(ok))
            out[key][1] += 1
    return dict(out)


def cell_scores(records: Sequence[Record], pred2: Sequence[int], positive: str = "entailment") -> dict[str, float]:
    """Accuracy (and n) per heuristic x label cell and per subcase; pred2[i] = 1 when record i is predicted
    `positive` (the collapsed 2-class prediction)."""
    correct = [int(p) == int(r.label == positive) for r, p in zip(records, pred2, strict=True)]
    scores: dict[str, float] = {}
    for (group, value), (right, n) in sorted(cell_counts(records, correct).items()):
        scores[f"acc@{group}@{value}"] = right / n
        scores[f"n@{group}@{value}"] = float(n)
    return scores
