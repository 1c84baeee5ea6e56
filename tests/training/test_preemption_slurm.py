"""Preemption through a real one-node Slurm cluster (slurm/local_cluster.py, as tests/project/test_slurm.py):
a training job is requeued mid-run (`scontrol requeue`: Slurm sends SIGTERM, then starts the job again)
or warned first (`scancel --signal=USR1`, what `#SBATCH --signal=USR1@90` sends before a time limit);
the job writes its checkpoint, the second start resumes from it by itself (SLURM_RESTART_COUNT), and
metrics.csv and every dynamics file equal an uninterrupted run's.

Slow; needs Debian's slurm-wlm and munge and root (skipped without them unless NLIFORGE_REQUIRE_SLURM=1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_preemption import RUN, same_outputs

ROOT = Path(__file__).resolve().parents[2]
LONGER = ["world.n_train=600", "callbacks.checkpoint.every_n_train_steps=3"]   # 38 steps: time to act mid-run
JOB = [a for a in RUN if not a.startswith("world.n_train=")] + LONGER


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> tuple[Path, Path]:
    """The uninterrupted run every preempted job is compared with (deterministic: run once), and its world cache."""
    folder = tmp_path_factory.mktemp("whole")
    cache = folder / "cache"
    done = subprocess.run([sys.executable, "-m", "nliforge.train", *JOB, f"hydra.run.dir={folder / 'run'}"],
                          cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(cache)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder / "run", cache


def submit(env: dict, folder: Path, cache: Path) -> str:
    """An sbatch job that may be requeued, whose output accumulates over its starts; its job id."""
    script = folder / "job.sbatch"
    args = " ".join(f"'{a}'" for a in [*JOB, f"hydra.run.dir={folder / 'run'}"])
    script.write_text("#!/bin/bash\n#SBATCH --requeue\n#SBATCH --open-mode=append\n#SBATCH --cpus-per-task=1\n"
                      f"#SBATCH --output={folder / 'job.out'}\n"
                      f"export OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 NLIFORGE_CACHE={cache}\n"
                      f"cd {ROOT}\nexec {sys.executable} -m nliforge.train {args}\n")
    done = subprocess.run(["sbatch", "--parsable", str(script)], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip().split(";")[0]


def job_state(env: dict, job: str) -> tuple[str, int]:
    """(state, restart count) from `scontrol show job`."""
    text = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True, text=True).stdout
    fields = dict(part.split("=", 1) for part in text.split() if "=" in part)
    return fields.get("JobState", "?"), int(fields.get("Restarts", "0") or 0)


def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.time() + seconds
    while not predicate():
        if time.time() > deadline:
            pytest.fail(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("how", ["requeue", "usr1"])
def test_a_preempted_slurm_job_resumes_by_itself_and_matches_an_uninterrupted_run(slurm_env, whole, tmp_path, how):
    slurm, (reference, cache) = slurm_env, whole
    job = submit(slurm, tmp_path, cache)
    last = tmp_path / "run" / "checkpoints" / "last.ckpt"
    wait_for(last.exists, 600, f"job {job}'s first step checkpoint")
    if how == "requeue":   # preemption: SIGTERM to the job's processes, then Slurm queues the job again
        subprocess.run(["scontrol", "requeue", job], env=slurm, check=True)
    else:                  # the early warning; the job writes its checkpoint and requeues itself
        subprocess.run(["scancel", "--signal=USR1", "--batch", job], env=slurm, check=True)
    wait_for(lambda: job_state(slurm, job) == ("COMPLETED", 1), 900, f"job {job} to restart once and complete")
    out = (tmp_path / "job.out").read_text()
    name = "SIGTERM" if how == "requeue" else "SIGUSR1"
    assert f"stopped by {name}: resumable checkpoint {last}; resume with ckpt_path=last" in out, out[-4000:]
    assert "requeued Slurm job (restart 1): resuming from" in out, out[-4000:]
    assert "Traceback" not in out, out[-4000:]
    same_outputs(reference, tmp_path / "run")


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_a_warned_job_of_the_submitit_launcher_requeues_and_the_multirun_succeeds(slurm_env, whole, tmp_path):
    """`nliforge-train -m ... hydra/launcher=slurm`: submitit's own warning signal (USR2) reaches the job;
    the job writes its checkpoint, then submitit's handler requeues it; its second start resumes, and the
    multirun ends with exit 0 and the same results as an uninterrupted run."""
    from test_slurm import LOCAL_LAUNCHER

    slurm, (reference, cache), sweep = slurm_env, whole, tmp_path / "sweep"
    env = {**slurm, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "NLIFORGE_CACHE": str(cache)}
    proc = subprocess.Popen(["nliforge-train", "-m", *JOB, *LOCAL_LAUNCHER, f"hydra.sweep.dir={sweep}"], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    last = sweep / "0" / "checkpoints" / "last.ckpt"
    wait_for(lambda: last.exists() or proc.poll() is not None, 600, "the job's first step checkpoint")
    job = next(p.name for p in (sweep / ".submitit").iterdir() if p.name.isdigit())
    subprocess.run(["scancel", "--signal=USR2", job], env=slurm, check=True)
    output, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, output[-4000:]
    logs = "".join(p.read_text() for p in (sweep / ".submitit").glob("*/*_log.*"))
    assert "stopped by SIGUSR2: resumable checkpoint" in logs and "requeued Slurm job (restart 1)" in logs, logs[-4000:]
    same_outputs(reference, sweep / "0")
