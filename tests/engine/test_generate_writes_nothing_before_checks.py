"""A refused `nliforge-generate` changes no file in the folder it was pointed at (nliforge.utils.run_start):
its checks (`input=`, the pipeline's stages, `register.name`, a folder made with another config) run before
Hydra makes the folder, and Hydra's record (`.hydra/`) and `generate.log` are written only once they pass.
Before: a refused `pipeline.zfilter.k=2` rerun of a k=3 folder left `.hydra/overrides.yaml` saying k=2, and
a refusal into a new folder was only cleaned up after Hydra had made it. A moved folder still resumes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from conftest import compose_config, console_in_process, file_tree
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.generate import generate
from test_compose_pipelines import FILTER, biased_records

pytestmark = pytest.mark.usefixtures("module_cache")   # one cache folder for the module's runs
ARGS = ["pipeline=zfilter", *FILTER, "num_threads=1"]


@pytest.fixture
def cands(tmp_path) -> Path:
    return write_jsonl(biased_records("c", 90, 1), tmp_path / "cands.jsonl")


def generate_cli(monkeypatch, capsys, tmp_path: Path, out: Path, *args: str) -> tuple[int, str]:
    from nliforge.generate import main

    return console_in_process(main, ["nliforge-generate", *ARGS, *args, f"hydra.run.dir={out}"], monkeypatch, capsys)


def refused(monkeypatch, capsys, tmp_path: Path, out: Path, *args: str) -> str:
    code, err = generate_cli(monkeypatch, capsys, tmp_path, out, *args)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1 and lines[0].startswith("error: "), err[-3000:]
    return lines[0]


def test_a_refused_rerun_changes_no_file_and_a_refused_new_run_makes_no_folder(monkeypatch, capsys, tmp_path, cands):
    """The fast suite's copy of the probes below: a k=3 folder as nliforge-generate leaves it (its run made by
    the pure function, Hydra's record and log laid beside it), a k=2 rerun and a bad `input=` refused."""
    out = tmp_path / "run"
    generate(compose_config("generate", [*ARGS, f"input={cands}"], out, Path(os.environ["NLIFORGE_CACHE"])))
    for name, text in ((".hydra/config.yaml", "pipeline: {zfilter: {k: 3}}\n"), (".hydra/hydra.yaml", "hydra: {}\n"),
                       (".hydra/overrides.yaml", "- pipeline.zfilter.k=3\n"), ("generate.log", "k=3's log\n")):
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_text(text)
    before = file_tree(out)
    assert "pipeline.zfilter.k was 3, now 2" in refused(monkeypatch, capsys, tmp_path, out, "pipeline.zfilter.k=2",
                                                         f"input={cands}")
    assert file_tree(out) == before
    new = tmp_path / "new"
    assert "neither a JSONL file" in refused(monkeypatch, capsys, tmp_path, new, f"input={tmp_path / 'no.jsonl'}")
    assert not new.exists()


@pytest.mark.slow   # five runs of the console script (Hydra composes each three times: ~3 s a run)
def test_a_run_records_hydra_and_its_log_and_refused_reruns_change_no_file(monkeypatch, capsys, tmp_path, cands):
    out = tmp_path / "run"
    code, err = generate_cli(monkeypatch, capsys, tmp_path, out, f"input={cands}")
    assert code == 0, err[-3000:]
    assert OmegaConf.load(out / ".hydra" / "overrides.yaml") == [*ARGS, f"input={cands}"]   # as Hydra writes it
    assert OmegaConf.load(out / ".hydra" / "config.yaml").pipeline.zfilter.k == 3
    assert OmegaConf.load(out / ".hydra" / "hydra.yaml").hydra.job.name == "generate"
    assert "stage zfilter" in (out / "generate.log").read_text()
    before = file_tree(out)
    for args, says in ((["pipeline.zfilter.k=2", f"input={cands}"], "pipeline.zfilter.k was 3, now 2"),
                       ([f"input={tmp_path / 'nothing.jsonl'}"], "neither a JSONL file"),
                       (["input=no_such_set"], "nor a training set"),
                       ([f"input={cands}", "register.name=bad name"], "register.name='bad name'")):
        assert says in refused(monkeypatch, capsys, tmp_path, out, *args)
        assert file_tree(out) == before                # no .hydra rewritten, nothing appended to generate.log
    assert "pipeline.zfilter.k=3" in OmegaConf.load(out / ".hydra" / "overrides.yaml")


@pytest.mark.slow
def test_a_refusal_makes_no_folder_and_keeps_one_made_before(monkeypatch, capsys, tmp_path, cands):
    new, empty = tmp_path / "new", tmp_path / "empty"
    assert "neither a JSONL file" in refused(monkeypatch, capsys, tmp_path, new, f"input={tmp_path / 'no.jsonl'}")
    assert "needs a dataset" in refused(monkeypatch, capsys, tmp_path, new)
    assert not new.exists()
    empty.mkdir()                                      # made by the user before the run: kept, still empty
    assert "nor a training set" in refused(monkeypatch, capsys, tmp_path, empty, "input=no_such_set")
    assert empty.is_dir() and not list(empty.iterdir())


@pytest.mark.slow
def test_a_moved_folder_resumes_and_records_the_resuming_command(monkeypatch, capsys, tmp_path, cands):
    code, err = generate_cli(monkeypatch, capsys, tmp_path, tmp_path / "run", f"input={cands}")
    assert code == 0, err[-3000:]
    first = (tmp_path / "run" / "dataset.jsonl").read_bytes()
    shutil.move(tmp_path / "run", tmp_path / "moved")
    (tmp_path / "moved" / "dataset.jsonl").unlink()
    code, err = generate_cli(monkeypatch, capsys, tmp_path, tmp_path / "moved", f"input={cands}")
    assert code == 0, err[-3000:]
    assert (tmp_path / "moved" / "dataset.jsonl").read_bytes() == first and read_jsonl(tmp_path / "moved" / "dataset.jsonl")
    hydra = OmegaConf.load(tmp_path / "moved" / ".hydra" / "hydra.yaml").hydra
    assert hydra.runtime.output_dir == str(tmp_path / "moved")   # the record follows the folder
    assert "already done" in (tmp_path / "moved" / "generate.log").read_text()   # the resume's lines appended
