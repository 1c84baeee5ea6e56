"""Tests of the dataset analyses (nliforge.analysis: partial input, word-label, similarity, stats,
data map) and of the nliforge-analyze CLI, on small synthetic worlds and hand-counted toy sets."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from nliforge.analysis.partial_input import balance_labels, partial_input_baselines
from nliforge.analysis.stats import dataset_stats, stats_markdown, write_data_map
from nliforge.analysis.word_label import word_label_correlations, write_word_label
from nliforge.analyze import main
from nliforge.cartography.store import epoch_frame, epoch_path, frame_to_parquet_bytes
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import write_jsonl
from nliforge.data.records import Record
from nliforge.utils.atomic import atomic_write_bytes
from nliforge.world import WorldConfig, generate_split

# train_biased plants negation -> contradiction, overlap -> entailment, length -> neutral at
# strength 0.8 (P(target | feature) = 0.87), each feature on 25% of pairs: all three are visible
# from the hypothesis alone. `train` has the same phenomena with no planted artifact, but its
# templates leave weaker word cues (e.g. hypothesis `also`/`else` -> contradiction): its
# hypothesis-only accuracy is 0.39-0.50 over world and split seeds (chance 1/3), 0.42 here.
WORLD = WorldConfig(seed=3, n_train=1200)


@pytest.fixture(scope="module")
def biased() -> list[Record]:
    return generate_split(WORLD, "train_biased")


@pytest.fixture(scope="module")
def unbiased() -> list[Record]:
    return generate_split(WORLD, "train")


def _rec(uid, premise, hypothesis, label):
    return Record(uid, premise, hypothesis, label)


# ----------------------------------------------------------------------------- partial input
def test_hypothesis_only_near_chance_unbiased_high_biased(biased, unbiased):
    fair = partial_input_baselines(unbiased, views=("hypothesis",), seed=0)
    skewed = partial_input_baselines(biased, views=("hypothesis",), seed=0)
    assert fair.accuracy["hypothesis"] < 0.45, fair
    assert skewed.accuracy["hypothesis"] > 0.6, skewed
    assert skewed.accuracy["hypothesis"] - fair.accuracy["hypothesis"] > 0.2
    assert math.isclose(fair.majority, 1 / 3, abs_tol=0.01)  # balanced test part
    assert fair.n_train + fair.n_test == len(balance_labels(unbiased))


def test_balance_equal_size_and_eval_set(biased, unbiased):
    skew = [r for r in biased if r.label != "neutral"] + [r for r in biased if r.label == "neutral"][:50]
    assert set(np.unique([r.label for r in balance_labels(skew)], return_counts=True)[1]) == {50}
    res = partial_input_baselines(skew, unbiased[:300], views=("hypothesis", "premise", "pair"),
                                  equal_size=90, seed=1)
    assert res.n_train == 90 and res.n_test == 300
    assert res.train_label_counts == {"contradiction": 30, "entailment": 30, "neutral": 30}
    assert set(res.accuracy) == {"hypothesis", "premise", "pair"}
    again = partial_input_baselines(skew, unbiased[:300], views=("hypothesis", "premise", "pair"),
                                    equal_size=90, seed=1)
    assert again.to_dict() == res.to_dict()  # seeded: same numbers


def test_partial_input_bad_input_names_it(biased):
    single = [r for r in biased if r.label == "neutral"][:20]
    with pytest.raises(NLIDataError, match=r"data\.jsonl: a single label \(\['neutral'\]\)"):
        partial_input_baselines(single, where="data.jsonl")
    tiny = [_rec("a", "P.", "H.", "entailment"), _rec("b", "P.", "H.", "neutral")]
    with pytest.raises(NLIDataError, match="too few examples"):
        partial_input_baselines(tiny, where="tiny.jsonl")
    with pytest.raises(NLIDataError, match="equal_size=5000"):
        partial_input_baselines(biased, equal_size=5000)
    with pytest.raises(NLIDataError, match="unknown view"):
        partial_input_baselines(biased, views=("premis",))


# ----------------------------------------------------------------------------- word-label
def test_word_label_finds_planted_negation(biased, unbiased, tmp_path):
    res = word_label_correlations(biased)
    top = {(w, lab) for w, lab, *_ in res.significant}
    assert ("not", "contradiction") in top
    row = next(r for r in res.significant if r[:2] == ("not", "contradiction"))
    assert row[4] > 0.6 and row[5] > res.threshold == 3.0
    paths = write_word_label(res, tmp_path)
    for label in ("entailment", "neutral", "contradiction"):
        assert paths[label].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = pd.read_csv(paths["csv"])
    assert list(table.columns) == ["word", "label", "n", "count", "p_label_given_word", "z"]
    assert len(table) == len(res.significant) and (table["z"] > 3).all()
    clean = {(w, lab) for w, lab, *_ in word_label_correlations(unbiased).significant}
    assert ("not", "contradiction") not in clean


def test_word_label_bonferroni_threshold(biased):
    from scipy.stats import norm

    res = word_label_correlations(biased, alpha=0.01, min_count=5)
    assert math.isclose(res.threshold, norm.isf(0.01 / len(res.names)))
    assert res.threshold > 3 and all(c >= 5 for c in res.counts.sum(axis=1))
    assert ("not", "contradiction") in {(w, lab) for w, lab, *_ in res.significant}


# ----------------------------------------------------------------------------- stats
TOY = [
    _rec("1", "A man sleeps.", "A man sleeps.", "entailment"),
    _rec("2", "The cat is on the mat.", "The dog is not on the mat.", "contradiction"),
    _rec("3", "A man sleeps.", "a man sleeps", "neutral"),  # same words as 1, other label
    _rec("4", "Kids play.", "Children are outside playing games today.", "neutral"),
]


def test_stats_by_hand():
    s = dataset_stats(TOY)
    assert s["n"] == 4 and s["labels"] == {"entailment": 1, "neutral": 2, "contradiction": 1}
    assert list(s["labels"]) == ["entailment", "neutral", "contradiction"]
    # premise words 3, 6, 3, 2 -> sorted 2 3 3 6; p95 at position 2.85: 3 + .85 * 3
    assert s["premise_words"] == pytest.approx({"mean": 3.5, "median": 3.0, "p95": 5.55})
    # hypothesis words 3, 7, 3, 6 -> sorted 3 3 6 7; p95: 6 + .85 * 1
    assert s["hypothesis_words"] == pytest.approx({"mean": 4.75, "median": 4.5, "p95": 6.85})
    # overlap: 1, 5/7 (the is on the mat of the dog is not on the mat), 1, 0
    assert s["lexical_overlap"] == pytest.approx((2 + 5 / 7) / 4)
    assert s["full_overlap_rate"] == 0.5
    assert s["duplicate_pairs"] == 1 and s["conflicting_duplicates"] == 1
    assert s["vocabulary"] == 18 and s["hypothesis_vocabulary"] == 15
    md = stats_markdown(s, "toy")
    assert md.startswith("| toy | value |") and "| label neutral | 2 (50.0%) |" in md


# ----------------------------------------------------------------------------- data map
def _dynamics(folder):
    probs = np.array([[[.2, .5, .3], [.1, .8, .1], [.5, .3, .2], [.1, .1, .8]],
                      [[.6, .3, .1], [.7, .2, .1], [.6, .2, .2], [.05, .05, .9]]])
    for epoch in range(2):
        frame = epoch_frame(list("abcd"), np.array([0, 1, 2, 2]), probs[epoch])
        atomic_write_bytes(epoch_path(folder, epoch), frame_to_parquet_bytes(frame))
    return folder


def test_data_map_from_dynamics_folder(tmp_path):
    dyn = _dynamics(tmp_path / "dynamics")
    paths = write_data_map(dyn, tmp_path / "out")
    assert paths["n"] == 4 and paths["plot"].read_bytes()[:4] == b"\x89PNG"
    metrics = pd.read_parquet(paths["metrics"])
    assert metrics["confidence"].round(6).tolist() == [0.4, 0.5, 0.2, 0.85]
    assert sorted(p.name for p in dyn.iterdir()) == ["epoch_000.parquet", "epoch_001.parquet"]
    with pytest.raises(NLIDataError, match="no epoch_NNN.parquet"):
        write_data_map(tmp_path / "out", tmp_path / "x")


def test_cli_data_map_writes_plot_and_metrics(tmp_path, capsys):
    """`nliforge-analyze data-map DYNAMICS --out DIR`: the PNG and the per-example metrics."""
    dyn = _dynamics(tmp_path / "dynamics")
    assert main(["data-map", str(dyn), "--out", str(tmp_path / "map"), "--title", "toy"]) == 0
    pngs = list((tmp_path / "map").glob("*.png"))
    assert len(pngs) == 1 and pngs[0].read_bytes()[:4] == b"\x89PNG"
    metrics = pd.read_parquet(next((tmp_path / "map").glob("*.parquet")))
    assert len(metrics) == 4 and {"confidence", "variability", "correctness"} <= set(metrics.columns)
    assert "data map of 4 examples" in capsys.readouterr().out


# ----------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def biased_file(biased, tmp_path_factory):
    return write_jsonl(biased[:600], tmp_path_factory.mktemp("data") / "biased.jsonl")


def test_cli_stats_partial_input_word_label(biased_file, tmp_path, capsys):
    assert main(["stats", str(biased_file), "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "stats.json").read_text())["n"] == 600
    assert (tmp_path / "stats.md").is_file()
    assert main(["partial-input", str(biased_file), "--out", str(tmp_path), "--equal-size", "200",
                 "--pair"]) == 0
    res = json.loads((tmp_path / "partial_input.json").read_text())
    assert res["n_train"] == 200 and set(res["accuracy"]) == {"hypothesis", "premise", "pair"}
    assert main(["word-label", str(biased_file), "--out", str(tmp_path), "--balance"]) == 0
    assert "not" in pd.read_csv(tmp_path / "word_label_significant.csv")["word"].tolist()
    assert len(list(tmp_path.glob("word_label_*.png"))) == 3
    out = capsys.readouterr().out
    assert "| examples | 600 |" in out and "partial-input accuracy: hypothesis" in out


def test_cli_similarity_minilm_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    recs = TOY + [_rec("5", "A dog runs in the park.", "A dog runs in the park.", "entailment"),
                  _rec("6", "A woman reads a book.", "The stock market fell sharply.", "contradiction")]
    data = write_jsonl(recs, tmp_path / "toy.jsonl")
    assert main(["similarity", str(data), "--out", str(tmp_path / "sim"), "--format", "parquet",
                 "--device", "cpu", "--batch-size", "8"]) == 0
    sims = pd.read_parquet(tmp_path / "sim" / "similarities.parquet").set_index("uid")
    assert sims.loc["5", "similarity"] == pytest.approx(1.0, abs=1e-4)
    assert sims.loc["6", "similarity"] < 0.5
    summary = pd.read_csv(tmp_path / "sim" / "similarity_summary.csv").set_index("label")
    assert list(summary.index) == ["entailment", "neutral", "contradiction"]
    assert summary.loc["entailment", "n"] == 2
    assert summary.loc["entailment", "mean"] == pytest.approx(sims.loc[["1", "5"], "similarity"].mean())
    assert (tmp_path / "sim" / "similarity.png").read_bytes()[:4] == b"\x89PNG"
    assert "entailment" in capsys.readouterr().out


def test_cli_errors_name_the_input(tmp_path, capsys, biased):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["stats", str(missing), "--out", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "expected a JSONL file of records" in err
    single = write_jsonl([r for r in biased if r.label == "neutral"][:10], tmp_path / "one.jsonl")
    with pytest.raises(SystemExit):
        main(["word-label", str(single), "--out", str(tmp_path)])
    assert f"{single}: a single label" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["data-map", str(tmp_path / "no_dyn"), "--out", str(tmp_path)])
    assert "training-dynamics folder" in capsys.readouterr().err


def test_cli_reads_a_registered_training_set_by_name(tmp_path, world_cache):
    """`nliforge-analyze stats synthetic_biased --override ...`: the records nliforge-train would use."""
    out = tmp_path / "stats"
    assert main(["stats", "synthetic_biased", "--out", str(out), "--override", "world.n_train=300",
                 "--override", f"paths.cache_dir={world_cache}"]) == 0
    stats = json.loads((out / "stats.json").read_text())
    assert stats["n"] == 300 and sum(stats["labels"].values()) == 300
