"""E3's training sets (README.md "E3 criteria"): per world, the 333 originals with the world's kept DISCO
counterfactuals, against as many human revisions and as many MNLI pairs, in E2's orders.

After world k's DISCO run (`e3/w<k>/generate`, which registers `exp_real_effects_w<k>_e3_counterfactuals`, N_k
pairs), registers:
- **disco**: E2's base (the world's 333 originals) + the N_k counterfactuals;
- **human_at**: base + the first N_k revisions in E2's dose order (`e2_sets.revision_order`);
- **mnli_at**: base + the first N_k pairs of E2's seeded MNLI order for the world.
The arms are E2's human_<N> / mnli_<N> construction at N = N_k, so they come from the same function.

    python -m experiments.real_effects.e3_sets <scratch folder> <world>
"""

from __future__ import annotations

import sys
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set
from nliforge.utils.home import user_conf_dir

from experiments.real_text.common import load_named
from experiments.real_effects.e2_sets import PER_WORLD, world_arms  # (this folder)

TOOL = "experiments/real_effects/e3_sets.py"
ARMS = ("disco", "human_at", "mnli_at")


def counterfactual_set(world: int) -> str:
    """The set name world k's DISCO run registers (`pipeline.augment.name=exp_real_effects_w<k>_e3`)."""
    return f"exp_real_effects_w{world}_e3_counterfactuals"


def e3_arms(base: list, human: list, mnli: list, counterfactuals: list) -> dict[str, list]:
    """The three arms of one world: base + the counterfactuals, + as many revisions (the first of `human`, in
    dose order), + as many MNLI pairs (the first of `mnli`)."""
    n = len(counterfactuals)
    if n < 1 or n > min(len(human), len(mnli)):
        raise ValueError(f"{n} counterfactuals; E3's arms need 1..{min(len(human), len(mnli))}")
    return {"disco": base + list(counterfactuals), "human_at": base + human[:n], "mnli_at": base + mnli[:n]}


def main(scratch: Path, world: int) -> None:
    conf = user_conf_dir(create=True)
    arms = e3_arms(*world_arms(world), load_named(counterfactual_set(world)))
    for arm, recs in arms.items():
        name = f"exp_real_effects_w{world}_e3_{arm}"
        path = write_jsonl(recs, scratch / "sets" / f"{name}.jsonl")
        register_train_set(name, path, conf, f"real_effects E3 world {world}: {arm} ({len(recs)} pairs)", tool=TOOL)
    print(f"E3 world {world}: N = {len(arms['disco']) - PER_WORLD}; " + ", ".join(f"{a} {len(r)}" for a, r in arms.items()))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
