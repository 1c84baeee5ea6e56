"""Label-guided decoding (`generator.label_guidance`): the score formula by hand, the prompt variants, w = 0 as
plain sampling token for token, answers independent of batching, and the effect it exists for: a generator whose
training premises nearly always predict the label ignores the label token when sampled plainly and follows it
when guided."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.generation.backends import build_backend
from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
from nliforge.generation.backends.label_guidance import GuidedHFLocal, guided_scores, label_variants
from nliforge.generation.types import GenerationError, GenerationRequest, Response, Sampling
from nliforge.generation.zaug_format import format_prefix
from nliforge.models.generator_train import train_generator

from conftest import CONF_DIR

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORD = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}
NOUNS = ("cat", "dog", "bird", "fish", "cow", "fox", "owl", "pig", "ant")
SAMPLING = Sampling(max_tokens=6, temperature=1.0, top_p=1.0, stop=())


def own_label(noun: str) -> str:
    return LABELS[NOUNS.index(noun) % 3]


def confounded(n: int, seed: int, p_own: float) -> list[Record]:
    """Toy pairs whose hypothesis is the label's word; the premise's noun gives its own label with p_own."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        noun = rng.choice(NOUNS)
        lab = own_label(noun) if rng.random() < p_own else rng.choice(LABELS)
        out.append(Record(f"t{i}", f"the {noun} sat", WORD[lab], lab, "toy"))
    return out


@pytest.fixture(scope="module")
def generator(tmp_path_factory):
    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    cfg["backbone"].update(n_layer=1, n_embd=32, n_head=2, vocab_size=300)
    cfg.update(batch_size=16, lam=0.0, max_length=16, warmup_steps=0, max_epochs=3)
    return train_generator(confounded(240, 0, 0.97), tmp_path_factory.mktemp("guided") / "gen", cfg)


def counterfactual_requests() -> list[tuple[GenerationRequest, str]]:
    prompts = [(noun, lab) for noun in NOUNS for lab in LABELS if lab != own_label(noun)] * 4
    return [(GenerationRequest(f"p{i}", format_prefix(f"the {noun} sat", lab), SAMPLING, seed=i), lab)
            for i, (noun, lab) in enumerate(prompts)]


def following(folder, w: float) -> float:
    backend = NLIGeneratorBackend(str(folder), batch_size=32, label_guidance=w)
    pairs = counterfactual_requests()
    answers = backend.generate_batch([req for req, _ in pairs])
    return float(np.mean([isinstance(a, Response) and a.texts[0].strip() == WORD[lab]
                          for a, (_, lab) in zip(answers, pairs)]))


def test_guided_scores_by_hand():
    # intended [-1, -2]; others [-3, -1] and [-1, -3], mean [-2, -2]; w = 2: [-1 + 2·1, -2 + 2·0] = [1, -2]
    logprobs = torch.tensor([[[-1.0, -2.0], [-3.0, -1.0], [-1.0, -3.0]]])
    assert guided_scores(logprobs, 2.0).tolist() == [[1.0, -2.0]]
    assert guided_scores(logprobs, 0.0).tolist() == [[-1.0, -2.0]]


def test_label_variants_put_the_prompts_own_label_first():
    assert label_variants([5, 6, 11], [10, 11, 12], "r") == [[5, 6, 11], [5, 6, 10], [5, 6, 12]]
    with pytest.raises(GenerationError, match="request r: label guidance needs a prompt that ends with a label"):
        label_variants([5, 6, 7], [10, 11, 12], "r")


def test_zero_guidance_samples_exactly_as_plain(generator):
    pairs = counterfactual_requests()[:18]
    reqs = [GenerationRequest(r.uid, r.prompt, r.sampling, n=2, seed=r.seed) for r, _ in pairs]
    plain = NLIGeneratorBackend(str(generator), batch_size=8).generate_batch(reqs)
    zero = NLIGeneratorBackend(str(generator), batch_size=8)
    zero._hf = GuidedHFLocal(str(generator), list(map("<|{}|>".format, LABELS)), 0.0, batch_size=8)
    assert [a.texts for a in zero.generate_batch(reqs)] == [a.texts for a in plain]


def test_guided_answers_do_not_depend_on_the_batch(generator):
    reqs = [r for r, _ in counterfactual_requests()[:12]]
    backend = NLIGeneratorBackend(str(generator), batch_size=5, label_guidance=2.0)
    together = [a.texts for a in backend.generate_batch(reqs)]
    alone = [backend.generate_batch([r])[0].texts for r in reversed(reqs)][::-1]
    assert together == alone


def test_guidance_makes_a_premise_bound_generator_follow_the_label(generator):
    plain, guided = following(generator, 0.0), following(generator, 2.0)
    assert plain < 0.5 and guided >= plain + 0.25, (plain, guided)


def test_the_config_key_reaches_the_backend_and_bad_values_are_refused(generator):
    node = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/generator/gpt2_unlikelihood.yaml"))
    assert node["label_guidance"] == 0.0
    backend = build_backend({**node, "model": str(generator), "label_guidance": 1.5})
    assert isinstance(backend._hf, GuidedHFLocal) and backend._hf.w == 1.5
    with pytest.raises(GenerationError, match="generator.label_guidance must be >= 0"):
        build_backend({**node, "model": str(generator), "label_guidance": -1})
    whole = GenerationRequest("whole", "", SAMPLING)   # a whole instance has no label token to guide
    with pytest.raises(GenerationError, match="request whole: label guidance needs a prompt"):
        backend.generate_batch([whole])


def test_a_pipeline_run_refuses_guidance_before_it_starts():
    from nliforge.engine.stand_in import check_no_guidance
    from nliforge.errors import NLIDataError
    from nliforge.pipelines.zaug.pipeline import use_generator

    cfg = OmegaConf.create({"generator": {"kind": "gpt2_unlikelihood", "label_guidance": 2.0},
                            "pipeline": {"generator_model": {"lam": 0.5}}})
    with pytest.raises(NLIDataError, match=r"generator.label_guidance=2.0: Z-Aug samples whole instances"):
        use_generator(cfg)
    with pytest.raises(NLIDataError, match=r"generator.label_guidance=2.0: no pipeline sends the prompts it guides"):
        check_no_guidance(cfg.generator, "generator")
    check_no_guidance(OmegaConf.create({"kind": "gpt2_unlikelihood", "label_guidance": 0.0}), "generator")
