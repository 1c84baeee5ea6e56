"""WANLI seeds (§2.1 and footnote 2): the most ambiguous examples of each gold label.

A seed is a training example whose variability is strictly above its label's q-quantile
(q = 0.75: the top 25%), after removing excluded records (MultiNLI's telephone genre).
Exclusion comes *before* the quantile, as in the original pipeline, which dropped the telephone
genre from the pool and then took the quantile per label; the paper's count (98,176 seeds,
a quarter of all MultiNLI) suggests the quantile over the whole set, so this is a documented
choice. The quantile itself is :func:`nliforge.cartography.select.select_by_quantile`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from nliforge.cartography.select import select_by_quantile
from nliforge.errors import NLIDataError
from nliforge.data.labels import ID2LABEL
from nliforge.data.records import Record


def _uids(metrics: pd.DataFrame) -> list[str]:
    """The uids of a metrics frame, from its `uid` column or else its index."""
    return [str(u) for u in (metrics["uid"] if "uid" in metrics.columns else metrics.index)]


# Exclusion keys: where each looks in a Record.
EXCLUDE_KEYS: tuple[str, ...] = ("genre", "source")


def excluded_uids(records: Mapping[str, Record], exclude: Mapping[str, Sequence[str]] | None) -> set[str]:
    """Uids whose `meta['genre']` or `source` is in the excluded values, e.g. {'genre': ['telephone']}."""
    if not exclude:
        return set()
    unknown = [key for key in exclude if key not in EXCLUDE_KEYS]
    if unknown:
        raise NLIDataError(f"unknown exclusion key(s) {unknown}; valid: {', '.join(EXCLUDE_KEYS)}")
    banned = {key: set(values) for key, values in exclude.items()}
    out = set()
    for uid, rec in records.items():
        if rec.source in banned.get("source", ()) or rec.meta.get("genre") in banned.get("genre", ()):
            out.add(uid)
    return out


def select_seeds(metrics: pd.DataFrame, records: Mapping[str, Record] | None = None, q: float = 0.75,
                 exclude: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """Seed uids per gold label name, best first (decreasing variability, ties by uid).

    `metrics` is the frame of :func:`nliforge.cartography.compute_metrics` (uid index, `gold` ids,
    `variability`). `records` (uid -> Record) is needed only to apply `exclude`; every metrics uid
    must then have a record.
    """
    uids = _uids(metrics)
    if exclude:
        if records is None:
            raise NLIDataError("exclude needs the records (uid -> Record) to read genre/source from")
        missing = sorted(set(uids) - set(records))[:5]
        if missing:
            raise NLIDataError(f"metrics uid(s) without a record, e.g. {missing}; expected a record per uid")
        keep = ~pd.Series(uids).isin(excluded_uids(records, exclude)).to_numpy()
        metrics, uids = metrics[keep], [u for u, k in zip(uids, keep) if k]
    chosen = select_by_quantile(metrics, "variability", q, per_label=True)
    gold = dict(zip(uids, metrics["gold"].to_numpy()))
    out: dict[str, list[str]] = {name: [] for name in ID2LABEL.values()}
    for uid in chosen:
        out[ID2LABEL[int(gold[uid])]].append(uid)
    return out
