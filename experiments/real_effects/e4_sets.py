"""E4's training sets for one world (README.md): the thirds of the world's E1 mnli set (1,000 -> 333 each) by
the data map of the world's `diag/w<k>/mnli_3ep` run (that set, 3 epochs, training dynamics recorded in training; the
cartography code's metrics and `select_region`): ambiguous (highest variability), easy (highest confidence) and a seeded
random third (seed = the world), registered as `exp_real_effects_w<k>_e4_<arm>`.

    python -m experiments.real_effects.e4_sets <scratch folder> <world>
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from nliforge.cartography.metrics import compute_metrics
from nliforge.cartography.select import select_region
from nliforge.cartography.store import load_dynamics
from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set
from nliforge.utils.home import user_conf_dir

from experiments.real_text.common import load_named

FRACTION = 1 / 3
TOOL = "experiments/real_effects/e4_sets.py"


def main(scratch: Path, world: int) -> None:
    run = scratch / "diag" / f"w{world}" / "mnli_3ep"
    if not (run.parent / "mnli_3ep.done").is_file():
        raise SystemExit(f"{TOOL}: world {world}'s map run ({run}) has not finished")
    records = load_named(f"exp_real_effects_w{world}_mnli")
    metrics = compute_metrics(load_dynamics(run / "dynamics"))
    by_uid = {r.uid: r for r in records}
    k = int(FRACTION * len(records))
    thirds = {"ambiguous": select_region(metrics, "ambiguous", FRACTION),
              "easy": select_region(metrics, "easy", FRACTION),
              "random": [r.uid for r in random.Random(world).sample(records, k)]}
    conf = user_conf_dir(create=True)
    for arm, uids in thirds.items():
        recs = [by_uid[u] for u in uids]
        path = write_jsonl(recs, scratch / "sets" / f"exp_real_effects_w{world}_e4_{arm}.jsonl")
        register_train_set(f"exp_real_effects_w{world}_e4_{arm}", path, conf,
                           f"real_effects E4 world {world}: {arm} third ({len(recs)} pairs)", tool=TOOL)
        print(f"world {world} {arm}: {len(recs)} pairs")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
