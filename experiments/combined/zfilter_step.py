"""Conditional z-filtering step of experiments/combined: Z(new | D0).

Reads candidate records (JSONL files of the data model, e.g. a reviewed WANLI set and DISCO
counterfactuals), z-filters them seeded with D0 (the biased synthetic world split the rows train on),
writes the accepted candidates (D0 is not copied: the training rows add them to D0 with
data.combine=augment) and the rejected ones, each with meta["zfilter"] = {kept, feature, batch,
condition}, plus a summary JSON, and registers the kept set as data/train_sets=<name>.

    python experiments/combined/zfilter_step.py --name exp_comb_zw --out DIR --world-n-train 4000 A.jsonl [B.jsonl ...]
"""

from __future__ import annotations

import argparse
import json
import random
from collections import Counter
from pathlib import Path

from nliforge.data.jsonl import atomic_write_text, read_jsonl, write_jsonl
from nliforge.data.records import Record
from nliforge.data.registry import load_set
from nliforge.filtering.zfilter import z_filter
from nliforge.review.publish import register_train_set
from nliforge.utils.cli import CONF_DIR


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidates", nargs="+", help="JSONL files of labeled records (the new data)")
    ap.add_argument("--name", required=True, help="train-set name to register (exp_comb_...)")
    ap.add_argument("--out", required=True, help="folder for <name>.jsonl, <name>.rejected.jsonl, <name>.summary.json")
    ap.add_argument("--world-n-train", type=int, default=6000, help="world.n_train of D0 (world seed 0, defaults otherwise)")
    ap.add_argument("--d0-split", default="train_biased")
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=500)
    ap.add_argument("--order-seed", type=int, default=0, help="candidates are shuffled with this seed (Algorithm 1 is order-dependent)")
    ap.add_argument("--cache-dir", default="data_cache")
    ap.add_argument("--union-name", default=None, help="also write and register the unfiltered candidates (deduplicated) under this name")
    args = ap.parse_args()

    d0 = load_set({"name": "d0", "loader": "world", "split": args.d0_split, "num_classes": 3, "limit": None},
                  "zfilter_step.d0", world={"n_train": args.world_n_train}, cache_dir=args.cache_dir)
    d0_uids = {r.uid for r in d0}
    cands, seen, per_file, dup = [], set(), {}, 0
    for path in args.candidates:
        recs = read_jsonl(path, allow_unlabeled=False)
        per_file[path] = len(recs)
        for r in recs:
            if r.uid in seen or r.uid in d0_uids:
                dup += 1
                continue
            seen.add(r.uid)
            cands.append(r)
    random.Random(args.order_seed).shuffle(cands)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.union_name:
        union_path = write_jsonl(cands, out / f"{args.union_name}.jsonl")
        register_train_set(args.union_name, union_path, CONF_DIR, str(out), tool="experiments/combined/zfilter_step.py (unfiltered union)")

    res = z_filter(cands, seed=d0, k=args.k, batch_size=args.batch_size)
    cond = f"Z(new | D0={args.d0_split}, world.n_train={args.world_n_train}), k={args.k}, batch={args.batch_size}"

    def tag(recs: list[Record]) -> list[Record]:
        return [Record(r.uid, r.premise, r.hypothesis, r.label, r.source,
                       {**r.meta, "zfilter": {**r.meta["zfilter"], "condition": cond}}) for r in recs]

    kept_path = write_jsonl(tag(res.accepted), out / f"{args.name}.jsonl")
    write_jsonl(tag(res.rejected), out / f"{args.name}.rejected.jsonl")
    summary = {
        "name": args.name, "condition": cond, "d0": len(d0), "candidate_files": per_file,
        "duplicates_dropped": dup, "candidates": len(cands), "kept": len(res.accepted),
        "rejected": len(res.rejected), "batches": res.n_batches,
        "kept_by_source": dict(Counter(r.source for r in res.accepted)),
        "candidates_by_source": dict(Counter(r.source for r in cands)),
        "kept_by_label": dict(Counter(r.label for r in res.accepted)),
        "rejected_by_feature_top": Counter(r.meta["zfilter"]["feature"] for r in res.rejected).most_common(15),
        "final_biased_top5": {lab: feats[:5] for lab, feats in res.final_biased.items()},
    }
    atomic_write_text(out / f"{args.name}.summary.json", [json.dumps(summary, indent=1, default=str) + "\n"])
    register_train_set(args.name, kept_path, CONF_DIR, str(out), tool="experiments/combined/zfilter_step.py")
    print(json.dumps({k: summary[k] for k in ("name", "candidates", "kept", "rejected", "kept_by_source")}))


if __name__ == "__main__":
    main()
