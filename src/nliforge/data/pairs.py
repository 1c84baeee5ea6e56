"""Paired counterfactual eval sets (DISCO §5.2): each counterfactual record with its original, tagged with
meta `pair_id` and `role`, so the suite can score the pairs (evaluation/counterfactual.py)."""

from __future__ import annotations

from collections.abc import Sequence

from nliforge.data.labels import ALL_GOLD_LABELS
from nliforge.data.records import Record
from nliforge.errors import NLIDataError

ORIGINAL_KEYS: tuple[str, ...] = ("original_uid", "original_premise", "original_hypothesis", "original_label")


def paired_eval_records(records: Sequence[Record]) -> list[Record]:
    """Each DISCO counterfactual record -> (its original, itself), tagged with meta pair_id and role.

    The pair_id is the counterfactual's uid, so an original reused by several counterfactuals is
    repeated once per pair, under distinct uids `<pair_id>/original` and `<pair_id>/counterfactual`.
    """
    out = []
    for r in records:
        missing = [k for k in ORIGINAL_KEYS if k not in r.meta]
        if missing:
            raise NLIDataError(f"counterfactual_pairs: record {r.uid!r} lacks meta {missing}; a DISCO "
                               f"counterfactual needs {list(ORIGINAL_KEYS)}")
        if r.meta["original_label"] not in ALL_GOLD_LABELS:
            raise NLIDataError(f"counterfactual_pairs: record {r.uid!r} has original_label "
                               f"{r.meta['original_label']!r}; valid: {', '.join(ALL_GOLD_LABELS)}")
        pid = r.uid
        out.append(Record(f"{pid}/original", r.meta["original_premise"], r.meta["original_hypothesis"],
                          r.meta["original_label"], r.source,
                          {"pair_id": pid, "role": "original", "original_uid": r.meta["original_uid"]}))
        out.append(Record(f"{pid}/counterfactual", r.premise, r.hypothesis, r.label, r.source,
                          {**r.meta, "pair_id": pid, "role": "counterfactual"}))
    return out
