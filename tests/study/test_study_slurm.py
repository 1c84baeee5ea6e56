"""conf/study/synthetic_ceiling.yaml through `nliforge-study run ... hydra/launcher=slurm` on the local one-node
Slurm cluster (tests/conftest.py's slurm_env: skipped without one, a failure under NLIFORGE_REQUIRE_SLURM=1)."""

from __future__ import annotations

import os

import pytest
from test_study_end_to_end import check_verdict, run_study

# the local node has few CPUs: one per job
LOCAL_LAUNCHER = ["hydra/launcher=slurm", "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=1",
                  "hydra.launcher.timeout_min=20"]


@pytest.mark.slow
@pytest.mark.timeout(2400)  # a hung launcher fails the test instead of blocking CI
def test_the_same_study_through_slurm(slurm_env, tmp_path):
    env = {**os.environ, **slurm_env}
    attempt = run_study(tmp_path, [*LOCAL_LAUNCHER, "num_threads=1"], env=env)
    check_verdict(attempt)
    assert list((attempt / "runs" / "d0" / ".submitit").glob("*_0/*_log.out")), "submitit logs beside the runs"
