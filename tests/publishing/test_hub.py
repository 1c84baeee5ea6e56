"""Hub loaders: the real `datasets` loading code on local stand-ins with each source's schema,
and an immediate, clear failure for a Hub dataset that is not cached while offline."""

import time

import datasets
import pytest

from nliforge.data import DatasetNotCachedError, NLIDataError
from nliforge.data.hub import load_hub_records
from nliforge.data.registry import load_set


def _parquet_folder(tmp_path, name, columns, features=None):
    folder = tmp_path / name
    folder.mkdir()
    datasets.Dataset.from_dict(columns, features=features).to_parquet(str(folder / "train-00000.parquet"))
    return str(folder)


def test_mnli_schema_classlabel_by_name(tmp_path):
    feats = datasets.Features({"premise": datasets.Value("string"), "hypothesis": datasets.Value("string"),
                               "pairID": datasets.Value("string"),
                               "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"])})
    path = _parquet_folder(tmp_path, "mnli", {"premise": ["p0", "p1", "p2"], "hypothesis": ["h0", "h1", "h2"],
                                             "pairID": ["10e", "11n", "12c"], "label": [0, 1, 2]}, feats)
    recs = load_hub_records({"name": "mnli", "source": "mnli", "path": path, "split": "train"}, "data.train_sets.mnli")
    assert [r.label for r in recs] == ["entailment", "neutral", "contradiction"]
    assert recs[0].uid == "mnli-train-10e" and recs[0].source == "mnli"


def test_snli_drops_no_gold(tmp_path):
    path = _parquet_folder(tmp_path, "snli", {"premise": ["a", "b", "c"], "hypothesis": ["x", "y", "z"],
                                             "label": [2, -1, 0]})
    recs = load_hub_records({"name": "snli", "source": "snli", "path": path, "split": "train"}, "k")
    assert [(r.premise, r.label) for r in recs] == [("a", "contradiction"), ("c", "entailment")]


def test_wanli_string_gold_field(tmp_path):
    path = _parquet_folder(tmp_path, "wanli", {"premise": ["a", "b"], "hypothesis": ["x", "y"],
                                              "gold": ["neutral", "contradiction"], "id": [7, 8]})
    recs = load_hub_records({"name": "wanli", "source": "wanli", "path": path, "split": "train"}, "k")
    assert [r.label for r in recs] == ["neutral", "contradiction"] and recs[1].uid == "wanli-train-8"


def test_unknown_label_names_row_and_valid_choices(tmp_path):
    path = _parquet_folder(tmp_path, "bad", {"premise": ["a"], "hypothesis": ["x"], "label": [5]})
    with pytest.raises(NLIDataError, match=r"data.train_sets.mnli \(.*row 0\): label 5 is not in the mnli label map"):
        load_hub_records({"name": "mnli", "source": "mnli", "path": path, "split": "train"}, "data.train_sets.mnli")


def test_missing_column_names_config_key(tmp_path):
    path = _parquet_folder(tmp_path, "cols", {"sentence1": ["a"], "sentence2": ["x"], "label": [0]})
    with pytest.raises(NLIDataError, match=r"k.fields: columns \['premise=premise', 'hypothesis=hypothesis'\]"):
        load_hub_records({"name": "mnli", "source": "mnli", "path": path, "split": "train"}, "k")
    recs = load_hub_records({"name": "mnli", "source": "mnli", "path": path, "split": "train",
                             "fields": {"premise": "sentence1", "hypothesis": "sentence2"}}, "k")
    assert recs[0].premise == "a"


def test_eval_set_label_map_not_covering_labels(tmp_path):
    """A 2-class set whose label map yields 'neutral' is rejected, naming the config key."""
    path = _parquet_folder(tmp_path, "two", {"premise": ["a", "b"], "hypothesis": ["x", "y"], "label": [0, 1]})
    spec = {"name": "odd", "loader": "hub", "source": "mnli", "path": path, "split": "train", "num_classes": 2}
    with pytest.raises(NLIDataError, match=r"suite.sets.odd.label_map: the set yields labels \['neutral'\]"):
        load_set(spec, "suite.sets.odd")
    spec["label_map"] = {0: "entailment", 2: "non-entailment"}
    with pytest.raises(NLIDataError, match="label 1 is not covered by label_map"):
        load_set(spec, "suite.sets.odd")
    spec["label_map"] = {0: "entailment", 1: "non-entailment"}
    assert [r.label for r in load_set(spec, "suite.sets.odd")] == ["entailment", "non-entailment"]


@pytest.mark.parametrize("source,path,split", [
    ("mnli", "nyu-mll/multi_nli", "train"), ("snli", "stanfordnlp/snli", "train"),
    ("anli", "facebook/anli", "train_r1"), ("wanli", "alisawuffles/WANLI", "train"),
    ("fever_nli", "pietrolesci/nli_fever", "train"),
])
def test_offline_uncached_hub_set_fails_at_once(monkeypatch, source, path, split):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(DatasetNotCachedError, match=rf"data.train_sets.{source}: Hub dataset '{path}'.*not in the local cache"):
        load_set({"name": source, "loader": "hub", "source": source, "split": split}, f"data.train_sets.{source}")
    assert time.monotonic() - start < 15  # no network retries (they take 20-50 s)


def test_unknown_loader_names_valid_choices():
    with pytest.raises(NLIDataError, match=r"data.train_sets.x.loader='csv'; valid loaders: jsonl, hub, file, derived, world_part, world"):
        load_set({"name": "x", "loader": "csv"}, "data.train_sets.x")
