"""The demo's prompt LM: corpus format, training lowers the loss, idempotence, atomic output; `parse_rate` is
used on the WANLI demo's own LM by tests/project/test_readme_numbers.py."""

from __future__ import annotations


import pytest
from transformers import AutoTokenizer

from nliforge.errors import NLIDataError
from nliforge.generation.backends.hf_local import HFLocal
from nliforge.pipelines.wanli.stand_in import prompt_documents
from nliforge.pipelines.wanli.prompts import INSTRUCTION, label_word, wanli_prompt
from nliforge.generation.types import GenerationRequest, Response, Sampling
from nliforge.models import causal_lm
from nliforge.models.causal_lm import META_NAME, read_lm_meta, train_prompt_lm
from nliforge.world import WorldConfig, generate_split

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SHORT = dict(n_layer=1, n_embd=64, n_head=2, steps=50, batch_size=8, lr=5e-3, seq_len=128, seed=0,
             vocab_size=600, progress=False)


@pytest.fixture(scope="module")
def records():
    return generate_split(WorldConfig(seed=2, n_train=300), "train")


@pytest.fixture(scope="module")
def docs(records):
    return prompt_documents(records, 120, k=4, seed=0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, docs):
    return train_prompt_lm(docs, tmp_path_factory.mktemp("lm") / "lm", **SHORT)


def test_documents_are_prompt_plus_one_same_label_completion(records, docs):
    assert len(docs) == 120
    assert docs == prompt_documents(records, 120, k=4, seed=0)
    assert docs != prompt_documents(records, 120, k=4, seed=1)
    by_pair = {(r.premise, r.hypothesis): r.label for r in records}
    for doc in docs[:6]:
        prompt, completion = doc.split("\n\n6.")
        assert doc.startswith(INSTRUCTION) and completion.endswith("\n\n") and completion.startswith(" ")
        premise, hypothesis = completion.strip("\n")[1:].split("\n", 1)
        label = by_pair[(premise, hypothesis.split(": ", 1)[1])]
        assert hypothesis.startswith(f"{label_word(label)}: ")
        assert prompt + "\n\n6." == wanli_prompt(_examples(prompt, label), label)
        assert f"{premise}\n" not in prompt  # the completion is not one of the in-context examples


def _examples(prompt: str, label: str) -> list[tuple[str, str]]:
    items = prompt.split("\n\n")[1:]
    return [tuple(item.split(". ", 1)[1].split(f"\n{label_word(label)}: ")) for item in items]


def test_unlabelled_documents_mix_labels_and_ignore_them(records):
    """labels=False: every document's pairs come from all labels, and its relation word is
    taken in turn, so the word carries no information about the pairs' true labels."""
    docs = prompt_documents(records, 300, k=4, seed=0, labels=False)
    by_pair = {(r.premise, r.hypothesis): r.label for r in records}
    mixed, agree, total = 0, 0, 0
    for i, doc in enumerate(docs):
        word = label_word(sorted(["contradiction", "entailment", "neutral"])[i % 3])
        items = doc.split("\n\n")[1:]
        pairs = [tuple(item.split(". ", 1)[1].strip().split(f"\n{word}: ")) for item in items[:-1]]
        pairs.append(tuple(items[-1].strip()[len("6. "):].split(f"\n{word}: ")) if items[-1].startswith("6.")
                     else tuple(doc.split("\n\n6.")[1].strip().split(f"\n{word}: ")))
        truth = [by_pair[p] for p in pairs]
        mixed += len(set(truth)) > 1
        agree += sum(t == sorted(["contradiction", "entailment", "neutral"])[i % 3] for t in truth)
        total += len(truth)
    assert mixed > 250                      # same-label groups would give 0
    assert abs(agree / total - 1 / 3) < 0.06  # the word matches a pair's label at chance, not always
    assert docs != prompt_documents(records, 300, k=4, seed=0)


def test_unlabelled_fill_in_targets_are_random_not_the_pairs_own():
    from nliforge.pipelines.disco.stand_in import fill_in_documents
    recs = generate_split(WorldConfig(seed=2, n_train=300), "train")
    own = fill_in_documents(recs, 200, seed=0)
    free = fill_in_documents(recs, 200, seed=0, labels=False)
    targets = lambda docs: [d.rsplit("\n", 3)[-3] for d in docs]
    assert len(free) == 200 and targets(own) != targets(free)
    assert len(set(targets(free))) == 3


def test_documents_need_enough_records_per_label(records):
    with pytest.raises(NLIDataError, match="k \\+ 2"):
        prompt_documents(records[:5], 3, k=4)


def test_training_lowers_the_loss_and_saves_a_loadable_folder(trained, docs):
    meta = read_lm_meta(trained)
    assert meta["final_loss"] < meta["initial_loss"] - 2.0, meta
    assert len(meta["losses"]) == SHORT["steps"] and meta["n_documents"] == len(docs)
    tok = AutoTokenizer.from_pretrained(trained)
    text = docs[0]
    assert tok.decode(tok(text)["input_ids"]) == text  # newlines and spaces round-trip, no specials added
    assert tok.eos_token_id is not None and tok.pad_token_id is not None
    out = HFLocal(str(trained)).generate_batch(
        [GenerationRequest(uid="p", prompt=text.split("\n\n2.")[0] + "\n\n2.", sampling=Sampling(max_tokens=20))])
    assert isinstance(out[0], Response) and out[0].completion_tokens > 0


def test_second_call_with_same_settings_does_not_retrain(trained, docs, monkeypatch):
    stamp = (trained / META_NAME).stat().st_mtime_ns
    monkeypatch.setattr(causal_lm, "_train", lambda *a, **k: pytest.fail("retrained a finished model"))
    assert train_prompt_lm(docs, trained, **SHORT) == trained
    assert (trained / META_NAME).stat().st_mtime_ns == stamp


def test_other_settings_retrain_and_replace(tmp_path, docs):
    out = tmp_path / "lm"
    train_prompt_lm(docs[:20], out, **{**SHORT, "steps": 3})
    first = read_lm_meta(out)["digest"]
    train_prompt_lm(docs[:20], out, **{**SHORT, "steps": 4})
    assert read_lm_meta(out)["digest"] != first and len(read_lm_meta(out)["losses"]) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["lm"]


def test_interrupted_training_leaves_nothing(tmp_path, docs, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(causal_lm, "_train", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_prompt_lm(docs[:20], tmp_path / "lm", **SHORT)
    assert list(tmp_path.iterdir()) == []


def test_bad_settings_name_the_setting(tmp_path, docs):
    with pytest.raises(ValueError, match="n_embd"):
        train_prompt_lm(docs, tmp_path / "lm", **{**SHORT, "n_embd": 63})
    with pytest.raises(ValueError, match="steps"):
        train_prompt_lm(docs, tmp_path / "lm", **{**SHORT, "steps": 0})


def parse_rate(texts: list[str], word: str) -> float:
    """Share of texts of the form `premise\\n{word}: hypothesis` with both sides non-empty."""
    ok = 0
    for text in texts:
        parts = text.split(f"\n{word}: ")
        ok += len(parts) == 2 and bool(parts[0].strip()) and bool(parts[1].strip()) and "\n" not in parts[1]
    return ok / len(texts)
