"""The WANLI pipeline end to end over a real run folder: a tiny trained classifier, the local
OpenAI-compatible server as the LLM, every stage's dataset, the manifest, resume and refusals."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from omegaconf import open_dict

from conftest import compose_config, wanli_openai_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.generate import generate
from nliforge.generation.types import GenerationError
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

KEY_ENV = "NLIFORGE_TEST_API_KEY"
WANLI_STAGES = ["classifier", "seeds", "exemplars", "prompts", "generate", "parse", "heuristics", "variability"]


def gen_config(run_dir: Path, cache: Path, clf: Path, base_url: str, extra=()):
    return wanli_openai_config(run_dir, cache, clf, base_url, KEY_ENV, 8, extra)


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    with LocalOpenAIServer(latency_s=0.001, responder=wanli_responder, log_path=tmp_path / "server_log.jsonl") as srv:
        yield srv


def served(log_path: Path) -> list[dict]:
    return [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]


def test_wanli_pipeline_end_to_end(tmp_path, world_cache, classifier_run_dir, server):
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url)
    manifest = generate(cfg)
    stages = manifest["stages"]
    assert list(stages) == WANLI_STAGES
    # counts chain: what a stage passes on is what the next one takes in
    assert stages["exemplars"]["count_in"] == stages["seeds"]["count_out"] <= 24
    assert stages["prompts"]["count_in"] == stages["exemplars"]["count_out"] > 0
    assert stages["generate"]["count_in"] == 5 * stages["prompts"]["count_out"]
    for a, b in [("generate", "parse"), ("parse", "heuristics"), ("heuristics", "variability")]:
        assert stages[b]["count_in"] == stages[a]["count_out"]
    # every drop has a reason, one row per dropped item
    for name, entry in stages.items():
        drops = [json.loads(x) for x in (tmp_path / "run" / "stages" / f"{name}.drops.jsonl").read_text().splitlines()]
        assert Counter(d["reason"] for d in drops) == Counter(entry["drops"])
        if name not in ("seeds", "classifier"):
            assert entry["count_in"] == entry["count_out"] + len(drops), name
    # the selection keeps the same number per intended label
    final = read_jsonl(tmp_path / "run" / "dataset.jsonl")
    per_label = Counter(r.meta["intended_label"] for r in final)
    assert len(set(per_label.values())) == 1 and len(final) == manifest["final"]["count"] > 0
    rec = final[0]
    assert rec.label is None and rec.source == "wanli_generated"
    assert set(rec.meta) >= {"seed_uid", "neighbour_uids", "intended_label", "prompt_hash", "generator",
                             "sample", "scores"}
    assert len(rec.meta["neighbour_uids"]) == 4 and "est_max_variability" in rec.meta["scores"]
    assert manifest["ledger"]["generate"]["sent"] == stages["prompts"]["count_out"]


def test_random_selection_keeps_as_many_per_label_but_not_the_top(tmp_path, world_cache, classifier_run_dir, server):
    """pipeline.variability.select=random (the ablation): the same quota per intended label as the
    top-fraction cut, other pairs; any other value is refused naming the key."""
    generate(gen_config(tmp_path / "top", world_cache, classifier_run_dir, server.base_url))
    generate(gen_config(tmp_path / "rnd", world_cache, classifier_run_dir, server.base_url,
                        ["pipeline.variability.select=random"]))
    top, rnd = (read_jsonl(tmp_path / name / "dataset.jsonl") for name in ("top", "rnd"))
    count = lambda recs: Counter(r.meta["intended_label"] for r in recs)
    assert count(top) == count(rnd) and len(top) > 0
    score = lambda recs: sorted(r.meta["scores"]["est_max_variability"] for r in recs)
    assert sum(score(rnd)) < sum(score(top))   # the top cut has the larger estimated max variability
    with pytest.raises(NLIDataError, match="pipeline.variability.select='best'; valid: top, random"):
        generate(gen_config(tmp_path / "bad", world_cache, classifier_run_dir, server.base_url,
                            ["pipeline.variability.select=best"]))


def test_rerun_sends_nothing_and_changes_nothing(tmp_path, world_cache, classifier_run_dir, server):
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url)
    generate(cfg)
    first = (tmp_path / "run" / "dataset.jsonl").read_bytes()
    sent = len(served(tmp_path / "server_log.jsonl"))
    generate(cfg)
    assert (tmp_path / "run" / "dataset.jsonl").read_bytes() == first
    assert len(served(tmp_path / "server_log.jsonl")) == sent


def test_deleted_stage_output_reruns_downstream_only(tmp_path, world_cache, classifier_run_dir, server):
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url)
    generate(cfg)
    first = (tmp_path / "run" / "dataset.jsonl").read_bytes()
    sent = len(served(tmp_path / "server_log.jsonl"))
    (tmp_path / "run" / "stages" / "generate.jsonl").unlink()
    generate(cfg)   # generate re-runs from the LLM cache: no request is sent again
    assert len(served(tmp_path / "server_log.jsonl")) == sent
    assert (tmp_path / "run" / "dataset.jsonl").read_bytes() == first


def test_folder_from_a_different_config_is_refused(tmp_path, world_cache, classifier_run_dir, server):
    generate(gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url))
    other = gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url,
                       ["pipeline.generate.sampling.top_p=0.9"])
    with pytest.raises(NLIDataError, match=r"pipeline\.generate\.sampling\.top_p was 0\.5, now 0\.9"):
        generate(other)
    # run settings that do not change outputs may differ
    generate(gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url,
                        ["generator.runner.concurrency=2"]))


def test_chat_generator_runs_the_same_pipeline(tmp_path, world_cache, classifier_run_dir, server):
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, server.base_url,
                     ["generator=openai_chat", f"generator.base_url={server.base_url}"])
    manifest = generate(cfg)
    assert manifest["generator"]["backend"] == "openai_chat"
    endpoints = Counter(r["endpoint"] for r in served(tmp_path / "server_log.jsonl"))
    assert set(endpoints) == {"/v1/chat/completions"}
    assert manifest["stages"]["parse"]["count_out"] > 0


def test_prompt_over_context_is_dropped_and_counted(tmp_path, world_cache, classifier_run_dir, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    with LocalOpenAIServer(latency_s=0.001, responder=wanli_responder, context_tokens=150) as srv:
        manifest = generate(gen_config(tmp_path / "run", world_cache, classifier_run_dir, srv.base_url,
                                       ["allow_empty=true"]))     # every prompt is over the context: 0 records
    drops = manifest["stages"]["generate"]["drops"]
    assert drops.get("request_failed:context_length", 0) == manifest["stages"]["generate"]["count_in"]


def test_endpoint_down_names_the_url(tmp_path, world_cache, classifier_run_dir, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "test-key")
    url = "http://127.0.0.1:9/v1"
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, url, ["generator.runner.max_retries=1"])
    with pytest.raises(GenerationError, match="127.0.0.1:9"):
        generate(cfg)


def test_missing_api_key_names_the_variable(tmp_path, world_cache, classifier_run_dir, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, "http://127.0.0.1:9/v1")
    with pytest.raises(NLIDataError, match=rf"^generator.api_key_env: the environment variable {KEY_ENV} is not set"):
        generate(cfg)
    assert not (tmp_path / "run").exists()   # refused before the classifier stage wrote anything


def test_unknown_stage_fails_before_any_file(tmp_path, world_cache, classifier_run_dir):
    cfg = gen_config(tmp_path / "run", world_cache, classifier_run_dir, "http://127.0.0.1:9/v1",
                     ["pipeline.stages=[seeds,nonsense]"])
    with pytest.raises(NLIDataError, match="nonsense"):
        generate(cfg)
    assert not (tmp_path / "run").exists()


def test_classifier_folder_without_dynamics_says_what_is_missing(tmp_path, world_cache):
    (tmp_path / "clf").mkdir()
    cfg = gen_config(tmp_path / "run", world_cache, tmp_path / "clf", "http://127.0.0.1:9/v1")
    with open_dict(cfg):
        cfg.pipeline.stages = ["classifier", "seeds"]
    with pytest.raises(NLIDataError, match="train_set.jsonl is missing"):
        generate(cfg)


def test_swapping_generator_changes_nothing_else(tmp_path, world_cache):
    from omegaconf import OmegaConf

    plain = {}
    for gen in ("openai_completions", "openai_chat", "hf_local"):
        cfg = compose_config("generate", [f"generator={gen}"], tmp_path, world_cache)
        plain[gen] = OmegaConf.to_container(cfg, resolve=True)
        assert plain[gen].pop("generator")["kind"] == gen
    assert plain["openai_completions"] == plain["openai_chat"] == plain["hf_local"]


def test_cli_endpoint_down_is_one_clear_line(tmp_path, classifier_run_dir, world_cache):
    import os
    import subprocess
    import sys

    url = "http://127.0.0.1:9/v1"
    cmd = [sys.executable, "-m", "nliforge.generate", "generator=openai_completions", f"generator.base_url={url}",
           f"generator.api_key_env={KEY_ENV}", "generator.runner.max_retries=0", "generator.runner.progress=false",
           f"pipeline.classifier.run_dir={classifier_run_dir}", "pipeline.seeds.max_per_label=2",
           f"paths.cache_dir={world_cache}", f"hydra.run.dir={tmp_path / 'run'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, KEY_ENV: "test-key"}, cwd=tmp_path)
    assert proc.returncode == 1
    assert "error:" in proc.stderr and "127.0.0.1:9" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_drop_reasons_are_ranked_and_long_lists_summarised():
    from nliforge.engine.execute import format_drops, summary_table

    drops = {f"zfilter:f{i}@hypothesis": i for i in range(1, 12)}   # 11 reasons, 66 records
    text = format_drops(drops, limit=3)
    assert text.startswith("zfilter:f11@hypothesis=11, zfilter:f10@hypothesis=10, zfilter:f9@hypothesis=9")
    assert text.endswith("and 8 more reasons (36 records; all in manifest.json)")
    assert format_drops({}) == "-" and format_drops({"b": 1, "a": 1}) == "a=1, b=1"
    table = summary_table({"stages": {"zfilter": {"count_in": 100, "count_out": 34, "drops": drops}}})
    assert "zfilter" in table and "and 3 more reasons (6 records" in table


def test_config_difference_ignores_a_later_added_null_key_only():
    from nliforge.engine.run_folder import first_difference

    old = {"a": 1, "cb": {"every": 5}}
    assert first_difference(old, {"a": 1, "cb": {"every": 5, "n_steps": None}}) is None  # added later, off
    assert first_difference(old, {"a": 1, "cb": {"every": 5, "n_steps": 10}}) == "cb.n_steps"
    assert first_difference(old, {"a": 2, "cb": {"every": 5}}) == "a"
    assert first_difference({"a": 1, "gone": None}, {"a": 1}) is None
    assert first_difference({"a": 1, "gone": 0}, {"a": 1}) == "gone"
