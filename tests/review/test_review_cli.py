"""`nliforge-review` end to end over a run folder: export an AMT batch, import the workers' results,
aggregate, and train on the registered set with `data/train_sets=[<name>]`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.training_set import build_training_set
from nliforge.review.cli import review
from test_review_crowd import RECORDS, fabricate_amt_results


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "gen_run"
    write_jsonl(RECORDS, run / "dataset.jsonl")
    return run


def review_cfg(action, run, tmp_path, extra=()):
    return compose_config("review", [f"action={action}", f"run={run}", *extra], tmp_path / "out", tmp_path / "cache")


def test_export_import_aggregate_register_and_train(run_dir, tmp_path):
    out = review(review_cfg("export", run_dir, tmp_path))
    assert out["examples"] == len(RECORDS)
    fabricate_amt_results(out["path"], tmp_path / "results.csv")
    assert review(review_cfg("import", run_dir, tmp_path, [f"import.file={tmp_path / 'results.csv'}"]))["judgements"] \
        == 2 * len(RECORDS)   # the rejected worker's assignments are skipped
    conf = tmp_path / "conf_local"
    report = review(review_cfg("aggregate", run_dir, tmp_path, [f"aggregate.register_dir={conf}",
                                                                 "aggregate.name=demo_reviewed"]))
    kept = read_jsonl(run_dir / "review" / "reviewed.jsonl")
    assert report["kept"] == len(kept) > 0 and all(r.label in ("entailment", "neutral", "contradiction") for r in kept)
    assert "g1" not in {r.uid for r in kept}                      # one annotator discarded it
    assert report["counts"]["disagreement"] == len(read_jsonl(run_dir / "review" / "disagreements.jsonl"))
    assert json.loads((run_dir / "review" / "review_report.json").read_text())["train_set"] == "demo_reviewed"
    # registered: an ordinary training set for nliforge-train
    cfg = compose_config("train", [f"hydra.searchpath=[file://{conf}]", "data/train_sets=[demo_reviewed]"],
                         tmp_path / "train", tmp_path / "cache")
    ts = build_training_set(cfg)
    assert [r.uid for r in ts.records] == [r.uid for r in kept]


def test_aggregate_is_reproducible(run_dir, tmp_path):
    out = review(review_cfg("export", run_dir, tmp_path))
    fabricate_amt_results(out["path"], tmp_path / "results.csv")
    review(review_cfg("import", run_dir, tmp_path, [f"import.file={tmp_path / 'results.csv'}"]))
    args = [f"aggregate.register_dir={tmp_path / 'c'}", "seed=3"]
    review(review_cfg("aggregate", run_dir, tmp_path, args))
    first = (run_dir / "review" / "reviewed.jsonl").read_bytes()
    review(review_cfg("aggregate", run_dir, tmp_path, args))
    assert (run_dir / "review" / "reviewed.jsonl").read_bytes() == first


def test_automatic_mode_needs_a_single_reviewer(run_dir, tmp_path):
    out = review(review_cfg("export", run_dir, tmp_path))
    fabricate_amt_results(out["path"], tmp_path / "results.csv")
    review(review_cfg("import", run_dir, tmp_path, [f"import.file={tmp_path / 'results.csv'}"]))
    with pytest.raises(NLIDataError, match="2 reviewers"):
        review(review_cfg("aggregate", run_dir, tmp_path, ["aggregate.mode=automatic",
                                                            f"aggregate.register_dir={tmp_path / 'c'}"]))
    report = review(review_cfg("aggregate", run_dir, tmp_path, ["aggregate.mode=automatic", "aggregate.reviewer=W1",
                                                                 f"aggregate.register_dir={tmp_path / 'c'}"]))
    assert report["kept"] == len(RECORDS) - 1   # W1 discarded g1 only


def test_aggregate_that_keeps_nothing_is_an_error_and_registers_nothing(run_dir, tmp_path):
    """One annotator only (the other's assignments all rejected): no example reaches two annotators."""
    out = review(review_cfg("export", run_dir, tmp_path))
    fabricate_amt_results(out["path"], tmp_path / "results.csv", rejected_worker="W2")
    review(review_cfg("import", run_dir, tmp_path, [f"import.file={tmp_path / 'results.csv'}"]))
    conf = tmp_path / "c"
    with pytest.raises(NLIDataError, match=r"kept no example \(7 items, 7 judgements: 7 with fewer than two "
                                           r"annotators\); nothing written or registered"):
        review(review_cfg("aggregate", run_dir, tmp_path, [f"aggregate.register_dir={conf}"]))
    assert not conf.exists() and not (run_dir / "review" / "reviewed.jsonl").exists()


def test_automatic_reviewer_that_discards_everything_is_an_error(run_dir, tmp_path):
    from nliforge.review.actions import open_store
    from nliforge.data.judgements import Judgement

    store = open_store(review_cfg("aggregate", run_dir, tmp_path), RECORDS)
    for rec in RECORDS:
        store.save(Judgement(rec.uid, "teacher:m", "discard", rec.premise, rec.hypothesis, source="teacher"))
    store.close()
    with pytest.raises(NLIDataError, match="reviewer 'teacher:m' discarded all 7"):
        review(review_cfg("aggregate", run_dir, tmp_path, ["aggregate.mode=automatic",
                                                            f"aggregate.register_dir={tmp_path / 'c'}"]))
    assert not (tmp_path / "c").exists()


def test_nothing_kept_reason_names_each_rule_that_dropped_examples():
    from nliforge.review.aggregate import nothing_kept_reason

    assert nothing_kept_reason({"items": 5, "judgements": 7, "incomplete": 3, "discarded": 2}) == \
        "5 items, 7 judgements: 3 with fewer than two annotators, 2 discarded by an annotator"
    assert nothing_kept_reason({"items": 4, "judgements": 0, "incomplete": 4}).endswith("4 with fewer than two annotators")


def test_missing_dataset_is_a_clear_error(tmp_path):
    with pytest.raises(NLIDataError, match="no dataset to review"):
        review(review_cfg("export", tmp_path / "nowhere", tmp_path))


def test_console_script_usage_and_errors(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "nliforge.review.cli"], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage: nliforge-review" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "nliforge.review.cli", "export", f"run={tmp_path / 'none'}"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1 and "no dataset to review" in proc.stderr and "Traceback" not in proc.stderr
