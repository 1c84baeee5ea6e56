"""2-class collapse rules and per-set scoring against values worked out by hand."""

import csv

import pytest
import torch

from nliforge.data import NLIDataError, Record
from nliforge.evaluation.collapse import collapse_predictions
from nliforge.evaluation.suite import EvalSet, metrics_rows, score_set, write_metrics_csv, write_predictions

# columns: entailment, neutral, contradiction
PROBS = torch.tensor([
    [0.40, 0.35, 0.25],  # argmax e; sum: p(non-e)=0.60 > 0.40 -> non-entailment
    [0.20, 0.30, 0.50],  # argmax c; sum: 0.80 -> non-entailment
    [0.70, 0.20, 0.10],  # entailment under both rules
    [0.30, 0.25, 0.45],  # argmax c; for the contradiction-binary view: 0.45 < 0.55 under sum
])


def test_argmax_then_merge():
    assert collapse_predictions(PROBS, "entailment", "argmax").tolist() == [1, 0, 1, 0]
    assert collapse_predictions(PROBS, "contradiction", "argmax").tolist() == [0, 1, 0, 1]


def test_sum_of_probabilities():
    assert collapse_predictions(PROBS, "entailment", "sum").tolist() == [0, 0, 1, 0]
    assert collapse_predictions(PROBS, "contradiction", "sum").tolist() == [0, 0, 0, 0]


def test_bad_rule_names_key():
    with pytest.raises(NLIDataError, match="suite.collapse='vote'; valid: argmax, sum"):
        collapse_predictions(PROBS, "entailment", "vote")


def _records(labels):
    return [Record(f"u{i}", "p", "h", lab) for i, lab in enumerate(labels)]


def test_score_two_class_set_by_rule():
    es = EvalSet("hans_like", {"num_classes": 2, "positive": "entailment"},
                 _records(["entailment", "non-entailment", "entailment", "non-entailment"]))
    # argmax preds [1,0,1,0] vs gold [1,0,1,0] -> 4/4; sum preds [0,0,1,0] -> 3/4
    assert score_set(PROBS, es, "argmax")["acc"] == pytest.approx(1.0)
    assert score_set(PROBS, es, "sum")["acc"] == pytest.approx(0.75)


def test_score_three_class_set():
    es = EvalSet("x", {"num_classes": 3}, _records(["entailment", "neutral", "entailment", "contradiction"]))
    # argmax [e, c, e, c] vs gold [e, n, e, c] -> 3/4
    assert score_set(PROBS, es)["acc"] == pytest.approx(0.75)


def test_metrics_csv_long_form(tmp_path):
    rows = metrics_rows({"a": {"acc": 0.5, "n": 2.0}}, "mnli◇wanli", 3)
    path = write_metrics_csv(rows, tmp_path / "metrics.csv")
    with path.open() as fh:
        got = list(csv.DictReader(fh))
    assert got == [{"train_id": "mnli◇wanli", "seed": "3", "eval_set": "a", "metric": "acc", "value": "0.5"},
                   {"train_id": "mnli◇wanli", "seed": "3", "eval_set": "a", "metric": "n", "value": "2.0"}]


def test_collected_metrics_give_mean_and_sample_std(tmp_path):
    from nliforge.evaluation.table import collect_metrics, summary_table

    for seed, acc in [(0, 0.5), (1, 0.7)]:
        write_metrics_csv(metrics_rows({"test": {"acc": acc, "n": 10.0}}, "a+b", seed), tmp_path / f"r{seed}" / "metrics.csv")
    table = summary_table(collect_metrics([tmp_path / "r0", tmp_path / "r1", tmp_path / "empty"]))
    # mean 0.6; sample std (ddof=1) of 0.5 and 0.7 is 0.1414, as the report shows it
    row = table.iloc[0]
    assert (row["train_id"], row["eval_set"], row["n"]) == ("a+b", "test", 2)
    assert row["mean"] == pytest.approx(0.6) and row["std"] == pytest.approx(0.1414214)


def test_suite_averages_follow_the_st_rule(caplog):
    from nliforge.evaluation.suite import add_averages

    results = {"wo": {"acc": 0.5, "n": 10.0}, "ne": {"acc": 0.7, "n": 30.0}, "x": {"acc": 0.9, "n": 5.0}}
    out = add_averages(results, {"st": ["wo", "ne"], "all": ["st", "x"], "gone": ["wo", "missing"]})
    assert out["st"]["acc"] == pytest.approx(0.6)            # unweighted: (0.5 + 0.7) / 2, not pooled 0.65
    assert out["st"]["n"] == 40.0
    assert out["all"]["acc"] == pytest.approx(0.75)          # an earlier average as a member: (0.6 + 0.9) / 2
    assert "gone" not in out and "missing" in caplog.text
    with pytest.raises(NLIDataError, match="suite.averages.wo"):
        add_averages(results, {"wo": ["ne"]})


def test_per_example_predictions_are_written_in_the_sets_order(tmp_path):
    es = EvalSet("four", {"num_classes": 3}, _records(["entailment", "neutral", "entailment", "contradiction"]))
    path = write_predictions(PROBS, es, tmp_path / "predictions" / "four.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["uid"] for r in rows] == ["u0", "u1", "u2", "u3"]
    assert [r["pred"] for r in rows] == ["entailment", "contradiction", "entailment", "contradiction"]
    assert [r["gold"] for r in rows] == ["entailment", "neutral", "entailment", "contradiction"]
    assert [float(r["p_neutral"]) for r in rows] == [0.35, 0.30, 0.20, 0.25]
    # 3 of 4 right, as score_set counts them
    assert sum(r["pred"] == r["gold"] for r in rows) / 4 == score_set(PROBS, es)["acc"] == 0.75
