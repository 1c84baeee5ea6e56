"""Scoring in length order against scoring in file order, in one run: MiniLM (all-MiniLM-L6-v2, one thread) on
MultiNLI dev-matched pairs, the same batches of 128 either way.

    NLIFORGE_DATA_DIR=<real data> python benchmarks/eval_order.py [--pairs 600] [--rounds 2]

Baseline ("file order"): predict_probs on each consecutive chunk of 128 pairs, so every batch is padded to the
longest pair of a file-order chunk (how evaluation ran before it sorted). Contender ("length order"): one call on
all pairs, which batches them longest first (nliforge.models.predict). Prints CPU seconds and pairs/s of each,
the ratio, and the largest difference in any probability between the two.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import time
from pathlib import Path

import numpy as np
import torch

from nliforge.models.backbone import minilm_path
from nliforge.models.predict import Classifier, predict_probs

BATCH = 128


def mnli_pairs(n: int) -> list[tuple[str, str]]:
    path = Path(os.environ["NLIFORGE_DATA_DIR"]) / "mnli_dev_matched_mccoy.tsv"
    with path.open(newline="") as fh:
        rows = [(r["premise"], r["hypothesis"]) for r in csv.DictReader(fh, delimiter="\t")]
    random.Random(0).shuffle(rows)
    return rows[:n]


def timed(fn) -> tuple[np.ndarray, float]:
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=600)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)   # a random 3-way head on MiniLM's encoder: the cost is the encoder's
    model = AutoModelForSequenceClassification.from_pretrained(minilm_path(), num_labels=3).eval()
    clf = Classifier(model, AutoTokenizer.from_pretrained(minilm_path()), [0, 1, 2])
    pairs = mnli_pairs(args.pairs)

    def file_order():
        return np.concatenate([predict_probs(clf, pairs[i:i + BATCH], batch_size=BATCH, progress=False)
                               for i in range(0, len(pairs), BATCH)])

    def length_order():
        return predict_probs(clf, pairs, batch_size=BATCH, progress=False)

    for r in range(args.rounds):
        base, t_base = timed(file_order)
        new, t_new = timed(length_order)
        print(f"round {r + 1}: file order {t_base:.1f} CPU-s ({len(pairs) / t_base:.1f} pairs/s), length order "
              f"{t_new:.1f} CPU-s ({len(pairs) / t_new:.1f} pairs/s): {t_base / t_new:.2f}x; "
              f"max |p difference| {np.abs(base - new).max():.1e}", flush=True)


if __name__ == "__main__":
    main()
