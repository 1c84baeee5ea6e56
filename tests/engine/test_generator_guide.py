"""The guide's "Calling the generator" section (docs/adding-a-pipeline.md): its blocks are the files of the
copyable template (templates/pipeline/), and that pipeline, installed from outside nliforge, runs offline:
refused before any file without a generator, as a dry run (5 rendered prompts, nothing sent) and as the demo,
answered by the local stand-in server with the pipeline's own responder."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import tomllib
from pathlib import Path

import pytest
from conftest import compose_config
from nliforge.engine import registry
from nliforge.engine.shared_stages import generate_stage_for
from nliforge.engine.stages import check_fields, stage
from nliforge.errors import NLIDataError
from nliforge.generate import generate
from nliforge.utils.cli import with_user_config_path
from test_pipeline_registry import guide_blocks, write_dist_info

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "pipeline"
PAIRS = [{"uid": f"p{i}", "premise": f"Person {i} walks the dog.", "hypothesis": "Someone is outside.",
          "label": "entailment"} for i in range(1, 7)] + [
         {"uid": "p7", "premise": "A cat sleeps.", "hypothesis": "An animal rests.", "label": None}]


def test_the_guide_shows_the_template_files_verbatim():
    shown = {path: body for path, body in guide_blocks().items() if path.startswith("templates/")}
    assert set(shown) == {"templates/pipeline/my_pipeline/__init__.py", "templates/pipeline/pyproject.toml",
                          "templates/pipeline/my_pipeline/conf/pipeline/my_pipeline.yaml",
                          "templates/pipeline/my_pipeline/conf/generate_experiment/my_pipeline_demo.yaml"}
    for path, body in shown.items():
        assert (ROOT / path).read_text(encoding="utf-8") == body, path


@pytest.fixture
def template_site(tmp_path, monkeypatch) -> Path:
    """The template package and its entry points (pipeline and responder), as `pip install` leaves them."""
    site = tmp_path / "site"
    shutil.copytree(TEMPLATE / "my_pipeline", site / "my_pipeline")
    project = tomllib.loads((TEMPLATE / "pyproject.toml").read_text())["project"]
    write_dist_info(site, project["name"], project["version"], project["entry-points"])
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("my_pipeline", None)


def config(tmp_path: Path, extra: list[str] = ()):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({**p, "source": "hand", "meta": {}}) + "\n" for p in PAIRS))
    overrides = with_user_config_path(["pipeline=my_pipeline", f"input={pairs}", *extra], env="",
                                      extra=registry.pipeline_conf_dirs())
    return compose_config("generate", overrides, tmp_path / "run", tmp_path / "cache")


def test_no_generator_chosen_is_refused_before_the_run_folder_exists(template_site, tmp_path):
    with pytest.raises(NLIDataError, match=r"^no generator chosen \(generator=stand_in\) and this run has no "
                                           r"stand-in .* generator=smollm2"):
        generate(config(tmp_path))
    assert not (tmp_path / "run").exists()   # neither `input` nor `my_prompts` wrote anything


def test_a_builtin_pipeline_without_a_generator_is_refused_before_its_classifier_trains(tmp_path):
    cfg = compose_config("generate", ["pipeline=wanli"], tmp_path / "run", tmp_path / "cache")
    with pytest.raises(NLIDataError, match=r"^no generator chosen \(generator=stand_in\)"):
        generate(cfg)
    assert not (tmp_path / "run").exists()


def test_a_stand_in_left_in_a_pipelines_own_slot_is_named(tmp_path):
    cfg = compose_config("generate", ["pipeline=longtext", "pipeline.rubric.judge.kind=stand_in"],
                         tmp_path / "run", tmp_path / "cache")
    with pytest.raises(NLIDataError, match=r"^no generator chosen \(pipeline.rubric.judge=stand_in\)"):
        generate(cfg)
    assert not (tmp_path / "run").exists()


def test_a_chat_generator_needs_messages_in_the_prompt_rows():
    prompts = stage("p", writes=("uid", "prompt", "prompt_hash"))(lambda ctx: None)
    gen = generate_stage_for("p")
    assert (gen.name, gen.inputs, gen.generators) == ("generate", ("p",), ("generator",))
    check_fields("x", [prompts, gen])   # a completion generator reads no messages
    with pytest.raises(NLIDataError, match=r"^pipeline 'x': stage 'generate' reads messages, which no stage"):
        check_fields("x", [prompts, gen], chat=True)


def test_a_dry_run_prints_five_rendered_prompts_and_sends_nothing(template_site, tmp_path, capsys):
    manifest = generate(config(tmp_path, ["dry_run=true"]))
    assert set(manifest["stages"]) == {"input", "my_prompts"}
    assert not (tmp_path / "run" / "llm_cache.sqlite").exists() and not (tmp_path / "run" / "dataset.jsonl").exists()
    out = capsys.readouterr().out
    assert out.count("--- prompt ") == 5 and "--- prompt 1 of 6: my-p1 ---" in out
    assert ("--- prompt 5 of 6: my-p5 ---\nWrite a sentence that contradicts the premise.\n"
            "Premise: Person 5 walks the dog.\nSentence:\n") in out
    assert "my-p6" not in out


def test_the_demo_is_answered_by_the_pipelines_stand_in_responder(template_site, tmp_path):
    """One command: the demo's stand-in node (kind stand_in, a responder) starts the local server in this
    process on a free port for the run, and stops it after."""
    before = {t.name for t in threading.enumerate()}
    manifest = generate(config(tmp_path, ["experiment=demo"]))
    assert manifest["stages"]["my_prompts"]["drops"] == {"unlabeled": 1}
    assert manifest["generator"]["backend"] == "openai_completions" and manifest["generator"]["model"] == "stand-in"
    rows = [json.loads(line) for line in (tmp_path / "run" / "dataset.jsonl").read_text().splitlines()]
    assert len(rows) == 12   # 6 labeled pairs x n=2 samples
    assert rows[0] == {"uid": "my-p1:0", "premise": "Person 1 walks the dog.",
                       "hypothesis": "It is not true that person 1 walks the dog.", "label": "contradiction",
                       "source": "my_pipeline_generated", "meta": {"prompt_uid": "my-p1", "sample": 0}}
    assert {t.name for t in threading.enumerate() if t.is_alive()} <= before   # the server thread is gone


def test_the_demo_caps_its_input_per_label(template_site, tmp_path):
    manifest = generate(config(tmp_path, ["experiment=demo", "input_limit={per_label: 2}"]))
    assert manifest["stages"]["input"]["drops"] == {"over_input_limit": 4}      # 6 entailment + 1 unlabeled
    assert manifest["stages"]["my_prompts"]["drops"] == {"unlabeled": 1}
    assert len((tmp_path / "run" / "dataset.jsonl").read_text().splitlines()) == 4   # 2 pairs x n=2


def test_an_unknown_responder_is_refused_before_the_run_folder_exists(template_site, tmp_path):
    with pytest.raises(NLIDataError, match=r"^generator.responder='nope': no such stand-in responder; known: .*my_pipeline"):
        generate(config(tmp_path, ["generator.responder=nope"]))
    assert not (tmp_path / "run").exists()


def test_a_responder_on_the_command_line_needs_no_demo_file(template_site, tmp_path):
    manifest = generate(config(tmp_path, ["generator.responder=my_pipeline", "input_limit=3"]))
    assert manifest["final"]["count"] == 6   # 3 pairs x n=2
