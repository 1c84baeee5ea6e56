"""Shared by the study tests: a small study file and run folders written by hand (metrics.csv, predictions,
dynamics), so every number a test expects is worked out from values it chose."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

STUDY = {
    "name": "hand",
    "question": "Does b beat a?",
    "base": {"world.n_train": 300, "model.max_epochs": 1},
    "worlds": {"key": "world.seed", "values": [0, 1, 2, 3, 4]},
    "seeds": [1, 2],
    "arms": {"a": {"train_sets": ["synthetic_biased"]},
             "b": {"train_sets": ["synthetic_biased", "synthetic"], "combine": "augment", "limit": {"synthetic": 300}}},
    "suite": "synthetic",
    "gates": {"fit": {"arm": "b", "metric": "train/acc", "at_least": 0.65},
              "learns": {"arm": "a", "metric": "test/acc", "above": "largest_class", "over_worlds": True},
              "pairs": {"arm": "a", "metric": "test/n", "at_least": 10}},
    "claims": [{"id": "c1", "contrast": "b - a", "cell": "challenge/acc", "side": "greater", "family": "F",
                "needs": ["pairs"]},
               {"id": "c2", "contrast": "b - a", "cell": "test/acc", "side": "greater", "family": "F",
                "needs": ["fit"]}],
}


def write_study(folder: Path, **changes) -> Path:
    data = {**STUDY, **changes}
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def write_run(run: Path, metrics: dict[tuple[str, str], float], gold: dict[str, list[str]] | None = None,
              train: tuple[list[int], list[int]] | None = None) -> Path:
    """A finished run folder: metrics.csv from {(set, metric): value}; predictions/<set>.csv with the gold
    labels given; dynamics/epoch_000.parquet from (gold ids, predicted ids) of the training pairs."""
    run.mkdir(parents=True, exist_ok=True)
    with (run / "metrics.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["train_id", "seed", "eval_set", "metric", "value"])
        for (s, m), v in metrics.items():
            w.writerow(["x", 1, s, m, v])
    for name, labels in (gold or {}).items():
        (run / "predictions").mkdir(exist_ok=True)
        with (run / "predictions" / f"{name}.csv").open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["uid", "gold", "pred"])
            w.writerows([[i, lab, lab] for i, lab in enumerate(labels)])
    if train is not None:
        import pandas as pd

        gold_ids, pred = train
        probs = [[0.8 if j == p else 0.1 for j in range(3)] for p in pred]
        frame = pd.DataFrame({"uid": [f"u{i}" for i in range(len(pred))], "gold": gold_ids,
                              "p_entailment": [p[0] for p in probs], "p_neutral": [p[1] for p in probs],
                              "p_contradiction": [p[2] for p in probs]})
        (run / "dynamics").mkdir(exist_ok=True)
        frame.to_parquet(run / "dynamics" / "epoch_000.parquet")
    return run
