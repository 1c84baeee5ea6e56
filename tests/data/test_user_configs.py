"""User config folders outside the repository: a training set and a suite (with an eval set of its
own) registered in a folder named by `hydra.searchpath` or by NLIFORGE_CONFIG_PATH, used by the real
console scripts; an unknown name is still refused before anything runs, listing the user's options."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

from nliforge.data import Record, write_jsonl
from nliforge.errors import NLIDataError
from nliforge.utils.cli import CONF_DIR, check_group_choices, with_user_config_path

HYPS = {"entailment": "Someone is outside.", "neutral": "A tall person is outside.",
        "contradiction": "Nobody is outside."}
WORLD = ["world.n_train=300", "world.n_dev=60", "world.n_test=60", "world.n_challenge=60"]
FAST = ["model.max_epochs=1", "logger=none", "callbacks=none", "trainer.enable_progress_bar=false", *WORLD]


def records(prefix: str, n: int) -> list[Record]:
    labels = list(HYPS)
    return [Record(f"{prefix}-{i}", f"A person number {i} walks in the park.", HYPS[labels[i % 3]], labels[i % 3])
            for i in range(n)]


@pytest.fixture(scope="module")
def user_conf(tmp_path_factory) -> Path:
    """A config folder outside the repository: train set `my_set`, eval set `my_eval`, suite `my_suite`."""
    root = tmp_path_factory.mktemp("user")
    write_jsonl(records("train", 60), root / "train.jsonl")
    write_jsonl(records("eval", 30), root / "eval.jsonl")
    conf = root / "conf"
    for folder in ("data/train_sets", "data/eval_sets", "suite"):
        (conf / folder).mkdir(parents=True)
    (conf / "data/train_sets/my_set.yaml").write_text(
        f"my_set:\n  name: my_set\n  loader: jsonl\n  path: {root / 'train.jsonl'}\n  num_classes: 3\n  limit: null\n")
    (conf / "data/eval_sets/my_eval.yaml").write_text(
        f"name: my_eval\nversion: 1\nloader: jsonl\npath: {root / 'eval.jsonl'}\nnum_classes: 3\n")
    (conf / "suite/my_suite.yaml").write_text(
        "defaults:\n  - /data/eval_sets@sets.my_eval: my_eval\n  - /data/eval_sets@sets.synthetic_dev: synthetic_dev\n"
        "name: my_suite\ncollapse: argmax\nskip_missing: false\n")
    return conf


def run(args: list[str], cwd: Path, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "NLIFORGE_CACHE": str(cwd / "cache")}
    env.pop("NLIFORGE_CONFIG_PATH", None)
    env.update(env_extra or {})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def metric_sets(run_dir: Path) -> set[str]:
    with (run_dir / "metrics.csv").open() as fh:
        return {row["eval_set"] for row in csv.DictReader(fh)}


def test_train_set_and_suite_from_hydra_searchpath(user_conf, tmp_path):
    run_dir = tmp_path / "run"
    proc = run(["nliforge-train", f"hydra.searchpath=[file://{user_conf}]", "data/train_sets=[my_set]",
                "suite=my_suite", "save_model=false", *FAST, f"hydra.run.dir={run_dir}"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    manifest = json.loads((run_dir / "train_set.manifest.json").read_text())
    assert manifest["train_id"] == "my_set" and manifest["size"] == 60
    assert metric_sets(run_dir) == {"my_eval", "synthetic_dev"}


def test_user_folder_from_the_environment_for_train_and_evaluate(user_conf, tmp_path):
    train_dir, eval_dir = tmp_path / "train", tmp_path / "eval"
    env = {"NLIFORGE_CONFIG_PATH": f"{tmp_path / 'no_such_folder'}{os.pathsep}{user_conf}"}
    proc = run(["nliforge-train", "data/train_sets=[my_set]", "suite=my_suite", *FAST, f"hydra.run.dir={train_dir}"],
               tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run(["nliforge-evaluate", f"model.backbone.name_or_path={train_dir / 'model'}", "suite=my_suite",
                *WORLD, "logger=none", f"hydra.run.dir={eval_dir}"], tmp_path, env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert metric_sets(eval_dir) == {"my_eval", "synthetic_dev"}


def test_unknown_name_is_refused_listing_the_user_options(user_conf, tmp_path):
    proc = run(["nliforge-train", f"hydra.searchpath=[file://{user_conf}]", "data/train_sets=[my_sett]",
                f"hydra.run.dir={tmp_path / 'run'}"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "data/train_sets: unknown option 'my_sett'; did you mean 'my_set'? valid choices:" in proc.stderr
    assert "my_set," in proc.stderr and "synthetic_biased" in proc.stderr and str(user_conf) in proc.stderr
    assert not (tmp_path / "run").exists()


def test_searchpath_check_in_process(user_conf):
    args = [f"hydra.searchpath=[file://{user_conf}]", "data/train_sets=[my_set,synthetic]", "suite=my_suite"]
    check_group_choices(args, CONF_DIR)   # the user's and the repository's options together
    with pytest.raises(NLIDataError, match="data/train_sets: unknown option 'my_set'"):
        check_group_choices(args[1:], CONF_DIR)   # without the search path the name is unknown
    merged = with_user_config_path(args, env=f"{user_conf}{os.pathsep}{user_conf}")
    assert merged.count(f"hydra.searchpath=['file://{user_conf}']") == 1   # given once, not added twice
    assert with_user_config_path(["seed=1"], env="") == ["seed=1"]


@pytest.mark.parametrize("args, expected", [
    (["a=1", "--cfg", "job"], ["a=1", "SP", "--cfg", "job"]),
    (["--cfg", "job", "a=1"], ["--cfg", "job", "a=1", "SP"]),
    (["-m", "a=1,2", "b=3"], ["-m", "a=1,2", "b=3", "SP"]),
    (["a=1", "-cn", "x", "--package", "p", "--help"], ["a=1", "SP", "-cn", "x", "--package", "p", "--help"]),
    (["--config-dir=/x", "a=1", "--info"], ["--config-dir=/x", "a=1", "SP", "--info"]),
    (["--info", "config"], ["SP", "--info", "config"]),
    (["-c", "hydra"], ["SP", "-c", "hydra"]),
])
def test_environment_searchpath_goes_among_the_overrides(args, expected, tmp_path):
    from hydra._internal.utils import get_args_parser

    merged = with_user_config_path(args, env=str(tmp_path))
    assert merged == [f"hydra.searchpath=['file://{tmp_path.resolve()}']" if a == "SP" else a for a in expected]
    parsed = get_args_parser().parse_args(merged)   # Hydra's own parser accepts the result
    assert parsed.overrides[-1].startswith("hydra.searchpath=")


def test_environment_folder_with_cfg_job_flag(tmp_path):
    conf = tmp_path / "conf"
    (conf / "data/train_sets").mkdir(parents=True)
    (conf / "data/train_sets/x.yaml").write_text(
        f"x:\n  name: x\n  loader: jsonl\n  path: {tmp_path / 'x.jsonl'}\n  num_classes: 3\n  limit: null\n")
    proc = run(["nliforge-train", "data/train_sets=[x]", "--cfg", "job"], tmp_path, {"NLIFORGE_CONFIG_PATH": str(conf)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "train_sets:" in proc.stdout and f"path: {tmp_path / 'x.jsonl'}" in proc.stdout
