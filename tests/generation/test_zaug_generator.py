"""The Z-Aug generator: unlikelihood losses by hand, the §4.1 token mask, the sequence format,
λ = 0 as plain MLE, the consistency gradient, and a train → sample → reload smoke test."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest
import torch
from omegaconf import OmegaConf
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

from nliforge.generation.backends import build_backend
from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
from nliforge.generation.types import GenerationRequest, Response, Sampling
from nliforge.generation.zaug_format import LABEL_TOKENS, format_prefix, parse_generated
from nliforge.models.causal_lm import read_lm_meta
from nliforge.models.generator_train import train_generator
from nliforge.models.losses import (biased_token_mask, debias_unlikelihood_loss, parse_biased_features,
                                    unlikelihood_loss)
from nliforge.models.nli_generator import (GeneratorExample, NLIGenerator, add_label_tokens, collate,
                                           encode_example, encode_examples)
from nliforge.models.tiny_tokenizer import train_causal_tokenizer
from nliforge.world import WorldConfig, generate_split

from conftest import CONF_DIR

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def records():
    return generate_split(WorldConfig(seed=2, n_train=300), "train")


@pytest.fixture(scope="module")
def tok(records):
    tokenizer = train_causal_tokenizer([t for r in records for t in (r.premise, r.hypothesis)], vocab_size=500)
    add_label_tokens(tokenizer)
    return tokenizer


@pytest.fixture()
def lm(tok):
    torch.manual_seed(0)
    return GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=1, n_head=2,
                                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0))


def _batch(tok, examples, seed=0):
    return collate(encode_examples(tok, examples, seed, 128), tok.pad_token_id)


# p = softmax(log [1, 2, 1]) = [0.25, 0.5, 0.25] at both positions; targets 1 then 0.
TOY_LOGITS = torch.log(torch.tensor([[[1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]]))
TOY_TARGETS = torch.tensor([[1, 0]])


def test_unlikelihood_hand_value():
    # −log(1 − 0.5) = ln 2 = 0.693147;  −log(1 − 0.25) = ln(4/3) = 0.287682;  mean = 0.490415
    both = unlikelihood_loss(TOY_LOGITS, TOY_TARGETS, torch.tensor([[1, 1]]))
    assert both.item() == pytest.approx((math.log(2) + math.log(4 / 3)) / 2, abs=1e-6)
    assert both.item() == pytest.approx(0.490415, abs=1e-6)
    first = unlikelihood_loss(TOY_LOGITS, TOY_TARGETS, torch.tensor([[1, 0]]))
    assert first.item() == pytest.approx(0.693147, abs=1e-6)
    # p(target) ≈ 1 − 4e-9: 1 − p is clamped at 1e-5, so the loss is −log(1e-5) = 11.512925
    sure = unlikelihood_loss(torch.tensor([[[0.0, 20.0, 0.0]]]), torch.tensor([[1]]), torch.tensor([[1]]))
    assert sure.item() == pytest.approx(11.512925, abs=1e-4)
    assert unlikelihood_loss(TOY_LOGITS, TOY_TARGETS, torch.zeros(1, 2)).item() == 0.0


def test_debias_loss_mixes_unlikelihood_and_likelihood():
    # biased token 1 (p = 0.5): −log(1 − 0.5) = 0.693147; plain token 2 (p = 0.25): −log 0.25 = 1.386294
    loss = debias_unlikelihood_loss(TOY_LOGITS, TOY_TARGETS, torch.tensor([[1, 1]]), torch.tensor([[1, 0]]))
    assert loss.item() == pytest.approx((0.693147 + 1.386294) / 2, abs=1e-6)


def test_biased_token_mask_ngrams_and_whole_hypothesis():
    text = "The Cat did not know it, not here."
    spans = [(0, 3), (3, 7), (7, 11), (11, 15), (15, 20), (20, 23), (23, 24), (24, 28), (28, 33), (33, 34)]
    assert biased_token_mask(text, spans, [("not",)]) == [0, 0, 0, 1, 0, 0, 0, 1, 0, 0]
    assert biased_token_mask(text, spans, [("not", "here")]) == [0, 0, 0, 0, 0, 0, 0, 1, 1, 0]
    assert biased_token_mask(text, spans, [("the", "cat")]) == [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert biased_token_mask(text, spans, [("no",)]) == [0] * 10  # whole words only: not "not", "know"
    assert biased_token_mask(text, spans, None) == [1] * 10  # length, overlap, hypo-only, null
    # words as the z-filter features cut them: "didn't" is one word, so "didn" is not a hit
    assert biased_token_mask("He didn't go.", [(0, 2), (2, 9), (9, 12), (12, 13)], [("didn't",)]) == [0, 1, 0, 0]
    assert biased_token_mask("He didn't go.", [(0, 2), (2, 9), (9, 12), (12, 13)], [("didn",)]) == [0, 0, 0, 0]
    ngrams, whole = parse_biased_features(["not@hypothesis", "the cat@premise"])
    assert ngrams == {"hypothesis": [("not",)], "premise": [("the", "cat")]} and not whole
    assert parse_biased_features(["hypo-only-pred=2"])[1] and parse_biased_features(["length>10"])[1]


def test_format_and_parse_round_trip():
    text = format_prefix("A man ran.", "neutral") + "A man ran fast."
    assert text == "A man ran.<|neutral|>A man ran fast."
    assert parse_generated(text) == ("A man ran.", "neutral", "A man ran fast.")
    assert parse_generated("A man ran. no label here") is None
    assert parse_generated("A<|neutral|>B<|entailment|>C") is None
    assert parse_generated("A man ran.<|entailment|>  ") is None
    with pytest.raises(ValueError, match="not one of"):
        format_prefix("A man ran.", "maybe")


def test_encoding_aligns_masks_with_tokens(tok):
    ex = GeneratorExample("Oscar did run.", "entailment", "Oscar did not walk.", "unlikelihood", ("not@hypothesis",))
    row = encode_example(tok, ex, random.Random(0), 128)
    hyp = [t for t, m in zip(row["targets"], row["hyp_mask"]) if m]
    assert tok.decode(hyp) == "Oscar did not walk."
    assert tok.decode([t for t, m in zip(row["targets"], row["biased"]) if m]).strip() == "not"
    diff = [i for i, (a, b) in enumerate(zip(row["input_ids"], row["perturbed_ids"])) if a != b]
    assert len(diff) == 1 and tok.convert_ids_to_tokens(row["perturbed_ids"][diff[0]]) in LABEL_TOKENS.values()
    assert tok.convert_ids_to_tokens(row["input_ids"][diff[0]]) == "<|entailment|>"
    assert row["targets"][-1] == tok.eos_token_id and row["input_ids"][0] == tok.bos_token_id


def test_lambda_zero_is_plain_mle(tok, lm, records):
    batch = _batch(tok, [GeneratorExample(r.premise, r.label, r.hypothesis) for r in records[:6]])
    ours = NLIGenerator(lm, lam=0.0).losses(batch)["loss"]
    # the model's own loss: append a pad column so labels (shifted inside) line up with our targets
    pad = torch.full((6, 1), tok.pad_token_id)
    labels = torch.cat([torch.full((6, 1), -100), batch["targets"]], dim=1)
    hf = lm(input_ids=torch.cat([batch["input_ids"], pad], 1),
            attention_mask=torch.cat([batch["attention_mask"], torch.zeros_like(pad)], 1), labels=labels).loss
    torch.testing.assert_close(ours, hf, rtol=1e-6, atol=1e-6)
    assert NLIGenerator(lm, lam=0.5).losses(batch)["loss"] > ours  # the consistency term adds to it


def test_consistency_term_is_positive_and_has_gradient(tok, lm, records):
    batch = _batch(tok, [GeneratorExample(r.premise, r.label, r.hypothesis) for r in records[:4]])
    terms = NLIGenerator(lm, lam=0.5).losses(batch)
    assert terms["consistency"].item() > 0
    terms["consistency"].backward()
    grads = [p.grad for p in lm.parameters() if p.grad is not None]
    assert grads and sum(float(g.abs().sum()) for g in grads) > 0
    # with every row a Z⁻ row and no biased token, L_UL is the likelihood of those rows and L_MLE is 0
    rows = [GeneratorExample(r.premise, r.label, r.hypothesis, "unlikelihood", ("x@premise",)) for r in records[:4]]
    zminus = NLIGenerator(lm, lam=0.5).losses(_batch(tok, rows))
    plain = NLIGenerator(lm, lam=0.0).losses(batch)["mle"]
    assert zminus["mle"].item() == 0.0 and zminus["consistency"].item() == 0.0
    assert zminus["unlikelihood"].item() == pytest.approx(plain.item(), rel=1e-5)


SMOKE = dict(n_layer=1, n_embd=64, n_head=2, vocab_size=600)


@pytest.fixture(scope="module")
def generator_dir(records, tmp_path_factory):
    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    cfg["backbone"].update(SMOKE)
    cfg.update(max_steps=40, max_epochs=10, batch_size=16)
    out = tmp_path_factory.mktemp("zaug") / "generator"
    return train_generator(records, out, cfg), cfg


def test_train_sample_reload(generator_dir, records):
    out, cfg = generator_dir
    meta = read_lm_meta(out)
    assert meta["steps"] == 40 and meta["final_loss"] < meta["initial_loss"] - 1.0
    stamp = (out / "nliforge_lm.json").stat().st_mtime_ns
    assert train_generator(records, out, cfg) == out and (out / "nliforge_lm.json").stat().st_mtime_ns == stamp
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert all(t in tokenizer.get_vocab() for t in LABEL_TOKENS.values())
    assert AutoModelForCausalLM.from_pretrained(out).config.vocab_size == len(tokenizer)
    backend = build_backend({"kind": "gpt2_unlikelihood", "model": str(out), "batch_size": 32})
    assert isinstance(backend, NLIGeneratorBackend)
    sampling = Sampling(max_tokens=100, temperature=1.0, top_p=1.0)
    answers = backend.generate_batch([GenerationRequest(f"u{i}", "", sampling, seed=i) for i in range(32)])
    parsed = [parse_generated(a.texts[0]) for a in answers if isinstance(a, Response)]
    assert sum(p is not None for p in parsed) >= 4
    assert {p[1] for p in parsed if p} <= set(LABEL_TOKENS)


def test_hypothesis_for_given_premise_and_label(generator_dir, records):
    backend = NLIGeneratorBackend(str(generator_dir[0]), batch_size=8)
    sampling = Sampling(max_tokens=60, temperature=1.0, top_p=1.0)
    prefixes = [format_prefix(r.premise, "contradiction") for r in records[:8]]
    answers = backend.generate_batch([GenerationRequest(f"h{i}", p, sampling, seed=i) for i, p in enumerate(prefixes)])
    texts = [a.texts[0] for a in answers]
    assert all(not any(t in text for t in LABEL_TOKENS.values()) for text in texts)  # hypothesis only
    done = [parse_generated(p + t) for p, t in zip(prefixes, texts)]
    assert sum(d is not None and d[1] == "contradiction" and d[0] == r.premise
               for d, r in zip(done, records[:8])) >= 4
    again = backend.generate_batch([GenerationRequest("h0", prefixes[0], sampling, seed=0)])
    assert again[0].texts == answers[0].texts  # per-sample seeds: independent of the batch


def test_debias_finetuning_from_a_generator(generator_dir, records, tmp_path):
    out, cfg = generator_dir
    rejected = [dataclasses.replace(r, meta={"biased_features": ["not@hypothesis"]})
                for r in records if " not " in r.hypothesis][:30]
    tuned = train_generator(records[:100], tmp_path / "gstar", {**cfg, "init": str(out), "lam": 0.0,
                                                                 "max_steps": 10}, rejected=rejected)
    meta = read_lm_meta(tuned)
    assert meta["n_rejected"] == len(rejected) > 0 and meta["steps"] == 10
    base = AutoModelForCausalLM.from_pretrained(out).transformer.wte.weight
    assert not torch.equal(AutoModelForCausalLM.from_pretrained(tuned).transformer.wte.weight, base)


@pytest.fixture(scope="module")
def pretrained_llama(records, tmp_path_factory):
    """A pretrained causal LM of another family than GPT-2 (a tiny Llama) saved as a plain HF folder."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = train_causal_tokenizer([t for r in records for t in (r.premise, r.hypothesis)], vocab_size=500)
    torch.manual_seed(1)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                                         max_position_embeddings=128, bos_token_id=tokenizer.bos_token_id,
                                         eos_token_id=tokenizer.eos_token_id))
    folder = tmp_path_factory.mktemp("pretrained") / "tiny-llama"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_init_from_any_causal_lm_starts_from_its_weights(pretrained_llama, records, tmp_path):
    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    cfg.update(init_from=str(pretrained_llama), max_steps=1, batch_size=8, warmup_steps=0)
    cfg["optimizer"]["lr"] = 0.0  # one step that moves nothing: the saved weights are the pretrained ones
    frozen = train_generator(records[:8], tmp_path / "frozen", cfg)
    base = AutoModelForCausalLM.from_pretrained(pretrained_llama)
    tuned = AutoModelForCausalLM.from_pretrained(frozen)
    assert tuned.config.model_type == "llama" and tuned.config.vocab_size == base.config.vocab_size + 3
    n = base.config.vocab_size
    assert torch.equal(tuned.model.embed_tokens.weight[:n], base.model.embed_tokens.weight)
    assert torch.equal(tuned.model.layers[0].mlp.up_proj.weight, base.model.layers[0].mlp.up_proj.weight)
    cfg["optimizer"]["lr"] = 3e-3
    cfg.update(max_steps=30, lam=0.5)
    learned = train_generator(records, tmp_path / "learned", cfg)
    meta = read_lm_meta(learned)
    assert meta["settings"]["init_from"] == str(pretrained_llama) and meta["final_loss"] < meta["initial_loss"] - 0.5
    backend = NLIGeneratorBackend(str(learned), batch_size=8)  # samples like any generator folder
    answers = backend.generate_batch([GenerationRequest(f"u{i}", "", Sampling(max_tokens=40), seed=i) for i in range(8)])
    assert all(isinstance(a, Response) and a.texts[0] for a in answers)


def test_init_from_a_missing_folder_names_the_key(records, tmp_path):
    from nliforge.generation.types import GenerationError

    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    cfg.update(init_from=str(tmp_path / "no" / "such-lm"))
    with pytest.raises(GenerationError, match=r"init_from='.*such-lm': no such folder"):
        train_generator(records[:8], tmp_path / "out", cfg)
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("out*"))


def test_label_tokens_of_a_pretrained_lm_start_at_their_words(pretrained_llama, records, tmp_path):
    from nliforge.models.generator_train import build_model_and_tokenizer

    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    model, tok = build_model_and_tokenizer({**cfg, "init_from": str(pretrained_llama)}, [])
    table = model.get_input_embeddings().weight
    for label, token in LABEL_TOKENS.items():
        words = tok(" " + label, add_special_tokens=False)["input_ids"]
        assert torch.allclose(table[tok.convert_tokens_to_ids(token)], table[words].mean(0))
