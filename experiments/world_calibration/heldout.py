"""Write the in-distribution test of a world's `train_biased` split and score the TF-IDF baseline.

The world's `test` split has no planted artifacts, so a hypothesis-only model trained on
`train_biased` must be scored on more draws of `train_biased` itself (as SNLI's hypothesis-only
number is measured on SNLI's test). Composes nliforge's train config with the given overrides (so the
world is the one `nliforge-train` builds, same digest, built once), writes the last N_HELDOUT pairs of
`train_biased` to OUT/heldout_biased.jsonl and the TF-IDF hypothesis-only accuracy (first
n_train - N_HELDOUT pairs -> last N_HELDOUT) to OUT/tfidf.json.

    python -m experiments.world_calibration.heldout OUT N_HELDOUT [hydra overrides ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from nliforge.analysis.partial_input import partial_input_baselines
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.cli import CONF_DIR
from nliforge.world import WorldConfig, ensure_world


def main(out: str, n_heldout: str, *overrides: str) -> None:
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("train", overrides=list(overrides))
    world = WorldConfig.from_dict(OmegaConf.to_container(cfg.world, resolve=True))
    n = int(n_heldout)
    if not 0 < n < world.n_train:
        sys.exit(f"error: N_HELDOUT must be in (0, world.n_train={world.n_train}), got {n}")
    records = read_jsonl(ensure_world(world, Path(cfg.paths.cache_dir) / "world") / "train_biased.jsonl")
    train, test = records[:-n], records[-n:]
    write_jsonl(test, Path(out) / "heldout_biased.jsonl")
    result = partial_input_baselines(train, test, views=("hypothesis",), balance=False, seed=0)
    summary = {"world": world.to_dict(), "n_train": len(train), "n_test": len(test),
               "tfidf_hypothesis_accuracy": result.accuracy["hypothesis"]}
    atomic_write_text(Path(out) / "tfidf.json", [json.dumps(summary, indent=2) + "\n"])
    print(f"heldout: {len(test)} pairs; TF-IDF hypothesis-only {result.accuracy['hypothesis']:.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
