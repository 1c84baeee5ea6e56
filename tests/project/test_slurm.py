"""Multiruns through Hydra's submitit launcher on a real one-node Slurm cluster (slurm/local_cluster.py).

The slow tests need Debian's slurm-wlm and munge and root; they skip without them, unless
NLIFORGE_REQUIRE_SLURM=1 (CI), where a missing cluster is a failure.
"""

import csv
import os
import subprocess
import time
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from nliforge.utils.cli import CONF_DIR, check_group_choices

REPO = Path(__file__).resolve().parents[2]
SMALL = ["world.n_train=300", "world.n_test=60", "world.n_dev=30", "world.n_challenge=30", "logger=csv",
         "trainer.enable_progress_bar=false"]
# the local node has few CPUs: one per job, so two array tasks run at once
LOCAL_LAUNCHER = ["hydra/launcher=slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1",
                  "hydra.launcher.timeout_min=15"]


def test_launcher_presets_extend_the_plugin():
    pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the slurm extra is not installed")
    check_group_choices(["hydra/launcher=submitit_local", "hydra/launcher=slurm_gpu"], CONF_DIR)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
            cfg = compose("train", ["hydra/launcher=slurm_gpu", "hydra.launcher.partition=gpu"],
                          return_hydra_config=True)
    finally:
        GlobalHydra.instance().clear()
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("submitit_launcher.SlurmLauncher")
    assert launcher.partition == "gpu" and launcher.gpus_per_node == 1 and launcher.tasks_per_node == 1
    assert launcher.submitit_folder.startswith(cfg.hydra.sweep.dir + "/")  # beside the runs


def _train(args, cwd, env, timeout=900):
    return subprocess.run(["nliforge-train", "-m", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a hung launcher fails the test instead of blocking CI
def test_multirun_through_slurm(slurm_env, tmp_path):
    """A 2×2 sweep runs as one job array; every job writes its metrics.csv."""
    sweep = tmp_path / "sweep"
    proc = _train(["data/train_sets=[synthetic_biased],[synthetic]", "seed=1,2", "model.max_epochs=1", *SMALL,
                   *LOCAL_LAUNCHER, f"hydra.sweep.dir={sweep}", f"paths.cache_dir={tmp_path / 'cache'}"],
                  tmp_path, slurm_env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Submitit 'slurm' sweep output dir" in proc.stdout + proc.stderr
    ids = []
    for job in ("0", "1", "2", "3"):
        with (sweep / job / "metrics.csv").open() as fh:
            ids.append({r["train_id"] for r in csv.DictReader(fh)})
    assert ids == [{"synthetic_biased"}, {"synthetic_biased"}, {"synthetic"}, {"synthetic"}]
    assert list((sweep / ".submitit").glob("*_0/*_log.out")), "submitit logs beside the runs"


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a hung launcher fails the test instead of blocking CI
def test_failed_job_is_reported(slurm_env, tmp_path):
    """A job with a bad value fails the multirun with its one-line error (the typed range check refuses it
    in the job, before it trains), and the other jobs still finish."""
    sweep = tmp_path / "sweep"
    proc = _train(["model.max_epochs=1,-5", *SMALL, *LOCAL_LAUNCHER, f"hydra.sweep.dir={sweep}",
                   f"paths.cache_dir={tmp_path / 'cache'}"], tmp_path, slurm_env)
    assert proc.returncode != 0
    # the job exits 2 with the range check's line; the multirun ends with one line naming the job and that line
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: a job of the multirun failed: "), proc.stderr[-3000:]
    assert "the job said: model.max_epochs=-5: expected an integer >= 1" in last, last
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert (sweep / "0" / "metrics.csv").is_file()
    assert list((sweep / ".submitit").glob("*_1/*_1_0_log.out")), "the failed job's submitit logs"


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a hung launcher fails the test instead of blocking CI
def test_job_that_dies_is_seen_as_failed(slurm_env, tmp_path, monkeypatch):
    """A job killed before writing its result is FAILED (via the sacct stand-in), not waited on forever."""
    import submitit

    for key in ("SLURM_CONF", "PATH"):
        monkeypatch.setenv(key, slurm_env[key])
    executor = submitit.SlurmExecutor(folder=tmp_path / "submitit")
    executor.update_parameters(cpus_per_task=1, time=2)
    job = executor.submit(os._exit, 3)
    deadline = time.time() + 120
    while not job.done() and time.time() < deadline:
        time.sleep(1)
    assert job.done(), f"job {job.job_id} still {job.state} after 120 s"
    assert job.state == "FAILED"
    with pytest.raises(submitit.core.utils.UncompletedJobError, match="state: FAILED"):
        job.result()


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a hung launcher fails the test instead of blocking CI
def test_ddp_job_runs_one_task_per_process(slurm_env, tmp_path):
    """trainer=ddp_sim with hydra/launcher=slurm_ddp: Slurm starts two tasks, Lightning takes their
    ranks from Slurm's environment, every example is recorded once per epoch and rank 0 alone writes."""
    sweep = tmp_path / "sweep"
    proc = _train(["seed=1", "model.max_epochs=2", *SMALL, "trainer=ddp_sim", "hydra/launcher=slurm_ddp",
                   "hydra.launcher.gpus_per_node=null", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1",
                   "hydra.launcher.timeout_min=15", f"hydra.sweep.dir={sweep}", f"paths.cache_dir={tmp_path / 'cache'}"],
                  tmp_path, slurm_env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    logs = "".join(p.read_text() for p in (sweep / ".submitit").glob("*/*_log.*"))
    assert "GLOBAL_RANK: 1, MEMBER: 2/2" in logs and "distributed_backend=gloo" in logs, logs[-3000:]
    import pandas as pd

    for epoch in ("000", "001"):
        frame = pd.read_parquet(sweep / "0" / "dynamics" / f"epoch_{epoch}.parquet")
        assert len(frame) == 300 and frame["uid"].is_unique   # both ranks' halves, gathered on rank 0
    with (sweep / "0" / "metrics.csv").open() as fh:
        assert {r["eval_set"] for r in csv.DictReader(fh)} >= {"synthetic_test"}
