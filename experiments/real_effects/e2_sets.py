"""E2's training sets (README.md "E2 criteria"): Kaushik et al.'s human revisions as a dose, against the same
number of other pairs, in 5 disjoint worlds.

World k (1-5) holds 333 of the 1,666 SNLI originals (slice k of a seeded permutation, seed 0; one original is
left out) and the 4 revisions of each (2 revised premises, 2 revised hypotheses: rows 2i, 2i+1 of the revised
files revise original row i), so no original or revision is in two worlds. Arms, nested by dose:
- **base**: the 333 originals;
- **human_<N>**, N ∈ {333, 666, 1332}: base + N revisions, taken per original in a seeded order (seed = the
  world): 333 = one revision of each original (premise or hypothesis alternating over the seeded order, which
  of the two by a seeded coin), 666 = one revised premise and one revised hypothesis of each, 1332 = all four;
- **mnli_<N>**: base + the first N pairs of a seeded permutation (seed = the world) of MNLI part k's 1,374
  training pairs (`experiments/real_text/parts.py`, the worlds of E1 and E4): the same number of other pairs.

Registered as `exp_real_effects_w<k>_e2_<arm>`, and the suite `exp_real_effects_e2` (Kaushik et al.'s
counterfactual test pairs: 800 revised premises and 800 revised hypotheses, each with its original, every
prediction kept; the same in every world).

    python -m experiments.real_effects.e2_sets <scratch folder>
"""

from __future__ import annotations

import random
import sys
from functools import lru_cache
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import user_conf_dir

from experiments.real_text.common import load_named
from experiments.real_text.parts import cut

from experiments.real_effects.analysis_e2 import DOSES  # (this folder)
from experiments.real_effects.worlds import CF_TESTS

WORLDS, SEED, PER_WORLD = 5, 0, 333
TOOL = "experiments/real_effects/e2_sets.py"


def world_originals(n: int, worlds: int = WORLDS, per_world: int = PER_WORLD, seed: int = SEED) -> list[list[int]]:
    """Disjoint slices of `per_world` original row indices, from one seeded permutation of range(n)."""
    if worlds * per_world > n:
        raise ValueError(f"{worlds} worlds × {per_world} originals need {worlds * per_world}; there are {n}")
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[k * per_world:(k + 1) * per_world] for k in range(worlds)]


def revision_order(originals: list[int], world: int) -> list[tuple[str, int]]:
    """The world's revisions as (file, row), in dose order: the first len(originals) are one revision per
    original (premise / hypothesis alternating over a seeded order of the originals, which of the two rows by
    a seeded coin), the next len(originals) the other kind for each, then the remaining row of every kind."""
    rng = random.Random(world)
    order = list(originals)
    rng.shuffle(order)
    first, second, rest = [], [], []
    for j, i in enumerate(order):
        kinds = ("premise", "hypothesis") if j % 2 == 0 else ("hypothesis", "premise")
        rows = {k: (2 * i, 2 * i + 1) if rng.random() < 0.5 else (2 * i + 1, 2 * i) for k in kinds}
        first.append((kinds[0], rows[kinds[0]][0]))
        second.append((kinds[1], rows[kinds[1]][0]))
        rest += [(kinds[0], rows[kinds[0]][1]), (kinds[1], rows[kinds[1]][1])]
    return first + second + rest


def register_suite(conf: Path) -> None:
    lines = "".join(f"  - /data/eval_sets@sets.{m}: {m}\n" for m in CF_TESTS)
    atomic_write_text(conf / "suite" / "exp_real_effects_e2.yaml", [
        f"# Registered by {TOOL}\ndefaults:\n{lines}\nname: exp_real_effects_e2\ncollapse: argmax\n"
        "skip_missing: false\nsave_predictions: true\n"])


@lru_cache(maxsize=1)
def sources() -> tuple[list, dict, list]:
    """Kaushik et al.'s originals, their revised premises and hypotheses, and the 5 MNLI parts (loaded once)."""
    revised = {k: load_named(f"snli_cad_revised_{k}") for k in ("premise", "hypothesis")}
    return load_named("snli_cad_original"), revised, cut(load_named("mnli_dev_matched_mccoy"))


def world_arms(k: int) -> tuple[list, list, list]:
    """World k's base (its 333 originals), its revisions in dose order, and its MNLI pairs in seeded order."""
    originals, revised, mnli_parts = sources()
    rows = world_originals(len(originals))[k - 1]
    mnli = list(mnli_parts[k - 1][0])
    random.Random(k).shuffle(mnli)
    return [originals[i] for i in rows], [revised[kind][r] for kind, r in revision_order(rows, k)], mnli


def main(scratch: Path) -> None:
    conf = user_conf_dir(create=True)
    for k in range(1, WORLDS + 1):
        base, human, mnli = world_arms(k)
        arms = {"base": base, **{f"human_{n}": base + human[:n] for n in DOSES},
                **{f"mnli_{n}": base + mnli[:n] for n in DOSES}}
        for arm, recs in arms.items():
            name = f"exp_real_effects_w{k}_e2_{arm}"
            path = write_jsonl(recs, scratch / "sets" / f"{name}.jsonl")
            register_train_set(name, path, conf, f"real_effects E2 world {k}: {arm} ({len(recs)} pairs)", tool=TOOL)
        print(f"E2 world {k}: " + ", ".join(f"{a} {len(r)}" for a, r in arms.items()))
    register_suite(conf)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
