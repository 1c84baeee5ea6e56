"""Automatic review: a trained classifier as teacher, and an LLM judge behind the local OpenAI server."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import torch
from omegaconf import OmegaConf

from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import LABELS, normalize_label_name
from nliforge.data.records import Record
from nliforge.generation.cache import ResponseCache
from nliforge.review.teacher import automatic_records, llm_judge_review, parse_judge_answer, teacher_review
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.generation.stand_in.responders import input_text


@pytest.fixture(scope="module")
def world_records(classifier_run_dir):
    return read_jsonl(classifier_run_dir / "train_set.jsonl")[:12]


def test_teacher_review_thresholds_and_confidence(classifier_run_dir, world_records):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model_dir = classifier_run_dir / "model"
    keep_all = teacher_review(world_records, model_dir, threshold=0.0, batch_size=5, max_length=64, progress=False)
    assert [j.uid for j in keep_all] == [r.uid for r in world_records]
    assert all(j.label in LABELS and j.source == "teacher" and j.annotator == "teacher:model" for j in keep_all)
    # Recompute p(argmax) and the argmax's name straight from the model (max is order-free).
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    tok = AutoTokenizer.from_pretrained(model_dir)
    enc = tok([r.premise for r in world_records], [r.hypothesis for r in world_records], truncation=True,
              max_length=64, padding=True, return_tensors="pt")
    with torch.no_grad():
        probs = model(**enc).logits.softmax(-1)
    for j, p in zip(keep_all, probs):
        assert j.confidence == pytest.approx(float(p.max()), abs=1e-5)
        assert j.label == normalize_label_name(model.config.id2label[int(p.argmax())])
        assert sum(j.extra["probs"].values()) == pytest.approx(1.0, abs=1e-5)
    drop_all = teacher_review(world_records, classifier_run_dir, threshold=1.01, progress=False)
    assert {j.label for j in drop_all} == {"discard"}
    assert [j.extra["predicted"] for j in drop_all] == [j.label for j in keep_all]
    assert drop_all[0].annotator == f"teacher:{classifier_run_dir.name}"   # a run folder works too
    mid = sorted(j.confidence for j in keep_all)[len(keep_all) // 2]
    some = teacher_review(world_records, model_dir, threshold=mid, progress=False)
    assert [j.label != "discard" for j in some] == [j.confidence >= mid for j in keep_all]
    reviewed = automatic_records(world_records, some)
    assert len(reviewed) == sum(j.confidence >= mid for j in keep_all)
    assert all(r.meta["review"]["annotators"] == ["teacher:model"] for r in reviewed)


def test_teacher_maps_labels_by_name(classifier_run_dir, world_records, tmp_path):
    """A teacher whose output columns are ordered c/e/n (like roberta-large-mnli) gives the same verdicts."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model_dir = classifier_run_dir / "model"
    model = AutoModelForSequenceClassification.from_pretrained(model_dir)
    head = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == 3][-1]
    order = ["contradiction", "entailment", "neutral"]   # moves every label: read by position, all would differ
    rows = [LABELS.index(name) for name in order]
    with torch.no_grad():
        head.weight.copy_(head.weight[rows].clone())
        head.bias.copy_(head.bias[rows].clone())
    model.config.id2label = dict(enumerate(order))
    model.config.label2id = {name: i for i, name in enumerate(order)}
    foreign = tmp_path / "foreign"
    model.save_pretrained(foreign)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(foreign)
    ours = teacher_review(world_records, model_dir, threshold=0.0, progress=False)
    theirs = teacher_review(world_records, foreign, threshold=0.0, progress=False)
    assert [j.label for j in theirs] == [j.label for j in ours]
    assert [j.confidence for j in theirs] == pytest.approx([j.confidence for j in ours], abs=1e-5)


def test_teacher_missing_model_folder(tmp_path):
    with pytest.raises(NLIDataError, match="no config.json"):
        teacher_review([Record("a", "p", "h", None)], tmp_path, progress=False)


# ------------------------------------------------------------------------------------ LLM judge
ANSWER_WORDS = (" Entailment.", " neutral", " CONTRADICTION", " I cannot tell.")
EXPECTED = ("entailment", "neutral", "contradiction", "discard")


def pick(hypothesis: str) -> int:
    return hashlib.sha256(hypothesis.encode()).digest()[0] % len(ANSWER_WORDS)


def judge_responder(prompt_or_messages, choice_index, seed, sampling):
    """Answers with a label word chosen by a hash of the hypothesis in the prompt (4th: unparseable)."""
    hypothesis = re.search(r"Hypothesis: (.*)", input_text(prompt_or_messages)).group(1)
    text = ANSWER_WORDS[pick(hypothesis.strip())]
    return text.lstrip() if isinstance(prompt_or_messages, list) else text + "\nmore"


def generator(kind: str, base_url: str) -> dict:
    return {"kind": kind, "model": "judge-model", "base_url": base_url, "api_key_env": "NLIFORGE_TEST_JUDGE_KEY",
            "chat": kind == "openai_chat",
            "runner": {"concurrency": 4, "max_retries": 2, "backoff_base_s": 0.01, "timeout_s": 10.0,
                       "progress": False}}


@pytest.mark.parametrize("kind", ["openai_completions", "openai_chat"])
def test_llm_judge_review(kind, tmp_path, monkeypatch):
    records = [Record(f"r{i}", f"Premise {i} about a red house.", f"Hypothesis {i} mentions a {i} dog.", None, "x")
               for i in range(16)]
    monkeypatch.setenv("NLIFORGE_TEST_JUDGE_KEY", "sk-test-judge")
    log = tmp_path / "server.jsonl"
    with LocalOpenAIServer(latency_s=0.001, responder=judge_responder, api_key="sk-test-judge",
                           log_path=log) as srv:
        cfg = generator(kind, srv.base_url)
        if kind == "openai_chat":
            cfg = OmegaConf.create(cfg)   # a Hydra node, as the CLI passes it
        got = llm_judge_review(records, cfg, tmp_path / "judge.sqlite")
        sent = sum(srv.stats.values())
        again = llm_judge_review(records, cfg, tmp_path / "judge.sqlite")
        assert sum(srv.stats.values()) == sent == len(records)   # the rerun is answered by the cache
    assert [j.label for j in got] == [EXPECTED[pick(r.hypothesis)] for r in records]
    assert {j.label for j in got} >= {"discard", "entailment"}
    assert [j.label for j in again] == [j.label for j in got]
    assert all(j.annotator == "llm:judge-model" and j.source == "llm_judge" for j in got)
    for j in got:
        assert (j.extra.get("reason") == "unparseable") == (j.label == "discard")
    endpoint = "/v1/chat/completions" if kind == "openai_chat" else "/v1/completions"
    assert {json.loads(line)["endpoint"] for line in log.read_text().splitlines()} == {endpoint}
    with ResponseCache(tmp_path / "judge.sqlite") as cache:
        assert len(cache) == len(records) and cache.ledger("llm_judge")["cached"] == len(records)
    kept = automatic_records(records, got)
    assert len(kept) == sum(j.label != "discard" for j in got)


def test_parse_judge_answer():
    assert parse_judge_answer(" Entails.") == "entailment"
    assert parse_judge_answer("\n**Contradiction**") == "contradiction"
    assert parse_judge_answer("Neutral") == "neutral"
    assert parse_judge_answer("Answer unclear") is None and parse_judge_answer("") is None


def test_judge_action_writes_its_ledger_into_the_run_manifest(tmp_path, monkeypatch):
    """`nliforge-review judge` records its ledger in <run>/manifest.json next to the generation stages'."""
    from conftest import compose_config
    from nliforge.data.jsonl import write_jsonl
    from nliforge.engine.run_folder import RunFolder
    from nliforge.review.cli import review

    records = [Record(f"r{i}", f"Premise {i} about a red house.", f"Hypothesis {i} mentions a {i} dog.", None, "x")
               for i in range(6)]
    run = tmp_path / "gen_run"
    write_jsonl(records, run / "dataset.jsonl")
    RunFolder(run).update_manifest(ledger={"generate": {"sent": 3}})   # an earlier stage's entry stays
    monkeypatch.setenv("NLIFORGE_TEST_JUDGE_KEY", "sk-test-judge")
    with LocalOpenAIServer(latency_s=0.001, responder=judge_responder, api_key="sk-test-judge") as srv:
        gen = generator("openai_completions", srv.base_url)
        overrides = ["action=judge", f"run={run}", "generator=openai_completions", *(
            f"generator.{k}={v}" for k, v in gen.items() if k not in ("runner", "kind", "chat")),
            "generator.runner.progress=false", "generator.runner.backoff_base_s=0.01"]
        cfg = compose_config("review", overrides, tmp_path / "out", tmp_path / "cache")
        assert review(cfg)["judgements"] == len(records)
        review(cfg)                                            # again: answered by the cache
    ledger = RunFolder(run).manifest()["ledger"]
    assert ledger["generate"] == {"sent": 3}
    assert ledger["review_judge"]["sent"] == len(records) and ledger["review_judge"]["cached"] == len(records)


def test_teacher_action_reviews_an_items_file_outside_the_run(classifier_run_dir, world_records, tmp_path):
    """`items=<file.jsonl>` reviews that file (the run folder holds only the review state); it was read as
    DictConfig's `items` method before (the WANLI review=teacher row found it)."""
    from conftest import compose_config
    from nliforge.data.jsonl import write_jsonl
    from nliforge.review.cli import review

    items = write_jsonl([Record(r.uid, r.premise, r.hypothesis, None, "x") for r in world_records],
                        tmp_path / "elsewhere" / "items.jsonl")
    run = tmp_path / "review_only"
    run.mkdir()
    cfg = compose_config("review", ["action=teacher", f"run={run}", f"items={items}",
                                    f"teacher.model_dir={classifier_run_dir}", "teacher.threshold=0.0"],
                         tmp_path / "out", tmp_path / "cache")
    assert review(cfg)["judgements"] == len(world_records)
    assert not (run / "dataset.jsonl").exists() and (run / "review" / "review.sqlite").is_file()
