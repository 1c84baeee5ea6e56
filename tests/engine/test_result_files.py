"""Results honour the umask (before: config.yaml, metrics.csv, model.safetensors, dataset.jsonl and a
registered set's YAML were 0600 whatever the umask, because the atomic writer's mkstemp made them private
and the rename kept that, so a lab's shared project folder hid them from teammates); JSONL is split on
"\\n" only, so a raw U+2028 inside a text is a character, not a line break (before: WANLI's annotation
import used str.splitlines() and refused valid JSONL)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import compose_config
from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import Record
from nliforge.data.register import register_train_set
from nliforge.engine.run_folder import RunFolder
from nliforge.review.wanli_annotations import import_wanli
from nliforge.train import train
from nliforge.utils.atomic import atomic_write_text, build_folder

TINY = ["experiment=demo", "world.n_train=120", "world.n_dev=30", "world.n_test=30", "world.n_challenge=30",
        "model.max_epochs=1", "logger=none", "save_model=true", "trainer.enable_progress_bar=false",
        "callbacks.dynamics.enabled=false", "num_threads=1"]


@pytest.fixture
def umask_002():
    old = os.umask(0o002)
    yield
    os.umask(old)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask", [0o002, 0o022, 0o077])
def test_the_atomic_writers_give_the_umask_s_mode(tmp_path, mask):
    old = os.umask(mask)
    try:
        text = atomic_write_text(tmp_path / "a.txt", ["x\n"])
        folder = build_folder(tmp_path / "built", lambda tmp: (tmp / "f").write_text("y"))
    finally:
        os.umask(old)
    assert mode(text) == 0o666 & ~mask
    assert mode(folder) == 0o777 & ~mask


def test_a_training_run_s_results_and_a_registered_set_are_group_readable(tmp_path, umask_002):
    out = tmp_path / "run"
    train(compose_config("train", TINY, out, tmp_path / "cache"))
    for name in ("config.yaml", "metrics.csv", "model/model.safetensors"):
        assert mode(out / name) == 0o664, name
    assert mode(out / "model") == 0o775
    records = [Record("1", "A man sleeps.", "A person rests.", "entailment", "x")]
    data = write_jsonl(records, tmp_path / "gen" / "dataset.jsonl")
    assert mode(data) == 0o664
    yaml = register_train_set("shared_set", data, tmp_path / "conf", "a test")
    assert mode(yaml) == 0o664


def test_a_raw_line_separator_inside_a_text_is_not_a_line_break(tmp_path):
    premise = "The first clause\u2028and the second\u2029and a third\x85end."
    item = Record("101", premise, "There are clauses.", None, "wanli")
    row = {"WorkerId": "EUJ", "id": 101, "nearest_neighbors": [], "premise": premise,
           "hypothesis": item.hypothesis, "label": "entailment", "revised_premise": premise,
           "revised_hypothesis": item.hypothesis, "gold": "entailment", "revised": False}
    path = tmp_path / "anonymized_annotations.jsonl"
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")   # raw, not escaped
    got = import_wanli(path, [item])
    assert len(got) == 1 and got.counts["annotations"] == 1
    folder = RunFolder(tmp_path / "gen_run")
    folder.root.mkdir()
    folder.write_stage("parse", [{"uid": "1", "premise": premise}], [], 1, [], 0.0)
    assert folder.read_rows("parse") == [{"uid": "1", "premise": premise}]
