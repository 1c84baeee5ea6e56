"""Every source's label map, by name."""

import pytest

from nliforge.data import LABEL2ID, LABELS, NLIDataError, map_label, model_label_permutation
from nliforge.data.labels import SOURCE_LABEL_MAPS


def test_internal_ids():
    assert LABELS == ("entailment", "neutral", "contradiction")
    assert LABEL2ID == {"entailment": 0, "neutral": 1, "contradiction": 2}


@pytest.mark.parametrize("source,raw,expected", [
    ("mnli", 0, "entailment"), ("mnli", 2, "contradiction"), ("mnli", -1, None),
    ("snli", 1, "neutral"), ("snli", -1, None),
    ("anli", 2, "contradiction"),
    ("wanli", "neutral", "neutral"),
    ("wanli_ids", 0, "contradiction"), ("wanli_ids", 1, "entailment"), ("wanli_ids", 2, "neutral"),
    ("wnli", 1, "entailment"), ("wnli", 0, "non-entailment"),
    ("qnli", 0, "entailment"), ("qnli", 1, "non-entailment"),
    ("hans", 0, "entailment"), ("hans", 1, "non-entailment"),
    ("fever_nli", "SUPPORTS", "entailment"), ("fever_nli", "REFUTES", "contradiction"),
    ("fever_nli", "NOT ENOUGH INFO", "neutral"),
])
def test_source_label_maps(source, raw, expected):
    assert map_label(source, raw, "x") == expected


def test_every_source_maps_only_to_known_names():
    for table in SOURCE_LABEL_MAPS.values():
        for name in table.values():
            assert name is None or name in LABELS + ("non-entailment", "non-contradiction")


def test_unknown_label_and_source_errors_list_choices():
    with pytest.raises(NLIDataError, match=r"f.jsonl:3: label 7 is not in the mnli label map; valid: 0, 1, 2, -1"):
        map_label("mnli", 7, "f.jsonl:3")
    with pytest.raises(NLIDataError, match="unknown label source 'nope'; valid: .*mnli"):
        map_label("nope", 0, "cfg")


def test_model_label2id_permutation():
    # roberta-large-mnli orders contradiction first: columns [c, n, e]
    perm = model_label_permutation({"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2})
    assert perm == [2, 1, 0]
    import torch
    logits = torch.tensor([[5.0, 1.0, 0.0]])  # the model says contradiction
    assert logits[:, perm].argmax(-1).item() == LABEL2ID["contradiction"]
    # WANLI's released model: alphabetical
    assert model_label_permutation({"contradiction": 0, "entailment": 1, "neutral": 2}) == [1, 2, 0]
    with pytest.raises(NLIDataError, match="lacks"):
        model_label_permutation({"LABEL_0": 0, "LABEL_1": 1, "LABEL_2": 2})

