"""R5's worlds on real text (experiments/real_text/README.md): disjoint parts of the real data, each with its
own training and test pairs, so that the part, not the example, is the unit of analysis.

MNLI dev-matched (all 9,815 pairs, McCoy et al.'s correctness kept) and Kaushik et al.'s SNLI originals
(1,666 training + 400 test = 2,066 pairs) are each cut into PARTS disjoint parts by one seeded permutation
(seed 0); within a part the first 70% (by the same permutation) train and the rest test. Every part is
written as JSONL and registered in the user data home: training set `exp_real_text_<corpus>_p<k>_train`,
eval set `exp_real_text_<corpus>_p<k>_test` and a suite of that one eval set, `exp_real_text_<corpus>_p<k>`
(every prediction kept).

    python -m experiments.real_text.parts <scratch folder>
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import user_conf_dir

from experiments.real_text.common import load_named

PARTS = 5
SEED = 0
TRAIN_FRACTION = 0.7
CORPORA = {"mnli": ("mnli_dev_matched_mccoy",), "snli": ("snli_cad_original", "snli_cad_original_test")}


def cut(records: list, parts: int = PARTS, seed: int = SEED, train_fraction: float = TRAIN_FRACTION) -> list[tuple[list, list]]:
    """(train, test) per part: a seeded permutation cut into `parts` disjoint slices of near-equal size, each
    slice's first `train_fraction` training pairs, the rest test pairs."""
    order = list(range(len(records)))
    random.Random(seed).shuffle(order)
    out = []
    for k in range(parts):
        chunk = [records[i] for i in order[k * len(order) // parts:(k + 1) * len(order) // parts]]
        n_train = round(train_fraction * len(chunk))
        out.append((chunk[:n_train], chunk[n_train:]))
    return out


def register_eval_part(name: str, path: Path, conf: Path) -> None:
    """An eval set `name` reading the JSONL at `path`, and a suite `name` minus `_test` holding only it."""
    spec = (f"# Registered by experiments/real_text/parts.py\nname: {name}\nversion: 1\nloader: jsonl\n"
            f"path: {json.dumps(str(path.resolve()))}\nnum_classes: 3\n")
    atomic_write_text(conf / "data" / "eval_sets" / f"{name}.yaml", [spec])
    suite = name.removesuffix("_test")
    text = (f"# Registered by experiments/real_text/parts.py\ndefaults:\n  - /data/eval_sets@sets.{name}: {name}\n\n"
            f"name: {suite}\ncollapse: argmax\nskip_missing: false\nsave_predictions: true\n")
    atomic_write_text(conf / "suite" / f"{suite}.yaml", [text])


def main(scratch: Path) -> None:
    conf = user_conf_dir(create=True)
    for corpus, sources in CORPORA.items():
        records = [r for name in sources for r in load_named(name)]
        for k, (train, test) in enumerate(cut(records), start=1):
            stem = f"exp_real_text_{corpus}_p{k}"
            train_path = write_jsonl(train, scratch / "sets" / f"{stem}_train.jsonl")
            test_path = write_jsonl(test, scratch / "sets" / f"{stem}_test.jsonl")
            register_train_set(f"{stem}_train", train_path, conf, f"{'+'.join(sources)} part {k} of {PARTS} (seed {SEED})",
                               tool="experiments/real_text/parts.py")
            register_eval_part(f"{stem}_test", test_path, conf)
            print(f"{stem}: {len(train)} training / {len(test)} test pairs")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
