"""The long-text judge for small models (per-criterion calls, one-number answers) and per-generator
sampling: answers below are SmolLM2-135M-Instruct's own (experiments/nli_set), the server is the
project's local OpenAI-compatible one with responders that answer as such a model does."""

from __future__ import annotations

import json

import pytest
from omegaconf import open_dict

from conftest import compose_config
from nliforge.data.records import Record
from nliforge.generate import generate
from nliforge.pipelines.longtext.rubric import criterion_prompt, judge_rubric, parse_score
from nliforge.data.judgements import RUBRIC_CRITERIA
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.generation.stand_in.responders import input_text


@pytest.mark.parametrize("answer, score", [
    ("The content coverage of this text is 1.", 1),     # SmolLM2's most common answer
    ("The text is 10.", 10),
    ("10", 10),
    ("1. 1.\n\nThe coherence structure of this text is a well-organized", 1),
    ("Score: 7/10", 7),
    ("I would rate it 8 out of 10.", 8),
    ("On a scale from 1 to 10, I give it 6.", 6),
    ("A Very Good Story", None),                        # no number: unscored, never guessed
    ("The referential clarity of this text is excellent.", None),
    ("7 or 8", None),                                   # two different numbers
    ("11", None), ("0", None), ("100", None), ("7.5", None),
])
def test_parse_score_real_looking_answers(answer, score):
    assert parse_score(answer) == score


def _records():
    return [Record(f"r{i}", f"Paragraph one of record {i}.", f"Paragraph two of record {i}.", None, "lt",
                   {"model": "m", "intended_label": "neutral", "statement": "A statement here."}) for i in range(3)]


def _small_judge(prompt_or_messages, choice_index, seed, sampling):
    """Answers like SmolLM2's: record 0 a sentence ending in a number (the criterion's index + 2), record 1
    the same but prose without a number for `focus`, record 2 a number first ("5 is my score.")."""
    text = input_text(prompt_or_messages)
    crit = next(c for c in RUBRIC_CRITERIA if f"Rate the {c.replace('_', ' ')} of" in text)
    if "record 1" in text and crit == "focus":
        return "The focus of this text is on the new rules."
    if "record 2" in text:
        return "5 is my score."
    return f"The {crit.replace('_', ' ')} of this text is {RUBRIC_CRITERIA.index(crit) + 2}."


def test_per_criterion_judge_scores_only_what_parses(tmp_path):
    recs = _records()
    assert all(c.replace("_", " ") in criterion_prompt(recs[0], c) for c in RUBRIC_CRITERIA)
    with LocalOpenAIServer(latency_s=0.0, responder=_small_judge) as srv:
        node = {"name": "judge", "kind": "openai_chat", "model": "small", "base_url": srv.base_url,
                "api_key_env": None, "chat": True, "runner": {"progress": False}}
        js = judge_rubric(recs, node, tmp_path / "a.sqlite", per_criterion=True)      # default max_tokens 24
        cut = judge_rubric(recs[2:], node, tmp_path / "b.sqlite", per_criterion=True, sampling={"max_tokens": 1})
    assert js[0].rubric == {c: i + 2 for i, c in enumerate(RUBRIC_CRITERIA)}
    assert js[1].rubric is None and js[1].extra["rubric_error"] == "unparseable"   # 7 of 8: not filled in
    assert "new rules" in json.loads(js[1].extra["answer"])["focus"]
    assert js[2].rubric == dict.fromkeys(RUBRIC_CRITERIA, 5)
    # "5 is my score." cut to "5" by max_tokens: it could be the start of "50", so not a score
    assert cut[0].rubric is None and cut[0].extra["rubric_error"] == "cut_off_after_a_number"


def _echo_temperature(prompt_or_messages, choice_index, seed, sampling):
    return f"temperature={sampling['temperature']}"


def test_each_generator_may_override_the_stage_sampling(tmp_path, world_cache):
    with LocalOpenAIServer(latency_s=0.0, responder=_echo_temperature) as srv:
        cfg = compose_config("generate", ["pipeline=longtext", "pipeline.statements.limit=1",
                                          "pipeline.stages=[statements,longtext_prompts,longtext_generate]"],
                             tmp_path / "run", world_cache)
        with open_dict(cfg):
            base = {"kind": "openai_chat", "model": "m", "base_url": srv.base_url, "api_key_env": None, "chat": True,
                    "runner": {"progress": False}}
            cool = {**base, "name": "cool", "sampling": {"temperature": 0.3}}
            cfg.pipeline.generators = [{**base, "name": "hot"}, cool]
        generate(cfg)
    rows = [json.loads(x) for x in (tmp_path / "run" / "stages" / "longtext_generate.jsonl").read_text().splitlines()]
    seen = {(r["generator"], r["text"]) for r in rows}
    assert seen == {("hot", "temperature=0.7"), ("cool", "temperature=0.3")}   # the stage's 0.7 vs the override
