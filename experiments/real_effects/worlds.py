"""The worlds of experiments/real_effects (README.md): 5 disjoint parts of the real data, each with its own
training and test pairs, registered in the user data home.

World k (1-5):
- MNLI: part k of experiments/real_text/parts.py's cut of MNLI dev-matched (seed 0; the R5 parts): 1,374
  training / 589 test pairs (McCoy's counts kept as meta, for the MNLI-hard pairs of the test part);
- HANS-like training pairs: slice k of a seeded permutation (seed 0) of hans_train_regenerated (29,008 ->
  5,801 or 5,802 per world); non-entailment is trained as neutral (a 3-class model needs one of the three
  labels; HANS's collapse scores neutral and contradiction alike);
- HANS evaluation pairs: in every one of the 30 subcases, slice k (200 pairs) of a seeded permutation of its
  1,000 pairs: 6,000 per world (1,000 per heuristic x label cell), no pair in two worlds.

Training sets (`exp_real_effects_w<k>_<arm>`), as amended before any result (README "Amendment"): mnli (the
first 1,000 of the part's 1,374), plus (mnli + the first 500 of the world's HANS-like slice = 1,500), diamond
(the first 500 of mnli + the same 500 HANS-like pairs = 1,000, the mnli arm's size). The world's HANS
evaluation set is the first 40 of its 200 per subcase (`slot` < 40 in the seeded order): 1,200 pairs. Eval sets: `exp_real_effects_w<k>_hans` (2-class), `exp_real_effects_w<k>_mnli_test` (3-class) and
its three Naik et al. stress tests (derived); suites `exp_real_effects_w<k>` (E1: HANS + MNLI test) and
`exp_real_effects_w<k>_e4` (E4: those, the stress tests and Kaushik et al.'s counterfactual test pairs).

    python -m experiments.real_effects.worlds <scratch folder>
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import Record
from nliforge.data.register import register_train_set
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import user_conf_dir

HERE = Path(__file__).resolve().parent
from experiments.real_text.common import load_named
from experiments.real_text.parts import cut

WORLDS = 5
SEED = 0
N_MNLI = 1000          # the mnli arm: the first 1,000 of the part's 1,374 training pairs (time; README "Amendment")
N_HANS = 500           # HANS-like pairs added (plus) or swapped in (diamond)
HANS_EVAL_PER_SUBCASE = 40   # of the world's 200 per subcase (time; 1,200 per world, 200 per heuristic x label)
STRESS = ("stress_negation", "stress_word_overlap", "stress_length_mismatch")
CF_TESTS = ("snli_cad_cf_premise_test", "snli_cad_cf_hypothesis_test")
TOOL = "experiments/real_effects/worlds.py"


def hans_train_slices(records: list[Record], worlds: int = WORLDS, seed: int = SEED) -> list[list[Record]]:
    """`worlds` disjoint slices of a seeded permutation; non-entailment relabelled neutral (3-class training)."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    out = []
    for k in range(worlds):
        chunk = [records[i] for i in order[k * len(order) // worlds:(k + 1) * len(order) // worlds]]
        out.append([Record(r.uid, r.premise, r.hypothesis, "neutral" if r.label == "non-entailment" else r.label,
                           r.source, {**r.meta, "hans_label": r.label}) for r in chunk])
    return out


def hans_eval_slices(records: list[Record], worlds: int = WORLDS, seed: int = SEED) -> list[list[Record]]:
    """Per subcase a seeded permutation of its pairs cut into `worlds` equal slices; world k = the k-th slice
    of every subcase, in the file's order."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        groups[r.meta["subcase"]].append(i)
    out: list[list[int]] = [[] for _ in range(worlds)]
    for subcase in sorted(groups):
        idx = list(groups[subcase])
        random.Random(f"{seed}|{subcase}").shuffle(idx)
        per = len(idx) // worlds
        for k in range(worlds):
            out[k] += [(i, j) for j, i in enumerate(idx[k * per:(k + 1) * per])]
    return [[Record(records[i].uid, records[i].premise, records[i].hypothesis, records[i].label, records[i].source,
                    {**records[i].meta, "slot": j}) for i, j in sorted(ix)] for ix in out]


def spec_text(name: str, body: str) -> list[str]:
    return [f"# Registered by {TOOL}\nname: {name}\nversion: 1\n{body}"]


def register_world(k: int, mnli: tuple[list, list], hans_train: list, hans_eval: list, scratch: Path, conf: Path) -> None:
    stem = f"exp_real_effects_w{k}"
    train, test = mnli
    base, half = train[:N_MNLI], N_HANS
    arms = {"mnli": base, "plus": base + hans_train[:half], "diamond": base[:half] + hans_train[:half]}
    hans_eval = [r for r in hans_eval if r.meta.get("slot", 0) < HANS_EVAL_PER_SUBCASE]
    for arm, recs in arms.items():
        path = write_jsonl(recs, scratch / "sets" / f"{stem}_{arm}.jsonl")
        register_train_set(f"{stem}_{arm}", path, conf, f"real_effects world {k}, arm {arm} ({len(recs)} pairs)", tool=TOOL)
    evals = conf / "data" / "eval_sets"
    for name, recs, classes in ((f"{stem}_mnli_test", test, "num_classes: 3\n"),
                                (f"{stem}_hans", hans_eval, "num_classes: 2\npositive: entailment\n")):
        path = write_jsonl(recs, scratch / "sets" / f"{name}.jsonl")
        atomic_write_text(evals / f"{name}.yaml", spec_text(
            name, f"loader: jsonl\npath: {json.dumps(str(path.resolve()))}\n{classes}expected_size: {len(recs)}\n"))
    for d in STRESS:
        name = f"{stem}_mnli_test_{d}"
        atomic_write_text(evals / f"{name}.yaml", spec_text(
            name, f"loader: derived\nbase: {stem}_mnli_test\nderivation: {d}\nnum_classes: 3\n"))
    e1 = [f"{stem}_hans", f"{stem}_mnli_test"]
    e4 = e1 + [f"{stem}_mnli_test_{d}" for d in STRESS] + list(CF_TESTS)
    for suite, members in ((stem, e1), (f"{stem}_e4", e4)):
        lines = "".join(f"  - /data/eval_sets@sets.{m}: {m}\n" for m in members)
        atomic_write_text(conf / "suite" / f"{suite}.yaml", [
            f"# Registered by {TOOL}\ndefaults:\n{lines}\nname: {suite}\ncollapse: argmax\nskip_missing: false\n"
            "save_predictions: true\n"])
    print(f"{stem}: mnli part {len(train)} / test {len(test)}; HANS-like slice {len(hans_train)}; HANS eval {len(hans_eval)}; "
          + ", ".join(f"{a} {len(r)}" for a, r in arms.items()))


def main(scratch: Path) -> None:
    conf = user_conf_dir(create=True)
    mnli_parts = cut(load_named("mnli_dev_matched_mccoy"))
    hans_train = hans_train_slices(load_named("hans_train_regenerated"))
    hans_eval = hans_eval_slices(load_named("hans_regenerated"))
    for k in range(WORLDS):
        register_world(k + 1, mnli_parts[k], hans_train[k], hans_eval[k], scratch, conf)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
