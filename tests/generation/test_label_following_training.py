"""Label-conditioned training makes the tiny Z-Aug generator write the label it is asked for: on a toy task whose
hypothesis is the label's word (a judge that is exactly right), a generator trained with the label in its input
follows the label far more often than the same generator after one step."""

from __future__ import annotations

import random

import numpy as np
import pytest
from omegaconf import OmegaConf

from nliforge.analysis.label_following import label_following
from nliforge.data.labels import LABELS
from nliforge.data.records import Record
from nliforge.generation.backends.nli_generator import NLIGeneratorBackend
from nliforge.generation.types import GenerationRequest, Response, Sampling
from nliforge.generation.zaug_format import format_prefix
from nliforge.models.generator_train import train_generator

from conftest import CONF_DIR

pytestmark = pytest.mark.usefixtures("one_torch_thread")

WORD = {"entailment": "yes", "neutral": "maybe", "contradiction": "no"}
NOUNS = ("cat", "dog", "bird", "fish", "cow", "fox", "owl", "pig")


def toy(n: int, seed: int) -> list[Record]:
    rng = random.Random(seed)
    return [Record(f"t{i}", f"the {rng.choice(NOUNS)} sat", WORD[lab], lab, "toy")
            for i, lab in enumerate(LABELS[i % 3] for i in range(n))]


def share(folder) -> float:
    """Label-following by an exact judge (the label whose word the hypothesis is; anything else: wrong)."""
    backend = NLIGeneratorBackend(str(folder), batch_size=32)
    prompts = [(f"the {noun} sat", lab) for noun in NOUNS for lab in LABELS]
    sampling = Sampling(max_tokens=6, temperature=1.0, top_p=1.0, stop=())
    answers = backend.generate_batch([GenerationRequest(f"p{i}", format_prefix(p, lab), sampling, seed=i)
                                      for i, (p, lab) in enumerate(prompts)])
    by_word = {w: lab for lab, w in WORD.items()}
    intended = [lab for _, lab in prompts]
    judged = [by_word.get(a.texts[0].strip() if isinstance(a, Response) else "",
                          LABELS[(LABELS.index(lab) + 1) % 3]) for a, lab in zip(answers, intended)]
    return label_following(intended, judged, np.eye(3)).corrected


def test_label_conditioned_training_follows_the_label(tmp_path):
    cfg = OmegaConf.to_container(OmegaConf.load(f"{CONF_DIR}/model/tiny_generator.yaml"))
    cfg["backbone"].update(n_layer=1, n_embd=32, n_head=2, vocab_size=300)
    cfg.update(batch_size=16, lam=0.0, max_length=16, warmup_steps=0)
    records = toy(240, 0)
    untrained = train_generator(records, tmp_path / "one_step", {**cfg, "max_steps": 1})
    trained = train_generator(records, tmp_path / "trained", {**cfg, "max_epochs": 10})
    before, after = share(untrained), share(trained)
    assert before < 0.5 and after >= 0.9, (before, after)
