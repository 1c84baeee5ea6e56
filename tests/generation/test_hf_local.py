"""The hf_local backend: batch-independent sampling, stop strings, n samples, context limits, errors."""

from __future__ import annotations

import pytest

from nliforge.generation.backends.hf_local import HFLocal, sample_seed
from nliforge.pipelines.wanli.stand_in import prompt_documents
from nliforge.pipelines.wanli.prompts import wanli_prompt
from nliforge.generation.types import BatchBackend, Failure, GenerationError, GenerationRequest, Response, Sampling
from nliforge.models.causal_lm import train_prompt_lm
from nliforge.world import WorldConfig, generate_split

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SEQ_LEN = 160


@pytest.fixture(scope="module")
def records():
    return generate_split(WorldConfig(seed=5, n_train=300), "train")


@pytest.fixture(scope="module")
def lm_dir(tmp_path_factory, records):
    """A tiny LM trained for a few seconds: enough to continue the prompt format now and then."""
    docs = prompt_documents(records, 200, k=2, seed=0)
    return train_prompt_lm(docs, tmp_path_factory.mktemp("lm") / "lm", n_layer=1, n_embd=64, n_head=2,
                           steps=40, batch_size=8, lr=5e-3, seq_len=SEQ_LEN, seed=0, vocab_size=600,
                           progress=False)


@pytest.fixture(scope="module")
def backend(lm_dir):
    return HFLocal(str(lm_dir), batch_size=4)


def _prompts(records, count: int) -> list[str]:
    """Prompts of varied length (1-2 examples) so batches need padding."""
    return [wanli_prompt([(r.premise, r.hypothesis) for r in records[i:i + 1 + i % 2]], "neutral")
            for i in range(count)]


def _req(uid, prompt, n=2, seed=None, **sampling) -> GenerationRequest:
    sampling = {"max_tokens": 24, "temperature": 1.0, "top_p": 0.9, "stop": (), **sampling}
    return GenerationRequest(uid=uid, prompt=prompt, sampling=Sampling(**sampling), n=n, seed=seed)


def test_is_a_batch_backend(backend, lm_dir):
    assert isinstance(backend, BatchBackend)
    assert backend.name == "hf_local" and backend.model == str(lm_dir) and backend.batch_size == 4
    assert backend.max_context == SEQ_LEN


def test_answer_does_not_depend_on_batch_composition_or_order(backend, records):
    prompts = _prompts(records, 7)
    target = _req("t", prompts[0], n=3, seed=11)
    others = [_req(f"o{i}", p, n=1 + i % 3, seed=i, top_p=1.0, temperature=0.7) for i, p in enumerate(prompts[1:])]
    alone = backend.generate_batch([target])[0]
    mixed = backend.generate_batch(others[:3] + [target] + others[3:])[3]
    reordered = backend.generate_batch([*reversed(others), target])[-1]
    assert isinstance(alone, Response) and len(alone.texts) == 3
    assert alone.texts == mixed.texts == reordered.texts
    assert alone.finish_reasons == mixed.finish_reasons == reordered.finish_reasons
    assert any(alone.texts), "the model produced only empty texts; the comparison would be vacuous"


def test_sample_index_fixes_the_sample(backend, records):
    prompt = _prompts(records, 1)[0]
    four = backend.generate_batch([_req("a", prompt, n=4, seed=3)])[0]
    tail = GenerationRequest(uid="b", prompt=prompt, sampling=Sampling(max_tokens=24, top_p=0.9, stop=()),
                             n=2, first_sample=2, seed=3)
    assert backend.generate_batch([tail])[0].texts == four.texts[2:]
    assert sample_seed(tail, 2) != sample_seed(tail, 3)


def test_samples_differ_at_temperature_one_but_greedy_is_deterministic(backend, records):
    prompt = _prompts(records, 1)[0]
    sampled = backend.generate_batch([_req("s", prompt, n=4, seed=1, top_p=1.0)])[0]
    assert len(set(sampled.texts)) > 1
    greedy = backend.generate_batch([_req("g", prompt, n=3, seed=1, temperature=0.0)])[0]
    again = backend.generate_batch([_req("g", prompt, n=3, seed=99, temperature=0.0)])[0]
    assert len(set(greedy.texts)) == 1 and greedy.texts == again.texts


def test_stop_string_truncates_and_sets_finish_reason(backend, records):
    prompt = _prompts(records, 1)[0]
    full = backend.generate_batch([_req("f", prompt, n=1, temperature=0.0, max_tokens=16)])[0]
    text = full.texts[0]
    assert len(text) > 8 and full.finish_reasons == ["length"]
    assert full.completion_tokens == 16
    stop = text[4:7]
    cut = backend.generate_batch([_req("c", prompt, n=1, temperature=0.0, max_tokens=16, stop=(stop, "@@"))])[0]
    assert cut.texts == [text[:text.find(stop)]] and cut.finish_reasons == ["stop"]
    assert cut.completion_tokens < 16
    assert cut.prompt_tokens == full.prompt_tokens == len(backend._tok(prompt)["input_ids"])


def test_prompt_over_the_context_is_a_failure_not_a_crash(backend, records):
    short = _prompts(records, 1)[0]
    long_prompt = " ".join(r.premise for r in records[:80])
    out = backend.generate_batch([_req("long", long_prompt), _req("short", short)])
    assert isinstance(out[0], Failure) and out[0].kind == "context_length"
    assert f"> limit {SEQ_LEN}" in out[0].message and "long" in out[0].message
    assert isinstance(out[1], Response) and len(out[1].texts) == 2


def test_max_context_setting_overrides_the_config(lm_dir, records):
    small = HFLocal(str(lm_dir), batch_size=2, max_context=40)
    prompt = _prompts(records, 1)[0]
    out = small.generate_batch([_req("x", prompt, max_tokens=24)])
    assert isinstance(out[0], Failure) and "> limit 40" in out[0].message


def test_missing_model_folder_is_a_clear_error(tmp_path):
    missing = tmp_path / "no_such_model"
    with pytest.raises(GenerationError) as err:
        HFLocal(str(missing))
    message = str(err.value)
    assert "generator.model" in message and str(missing) in message and "does not exist" in message


def test_empty_prompt_and_unknown_dtype(backend, lm_dir):
    out = backend.generate_batch([_req("e", "", n=1, max_tokens=4)])[0]
    assert isinstance(out, Response) and out.prompt_tokens == 1 and len(out.texts) == 1
    with pytest.raises(GenerationError, match="generator.dtype"):
        HFLocal(str(lm_dir), dtype="float8")
