"""z-filtering (Z-Aug, Wu et al. §3.2, Algorithm 1), and the dataset recipes built on it (Z-Aug, Par-Z,
Seq-Z: `run_recipe`, §4.2); the report of the biased features before and after is `zreport`.

Z starts empty, or equal to a seed dataset (conditional z-filtering, Z(D' | D_seed)). The
candidates D' are cut into batches; before each batch the biased sets B(l) are found on the
current Z (`zstats`: top-k z per label, n > 0 and z > 0); an instance is accepted into Z iff none
of its features is in B(its label), otherwise it goes to Z⁻.

Choices the paper leaves open, made here:
- ties at the k-th z: `ties="name"` (default) keeps exactly k features, the tied ones whose names
  sort first; `ties="include"` lets every tied feature into B(l) (no dependence on names). See
  `zstats` for why.
- order: candidates are processed in the order given (shuffle beforehand for a random order);
  batch t holds candidates [t * batch_size, (t + 1) * batch_size).
- batch size: a setting (default 1000). Smaller batches track Z more closely and cost more.
- an empty Z (first batch without a seed): every z is undefined (n = 0), nothing is biased, so
  the whole first batch is accepted. Likewise B(l) has fewer than k features while fewer than
  k features have z > 0.
- the rejecting feature recorded is the instance's feature ranked highest in B(its label);
  `features` lists every feature of the instance in B(its label), best first: all of them
  "contribute to B_Z(l)" and so fall under the §4.1 unlikelihood mask.
- output: Z = seed + accepted, seed records first and untouched (a seed is not filtered); every
  candidate gets `meta["zfilter"] = {"kept", "feature", "features", "batch"}` (None and [] when kept).
- labels: p0 = 1 / len(labels) from the setting; unlabeled candidates are an error, as is data
  whose seed and candidates together show a single label.

`z_filter` keeps counts incrementally (`zcounts.IncrementalBias`); `z_filter_reference` is the
algorithm written as plainly as possible (recount Z from scratch every batch) and must give
identical results; tests and `benchmarks/zfilter.py` check that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nliforge.errors import NLIDataError
from nliforge.data.labels import LABELS
from nliforge.data.records import Record, check_unique_uids
from nliforge.filtering.features import FeatureSpace, example_features
from nliforge.filtering.zcounts import IncrementalBias
from nliforge.filtering.zstats import base_rate, check_k, check_ties, label_ids, z_value

DEFAULT_BATCH_SIZE = 1000
RECIPES = ("zaug", "par_z", "seq_z")


@dataclass
class ZFilterResult:
    """Z = seed + accepted; `rejected` is Z⁻; `final_biased` is B(l) on the final Z."""

    seed: list[Record]
    accepted: list[Record]
    rejected: list[Record]
    final_biased: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    n_batches: int = 0

    @property
    def dataset(self) -> list[Record]:
        """The filtered dataset Z (seed records first)."""
        return self.seed + self.accepted


def _check(candidates, seed, k, batch_size, labels, ties) -> tuple[np.ndarray, np.ndarray]:
    base_rate(len(labels))
    check_ties(ties)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise NLIDataError(f"batch_size must be a positive integer, got {batch_size!r}")
    check_unique_uids(list(seed) + list(candidates), "z_filter (seed + candidates)")
    seed_labs = label_ids(seed, labels, "z_filter seed")
    cand_labs = label_ids(candidates, labels, "z_filter candidates")
    present = set(seed_labs.tolist()) | set(cand_labs.tolist())
    if len(candidates) and len(present) < 2:
        only = [labels[i] for i in sorted(present)]
        raise NLIDataError(f"z_filter: seed and candidates hold a single label {only}; z-filtering "
                           "measures label skew and needs at least two labels present")
    return seed_labs, cand_labs


def _preds(records, hypo_preds: Mapping[str, str] | None):
    return None if hypo_preds is None else [hypo_preds.get(r.uid) for r in records]


def _annotate(records, kept, held, batches) -> tuple[list[Record], list[Record]]:
    """Records with `meta["zfilter"]`; `held[i]` lists record i's features in B(its label), best first."""
    acc, rej = [], []
    for rec, ok, feats, b in zip(records, kept, held, batches):
        meta = {**rec.meta, "zfilter": {"kept": ok, "feature": feats[0] if feats else None,
                                        "features": list(feats), "batch": b}}
        out = Record(rec.uid, rec.premise, rec.hypothesis, rec.label, rec.source, meta)
        (acc if ok else rej).append(out)
    return acc, rej


def z_filter(candidates: Sequence[Record], seed: Sequence[Record] | None = None, k: int = 20,
             batch_size: int = DEFAULT_BATCH_SIZE, labels: Sequence[str] = LABELS,
             hypo_preds: Mapping[str, str] | None = None, ties: str = "name") -> ZFilterResult:
    """Z(candidates) or, with a seed, Z(candidates | seed) (Algorithm 1, incremental counts).

    `hypo_preds` maps uids (of seed and candidates) to a hypothesis-only model's predicted label,
    giving the `hypo-only-pred=<label>` feature; absent uids get none. `ties`: "name" | "include".
    """
    seed, labels = list(seed or []), tuple(labels)
    seed_labs, labs = _check(candidates, seed, k, batch_size, labels, ties)
    space = FeatureSpace(labels)
    seed_m = space.featurise_records(seed, _preds(seed, hypo_preds))
    cand = space.featurise_records(candidates, _preds(candidates, hypo_preds))
    check_k(k, len(space))
    seed_m = space.pad(seed_m)
    engine = IncrementalBias(len(space), len(labels), k, space.names, base_rate(len(labels)), ties)
    engine.add(seed_m.indices.astype(np.int64), np.repeat(seed_labs, np.diff(seed_m.indptr)))
    held: list[list[str]] = [[] for _ in range(len(candidates))]
    rank = np.full((len(space), len(labels)), np.iinfo(np.int64).max, np.int64)
    names = np.array(space.names, dtype=object)
    n_batches = 0
    for n_batches, start in enumerate(range(0, len(candidates), batch_size), 1):
        stop = min(start + batch_size, len(candidates))
        biased = [engine.biased(li) for li in range(len(labels))]
        for row, feats in _filter_batch(engine, cand, labs, start, stop, biased, rank, names):
            held[start + row] = feats
    kept = [not h for h in held]
    batches = (np.arange(len(candidates)) // batch_size).tolist()
    acc, rej = _annotate(candidates, kept, held, batches)
    final = {lab: [(space.names[f], float(engine.keys[f, li])) for f in engine.biased(li)]
             for li, lab in enumerate(labels)}
    return ZFilterResult(seed, acc, rej, final, n_batches)


def _filter_batch(engine, cand, labs, start, stop, biased, rank, names) -> list[tuple[int, list[str]]]:
    """Reject rows [start, stop) having a feature in B(their label); add the rest to Z.

    Returns (row within the batch, names of its features in B(its label), best rank first) for
    each rejected row.
    """
    big = np.iinfo(np.int64).max
    for li, fids in enumerate(biased):
        rank[fids, li] = np.arange(len(fids))
    lo, hi = cand.indptr[start], cand.indptr[stop]
    cols = cand.indices[lo:hi].astype(np.int64)
    lens = np.diff(cand.indptr[start:stop + 1])
    entry_labs = np.repeat(labs[start:stop], lens)
    entry_rank = rank[cols, entry_labs]
    for li, fids in enumerate(biased):
        rank[fids, li] = big
    hit = np.flatnonzero(entry_rank < big)
    rows = np.repeat(np.arange(stop - start), lens)[hit]
    order = np.lexsort((entry_rank[hit], rows))
    hit, rows = hit[order], rows[order]
    cuts = np.flatnonzero(np.diff(rows)) + 1
    hit_names = names[cols[hit]].tolist()
    bounds = [0, *cuts.tolist(), len(hit)]
    out = [(row, hit_names[a:b]) for row, a, b in zip(rows[bounds[:-1]].tolist(), bounds[:-1], bounds[1:])] \
        if len(rows) else []
    rejected = np.zeros(stop - start, bool)
    rejected[rows] = True
    keep = np.repeat(~rejected, lens)
    engine.add(cols[keep], entry_labs[keep])
    return out


def z_filter_reference(candidates: Sequence[Record], seed: Sequence[Record] | None = None,
                       k: int = 20, batch_size: int = DEFAULT_BATCH_SIZE,
                       labels: Sequence[str] = LABELS,
                       hypo_preds: Mapping[str, str] | None = None, ties: str = "name") -> ZFilterResult:
    """Algorithm 1 written plainly: every batch recounts all of Z from scratch in Python.

    Slow (each batch costs O(|Z|)); it exists to check `z_filter`, which must match it exactly.
    """
    seed, labels = list(seed or []), tuple(labels)
    _check(candidates, seed, k, batch_size, labels, ties)
    preds = hypo_preds or {}
    feats = {r.uid: example_features(r.premise, r.hypothesis, preds.get(r.uid)) for r in seed + list(candidates)}
    space = FeatureSpace(labels)  # the fixed features count towards the feature set, as in z_filter
    check_k(k, len(set(space.names).union(*feats.values())))
    z, kept_flags, held, n_batches = list(seed), [], [], 0
    for n_batches, start in enumerate(range(0, len(candidates), batch_size), 1):
        biased = _reference_biased(z, feats, k, labels, ties=ties)
        for rec in candidates[start:start + batch_size]:
            hits = [f for f in biased[rec.label] if f in feats[rec.uid]]
            kept_flags.append(not hits)
            held.append(hits)
            if not hits:
                z.append(rec)
    batches = [i // batch_size for i in range(len(candidates))]
    acc, rej = _annotate(candidates, kept_flags, held, batches)
    final = _reference_biased(z, feats, k, labels, with_z=True, ties=ties)
    return ZFilterResult(seed, acc, rej, final, n_batches)


def _reference_biased(z_set, feats, k, labels, with_z=False, ties="name"):
    """B(l) for each label on z_set, counting every feature of every record in plain Python: the k
    best by (-z, name), and with `ties="include"` also every later one whose z equals the k-th."""
    counts: dict[str, list[int]] = {}
    for rec in z_set:
        li = labels.index(rec.label)
        for f in feats[rec.uid]:
            counts.setdefault(f, [0] * len(labels))[li] += 1
    p0 = 1 / len(labels)
    out = {}
    for li, label in enumerate(labels):
        scored = []
        for name, c in counts.items():
            zv = z_value(c[li], sum(c), p0)
            if zv > 0:
                scored.append((-zv, name))
        scored.sort()
        cut = k
        while ties == "include" and 0 < cut < len(scored) and scored[cut][0] == scored[k - 1][0]:
            cut += 1
        out[label] = [(name, -neg) for neg, name in scored[:cut]] if with_z else [n for _, n in scored[:cut]]
    return out


def run_recipe(recipe: str, d0: Sequence[Record], gen: Sequence[Record], k: int = 20,
               batch_size: int = 1000, ties: str = "name") -> tuple[list[Record], list[Record]]:
    """(kept, rejected) for Z-Aug = Z(D_G | D0), Par-Z = Z(D0) ∪ Z(D_G) or Seq-Z = Z(D_G | Z(D0));
    `ties` is the rule at the k-th rank (`nliforge.filtering.zstats`)."""
    kw = {"k": k, "batch_size": batch_size, "ties": ties}
    if recipe == "zaug":
        res = z_filter(gen, seed=d0, **kw)
        return res.dataset, res.rejected
    if recipe == "par_z":
        a, b = z_filter(d0, **kw), z_filter(gen, **kw)
        return a.dataset + b.dataset, a.rejected + b.rejected
    if recipe == "seq_z":
        first = z_filter(d0, **kw)
        second = z_filter(gen, seed=first.accepted, **kw)
        return second.dataset, first.rejected + second.rejected
    raise NLIDataError(f"pipeline.zfilter.recipe={recipe!r}; valid: {', '.join(RECIPES)}")
