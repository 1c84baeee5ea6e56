"""Exact resume: `nliforge-train` killed with SIGKILL at a random step and resumed with ckpt_path=last ends
with the same metrics.csv and training dynamics as an uninterrupted run, bit for bit (CPU, one thread).

Fast tests check the pieces (the batch plan's position, the random state) on real Lightning runs; the
slow test kills real training processes, once at an exact random step from inside (SIGKILL cannot be
caught, so the process dies as under the OOM killer) and once from outside at a random moment.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from nliforge.data.sampling import LengthGroupedBatchSampler
from nliforge.models.resume import collect_random_state, set_random_state
from nliforge.testing.kill import HOOKS
from nliforge.testing.warm import WarmInterpreter

ROOT = Path(__file__).resolve().parents[2]
RUN = ["experiment=demo", "world.n_train=900", "world.n_dev=150", "world.n_test=300", "world.n_challenge=150",
       "model.max_epochs=3", "logger=none", "save_model=false", "trainer.enable_progress_bar=false",
       "callbacks.checkpoint.every_n_train_steps=5"]
STEPS = 3 * 29   # 3 epochs of ceil(900 / 32) batches


def test_sampler_resumes_mid_epoch_with_the_same_plan():
    lengths = [random.Random(i).randint(5, 60) for i in range(300)]
    whole = LengthGroupedBatchSampler(lengths, 16, seed=3)
    whole.set_epoch(2)
    plan = list(whole)
    resumed = LengthGroupedBatchSampler(lengths, 16, seed=3)
    batches = iter(resumed)          # Lightning makes the iterator before it sets the epoch
    resumed.resume_at(2, 7)
    resumed.set_epoch(2)
    assert list(batches) == plan[7:]
    resumed.set_epoch(3)             # the skip applies once, to its own epoch
    assert len(list(resumed)) == len(plan)


def test_random_state_round_trips_through_a_weights_only_checkpoint(tmp_path):
    torch.manual_seed(5)
    random.seed(5)
    state = collect_random_state()
    torch.save({"ranks": [state]}, tmp_path / "s.pt")
    expected = (torch.rand(3).tolist(), random.random(), float(np.random.rand()))
    set_random_state(torch.load(tmp_path / "s.pt", weights_only=True)["ranks"][0])
    assert (torch.rand(3).tolist(), random.random(), float(np.random.rand())) == expected


ENV = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def start(run_dir: Path, cache: Path, extra: list[str], warm: WarmInterpreter | None = None):
    """`nliforge.train` with RUN and `extra`, in a fresh process, or in a fork of `warm` (no imports to pay)."""
    env, args = {**ENV, "NLIFORGE_CACHE": str(cache)}, [*RUN, *extra, f"hydra.run.dir={run_dir}"]
    if warm is not None:
        return warm.start("nliforge.train", args, cwd=ROOT, env=env)
    return subprocess.Popen([sys.executable, "-m", "nliforge.train", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finish(proc) -> None:
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]


def kill_at(step: int, hook: str) -> list[str]:
    return ["+callbacks.kill._target_=nliforge.testing.kill.SigkillAtStep", f"+callbacks.kill.step={step}",
            f"+callbacks.kill.hook={hook}"]


# A resume without the kill callback differs from the killed run's config.yaml by that callback only
# (it changes nothing trained): said explicitly, as a user resuming under a changed config must.
RESUME = ["ckpt_path=last", "allow_config_change=true"]


def kill_from_outside(run: Path, cache: Path, extra: list[str], rng: random.Random,
                      warm: WarmInterpreter | None = None) -> bool:
    """Resume, and SIGKILL the process at a random moment after it wrote a checkpoint. True if it was killed."""
    last = run / "checkpoints" / "last.ckpt"
    seen = last.stat().st_mtime_ns if last.exists() else 0
    proc = start(run, cache, [*extra, *RESUME], warm)
    while proc.poll() is None and (not last.exists() or last.stat().st_mtime_ns == seen):
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 1.0))
    if proc.poll() is not None:
        finish(proc)
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def assert_same_outputs(whole: Path, run: Path, note: str) -> None:
    """metrics.csv and every dynamics file identical, byte for byte."""
    names = ["metrics.csv", *(f"dynamics/{p.name}" for p in sorted((whole / "dynamics").glob("*.parquet")))]
    assert len(names) == 5   # metrics.csv, 3 epochs, dynamics/metrics.parquet
    for name in names:
        assert (run / name).is_file(), f"{name} missing ({note})"
        if (run / name).read_bytes() != (whole / name).read_bytes():
            read = pd.read_csv if name.endswith(".csv") else pd.read_parquet
            pd.testing.assert_frame_equal(read(run / name), read(whole / name), check_exact=True,
                                          obj=f"{name} ({note})")
            pytest.fail(f"{name}: same values, different bytes ({note})")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sigkill_at_a_random_step_then_resume_matches_an_uninterrupted_run(tmp_path):
    """The uninterrupted run in a fresh process; the killed and resumed ones in forks of a warm interpreter."""
    rng = random.Random()
    step, hook = rng.randrange(6, STEPS), rng.choice(HOOKS)   # after the first checkpoint (step 5)
    cache, run = tmp_path / "cache", tmp_path / "killed"
    finish(start(tmp_path / "whole", cache, []))
    with WarmInterpreter(ENV) as warm:
        first = start(run, cache, kill_at(step, hook), warm)
        first.communicate(timeout=300)
        assert first.returncode == -signal.SIGKILL, f"not killed at step {step} ({hook})"
        killed_twice = kill_from_outside(run, cache, [], rng, warm)
        if killed_twice:
            finish(start(run, cache, RESUME, warm))
    note = f"killed at step {step} ({hook}), then from outside: {killed_twice}"
    print(note)
    assert_same_outputs(tmp_path / "whole", run, note)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ddp_sim_killed_at_a_random_step_resumes_every_rank_exactly(tmp_path):
    """Two processes, each with its own dropout stream and its own share of each batch; both die by SIGKILL
    at the same random step (each kills itself: an outside kill of rank 0 would orphan rank 1)."""
    rng = random.Random()
    step, hook = rng.randrange(6, STEPS), rng.choice(HOOKS)
    cache, run = tmp_path / "cache", tmp_path / "killed"
    finish(start(tmp_path / "whole", cache, ["trainer=ddp_sim"]))
    first = start(run, cache, ["trainer=ddp_sim", *kill_at(step, hook)])
    first.communicate(timeout=300)
    assert first.returncode == -signal.SIGKILL, f"not killed at step {step} ({hook})"
    finish(start(run, cache, ["trainer=ddp_sim", *RESUME]))
    print(f"ddp_sim killed at step {step} ({hook})")
    assert_same_outputs(tmp_path / "whole", run, f"ddp_sim killed at step {step} ({hook})")


def test_step_checkpoints_beside_epoch_checkpoints(tmp_path):
    from omegaconf import OmegaConf

    from nliforge.models.resume import checkpoint_callbacks

    node = OmegaConf.create({"_target_": "lightning.pytorch.callbacks.ModelCheckpoint", "dirpath": str(tmp_path),
                             "filename": "epoch_{epoch:02d}", "save_last": True, "save_top_k": -1,
                             "every_n_epochs": 1, "every_n_train_steps": 5})
    by_epoch, by_steps = checkpoint_callbacks(node, "callbacks.checkpoint")
    assert (by_epoch._every_n_epochs, by_epoch._every_n_train_steps, by_epoch.save_top_k) == (1, 0, -1)
    assert (by_steps._every_n_epochs, by_steps._every_n_train_steps, by_steps.save_top_k) == (0, 5, 0)
    assert not by_epoch._enable_version_counter and not by_steps._enable_version_counter  # one last.ckpt
    node.every_n_train_steps = None
    assert len(checkpoint_callbacks(node, "callbacks.checkpoint")) == 1
