"""Token attributions: integrated gradients' completeness, gradient x input's shape and the
softmax sum rule, long inputs (truncate / chunk), and the HTML and PNG renderings."""

from __future__ import annotations

import html

import numpy as np
import pytest
import torch

from nliforge.analysis.attribution_render import render_attributions
from nliforge.analysis.attributions import attribute_pair, encode_windows, gradient_x_input, integrated_gradients
from nliforge.errors import NLIDataError
from nliforge.models.backbone import build_backbone, save_backbone
from nliforge.models.predict import load_classifier

TEXTS = ["The man walks the dog in the park.", "A woman reads a book near the river.",
         "Two children play a game in the street.", "The team sings in the old house."] * 20
PAIR = ("The man walks the dog in the park.", "A man is outside with a dog.")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A randomly initialised tiny RoBERTa classifier saved as an HF folder (no training needed)."""
    torch.manual_seed(0)
    model, tokenizer, _ = build_backbone({"kind": "tiny", "vocab_size": 300, "hidden_size": 32, "num_layers": 1,
                                          "num_heads": 2, "intermediate_size": 64, "max_position_embeddings": 66,
                                          "dropout": 0.0}, TEXTS)
    return save_backbone(model, tokenizer, tmp_path_factory.mktemp("clf") / "model")


@pytest.fixture(scope="module")
def loaded(model_dir):
    return load_classifier(model_dir)


def _enc(loaded, pair=PAIR, limit=64):
    return encode_windows(loaded[1], *pair, limit, "truncate")[0]


@pytest.mark.parametrize("output,baseline", [("prob", "pad"), ("logit", "zeros")])
def test_ig_completeness(loaded, output, baseline):
    model, _, perm = loaded
    enc = _enc(loaded)
    for target in range(3):
        attr, delta = integrated_gradients(model, enc, target, perm, n_steps=32, baseline=baseline, output=output)
        assert attr.shape == (enc["input_ids"].shape[1],)
        assert abs(attr).sum() > 0                       # not trivially zero
        assert abs(delta) < 1e-3 * max(1.0, abs(attr).sum()), delta
    # special tokens are kept in the baseline, so their attribution is exactly zero
    special = enc["special_tokens_mask"][0].bool().numpy()
    assert np.allclose(attr[special], 0.0)


def test_ig_with_few_steps_has_a_larger_gap_than_with_many(loaded):
    model, _, perm = loaded
    enc = _enc(loaded)
    _, coarse = integrated_gradients(model, enc, 0, perm, n_steps=1)
    _, fine = integrated_gradients(model, enc, 0, perm, n_steps=32)
    assert abs(fine) < abs(coarse)


def test_gradient_x_input_shape_and_sign_rule(loaded):
    """Class probabilities sum to one, so per token the three classes' x*grad sum to zero."""
    model, _, perm = loaded
    enc = _enc(loaded)
    per_class = np.stack([gradient_x_input(model, enc, t, perm, "prob") for t in range(3)])
    assert per_class.shape == (3, enc["input_ids"].shape[1])
    assert np.abs(per_class).max() > 1e-6
    np.testing.assert_allclose(per_class.sum(0), 0.0, atol=1e-5 * np.abs(per_class).max() + 1e-7)
    # so a token that raises one class's probability lowers another's: both signs occur
    assert (per_class > 0).any(axis=0).sum() > 0 and (per_class < 0).any(axis=0).sum() > 0


def test_long_inputs_truncate_or_chunk(loaded):
    model, tokenizer, perm = loaded
    long_hyp = " ".join(["A man is outside with a dog near the park."] * 12)
    truncated = attribute_pair(model, tokenizer, perm, PAIR[0], long_hyp, "gxi", max_length=512)
    assert len(truncated) == 1 and len(truncated[0].tokens) == 64      # capped by the model's 66 positions
    chunks = attribute_pair(model, tokenizer, perm, PAIR[0], long_hyp, "gxi", long_inputs="chunk")
    assert len(chunks) > 1 and chunks[0].window == f"1/{len(chunks)}"
    assert all(len(c.tokens) <= 64 for c in chunks)
    with pytest.raises(NLIDataError, match="long_inputs"):
        attribute_pair(model, tokenizer, perm, *PAIR, "gxi", long_inputs="slide")


def test_render_html_and_png(model_dir, tmp_path):
    pairs = [PAIR, ("A woman reads a book.", "Nobody is reading.")]
    paths = render_attributions(model_dir, pairs, tmp_path / "out", method="ig", n_steps=8)
    page = paths[0].read_text(encoding="utf-8")
    model, tokenizer, perm = load_classifier(model_dir)
    for premise, hypothesis in pairs:
        attr = attribute_pair(model, tokenizer, perm, premise, hypothesis, "ig", n_steps=8)[0]
        for tok in attr.tokens:
            assert html.escape(tok) in page, tok
        assert attr.target in page
    assert "rgba(220,38,38" in page and "rgba(37,99,235" in page   # both signs are coloured
    assert len(paths) == 3
    for png in paths[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_not_a_model_folder_is_named(tmp_path):
    with pytest.raises(NLIDataError, match="config.json"):
        load_classifier(tmp_path)
