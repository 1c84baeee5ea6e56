"""`nliforge-generate pipeline=zaug` at test size: generators with and without the consistency loss,
sampling through the runner, the confidence filter, z-filtering recipes and the bias report."""

from __future__ import annotations

import json

import pytest

from conftest import compose_config
from nliforge.data.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl
from nliforge.generate import generate

pytestmark = pytest.mark.slow   # two generator trainings and sampling: ~1-2 min on 2 cores
STAGES = ["classifier", "zaug_generator", "zaug_sample", "confidence", "zfilter"]


def zaug_cfg(tmp_path, world_cache, clf, extra=()):
    return compose_config("generate", [
        "pipeline=zaug", f"pipeline.classifier.run_dir={clf}", "pipeline.generator_model.max_steps=40",
        "+pipeline.zaug_generator.variants.mle=0.0", "pipeline.zaug_generator.progress=false",
        "pipeline.zaug_sample.n_samples=40", "pipeline.zaug_sample.progress=false", "pipeline.confidence.tau=0.0",
        "pipeline.zfilter.k=5", "pipeline.zfilter.batch_size=50", *extra], tmp_path / "run", world_cache)


@pytest.fixture(scope="module")
def zaug_run(tmp_path_factory, world_cache, classifier_run_dir):
    tmp = tmp_path_factory.mktemp("zaug")
    manifest = generate(zaug_cfg(tmp, world_cache, classifier_run_dir))
    return tmp / "run", manifest


def test_every_stage_counts_and_the_recipe_keeps_d0(zaug_run, classifier_run_dir):
    run, manifest = zaug_run
    stages = manifest["stages"]
    assert list(stages) == STAGES
    assert stages["zaug_sample"]["count_in"] == 80                       # 40 per variant
    assert stages["confidence"]["count_in"] == stages["zaug_sample"]["count_out"]
    consistency = stages["confidence"]["extra"]["label_consistency"]
    assert set(consistency) == {"ul", "mle"}
    assert all(0.0 <= v["teacher_agrees"] <= 1.0 for v in consistency.values())
    d0 = [r for r in read_jsonl(classifier_run_dir / "train_set.jsonl")]
    out = read_jsonl(run / "dataset.jsonl")
    assert {r.uid for r in d0} <= {r.uid for r in out}                    # Z-Aug = Z(D_G | D0) keeps D0
    generated_ul = [r for r in read_jsonl(run / "stages" / "confidence.jsonl") if r.meta["variant"] == "ul"]
    zf = stages["zfilter"]
    assert zf["count_in"] == len(d0) + len(generated_ul)
    assert zf["count_out"] + sum(zf["drops"].values()) == zf["count_in"]
    assert all(reason.startswith("zfilter:") for reason in zf["drops"])
    assert all(r.label in ("entailment", "neutral", "contradiction") for r in out)


def test_bias_report_in_table_12_form(zaug_run):
    run, manifest = zaug_run
    report = manifest["stages"]["zfilter"]["extra"]
    assert set(report["before"]) == {"entailment", "neutral", "contradiction"}
    assert all(len(feats) <= 5 for feats in report["before"].values())
    text = (run / "zaug_report.md").read_text()
    assert "## contradiction" in text and "| rank | D0 |" in text


def test_rerun_trains_and_samples_nothing_new(zaug_run, world_cache, classifier_run_dir, tmp_path):
    run, manifest = zaug_run
    before = json.loads((run / "manifest.json").read_text())["stages"]
    again = generate(zaug_cfg(run.parent, world_cache, classifier_run_dir))
    assert {k: v["sha256"] for k, v in again["stages"].items()} == {k: v["sha256"] for k, v in before.items()}


def test_unknown_recipe_is_refused(tmp_path, world_cache, classifier_run_dir):
    from nliforge.pipeline.zaug_report import run_recipe

    with pytest.raises(NLIDataError, match="recipe='nope'"):
        run_recipe("nope", [], [])
