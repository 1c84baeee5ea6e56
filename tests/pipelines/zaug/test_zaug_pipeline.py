"""`nliforge-generate pipeline=zaug` at test size: generators with and without the consistency loss,
sampling through the runner, the confidence filter, z-filtering recipes and the bias report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.errors import NLIDataError
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
    ledger = manifest["ledger"]                                           # the sampling stage's ledger, per generator
    assert {k: v["sent"] + v["cached"] for k, v in ledger.items()} == {"zaug_sample:ul": 40, "zaug_sample:mle": 40}


def test_bias_report_in_table_12_form(zaug_run):
    run, manifest = zaug_run
    report = manifest["stages"]["zfilter"]["extra"]
    assert set(report["before"]) == {"entailment", "neutral", "contradiction"}
    assert all(len(feats) <= 5 for feats in report["before"].values())
    text = (run / "zaug_report.md").read_text()
    assert "## contradiction" in text and "| rank | D0 |" in text
    assert "significant after" in text and report["significance"]["threshold_after"] > 2
    assert sorted(p.name for p in (run / "zaug_plots").glob("*.png")) == [
        "bias_contradiction.png", "bias_entailment.png", "bias_neutral.png"]
    # D0's biases followed into the `ul` samples: every parsed one, and those above τ (= 0 here: all)
    assert report["sizes"]["samples"] == manifest["stages"]["confidence"]["extra"]["label_consistency"]["ul"]["samples"]
    for label, rows in report["generated_rates"].items():
        assert [r[0] for r in rows] == [name for name, _ in report["before"][label]]
        for _, in_d0, in_samples, above_tau in rows:
            assert in_d0[0] > 0 and 0 <= in_d0[1] <= 1                       # D0's own top features are seen
            assert above_tau[0] <= in_samples[0]                              # above τ is a subset
    assert "| feature | D0 | every parsed sample | above τ (filtered) |" in text


def test_rerun_trains_and_samples_nothing_new(zaug_run, world_cache, classifier_run_dir, tmp_path):
    run, manifest = zaug_run
    before = json.loads((run / "manifest.json").read_text())["stages"]
    again = generate(zaug_cfg(run.parent, world_cache, classifier_run_dir))
    assert {k: v["sha256"] for k, v in again["stages"].items()} == {k: v["sha256"] for k, v in before.items()}


def test_unknown_recipe_is_refused(tmp_path, world_cache, classifier_run_dir):
    from nliforge.filtering.zfilter import run_recipe

    with pytest.raises(NLIDataError, match="recipe='nope'"):
        run_recipe("nope", [], [])


def _mean_p_of_biased_tokens(model_dir, rejected) -> float:
    """Mean probability of the tokens L_UL pushes down (the tokens of its B(l) features) in Z⁻ instances
    (probability, not log: −log(1 − p) pushes hardest on the tokens the model finds likely)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from nliforge.models.generator_train import to_examples
    from nliforge.models.nli_generator import collate, encode_examples

    tok, model = AutoTokenizer.from_pretrained(model_dir), AutoModelForCausalLM.from_pretrained(model_dir).eval()
    batch = collate(encode_examples(tok, to_examples([], rejected), 0, 128), tok.pad_token_id)
    with torch.no_grad():
        logp = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.log_softmax(-1)
    targets = batch["targets"].clamp(min=0)
    picked = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    mask = batch["biased"].bool() & (batch["targets"] >= 0)
    return float(picked[mask].exp().mean())


def _rows(path) -> dict:
    return {row["uid"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_debias_stage_fine_tunes_g_into_g_star(tmp_path, world_cache, classifier_run_dir):
    """§4.1: with `zaug_debias` in the stages, 'ul' is fine-tuned from G on Z(D0) + Z⁻(D0) and sampled
    from; 'mle' passes through. G* gives the biased tokens of Z⁻ instances lower probability than G."""
    from dataclasses import replace

    from nliforge.filtering.zfilter import z_filter
    from nliforge.models.causal_lm import META_NAME
    from nliforge.models.generator_train import BIASED_META_KEY, train_generator

    run = tmp_path / "run"
    stages = ["classifier", "zaug_generator", "zaug_debias", "zaug_sample", "confidence", "zfilter"]
    cfg = zaug_cfg(tmp_path, world_cache, classifier_run_dir, [
        f"pipeline.stages=[{','.join(stages)}]", "pipeline.zaug_debias.k=5", "pipeline.zaug_debias.batch_size=50",
        "pipeline.zaug_debias.progress=false"])
    manifest = generate(cfg)
    assert list(manifest["stages"]) == STAGES[:2] + ["zaug_debias"] + STAGES[2:]
    rows, generators = _rows(run / "stages" / "zaug_debias.jsonl"), _rows(run / "stages" / "zaug_generator.jsonl")
    assert rows["mle"]["path"] == generators["mle"]["path"] and not rows["mle"]["debiased"]
    assert rows["ul"]["debiased"] and rows["ul"]["path"].endswith("generator_ul_debiased")
    d0 = read_jsonl(classifier_run_dir / "train_set.jsonl")
    res = z_filter(d0, k=5, batch_size=50)
    assert rows["ul"]["n_z"] == len(res.accepted) and rows["ul"]["n_z_minus"] == len(res.rejected) > 0
    meta = json.loads((Path(rows["ul"]["path"]) / META_NAME).read_text())
    assert meta["settings"]["init"] == generators["ul"]["path"] and meta["n_rejected"] == len(res.rejected)
    rejected = [replace(r, meta={**r.meta, BIASED_META_KEY: r.meta["zfilter"]["features"]}) for r in res.rejected]
    # control: the same fine-tuning with α = 0 (Z(D0) only); the unlikelihood term is what lowers them
    control = train_generator(res.accepted, tmp_path / "control", {**meta["settings"], "alpha": 0.0},
                              rejected=rejected)
    with_ul = _mean_p_of_biased_tokens(rows["ul"]["path"], rejected)
    without = _mean_p_of_biased_tokens(control, rejected)
    print(f"mean p of biased tokens: G* {with_ul:.4f}, α = 0 control {without:.4f}, "
          f"G {_mean_p_of_biased_tokens(generators['ul']['path'], rejected):.4f}")
    assert with_ul < 0.8 * without, (with_ul, without)
    # sampling re-ran from the G* rows
    assert manifest["stages"]["zaug_sample"]["inputs"]["zaug_debias"] == manifest["stages"]["zaug_debias"]["sha256"]
