"""Start-up stays light: `nliforge-generate --help`, a config error and the import of the entry point load
neither Lightning nor W&B tracking, cartography, pandas or matplotlib (they come with the stages that use
them, and with logger=wandb); nor does `nliforge-evaluate --help`. Each case runs in a fresh interpreter,
which then lists the modules it holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("lightning", "wandb", "nliforge.tracking.runs", "nliforge.cartography", "pandas", "matplotlib")
SCRIPT = """
import json, sys
sys.argv = {argv!r}
from nliforge.{module} import main
if len(sys.argv) > 1:
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {tops!r} or m in {heavy!r})))
"""


@pytest.mark.parametrize("argv", [["nliforge-generate"], ["nliforge-generate", "--help"],
                                  ["nliforge-generate", "pipeline=nope"], ["nliforge-generate", "logger=csv", "sedd=1"]],
                         ids=["import", "help", "unknown pipeline", "unknown key"])
def test_nliforge_generate_starts_without_the_heavy_libraries(argv, tmp_path):
    code = SCRIPT.format(module="generate", argv=argv, tops=sorted({h.split(".")[0] for h in HEAVY} - {"nliforge"}), heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], loaded
    if len(argv) > 1 and argv[1] != "--help":   # the config errors came back as one error line
        assert done.stderr.count("error:") == 1, done.stderr


def test_nliforge_evaluate_help_loads_neither_lightning_nor_the_models(tmp_path):
    code = SCRIPT.format(module="evaluate", argv=["nliforge-evaluate", "--help"], tops=["lightning", "torch"],
                         heavy=["nliforge.models.classifier", "nliforge.data.datamodule"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [] and "nliforge-evaluate" in done.stdout


@pytest.mark.parametrize("argv", [["nliforge-train", "--help"], ["nliforge-train", "sedd=1"]], ids=["help", "unknown key"])
def test_nliforge_train_help_and_config_errors_load_neither_torch_nor_lightning(argv, tmp_path):
    code = SCRIPT.format(module="train", argv=argv, tops=["lightning", "torch"],
                         heavy=["nliforge.models.classifier", "nliforge.data.datamodule", "nliforge.models.backbone"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], done.stderr[-2000:]
    if argv[1] == "--help":
        assert "usage: nliforge-train" in done.stdout, done.stdout[-2000:]
    else:
        assert done.stderr.count("error:") == 1, done.stderr


def test_a_part_set_without_a_world_is_one_line_before_torch(tmp_path):
    """`world_part.index` unset for a set that is one part of n (loader world_part): refused before torch,
    Lightning or the run folder."""
    argv = ["nliforge-train", "data/train_sets=[mnli_part_train]", "suite=real_effects_e1", "model=tiny"]
    code = SCRIPT.format(module="train", argv=argv, tops=["lightning", "torch"], heavy=["nliforge.data.datamodule"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith(
        "error: world_part.index is not set: set 'mnli_part_train' is one of 5 disjoint parts"), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and not [p for p in tmp_path.rglob("*") if p.is_file()]   # no run files


@pytest.fixture(scope="module")
def type_cache(tmp_path_factory):
    """One cache folder for the refusals below: only the first of them reads the types by importing."""
    return tmp_path_factory.mktemp("type_cache")


@pytest.mark.parametrize("module,argv,line", [
    ("train", ["nliforge-train", "data.batch_size=abc"], "data.batch_size='abc': expected an integer"),
    ("train", ["nliforge-train", "model=pretrained", "model.backbone.name_or_path=/no/such/model"], "no such folder"),
    ("evaluate", ["nliforge-evaluate", "model.backbone.name_or_path=/no/such/model"], "no such folder"),
    ("train", ["nliforge-train", "data/train_sets=[jsonl]"], "data.train_sets.jsonl.path is not set"),
    ("train", ["nliforge-train", "data/train_sets=[jsonl]", "data.train_sets.jsonl.path=/no/such.jsonl"],
     "data.train_sets.jsonl.path='/no/such.jsonl': file not found"),
], ids=["wrong type", "train: no model folder", "evaluate: no model folder", "train: data file unset",
        "train: no data file"])
def test_a_refused_setting_loads_neither_torch_nor_lightning_once_the_types_are_kept(module, argv, line, tmp_path,
                                                                                   type_cache):
    """The first run with an empty cache folder reads the `_target_`s' parameter types (importing them) into it;
    from then on a wrong setting or a mistyped model folder is refused before torch and Lightning load, and
    writes nothing."""
    env = {**os.environ, "NLIFORGE_CACHE": str(type_cache), "HF_HUB_OFFLINE": "1"}
    code = SCRIPT.format(module=module, argv=[*argv, f"hydra.run.dir={tmp_path / 'run'}"], tops=["lightning", "torch"],
                         heavy=["nliforge.models.classifier", "nliforge.data.datamodule", "nliforge.models.backbone"])
    # twice: the first run keeps the types of this config's targets (one kept by another case's config need not
    # hold them, and under xdist the cases of this module are split over workers in any order); the second counts
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              env=env)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], done.stderr[-2000:]
    assert done.stderr.count("error:") == 1 and line in done.stderr, done.stderr[-2000:]
    assert not (tmp_path / "run").exists()


def test_nliforge_report_help_loads_neither_pandas_nor_scipy(tmp_path):
    """The tables (pandas, scipy, numpy) load when a report is made, not before the arguments are read."""
    code = SCRIPT.format(module="report", argv=["nliforge-report", "--help"], tops=["pandas", "scipy", "numpy"],
                         heavy=["nliforge.evaluation.table", "nliforge.evaluation.report_files"])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [], done.stderr[-2000:]
    assert "nliforge-report" in done.stdout


def test_hydra_help_still_lists_hydras_groups(tmp_path):
    """`--help` skips the group lists its template does not show (run_cli); `--hydra-help`'s template shows them."""
    code = SCRIPT.format(module="train", argv=["nliforge-train", "--hydra-help"], tops=["torch"], heavy=[])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "hydra/launcher: basic, slurm" in done.stdout and "--multirun,-m" in done.stdout, done.stdout[-2000:]
