"""WANLI Stage 1-2 building blocks: the prompt text, [CLS] encoding, same-label neighbours,
in-context groups, completion parsing and seed selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.pipelines.wanli.exemplars import encode_cls, exemplar_groups, same_label_neighbours
from nliforge.pipelines.wanli.parse import ParseDrop, parse_completion
from nliforge.pipelines.wanli.prompts import wanli_prompt
from nliforge.cartography.seeds import select_seeds


# --------------------------------------------------------------------------- prompt
def test_prompt_is_the_papers_figure_2_text():
    group = [("A dog runs.", "An animal moves."), ("Two men talk.", "People speak."), ("She sings.", "A woman makes sound.")]
    expected = (
        "Write a pair of sentences that have the same relationship as the previous examples. Examples:\n"
        "\n"
        "1. A dog runs.\nImplication: An animal moves.\n"
        "\n"
        "2. Two men talk.\nImplication: People speak.\n"
        "\n"
        "3. She sings.\nImplication: A woman makes sound.\n"
        "\n"
        "4."
    )
    assert wanli_prompt(group, "entailment") == expected
    assert "\nPossibility: People speak.\n" in wanli_prompt(group, "neutral")
    assert "\nContradiction: People speak.\n" in wanli_prompt(group, "contradiction")


# --------------------------------------------------------------------------- neighbours
def _unit(rows) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def _brute(emb, labels, q, k):
    """Reference: the k best same-label others by (decreasing cosine, increasing index)."""
    sims = emb @ emb[q]
    cand = [i for i in range(len(emb)) if labels[i] == labels[q] and i != q]
    cand.sort(key=lambda i: (-sims[i], i))
    return cand[:k], sims[cand[:k]]


def test_neighbours_on_hand_made_vectors():
    # Angles (degrees) on a circle: cosine decreases with angular distance.
    angles = [0, 10, 30, 60, 5, 90, 100, 20]
    labels = ["e", "e", "e", "e", "n", "n", "n", "e"]
    emb = _unit([[np.cos(np.radians(a)), np.sin(np.radians(a))] for a in angles])
    nb = same_label_neighbours(emb, labels, [0, 5], k=2)
    # Query 0 (0 deg, e): nearest e's are 10 deg (1) then 20 deg (7); index 4 (5 deg) is n.
    assert nb.indices[0].tolist() == [1, 7]
    assert nb.sims[0] == pytest.approx([np.cos(np.radians(10)), np.cos(np.radians(20))], abs=1e-6)
    # Query 5 (90 deg, n): 100 deg (6) then 5 deg (4).
    assert nb.indices[1].tolist() == [6, 4]
    assert not nb.skipped.any()


def test_neighbours_match_brute_force_and_never_include_self():
    rng = np.random.default_rng(0)
    emb = _unit(rng.normal(size=(300, 16)))
    labels = rng.choice(["entailment", "neutral", "contradiction"], size=300)
    queries = rng.choice(300, size=80, replace=False)
    nb = same_label_neighbours(emb, labels, queries, k=4, score_budget=1000)  # several chunks per label
    for row, q in enumerate(queries):
        ref_idx, ref_sim = _brute(emb, labels, q, 4)
        assert nb.indices[row].tolist() == ref_idx
        assert nb.sims[row] == pytest.approx(ref_sim, abs=1e-5)
        assert q not in nb.indices[row]
        assert (labels[nb.indices[row]] == labels[q]).all()
        assert np.all(np.diff(nb.sims[row]) <= 0)


def test_block_search_is_exact_on_many_candidates_with_ties_across_blocks():
    # ~1000 candidates per label = many 64-wide blocks, so only the best blocks are searched.
    rng = np.random.default_rng(1)
    emb = _unit(rng.normal(size=(3000, 8)))
    emb[[2500, 700, 1900]] = emb[100]          # exact duplicates of row 100 in distant blocks
    labels = np.array(["e", "n", "c"])[np.arange(3000) % 3]
    labels[[2500, 700, 1900, 100]] = "e"
    queries = np.concatenate([[100], rng.choice(3000, size=40, replace=False)])
    nb = same_label_neighbours(emb, labels, queries, k=4, score_budget=20_000)
    for row, q in enumerate(queries):
        assert nb.indices[row].tolist() == _brute(emb, labels, q, 4)[0]
    assert nb.indices[0][:3].tolist() == [700, 1900, 2500]


def test_ties_go_to_the_lower_index_and_duplicates_are_neighbours():
    # Rows 1..5 are identical copies of row 0: all tie at cosine 1 for query 0.
    emb = _unit([[1, 0]] * 6 + [[0, 1]])
    labels = ["e"] * 7
    nb = same_label_neighbours(emb, labels, [0, 3], k=3)
    assert nb.indices[0].tolist() == [1, 2, 3]
    assert nb.indices[1].tolist() == [0, 1, 2]


def test_too_few_same_label_candidates_are_skipped():
    emb = _unit(np.eye(6) + 0.1)
    labels = ["e", "e", "e", "n", "n", "c"]  # with k=2: e has 2 others (ok), n 1, c 0
    nb = same_label_neighbours(emb, labels, [0, 3, 5, 1], k=2)
    assert nb.skipped.tolist() == [False, True, True, False]
    assert nb.n_skipped == 2
    assert (nb.indices[1] == -1).all() and np.isnan(nb.sims[2]).all()
    groups, skipped = exemplar_groups(nb)
    assert skipped == 2 and len(groups) == 2


def test_groups_put_the_seed_last_after_increasing_similarity():
    angles = [0, 40, 10, 25, 70]
    emb = _unit([[np.cos(np.radians(a)), np.sin(np.radians(a))] for a in angles])
    nb = same_label_neighbours(emb, ["e"] * 5, [0], k=3)
    groups, skipped = exemplar_groups(nb)
    assert skipped == 0
    assert groups == [[1, 3, 2, 0]]  # 40, 25, 10 degrees away, then the seed


def test_neighbour_inputs_are_checked():
    with pytest.raises(NLIDataError, match="one label per embedding"):
        same_label_neighbours(np.eye(3, dtype=np.float32), ["e", "e"], [0])
    with pytest.raises(NLIDataError, match="query indices"):
        same_label_neighbours(np.eye(3, dtype=np.float32), ["e"] * 3, [3])
    with pytest.raises(NLIDataError, match="L2-normalised"):
        same_label_neighbours(2 * np.eye(3, dtype=np.float32), ["e"] * 3, [0], k=1)
    with pytest.raises(NLIDataError, match="L2-normalised"):
        same_label_neighbours(np.full((3, 2), np.nan, dtype=np.float32), ["e"] * 3, [0], k=1)


# --------------------------------------------------------------------------- encode_cls
@pytest.fixture(scope="module")
def tiny_model():
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from nliforge.models.tiny_tokenizer import train_tiny_tokenizer

    texts = ["a man walks in the park", "the dog sleeps", "two women are talking loudly outside"] * 5
    tok = train_tiny_tokenizer(texts, vocab_size=300)
    config = AutoConfig.for_model("roberta", vocab_size=len(tok), hidden_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=64, max_position_embeddings=130,
                                  pad_token_id=tok.pad_token_id, num_labels=3)
    torch.manual_seed(0)
    return AutoModelForSequenceClassification.from_config(config), tok


def test_encode_cls_gives_unit_vectors_independent_of_batch_padding(tiny_model):
    model, tok = tiny_model
    model.train()
    pairs = [("a man walks", "the dog sleeps"), ("two women are talking loudly outside in the park", "a man"),
             ("the dog", "the dog sleeps in the park"), ("a", "b")]
    batched = encode_cls(model, tok, pairs, batch_size=4, progress=False)
    single = np.stack([encode_cls(model, tok, [p], batch_size=1, progress=False)[0] for p in pairs])
    assert batched.shape == (4, 32) and batched.dtype == np.float32
    assert np.linalg.norm(batched, axis=1) == pytest.approx(np.ones(4), abs=1e-5)
    assert np.abs(batched - single).max() < 1e-4        # padding and batch order change nothing
    assert model.training                                # the caller's mode is restored
    assert not np.allclose(batched[0], batched[1])


# --------------------------------------------------------------------------- parse
@pytest.mark.parametrize("text,label,chat,expected", [
    (" A man sleeps.\nImplication: A person rests.", "entailment", False, ("A man sleeps.", "A person rests.")),
    (" A man sleeps.\nPossibility: He is tired. ", "neutral", False, ("A man sleeps.", "He is tired.")),
    (" A man sleeps. Implication: A person rests.", "entailment", False, ParseDrop("no_separator")),
    (" A man sleeps.\nPossibility: x", "entailment", False, ParseDrop("no_separator")),
    (" A.\nImplication: B.\nImplication: C.", "entailment", False, ParseDrop("too_many_parts")),
    ("  \n", "entailment", False, ParseDrop("empty")),
    (None, "contradiction", False, ParseDrop("empty")),
    (" \nImplication: A person rests.", "entailment", False, ParseDrop("empty_side")),
    (" A man sleeps.\nImplication:  ", "entailment", False, ParseDrop("empty_side")),
    ("6. A man sleeps.\nContradiction: Nobody sleeps.", "contradiction", True, ("A man sleeps.", "Nobody sleeps.")),
    ("6. A man sleeps.\nContradiction: Nobody sleeps.", "contradiction", False, ("6. A man sleeps.", "Nobody sleeps.")),
])
def test_parse_completion(text, label, chat, expected):
    assert parse_completion(text, label, chat=chat) == expected


# --------------------------------------------------------------------------- seeds
def _metrics() -> pd.DataFrame:
    # Per label 4 examples with variability 0.1..0.4: the 0.75 quantile is 0.325, so 0.4 is kept.
    rows = []
    for gold in range(3):
        for j, v in enumerate([0.1, 0.2, 0.3, 0.4]):
            rows.append({"uid": f"g{gold}-{j}", "gold": gold, "variability": v + gold / 100})
    rows.append({"uid": "unlabeled", "gold": -1, "variability": 9.0})
    return pd.DataFrame(rows).set_index("uid")


def test_seeds_are_above_each_labels_quantile():
    seeds = select_seeds(_metrics(), q=0.75)
    assert seeds == {"entailment": ["g0-3"], "neutral": ["g1-3"], "contradiction": ["g2-3"]}
    assert sum(map(len, select_seeds(_metrics(), q=0.5).values())) == 6


def test_seeds_exclude_genre_and_source_before_the_quantile():
    metrics = _metrics()
    records = {uid: Record(uid, "p", "h", None, "mnli", {"genre": "fiction"}) for uid in metrics.index}
    records["g0-3"] = Record("g0-3", "p", "h", None, "mnli", {"genre": "telephone"})
    records["g1-3"] = Record("g1-3", "p", "h", None, "bad_source", {})
    seeds = select_seeds(metrics, records, q=0.75, exclude={"genre": ["telephone"], "source": ["bad_source"]})
    # Without the excluded top example the next one (0.3) is above the remaining quantile.
    assert seeds == {"entailment": ["g0-2"], "neutral": ["g1-2"], "contradiction": ["g2-3"]}
    with pytest.raises(NLIDataError, match="needs the records"):
        select_seeds(metrics, None, exclude={"genre": ["telephone"]})
    with pytest.raises(NLIDataError, match="unknown exclusion key"):
        select_seeds(metrics, records, exclude={"domain": ["x"]})


# --------------------------------------------------------------------------- benchmark smoke
@pytest.mark.slow
def test_knn_benchmark_quick(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "benchmarks" / "knn.py"
    out = tmp_path / "knn.json"
    proc = subprocess.run([sys.executable, str(script), "--quick", "--max-wait", "0", "--matmul-repeats", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["check"]["same_indices"] == summary["check"]["checked"] == 200
    assert summary["achieved_gflops"] > 0 and summary["skipped"] == 0
