"""num_threads: torch's and the tokenizers' pools sized from the cores this process may use
(os.sched_getaffinity), OMP_NUM_THREADS when set, or the config key. Affinity is set in a subprocess,
so the test session's own threads are left alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from conftest import CONF_DIR
from nliforge.errors import NLIDataError
from nliforge.utils.threads import resolve_num_threads, usable_cores

PROBE = """
import json, os, sys
affinity, value = json.loads(sys.argv[1])
if affinity is not None:
    os.sched_setaffinity(0, affinity)
import torch
from nliforge.utils.threads import set_num_threads
n = set_num_threads(value)
print(json.dumps({"n": n, "torch": torch.get_num_threads(), "rayon": os.environ.get("RAYON_NUM_THREADS"),
                  "tok": os.environ.get("TOKENIZERS_PARALLELISM")}))
"""


def _probe(affinity, value, omp=None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS",
                                                            "TOKENIZERS_PARALLELISM")}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps([affinity, value])], env=env, text=True,
                         capture_output=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this platform")
def test_default_follows_the_affinity_not_the_machine():
    got = _probe([0], None)
    assert got == {"n": 1, "torch": 1, "rayon": "1", "tok": "false"}


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs 2 usable cores")
def test_default_uses_every_allowed_core_and_omp_num_threads_wins():
    cores = sorted(os.sched_getaffinity(0))[:2]
    assert _probe(cores, None) == {"n": 2, "torch": 2, "rayon": "2", "tok": None}
    assert _probe(cores, None, omp="1")["torch"] == 1      # a Slurm script's OMP_NUM_THREADS is kept
    assert _probe([cores[0]], 2)["torch"] == 2              # an explicit num_threads is obeyed


def test_bad_values_name_the_key():
    assert resolve_num_threads(3) == 3
    for bad in (0, -2, "4", 1.5, True):
        with pytest.raises(NLIDataError, match=r"^num_threads=.*expected a positive integer, or null"):
            resolve_num_threads(bad)
    assert usable_cores() >= 1


@pytest.mark.parametrize("app", ["train", "generate", "evaluate"])
def test_every_entry_point_has_the_keys(app):
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(app)
    GlobalHydra.instance().clear()
    assert cfg.num_threads is None and cfg.progress_every_s == 30
