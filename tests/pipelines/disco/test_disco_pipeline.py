"""`nliforge-generate pipeline=disco` over a real run folder: the tiny classifier as task model and
teacher, the local OpenAI-compatible server as the LLM (masked and insertion forms), every stage's
rows, Δ recomputed by hand, the augmentation sets and their registration, the report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from omegaconf import OmegaConf

from conftest import compose_config
from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import LABEL2ID
from nliforge.data.records import Record
from nliforge.generate import generate
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.disco.stand_in import disco_responder

KEY_ENV = "NLIFORGE_TEST_API_KEY"
STAGES = ["classifier", "disco_teacher", "disco_source", "spans", "disco_prompts", "disco_generate", "splice",
          "disco_heuristics", "teacher_filter", "augment", "disco_report"]


def disco_cfg(run_dir: Path, cache: Path, clf: Path, base_url: str, extra=()):
    return compose_config("generate", [
        "pipeline=disco", "generator=openai_completions", f"generator.base_url={base_url}",
        f"generator.api_key_env={KEY_ENV}", "generator.model=stand-in", "generator.runner.progress=false",
        "generator.runner.concurrency=8", "generator.runner.requests_per_minute=null",
        "generator.runner.tokens_per_minute=null", f"pipeline.classifier.run_dir={clf}",
        f"pipeline.disco_teacher.run_dirs=[{clf}]", "pipeline.disco_source.max_per_label=6",
        "pipeline.teacher_filter.threshold=0.0", f"pipeline.augment.register_dir={run_dir.parent / 'conf'}",
        "pipeline.augment.name=disco_t", *extra], run_dir, cache)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import os

    os.environ[KEY_ENV] = "test-key"
    log = tmp_path_factory.mktemp("server") / "log.jsonl"
    with LocalOpenAIServer(latency_s=0.001, responder=disco_responder, log_path=log) as srv:
        yield srv


@pytest.fixture(scope="module")
def disco_run(tmp_path_factory, world_cache, classifier_run_dir, server):
    run = tmp_path_factory.mktemp("disco") / "run"
    manifest = generate(disco_cfg(run, world_cache, classifier_run_dir, server.base_url))
    return run, manifest


def rows(run: Path, stage: str) -> list[dict]:
    return [json.loads(x) for x in (run / "stages" / f"{stage}.jsonl").read_text().splitlines()]


def test_stages_chain_and_every_drop_has_a_reason(disco_run):
    run, manifest = disco_run
    stages = manifest["stages"]
    assert list(stages) == STAGES
    assert stages["disco_source"]["count_out"] <= 18
    spans, prompts = rows(run, "spans"), rows(run, "disco_prompts")
    assert len(prompts) == 2 * len(spans) > 0                       # one prompt per (span, other label)
    assert Counter(p["direction"] for p in prompts).keys() <= {"E2C", "E2N", "N2C", "N2E", "C2N", "C2E"}
    for a, b in [("disco_prompts", "disco_generate"), ("disco_generate", "splice"), ("splice", "disco_heuristics"),
                 ("disco_heuristics", "teacher_filter")]:
        assert stages[b]["count_in"] == stages[a]["count_out"], b
    for name in ("splice", "disco_heuristics", "teacher_filter"):
        entry = stages[name]
        assert entry["count_in"] == entry["count_out"] + sum(entry["drops"].values()), name
    rules = stages["disco_heuristics"]["extra"]["rule_counts"]
    assert {f"heuristic:{k}": v for k, v in rules.items()} == stages["disco_heuristics"]["drops"]
    # the stand-in's faults (gap left in, negation shortcut, conclusion copied) are caught; which of them
    # a small run draws depends on the sources the data map picks
    assert sum(rules.get(k, 0) for k in ("leftover_gap", "negation_word", "copied_sentence")) > 0


def test_spans_and_splices_use_offsets(disco_run):
    run, _ = disco_run
    source = {r["uid"]: r for r in rows(run, "disco_source")}
    for sp in rows(run, "spans"):
        assert source[sp["source_uid"]]["premise"][sp["start"]:sp["end"]] == sp["text"]
    for r in rows(run, "splice"):
        m = r["meta"]
        start, end = m["span"]
        before, after = m["original_premise"][:start].rstrip(), m["original_premise"][end:].lstrip()
        assert r["premise"].startswith(before) and r["premise"].endswith(after)
        assert m["filler"] in r["premise"] and r["label"] != m["original_label"]
        assert m["direction"] == f"{m['original_label'][0].upper()}2{r['label'][0].upper()}"


def test_delta_is_the_teachers_probability_shift(disco_run, classifier_run_dir):
    from nliforge.models.predict import predict_probs

    run, _ = disco_run
    kept = rows(run, "teacher_filter")
    assert kept and all(r["meta"]["scores"]["delta"] > 0.0 for r in kept)
    r = kept[0]
    new = predict_probs(classifier_run_dir, [Record("n", r["premise"], r["hypothesis"], None, "", {})], progress=False)[0]
    old = predict_probs(classifier_run_dir, [Record("o", r["meta"]["original_premise"], r["hypothesis"], None, "", {})],
                        progress=False)[0]
    t = LABEL2ID[r["label"]]
    assert r["meta"]["scores"]["delta"] == pytest.approx(float(new[t] - old[t]), abs=1e-5)
    dropped = {d["uid"] for d in map(json.loads, (run / "stages" / "teacher_filter.drops.jsonl").read_text().splitlines())}
    assert all(d.startswith("disco-") for d in dropped)


def test_augmentation_sets_and_registration(disco_run, classifier_run_dir):
    from nliforge.data.combine import pair_key
    from nliforge.data.registry import load_set

    run, manifest = disco_run
    base = read_jsonl(classifier_run_dir / "train_set.jsonl")
    subset, cf = read_jsonl(run / "augment" / "subset.jsonl"), read_jsonl(run / "augment" / "counterfactuals.jsonl")
    augmented, train = read_jsonl(run / "augment" / "augmented.jsonl"), read_jsonl(run / "augment" / "train.jsonl")
    keys = lambda recs: {pair_key(r) for r in recs}   # noqa: E731
    assert keys(augmented) == keys(subset) | keys(cf)
    assert keys(train) == keys(base) | keys(augmented) and len(train) == len(keys(train))
    assert [r.uid for r in cf] == [r.uid for r in read_jsonl(run / "dataset.jsonl")]
    registered = run.parent / "conf" / "data" / "train_sets" / "disco_t_train.yaml"
    spec = OmegaConf.load(registered)["disco_t_train"]
    loaded = load_set(OmegaConf.to_container(spec), "data.train_sets.disco_t_train", {}, str(run.parent / "cache"))
    assert len(loaded) == len(train)


def test_report_has_every_direction_and_the_metrics(disco_run):
    run, _ = disco_run
    report = json.loads((run / "disco_report.json").read_text())
    assert set(report["directions"]) == {"E2C", "E2N", "N2C", "N2E", "C2N", "C2E", "avg"}
    assert "teacher argmax" in report["review_source"]
    avg = report["directions"]["avg"]
    assert avg["counts"]["teacher_filter"] == len(rows(run, "teacher_filter"))
    assert avg["lfr"] is not None and 0.0 <= avg["lfr"] <= avg["slfr"] <= 1.0   # an exact flip is also a flip
    assert any(d["self_bleu"] is not None for d in report["directions"].values())
    assert "| E2C |" in (run / "disco_report.md").read_text()


def test_insertion_form_sends_prefix_and_suffix(tmp_path, world_cache, classifier_run_dir, server):
    run = tmp_path / "run"
    cfg = disco_cfg(run, world_cache, classifier_run_dir, server.base_url, [
        "pipeline.disco_prompts.form=insertion", "pipeline.disco_source.max_per_label=2",
        "pipeline.stages=[classifier,disco_source,spans,disco_prompts,disco_generate,splice]"])
    manifest = generate(cfg)
    prompts = rows(run, "disco_prompts")
    assert manifest["stages"]["disco_prompts"]["extra"]["form"] == "insertion"
    for p in prompts:
        assert p["suffix"].startswith(p["premise"][p["end"]:]) and p["prompt"].endswith(p["premise"][:p["start"]])
        assert "[blank]" not in p["prompt"]


def test_demonstrations_from_an_earlier_run_are_the_most_similar(disco_run, tmp_path, world_cache,
                                                                classifier_run_dir, server):
    first, _ = disco_run
    run = tmp_path / "run"
    cfg = disco_cfg(run, world_cache, classifier_run_dir, server.base_url, [
        f"pipeline.disco_prompts.demonstrations.path={first / 'dataset.jsonl'}",
        "pipeline.disco_prompts.demonstrations.k=2", "pipeline.stages=[classifier,disco_source,spans,disco_prompts]"])
    generate(cfg)
    prompts = rows(run, "disco_prompts")
    assert all(len(p["demo_fillers"]) == 2 for p in prompts)
    assert all(p["prompt"].count("Phrase:") == 3 for p in prompts)
    assert all(f"Phrase: {p['demo_fillers'][-1]}" in p["prompt"] for p in prompts)


def test_probability_shift_by_hand():
    from nliforge.pipelines.disco.teacher_filter import probability_shift

    p_new = np.array([[0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    p_orig = np.array([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    # row 0 target contradiction: 0.7 - 0.1 = 0.6; row 1 target entailment: 0.5 - 0.2 = 0.3
    assert probability_shift(p_new, p_orig, ["contradiction", "entailment"]) == pytest.approx([0.6, 0.3])


def test_augmentation_protocol_relations():
    from nliforge.data.combine import augmentation_sets

    r = lambda u, p, h, lab: Record(u, p, h, lab, "t", {})   # noqa: E731
    base = [r("b1", "A man sleeps.", "A man rests.", "entailment"), r("b2", "A dog runs.", "A cat runs.", "contradiction")]
    subset = [base[1]]
    cf = [r("c1", "A cat runs.", "A cat runs.", "entailment"), r("c2", "A dog  runs.", "A cat runs.", "contradiction")]
    sets = augmentation_sets(base, subset, cf)
    assert [x.uid for x in sets["augmented"]] == ["b2", "c1"]            # c2 duplicates b2 up to whitespace
    assert [x.uid for x in sets["train"]] == ["b1", "b2", "c1"]          # D^b ∪ D^a, no duplicates


def test_masked_form_for_backends_without_a_suffix():
    from nliforge.generation.backends import supports_suffix

    assert supports_suffix({"kind": "openai_completions"})
    assert not supports_suffix({"kind": "hf_local"}) and not supports_suffix({"kind": "openai_chat"})


def test_completions_backend_sends_the_suffix(monkeypatch):
    import asyncio

    from nliforge.generation.backends.openai_api import OpenAICompletions
    from nliforge.generation.types import GenerationRequest, Sampling

    echo = lambda src, i, seed, sampling: "<" + str(sampling.get("suffix")) + ">"   # noqa: E731
    monkeypatch.setenv(KEY_ENV, "k")
    with LocalOpenAIServer(responder=echo) as srv:
        backend = OpenAICompletions("m", base_url=srv.base_url, api_key_env=KEY_ENV)

        async def ask():
            try:
                return await backend.agenerate(GenerationRequest("u", "A man ", Sampling(stop=()), suffix=" sleeps."))
            finally:
                await backend.aclose()

        assert asyncio.run(ask()).texts == ["< sleeps.>"]


def test_held_out_source_set_and_its_refusal_without_select_all(tmp_path, world_cache, classifier_run_dir, server):
    from conftest import SMALL_WORLD
    from nliforge.errors import NLIDataError

    stages = "pipeline.stages=[classifier,disco_source,spans]"
    cfg = disco_cfg(tmp_path / "run", world_cache, classifier_run_dir, server.base_url,
                    [*SMALL_WORLD, stages, "pipeline.disco_source.set=synthetic_test", "pipeline.disco_source.select=all",
                     "pipeline.disco_source.max_per_label=null"])
    manifest = generate(cfg)
    assert manifest["stages"]["disco_source"]["count_out"] == 300          # every test pair of the small world
    assert all(r["uid"].startswith("synthetic-test-") for r in rows(tmp_path / "run", "disco_source"))
    bad = disco_cfg(tmp_path / "run2", world_cache, classifier_run_dir, server.base_url,
                    [*SMALL_WORLD, stages, "pipeline.disco_source.set=synthetic_test"])
    with pytest.raises(NLIDataError, match="select=all"):
        generate(bad)


def test_rerun_sends_nothing_and_changes_nothing(disco_run, world_cache, classifier_run_dir, server):
    run, _ = disco_run
    first = (run / "dataset.jsonl").read_bytes()
    before = server.stats.copy()
    again = generate(disco_cfg(run, world_cache, classifier_run_dir, server.base_url))
    assert (run / "dataset.jsonl").read_bytes() == first
    assert server.stats == before                                      # no request reached the server
    assert again["final"]["count"] == len(first.splitlines())
