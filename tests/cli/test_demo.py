"""The W&B offline logger and multiruns, through the real console script (slow). The training demo itself
is run, and its biased model checked, by tests/project/test_readme_numbers.py."""

import csv
import os
import subprocess
from pathlib import Path

import pytest


def _run(args, cwd, extra_env=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(extra_env or {})}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_multirun_over_combinations(tmp_path):
    """One job per combination, each with its own metrics.csv naming its training-set id."""
    sweep = tmp_path / "sweep"
    proc = _run(["nliforge-train", "-m", "data/train_sets=[synthetic_biased],[synthetic_biased,synthetic]",
                 "data.combine=augment", "debug=fast", "world.n_train=300", "world.n_test=60", "world.n_dev=30",
                 "world.n_challenge=30",
                 f"hydra.sweep.dir={sweep}", f"paths.cache_dir={tmp_path / 'cache'}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ids = set()
    for job in ("0", "1"):
        with (sweep / job / "metrics.csv").open() as fh:
            ids |= {r["train_id"] for r in csv.DictReader(fh)}
    assert ids == {"synthetic_biased", "synthetic_biased+synthetic"}


@pytest.mark.slow
def test_multirun_wandb_runs_grouped_by_sweep(tmp_path):
    """W&B offline: one run per job, named by training-set id and seed, grouped by the sweep folder, with the
    resolved config and the suite's final metrics in it (and metrics.csv beside it)."""
    sweep = tmp_path / "sweep_2026"
    proc = _run(["nliforge-train", "-m", "data/train_sets=[synthetic_biased],[synthetic]", "seed=4",
                 "logger=wandb", "debug=fast", "world.n_train=300", "world.n_test=60", "world.n_dev=30",
                 "world.n_challenge=30", f"hydra.sweep.dir={sweep}", f"paths.cache_dir={tmp_path / 'cache'}"],
                tmp_path, {"WANDB_MODE": "offline"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job, train_id in (("0", "synthetic_biased"), ("1", "synthetic")):
        runs = list((sweep / job).rglob("offline-run-*"))
        assert len(runs) == 1, f"job {job}: {runs}"
        data = next(runs[0].glob("*.wandb")).read_bytes()
        # the run record's run_group field (protobuf: tag, length, bytes), not just any mention of the folder
        from wandb.proto import wandb_internal_pb2 as pb

        num = pb.RunRecord.DESCRIPTOR.fields_by_name["run_group"].number
        assert bytes([num << 3 | 2, len(b"sweep_2026")]) + b"sweep_2026" in data
        assert f"{train_id}-s4".encode() in data
        assert b"train_sets" in data and b"test/synthetic_test/acc" in data and b"test/synthetic_challenge_length/acc" in data
        assert (sweep / job / "metrics.csv").is_file()
