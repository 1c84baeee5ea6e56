"""z-filtering at scale: 1,000,000 synthetic-world examples through App. B features and
Algorithm 1 (incremental counts), against the from-scratch reference on a subset.

Data: `--n-base` distinct `train_biased` records of a synthetic world (planted artifacts at the
default strength), replicated to `--n` examples; every replica after the first gets one extra
premise word drawn from 5,000 pseudo-words ("w0417"), so texts vary and the feature space grows
with N the way real vocabularies do, while the hypotheses (and their artifacts) stay the world's.
World generation and replication are outside the clock.

Timed: `z_filter(records, k, batch_size)` end to end (featurisation, filtering, output Records
with provenance), and featurisation alone in a separate pass. The reference
(`z_filter_reference`) and `z_filter` are run on the first `--n-ref` examples, checked identical,
and the reference's full-size time is extrapolated two ways:
- linear: (its time per example on the subset) x N. Conservative, it favours the reference:
  each reference batch recounts all of Z, so its cost per example grows with |Z|.
- cost model: t = a * n + b * W, where W = sum over batches of |Z| before the batch (the records
  the reference recounts). b is measured directly: the reference's per-batch step (recount Z,
  z for every feature, sort) timed on the subset's final Z, divided by |Z|; a = (t_ref - b W) / n
  is the rest (features, membership tests). Evaluated at N with the W of the full run (known from
  which candidates `z_filter` accepted in which batch).
"""

from __future__ import annotations

import argparse
from collections import Counter
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import wait_until_idle, write_summary  # noqa: E402

from nliforge.data.labels import LABELS  # noqa: E402
from nliforge.filtering.features import FeatureSpace, example_features  # noqa: E402
from nliforge.filtering.zfilter import _reference_biased, z_filter, z_filter_reference  # noqa: E402
from nliforge.world import WorldConfig, generate_split  # noqa: E402


def build_records(n: int, n_base: int, seed: int = 0) -> list:
    """`n` records: the world's `train_biased` split of `n_base`, replicated with varied premises."""
    base = generate_split(WorldConfig(seed=seed, n_train=n_base), "train_biased")
    rng = random.Random(seed)
    tags = [f"w{i:04d}" for i in range(5000)]
    out = list(base)
    while len(out) < n:
        rep = len(out) // n_base
        for rec in base[: n - len(out)]:
            out.append(replace(rec, uid=f"{rec.uid}-r{rep}", premise=f"{rec.premise} {rng.choice(tags)}"))
    random.Random(seed + 1).shuffle(out)
    return out


def _timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - t


def _same(a, b) -> bool:
    def key(r):
        return ([x.uid for x in r.dataset], [(x.uid, x.meta["zfilter"]) for x in r.rejected], r.final_biased)
    return key(a) == key(b)


def recount_work(result, batch_size: int) -> int:
    """W = sum over batches of |Z| when the batch starts (seed + candidates accepted before it)."""
    n_batches = result.n_batches
    per_batch = Counter(r.meta["zfilter"]["batch"] for r in result.accepted)
    work, size = 0, len(result.seed)
    for t in range(n_batches):
        work += size
        size += per_batch.get(t, 0)
    return work


def cost_model(args, records, res) -> dict:
    """Reference timed on the first n_ref records (checked identical); a, b as in the docstring."""
    sub = records[: args.n_ref]
    ref, t_ref = _timed(z_filter_reference, sub, k=args.k, batch_size=args.batch_size)
    sub_fast, t_sub_fast = _timed(z_filter, sub, k=args.k, batch_size=args.batch_size)
    feats = {r.uid: example_features(r.premise, r.hypothesis) for r in ref.dataset}
    step = min(_timed(_reference_biased, ref.dataset, feats, args.k, LABELS)[1] for _ in range(3))
    b = step / max(len(ref.dataset), 1)
    a = max(t_ref - b * recount_work(ref, args.batch_size), 0.0) / len(sub)
    w_full = recount_work(res, args.batch_size)
    return {"n_ref": len(sub), "reference_subset_s": t_ref, "zfilter_subset_s": t_sub_fast,
            "identical_on_subset": _same(ref, sub_fast), "reference_linear_s": t_ref / len(sub) * len(records),
            "fit_a_s_per_example": a, "fit_b_s_per_recount": b, "recount_work_full": w_full,
            "reference_model_s": a * len(records) + b * w_full}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--n-base", type=int, default=20_000)
    ap.add_argument("--n-ref", type=int, default=20_000)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="smoke size: 20k examples, 3k for the reference")
    ap.add_argument("--max-wait", type=float, default=120.0)
    ap.add_argument("--out", default="benchmarks/out/zfilter.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.n_base, args.n_ref = 20_000, 2_000, 3_000
    records, t_data = _timed(build_records, args.n, args.n_base)
    print(f"data: {len(records)} records from {args.n_base} world examples ({t_data:.1f}s, untimed)")
    load = wait_until_idle(args.max_wait)
    _, t_feat = _timed(FeatureSpace().featurise_records, records)
    res, t_fast = _timed(z_filter, records, k=args.k, batch_size=args.batch_size)
    summary = {
        "n": len(records), "k": args.k, "batch_size": args.batch_size, "other_load_before": load,
        "featurise_s": t_feat, "zfilter_s": t_fast, "accepted": len(res.accepted),
        "rejected": len(res.rejected), **cost_model(args, records, res),
    }
    summary["speedup_linear"] = summary["reference_linear_s"] / t_fast
    summary["speedup_model"] = summary["reference_model_s"] / t_fast
    summary["speedup_on_subset"] = summary["reference_subset_s"] / summary["zfilter_subset_s"]
    summary["top3"] = {lab: fs[:3] for lab, fs in res.final_biased.items()}
    _report(summary)
    write_summary(summary, args.out)
    return summary


def _report(s: dict) -> None:
    print(f"N = {s['n']}, k = {s['k']}, batch_size = {s['batch_size']}; "
          f"other processes used {s['other_load_before']:.0%} of the CPU just before")
    print(f"featurise alone      {s['featurise_s']:8.1f} s")
    print(f"z_filter end to end  {s['zfilter_s']:8.1f} s  (accepted {s['accepted']}, rejected {s['rejected']})"
          f"  target <= 30 s: {'met' if s['zfilter_s'] <= 30 else 'MISSED'}")
    print(f"subset of {s['n_ref']}: reference {s['reference_subset_s']:.1f} s, z_filter "
          f"{s['zfilter_subset_s']:.2f} s ({s['speedup_on_subset']:.1f}x); identical: {s['identical_on_subset']}")
    print(f"reference at N, linear (per-example time x N, favours the reference): "
          f"{s['reference_linear_s']:.0f} s -> speed-up {s['speedup_linear']:.1f}x"
          f"  target >= 20x: {'met' if s['speedup_linear'] >= 20 else 'MISSED'}")
    print(f"reference at N, cost model a*n + b*W (a = {s['fit_a_s_per_example'] * 1e6:.1f} us/example, "
          f"b = {s['fit_b_s_per_recount'] * 1e6:.2f} us/recounted record, W = {s['recount_work_full']:.3g}): "
          f"{s['reference_model_s']:.0f} s -> speed-up {s['speedup_model']:.0f}x"
          f"  target >= 20x: {'met' if s['speedup_model'] >= 20 else 'MISSED'}")
    for lab, fs in s["top3"].items():
        print(f"  final B({lab}) top 3: " + ", ".join(f"{n} {z:.1f}" for n, z in fs))


if __name__ == "__main__":
    main()
