"""nliforge as an installed package: its configs ship inside it, and runs write nothing into the package
or a checkout (registered sets go to the user data home, NLIFORGE_HOME, which is on the search path).

The slow test builds the wheel, installs it into a fresh virtual environment (its dependencies taken
from this machine's site-packages, the wheel's own nliforge ahead of the editable checkout) and runs the
console scripts from an empty folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compose_plain
from test_compose_pipelines import FILTER, biased_records

from nliforge.data.jsonl import write_jsonl
from nliforge.generate import generate
from nliforge.utils.cli import CONF_DIR
from nliforge.utils.home import user_conf_dir

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ["nliforge-train", "nliforge-evaluate", "nliforge-generate", "nliforge-review", "nliforge-report",
           "nliforge-analyze", "nliforge-vllm", "nliforge-publish", "nliforge-data",
           "nliforge-study"]


def test_the_configs_are_inside_the_package():
    assert Path(CONF_DIR) == Path(__import__("nliforge").__file__).resolve().parent / "conf"
    assert (Path(CONF_DIR) / "train.yaml").is_file() and (Path(CONF_DIR) / "data" / "train_sets" / "synthetic.yaml").is_file()


def test_a_registered_set_goes_to_the_data_home_and_is_found_there(tmp_path):
    from conftest import compose_config

    cands = write_jsonl(biased_records("c", 60, 1), tmp_path / "cands.jsonl")
    cfg = compose_config("generate", ["pipeline=zfilter", *FILTER, f"input={cands}", "register.name=zz_home"],
                         tmp_path / "run", tmp_path / "cache")
    manifest = generate(cfg)
    target = user_conf_dir() / "data" / "train_sets" / "zz_home.yaml"
    assert manifest["registered"]["config"] == str(target) and target.is_file()
    assert str(user_conf_dir()).startswith(os.environ["NLIFORGE_HOME"])
    assert not (Path(CONF_DIR) / "data" / "train_sets" / "zz_home.yaml").exists()
    composed = compose_plain("train", ["data/train_sets=[zz_home]"])
    assert composed.data.train_sets.zz_home.path.endswith("run/dataset.jsonl")


# where tests running beside this one (CI's other lanes) write into the checkout: left out of the comparison, and
# this run's own world cache is looked for there by name instead
BESIDE = ("data_cache/", "outputs/", ".ci-", ".pytest_cache/")


def _new_files() -> set[str]:
    """Untracked and ignored files of the checkout (what a run could have written), bytecode aside."""
    out = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=all", "--ignored"],
                         capture_output=True, text=True).stdout
    return {line[3:] for line in out.splitlines() if line[:2] in ("??", "!!") and "__pycache__" not in line}


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_wheel_installs_and_runs_from_an_empty_folder(tmp_path):
    before = _new_files()
    source = tmp_path / "source"                          # built from a copy: pip writes build/ beside the sources
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
                    str(source)], check=True, capture_output=True, text=True)
    [wheel] = wheels.glob("nliforge-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(wheel)], check=True,
                   capture_output=True, text=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": "",
           "NLIFORGE_HOME": str(tmp_path / "home")}
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import nliforge.utils.cli as c; print(c.CONF_DIR)"],
                           cwd=empty, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(venv)), where            # the wheel's copy, not the checkout's
    for script in SCRIPTS:
        done = subprocess.run([str(venv / "bin" / script), "--help"], cwd=empty, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, (script, done.stderr[-2000:])
    done = subprocess.run([str(venv / "bin" / "nliforge-train"), "experiment=demo", "world.n_train=600",
                           "world.n_dev=100", "world.n_test=200", "world.n_challenge=100", "model.max_epochs=1"],
                          cwd=empty, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert list((empty / "outputs").rglob("metrics.csv"))
    worlds = {p.name for p in (empty / "data_cache" / "world").iterdir()}
    assert worlds                                         # its world cache went to the folder it ran from ...
    new = _new_files() - before
    assert not {f for f in new if any(w in f for w in worlds)}, new    # ... and none of it into the checkout
    assert not {f for f in new if not f.startswith(BESIDE)}, new       # nor anything else
