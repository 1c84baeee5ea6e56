"""A registered training set may not take a name that selects another set: a reviewed set named like a
built-in one (`nliforge-review aggregate aggregate.name=synthetic_biased`) exited 0 and said "use
data/train_sets=[synthetic_biased]", and training with that used the built-in set (600 synthetic pairs),
not the 93 reviewed ones, without a word. Now the name is refused with its owner before anything is
written, and training says where each selected set comes from."""

from __future__ import annotations

import logging
from dataclasses import replace
import subprocess
import sys

import pytest

from conftest import compose_config
from nliforge.data.jsonl import write_jsonl
from nliforge.data.register import register_train_set, set_origin
from nliforge.data.training_set import build_training_set
from nliforge.errors import NLIDataError
from test_review_cli import review_cfg
from test_review_crowd import RECORDS, fabricate_amt_results
from nliforge.review.cli import review


def test_a_built_in_name_is_refused_naming_its_owner(tmp_path):
    with pytest.raises(NLIDataError, match=r"aggregate.name='synthetic_biased': the name is taken by a built-in "
                                           r"training set \(.*conf/data/train_sets/synthetic_biased.yaml\)"):
        register_train_set("synthetic_biased", tmp_path / "x.jsonl", tmp_path / "conf", "/runs/a")
    assert not (tmp_path / "conf").exists()


def test_another_runs_name_is_refused_the_same_runs_is_not(tmp_path):
    conf = tmp_path / "conf"
    register_train_set("probe_reviewed", tmp_path / "a.jsonl", conf, "/runs/a")
    register_train_set("probe_reviewed", tmp_path / "a.jsonl", conf, "/runs/a")   # the same run again
    with pytest.raises(NLIDataError, match=r"taken by a set registered by nliforge-review aggregate from /runs/a"):
        register_train_set("probe_reviewed", tmp_path / "b.jsonl", conf, "/runs/b")
    assert "/a.jsonl" in (conf / "data" / "train_sets" / "probe_reviewed.yaml").read_text()


def test_the_console_refuses_aggregate_name_of_a_built_in_set_and_writes_nothing(tmp_path):
    run = tmp_path / "gen_run"
    write_jsonl(RECORDS, run / "dataset.jsonl")
    out = review(review_cfg("export", run, tmp_path))
    fabricate_amt_results(out["path"], tmp_path / "results.csv")
    review(review_cfg("import", run, tmp_path, [f"import.file={tmp_path / 'results.csv'}"]))
    done = subprocess.run([sys.executable, "-m", "nliforge.review.cli", "aggregate", f"run={run}",
                           "aggregate.name=synthetic_biased"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: aggregate.name='synthetic_biased': the name is taken by a built-in training set"), last
    assert not (run / "review" / "reviewed.jsonl").exists()


def test_training_says_where_each_set_comes_from(tmp_path, caplog, monkeypatch):
    from nliforge.utils.cli import USER_CONFIG_ENV

    conf = tmp_path / "conf"
    monkeypatch.setenv(USER_CONFIG_ENV, str(conf))   # on the search path, as `hydra.searchpath` is in a run
    write_jsonl([replace(r, label="neutral") for r in RECORDS], tmp_path / "reviewed.jsonl")
    register_train_set("probe_mine", tmp_path / "reviewed.jsonl", conf, "/runs/a")
    cfg = compose_config("train", [f"hydra.searchpath=[file://{conf}]", "data/train_sets=[synthetic,probe_mine]",
                                   "world.n_train=60", "world.n_dev=30", "world.n_test=30", "world.n_challenge=30"],
                         tmp_path / "train", tmp_path / "cache")
    with caplog.at_level(logging.INFO, logger="nliforge.data.training_set"):
        build_training_set(cfg)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("training set ")]
    assert lines[0].startswith("training set synthetic: built in (") and lines[0].endswith("synthetic.yaml)")
    assert lines[1] == ("training set probe_mine: registered by nliforge-review aggregate from /runs/a "
                        f"({(conf / 'data' / 'train_sets' / 'probe_mine.yaml').resolve()})")
    assert set_origin("probe_nothing") == "given in the config (no data/train_sets YAML)"
