"""A generation run folder's identity and its end (before: a moved or copied folder was refused because
`callbacks.checkpoint.dirpath` differed; a run that kept 0 records exited 0 with no dataset.jsonl and no
word; an `input=` naming nothing was refused after config.yaml had bound the folder to it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wanli_openai_config
from nliforge.errors import NLIDataError
from nliforge.generate import generate
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

ROOT = Path(__file__).resolve().parents[2]
KEY_ENV = "NLIFORGE_TEST_API_KEY"


def gen_config(run_dir: Path, cache: Path, clf: Path, base_url: str, extra=()):
    return wanli_openai_config(run_dir, cache, clf, base_url, KEY_ENV, 4, extra)


def served(log_path: Path) -> int:
    return sum(1 for line in log_path.read_text().split("\n") if line.strip())


def start(tmp_path, monkeypatch, responder):
    monkeypatch.setenv(KEY_ENV, "test-key")
    return LocalOpenAIServer(latency_s=0.001, responder=responder, log_path=tmp_path / "server_log.jsonl")


def test_a_moved_or_copied_run_folder_resumes_sending_nothing(tmp_path, world_cache, classifier_run_dir,
                                                               monkeypatch):
    with start(tmp_path, monkeypatch, wanli_responder) as srv:
        generate(gen_config(tmp_path / "run", world_cache, classifier_run_dir, srv.base_url))
        first, sent = (tmp_path / "run" / "dataset.jsonl").read_bytes(), served(tmp_path / "server_log.jsonl")
        saved = (tmp_path / "run" / "config.yaml").read_text()
        assert f"{tmp_path / 'run'}/checkpoints" in saved      # a path key that follows the folder
        shutil.copytree(tmp_path / "run", tmp_path / "copy")
        shutil.move(tmp_path / "run", tmp_path / "moved")
        for folder in ("copy", "moved"):
            (tmp_path / folder / "dataset.jsonl").unlink()
            generate(gen_config(tmp_path / folder, world_cache, classifier_run_dir, srv.base_url))
            assert (tmp_path / folder / "dataset.jsonl").read_bytes() == first
        assert served(tmp_path / "server_log.jsonl") == sent   # every answer came from the moved cache
        with pytest.raises(NLIDataError, match=r"pipeline\.generate\.sampling\.top_p was 0\.5, now 0\.9"):
            generate(gen_config(tmp_path / "moved", world_cache, classifier_run_dir, srv.base_url,
                                ["pipeline.generate.sampling.top_p=0.9"]))   # what it makes still counts


def unparseable(prompt_or_messages, choice_index, seed, sampling) -> str:
    return " no label line here"


def test_a_run_that_keeps_no_record_is_an_error_unless_allowed(tmp_path, world_cache, classifier_run_dir,
                                                                monkeypatch):
    with start(tmp_path, monkeypatch, unparseable) as srv:
        cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, srv.base_url)
        with pytest.raises(NLIDataError, match=r"stage 'variability' kept 0 records \(.*parse \d+ -> 0 \(dropped: "
                                               r"parse:no_separator \d+\).*allow_empty=true"):
            generate(cfg)
        assert not (tmp_path / "run" / "dataset.jsonl").exists()
        manifest = generate(gen_config(tmp_path / "run", world_cache, classifier_run_dir, srv.base_url,
                                       ["allow_empty=true"]))
    assert manifest["final"] == {"path": "dataset.jsonl", "stage": "variability", "count": 0}
    assert (tmp_path / "run" / "dataset.jsonl").read_bytes() == b""


def test_an_input_naming_nothing_leaves_no_run_folder(tmp_path):
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    (unfinished / "manifest.json").write_text(json.dumps({"stages": {}}))
    env = {"OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(tmp_path / "cache")}
    for ref, says in ((tmp_path / "nothing.jsonl", "neither a JSONL file"), (unfinished, "has no final dataset"),
                      ("no_such_set", "nor a training set")):
        out = tmp_path / "out"
        done = subprocess.run([sys.executable, "-m", "nliforge.generate", "pipeline=zfilter", f"input={ref}",
                               f"hydra.run.dir={out}"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env={**os.environ, **env})
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
        last = done.stderr.strip().split("\n")[-1]
        assert last.startswith(f"error: input={str(ref)!r}") and says in last, last
        assert not out.exists()
