"""Split the synthetic world's (unbiased) training split into D (train) and H (held out), write
both as JSONL and register them as training sets exp_maxvar_d / exp_maxvar_h.

    python -m experiments.max_variability.split SCRATCH N_TRAIN N_HELDOUT [WORLD_SEED]

The YAMLs land in conf/data/train_sets/exp_maxvar_*.yaml with absolute paths (machine-local).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.world import WorldConfig, ensure_world

ROOT = Path(__file__).resolve().parents[2]


def main(scratch: str, n_train: int, n_heldout: int, world_seed: int = 0) -> None:
    scratch = Path(scratch)
    cache = Path(os.environ.get("NLIFORGE_CACHE", ROOT / "data_cache"))  # as conf/paths/default.yaml
    world = ensure_world(WorldConfig(n_train=n_train, seed=world_seed), cache / "world")
    records = read_jsonl(world / "train.jsonl")
    order = list(range(len(records)))
    random.Random(0).shuffle(order)  # fixed split: every seed sees the same D and H
    held = set(order[:n_heldout])
    d = [r for i, r in enumerate(records) if i not in held]
    h = [r for i, r in enumerate(records) if i in held]
    d_pairs = {(r.premise, r.hypothesis) for r in d}
    dup = sum((r.premise, r.hypothesis) in d_pairs for r in h)
    print(f"world {world.name}: {len(records)} train pairs -> D {len(d)}, H {len(h)}; "
          f"H pairs also in D (exact premise+hypothesis): {dup}")
    for name, recs in (("d", d), ("h", h)):
        path = write_jsonl(recs, scratch / f"{name}.jsonl")
        key = f"exp_maxvar_{name}"
        (ROOT / "conf" / "data" / "train_sets" / f"{key}.yaml").write_text(
            f"# Machine-local: written by experiments/max_variability/split.py\n"
            f"{key}:\n  name: {key}\n  loader: jsonl\n  path: \"{path.resolve()}\"\n"
            f"  num_classes: 3\n  limit: null\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 0)
