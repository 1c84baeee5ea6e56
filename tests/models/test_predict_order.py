"""Scoring in batches of similar length: every caller of predict_probs gets its rows in the order of its inputs,
with the probabilities each input gets when it is scored alone (padding is masked out)."""

import numpy as np
import pytest
import torch

from nliforge.data.datamodule import NLIDataModule
from nliforge.data.records import Record
from nliforge.models.backbone import build_backbone, save_backbone
from nliforge.models.classifier import NLIClassifier
from nliforge.models.predict import in_input_order, longest_first, predict_probs

WORDS = "the a cat dog sat ran on under mat park while people were watching from far away".split()


def test_longest_first_keeps_ties_in_input_order_and_the_inverse_restores_it():
    order = longest_first([3, 5, 1, 5, 3])
    assert order.tolist() == [1, 3, 0, 4, 2]
    rows = np.array([[10.0], [20.0], [30.0], [40.0], [50.0]])   # row k computed for input order[k]
    assert in_input_order(rows, order)[:, 0].tolist() == [30.0, 10.0, 50.0, 20.0, 40.0]


def _records(n: int = 37) -> list[Record]:
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):   # lengths from 2 to ~40 words, in no order
        premise = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 40))))
        hypothesis = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 8))))
        out.append(Record(f"u{i}", premise, hypothesis, None))
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    spec = {"kind": "tiny", "arch": "roberta", "hidden_size": 32, "num_layers": 1, "num_heads": 2,
            "intermediate_size": 64, "vocab_size": 300, "max_position_embeddings": 130, "dropout": 0.0}
    texts = [r.premise for r in _records()] + [r.hypothesis for r in _records()]
    torch.manual_seed(0)
    model, tokenizer, _ = build_backbone(spec, texts)
    with torch.no_grad():   # an untrained model answers ~1/3 everywhere: larger weights make every input differ
        for name, weight in model.named_parameters():
            if weight.dim() == 2 and "embeddings" not in name:
                weight.normal_(0.0, 0.3)
    folder = tmp_path_factory.mktemp("clf")
    save_backbone(model, tokenizer, folder)
    return model.eval(), tokenizer, folder


def test_a_classifier_folder_scores_in_length_order_and_answers_in_input_order(tiny):
    _, _, folder = tiny
    records = _records()
    alone = np.concatenate([predict_probs(folder, [r], batch_size=1) for r in records])
    batched = predict_probs(folder, records, batch_size=8)
    assert np.allclose(batched, alone, atol=1e-5)
    assert len({tuple(np.round(p, 4)) for p in alone}) > 10   # inputs differ: a wrong order could not pass


def test_a_module_scores_its_datamodules_batches_in_length_order_and_answers_in_input_order(tiny):
    model, tokenizer, _ = tiny
    records = _records()
    dm = NLIDataModule(records, tokenizer, eval_batch_size=8)
    module = NLIClassifier(model)
    alone = np.concatenate([predict_probs(module, [r], datamodule=dm) for r in records])
    batched = predict_probs(module, records, datamodule=dm)
    assert np.allclose(batched, alone, atol=1e-5)
    assert len({tuple(np.round(p, 4)) for p in alone}) > 10
