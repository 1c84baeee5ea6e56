"""nliforge-publish puts no path of this machine in the card or the rows (before: the absolute path of the
run's generator_lm folder was in the card and in every row's meta), and a torn manifest.json of the run
folder is one error naming the file (before: a 54-line JSONDecodeError)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.errors import NLIDataError
from nliforge.publish import publish
from nliforge.publishing.local_paths import public_text
from test_publish import publish_cfg, run_dir  # noqa: F401  (the module's run folder fixture)


def test_public_text_keeps_run_relative_paths_and_last_parts_only(tmp_path):
    run = tmp_path / "runs" / "r1"
    assert public_text(f"{run}/stages/generator_lm/model", run) == "stages/generator_lm/model"
    assert public_text(str(run), run) == "."
    assert public_text("/home/alice/models/tiny-gpt2", run) == "tiny-gpt2"
    assert public_text(f"loaded from {run}/stages/x.jsonl", run) == "loaded from stages/x.jsonl"
    assert public_text("gpt-3", run) == "gpt-3"


def test_card_and_rows_carry_no_local_path(run_dir, tmp_path):   # noqa: F811
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    lm = str(run / "stages" / "generator_lm" / "model")
    records = read_jsonl(run / "dataset.jsonl")
    for r in records:
        r.meta["generator"] = lm
    write_jsonl(records, run / "dataset.jsonl")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["generator"] = {"backend": "hf", "model": lm}
    (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "hub"
    publish(publish_cfg(run, out))
    card = (out / "README.md").read_text()
    rows = pq.read_table(out / "data" / "train-00000-of-00001.parquet").to_pylist()
    for text in (card, *(row["meta"] for row in rows), *(row["source"] for row in rows)):
        assert str(tmp_path) not in text and str(tmp_path.resolve()) not in text
    assert "model=stages/generator_lm/model" in card
    assert {json.loads(row["meta"])["generator"] for row in rows} == {"stages/generator_lm/model"}


def test_a_torn_manifest_is_one_error_line_naming_it(run_dir, tmp_path):   # noqa: F811
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    text = (run / "manifest.json").read_text()
    (run / "manifest.json").write_text(text[: len(text) // 2])
    with pytest.raises(NLIDataError, match=f"{run / 'manifest.json'}: not valid JSON at line"):
        publish(publish_cfg(run, tmp_path / "hub"))
    done = subprocess.run([sys.executable, "-m", "nliforge.publish", f"run={run}", "repo_id=me/x",
                           f"out={tmp_path / 'hub'}"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: {run / 'manifest.json'}: not valid JSON")
    assert not (tmp_path / "hub").exists()
