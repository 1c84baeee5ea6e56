"""R4's base sets (experiments/real_text/README.md): D0 = 4,000 pairs of the MNLI training part, chosen by a
seeded permutation (seed 0), and the floor's pool = the other 2,918; both written as JSONL into the scratch
folder and registered as training sets (exp_real_text_r4_d0, exp_real_text_r4_pool) in the user data home.
The floor is D0 + the first N pairs of the pool, so it contains D0 by construction (analysis.py checks
every D0 uid is in it). Draw k > 1 of R5 (the draws of R4a) uses permutation seed k − 1 and the names
exp_real_text_r4_draw<k>_d0 / _pool.

    python -m experiments.real_text.r4_sets <scratch folder> [draw, default 1]
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set
from nliforge.utils.home import user_conf_dir

from experiments.real_text.common import load_named

D0_SIZE = 4000
SEED = 0
SOURCE = "mnli_dev_train_part"


def split(records: list, size: int = D0_SIZE, seed: int = SEED) -> tuple[list, list]:
    """(D0, pool): a seeded permutation of the records, its first `size` and the rest (each in set order)."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    d0 = set(order[:size])
    return [r for i, r in enumerate(records) if i in d0], [r for i, r in enumerate(records) if i not in d0]


def set_prefix(draw: int = 1) -> str:
    """The registered names' prefix: draw 1 keeps R4's names."""
    return "exp_real_text_r4" if draw == 1 else f"exp_real_text_r4_draw{draw}"


def main(scratch: Path, draw: int = 1) -> None:
    seed = SEED + draw - 1
    d0, pool = split(load_named(SOURCE), seed=seed)
    for name, records in (("d0", d0), ("pool", pool)):
        path = write_jsonl(records, scratch / "sets" / f"r4_{name}.jsonl")
        register_train_set(f"{set_prefix(draw)}_{name}", path, user_conf_dir(), f"{SOURCE} (seed {seed})",
                           tool="experiments/real_text/r4_sets.py")
        print(f"{set_prefix(draw)}_{name}: {len(records)} pairs -> {path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
