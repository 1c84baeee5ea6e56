"""Shared fixtures: configs composed once per session and made cheap (tiny model, CPU, no logger)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, OmegaConf, open_dict

# The tests live in folders that mirror the package (tests/data, tests/engine, tests/pipelines/wanli, ...); a
# few reuse another folder's fixtures by module name (e.g. `from test_compose_pipelines import biased_records`).
for _folder in sorted(Path(__file__).resolve().parent.rglob("*")):
    if _folder.is_dir() and any(_folder.glob("test_*.py")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Whatever the tests register goes to a data home of their own, never into ~/.cache or the checkout
# (subprocesses inherit it).
if "NLIFORGE_HOME" not in os.environ or os.environ.get("NLIFORGE_TEST_KEEP_HOME") != "1":
    import tempfile

    os.environ["NLIFORGE_HOME"] = tempfile.mkdtemp(prefix="nliforge_test_home_")

CONF_DIR = str(Path(__file__).resolve().parents[1] / "conf")
# A small world keeps the tests fast; the demo uses the full default sizes.
SMALL_WORLD = ["world.n_train=900", "world.n_dev=150", "world.n_test=300", "world.n_challenge=150"]


def real_data_dir(required: str) -> Path:
    """`NLIFORGE_DATA_DIR` when it holds `required` (a path inside a folder laid out like the download);
    else the test skips, or fails where NLIFORGE_REQUIRE_REAL_DATA=1 (CI)."""
    folder = os.environ.get("NLIFORGE_DATA_DIR")
    if folder and (Path(folder) / required).is_file():
        return Path(folder)
    why = f"NLIFORGE_DATA_DIR={folder!r} does not hold {required} (a folder laid out like `nliforge-data fetch`'s)"
    if os.environ.get("NLIFORGE_REQUIRE_REAL_DATA") == "1":
        pytest.fail(f"NLIFORGE_REQUIRE_REAL_DATA=1 but {why}")
    pytest.skip(why)


def compose_plain(name: str, overrides: list[str]) -> DictConfig:
    """Compose `conf/<name>.yaml` with overrides, as the entry point would (no paths changed): the user data
    home's conf/ (registered sets) is on the search path, as `run_cli` puts it."""
    from nliforge.utils.cli import with_user_config_path
    from nliforge.utils.home import user_conf_dir

    overrides = with_user_config_path(overrides, env="", extra=[user_conf_dir(create=True)])
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(name, overrides=overrides)
    GlobalHydra.instance().clear()
    return cfg


def compose_config(name: str, overrides: list[str], output_dir: Path, cache_dir: Path) -> DictConfig:
    """Compose `conf/<name>.yaml` with overrides, pointing outputs and caches at test folders."""
    cfg = compose_plain(name, overrides)
    with open_dict(cfg):
        cfg.paths.output_dir = str(output_dir)
        cfg.paths.cache_dir = str(cache_dir)
    return cfg


@pytest.fixture(scope="session")
def world_cache(tmp_path_factory) -> Path:
    """One cache folder for synthetic worlds, shared by the session (worlds are built once)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def cfg_train_base(tmp_path_factory, world_cache) -> DictConfig:
    """The demo experiment at test size: 2 epochs over a small world, CSV logger only."""
    out = tmp_path_factory.mktemp("base_run")
    return compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=2",
                                    "trainer.enable_progress_bar=false"], out, world_cache)


@pytest.fixture
def cfg_train(cfg_train_base, tmp_path) -> DictConfig:
    cfg = cfg_train_base.copy()
    with open_dict(cfg):
        cfg.paths.output_dir = str(tmp_path / "run")
    return cfg


def resolved(cfg: DictConfig) -> dict:
    return OmegaConf.to_container(cfg, resolve=True)


@pytest.fixture(scope="session")
def classifier_run_dir(tmp_path_factory, world_cache) -> Path:
    """A tiny classifier trained once per session (2 epochs, dynamics, checkpoints, train_set.jsonl):
    the task model generation pipelines build on."""
    from nliforge.train import train

    out = tmp_path_factory.mktemp("classifier_run")
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=2", "logger=none",
                                   "trainer.enable_progress_bar=false", "data.save_train_set=true",
                                   "callbacks.checkpoint.save_top_k=-1"], out, world_cache)   # every epoch: variability
    train(cfg)
    return out


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models run faster on one thread (and far faster when other processes share the cores).
    Use per module: `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def local_cluster():
    """slurm/local_cluster.py, loaded as a module (it is a script, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("local_cluster", Path(__file__).resolve().parents[1] / "slurm"
                                                  / "local_cluster.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def slurm_env(tmp_path_factory):
    """A real one-node Slurm cluster (Debian's slurm-wlm and munge, as root), started once per session for every
    Slurm test; its environment (SLURM_CONF, PATH) with the offline flags. Skipped without one, unless
    NLIFORGE_REQUIRE_SLURM=1 (CI), where a missing cluster fails."""
    import importlib.util

    lc = local_cluster()
    why = lc.missing()
    if importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None:
        why = why or "hydra-submitit-launcher is not installed (pip install -e '.[slurm]')"
    if why:
        if os.environ.get("NLIFORGE_REQUIRE_SLURM") == "1":
            pytest.fail(f"NLIFORGE_REQUIRE_SLURM=1 but no local Slurm cluster can start: {why}")
        pytest.skip(f"no local Slurm cluster: {why}")
    scratch = tmp_path_factory.mktemp("slurm")
    try:
        env = lc.start(scratch)
        env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", WANDB_MODE="offline",
                   TOKENIZERS_PARALLELISM="false")
        yield env
    finally:
        lc.stop(scratch)


def wanli_openai_config(run_dir: Path, cache: Path, clf: Path, base_url: str, key_env: str, max_per_label: int,
                        extra=()):
    """pipeline=wanli against an OpenAI-compatible server (the stand-in), its classifier given, quick retries:
    the generation tests' shared set-up."""
    return compose_config("generate", [
        "generator=openai_completions", f"generator.base_url={base_url}", f"generator.api_key_env={key_env}",
        "generator.model=stand-in", "generator.runner.progress=false", "generator.runner.concurrency=8",
        "generator.runner.backoff_base_s=0.01", "generator.runner.requests_per_minute=null",
        "generator.runner.tokens_per_minute=null",
        f"pipeline.classifier.run_dir={clf}", f"pipeline.seeds.max_per_label={max_per_label}", *extra], run_dir, cache)


def file_tree(folder: Path) -> dict[str, tuple]:
    """Every file and folder under `folder`: its bytes' sha256, size and modification time (a rewrite with
    the same bytes shows too)."""
    import hashlib

    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                          p.stat().st_size if p.is_file() else 0, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    """One cache folder (worlds, the settings' types, read once by importing) for a module's console runs:
    `pytestmark = pytest.mark.usefixtures("module_cache")`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NLIFORGE_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


def console_in_process(main, argv: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """An entry point's console script (`main`, with `sys.argv` = argv) in this process, its imports already
    paid: (exit status, stderr). Hydra's global state and the root logger's handlers are put back after."""
    import logging

    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    monkeypatch.setattr("sys.argv", list(argv))
    capsys.readouterr()
    code = 0
    try:
        main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    finally:
        GlobalHydra.instance().clear()
        for handler in root.handlers:
            if handler not in handlers:
                handler.close()
        root.handlers[:] = handlers
        root.setLevel(level)
    return code, capsys.readouterr().err
