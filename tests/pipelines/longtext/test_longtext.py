"""The long-text pipeline (NLI-Set): statements, prompts that never name the relation, the
instruction-following checks, two generators end to end against the local server, the LLM
judge's rubric and the per-model table."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import pytest
from omegaconf import OmegaConf, open_dict

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.data.records import Record
from nliforge.pipelines.longtext.checks import LongTextRules, check_longtext, count_sentences
from nliforge.generate import generate
from nliforge.pipelines.longtext.prompts import (LABEL_TERMS, LABELS, longtext_messages, longtext_prompt,
                                                  read_statements)
from nliforge.pipelines.longtext.rubric import parse_rubric, rubric_markdown, rubric_table
from nliforge.data.judgements import RUBRIC_CRITERIA, Judgement
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.longtext.stand_in import longtext_responder

KEY_ENV = "NLIFORGE_TEST_API_KEY"
RULES = LongTextRules.from_dict({}, LABEL_TERMS)
S = "The first sentence is here. The second one follows it. A third closes the paragraph. And a fourth."
GOOD = f"{S}\n\n{S.replace('first', 'opening')}"


def test_prompts_contain_the_statement_and_never_a_label_word():
    statements = read_statements(None)
    assert 30 <= len(statements) <= 50
    every_term = [t for terms in LABEL_TERMS.values() for t in terms]
    for statement in statements:
        for label in LABELS:
            for text in (longtext_prompt(statement, label), json.dumps(longtext_messages(statement, label))):
                assert statement in text
                assert not [t for t in every_term if re.search(rf"\b{t}\b", text, re.I)], (label, text)
    assert len({longtext_prompt(statements[0], lab) for lab in LABELS}) == 3   # the relation changes the prompt


def test_statement_files_text_jsonl_and_errors(tmp_path):
    txt = tmp_path / "s.txt"
    txt.write_text("# a comment\nBuses run every ten minutes.\n\nThe library opens at nine.\n")
    assert read_statements(txt) == ["Buses run every ten minutes.", "The library opens at nine."]
    jl = tmp_path / "s.jsonl"
    jl.write_text('{"text": "Buses run every ten minutes."}\n{"txt": "oops"}\n')
    with pytest.raises(NLIDataError, match=r"s\.jsonl:2: .*'text'"):
        read_statements(jl)
    txt.write_text("Buses run every ten minutes.\nshort\n")
    with pytest.raises(NLIDataError, match=r"s\.txt:2: expected a context statement"):
        read_statements(txt)


def test_sentence_counter():
    assert count_sentences("One. Two! Three? Four") == 4
    assert count_sentences('He said "stop." Then he left.') == 2


@pytest.mark.parametrize("text,label,reason", [
    (GOOD, "entailment", None),
    (GOOD.replace("\n\n", "\r\n  \r\n"), "neutral", None),                       # \r\n and a spaced blank line
    (GOOD.replace("\n\n", " "), "neutral", "not_two_paragraphs"),
    (f"{GOOD}\n\n{S}", "neutral", "not_two_paragraphs"),
    (f"{GOOD} This is a clear Contradiction.", "contradiction", "label_word_stated"),
    (f"{GOOD} It entails the first.", "entailment", "label_word_stated"),
    (f"{S}\n\nOnly one sentence here, which is long enough to pass the length check alone. Two.", "neutral",
     "sentence_count"),
    ("A. B. C.\n\nD. E. F.", "neutral", "too_short"),
])
def test_validation(text, label, reason):
    checked = check_longtext(text, label, RULES)
    assert checked.reason == reason
    if reason is None:
        assert len(checked.paragraphs) == 2 and checked.sentence_counts == (4, 4) and all(checked.flags.values())


def test_another_labels_word_is_not_a_violation():
    assert check_longtext(f"{GOOD} A neutral observer agreed.", "entailment", RULES).reason is None


def _cfg(run_dir, cache, extra=()):
    return compose_config("generate", ["pipeline=longtext", "generate_experiment@_global_=longtext_demo",
                                       "pipeline.statements.limit=4", *extra], run_dir, cache)


def test_demo_pipeline_two_generators_and_rubric(tmp_path, world_cache):
    manifest = generate(_cfg(tmp_path / "run", world_cache))
    st = manifest["stages"]
    assert st["longtext_prompts"]["count_out"] == 12 and st["longtext_generate"]["count_out"] == 24
    for a, b in [("longtext_generate", "longtext_validate"), ("longtext_validate", "rubric")]:
        assert st[b]["count_in"] == st[a]["count_out"]
    for name, entry in st.items():
        drops = [json.loads(x) for x in (tmp_path / "run" / "stages" / f"{name}.drops.jsonl").read_text().splitlines()]
        assert Counter(d["reason"] for d in drops) == Counter(entry["drops"]), name
        if name != "longtext_prompts":                            # the one fan-out: 3 prompts per statement
            assert entry["count_in"] == entry["count_out"] + len(drops), name
    records = read_jsonl(tmp_path / "run" / "dataset.jsonl")
    assert {r.meta["model"] for r in records} == {"standin_a", "standin_b"}
    assert all(r.label is None and r.meta["intended_label"] in LABELS for r in records)
    assert all("\n" not in r.premise and r.meta["statement"] in read_statements(None) for r in records)
    assert set(manifest["ledger"]) >= {"longtext_generate:standin_a", "longtext_generate:standin_b", "rubric"}
    report = (tmp_path / "run" / "rubric.md").read_text()
    assert "| standin_a |" in report and "stand-in" in report
    assert (tmp_path / "run" / "rubric.png").read_bytes()[:4] == b"\x89PNG"
    scored = [r for r in records if r.meta["rubric"]]
    assert scored and set(scored[0].meta["rubric"]) == set(RUBRIC_CRITERIA)


def test_validation_drops_with_more_statements(tmp_path, world_cache):
    """Over 40 statements x 3 labels x 2 stand-ins (~15% broken) the validation has work to do."""
    cfg = _cfg(tmp_path / "run", world_cache, ["pipeline.statements.limit=null",
                                               "pipeline.stages=[statements,longtext_prompts,longtext_generate,"
                                               "longtext_validate]"])
    drops = generate(cfg)["stages"]["longtext_validate"]["drops"]
    assert {"not_two_paragraphs", "label_word_stated", "sentence_count"} <= set(drops)


def test_generators_on_a_running_server_and_resume(tmp_path, world_cache, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "k")
    log = tmp_path / "log.jsonl"
    with LocalOpenAIServer(latency_s=0.0, responder=longtext_responder, log_path=log, api_key="k") as srv:
        cfg = compose_config("generate", ["pipeline=longtext", "pipeline.statements.limit=2",
                                          "pipeline.stages=[statements,longtext_prompts,longtext_generate,"
                                          "longtext_validate]"], tmp_path / "run", world_cache)
        with open_dict(cfg):
            cfg.pipeline.generators = [{"name": n, "kind": kind, "model": n, "base_url": srv.base_url,
                                        "api_key_env": KEY_ENV, "chat": kind == "openai_chat",
                                        "runner": {"progress": False}}
                                       for n, kind in [("x", "openai_chat"), ("y", "openai_completions")]]
        generate(cfg)
        sent = len(log.read_text().splitlines())
        generate(cfg)
        assert len(log.read_text().splitlines()) == sent          # a rerun sends nothing
    rows = [json.loads(x) for x in (tmp_path / "run" / "stages" / "longtext_generate.jsonl").read_text().splitlines()]
    assert Counter(r["generator"] for r in rows) == {"x": 6, "y": 6}
    texts = {r["uid"]: r["text"] for r in rows}
    assert texts["st000:neutral:x"] != texts["st000:neutral:y"]   # each generator samples its own seed


def test_generators_need_unique_names(tmp_path, world_cache):
    cfg = _cfg(tmp_path / "run", world_cache)
    with open_dict(cfg):  # the demo's generators are its stand-ins (applied while no generator is chosen)
        cfg.stand_in.pipeline.generators = [OmegaConf.to_container(cfg.stand_in.pipeline.generators[0])] * 2
    with pytest.raises(NLIDataError, match="unique `name`"):
        generate(cfg)


def test_parse_rubric_formats():
    lines = "\n".join(f"{c}: {i + 2}" for i, c in enumerate(RUBRIC_CRITERIA))
    assert parse_rubric(lines)["focus"] == 9
    titled = "\n".join(f"{i + 1}. **{c.replace('_', ' ').title()}** - {7}/10" for i, c in enumerate(RUBRIC_CRITERIA))
    assert parse_rubric(titled.replace("Coherence Structure", "Coherence and Structure")) == dict.fromkeys(RUBRIC_CRITERIA, 7)
    assert parse_rubric("Scores: " + json.dumps(dict.fromkeys(RUBRIC_CRITERIA, 8.0)))["accuracy"] == 8
    assert parse_rubric(lines.replace("focus: 9", "focus: 11")) is None       # out of range
    assert parse_rubric(lines.replace("focus: 9", "")) is None                # one missing
    assert parse_rubric("I cannot score this.") is None


def _j(uid, scores, source="page", annotator="ann1"):
    rubric = None if scores is None else dict(zip(RUBRIC_CRITERIA, scores))
    return Judgement(uid, annotator, "neutral", "p", "h", source=source, rubric=rubric)


def test_rubric_table_by_hand():
    recs = [Record(f"r{i}", "p", "h", None, "lt", {"model": m, "intended_label": "neutral"})
            for i, m in enumerate(["a", "a", "a", "b"])]
    judgements = [_j("r0", [2] * 8), _j("r1", [4] * 8, "llm_judge", "judge"), _j("r2", [9] * 8),
                  _j("r2", None, annotator="ann2"), _j("r3", [5, 6, 7, 8, 9, 10, 1, 2]), _j("zz", [1] * 8)]
    table = rubric_table(recs, judgements, {"a": (3, 4), "b": (1, 2)})
    # model a: scores 2, 4, 9 -> mean 5, sample std sqrt(((3)^2 + 1^2 + 4^2) / 2) = sqrt(13)
    assert table.loc["a", "n"] == 3 and table.loc["a", "unscored"] == 1
    assert table.loc["a", "focus_mean"] == pytest.approx(5.0)
    assert table.loc["a", "accuracy_std"] == pytest.approx(math.sqrt(13))
    assert table.loc["a", "instruction_following"] == pytest.approx(0.75)
    assert table.loc["b", "readability_mean"] == 9 and math.isnan(table.loc["b", "readability_std"])
    md = rubric_markdown(table)
    assert "| a | 3 | 1 | 0.75 (3/4) | 5.00 ± 3.61 |" in md and "5.00 ± n/a" in md
