"""The long-text demo's explain stage (NLI-Set's last step): a tiny classifier trained on the
stand-ins' intended labels (the unreviewed stand-in) or on a reviewed JSONL, and integrated-gradients
attributions of the first record of each intended label, as HTML and PNG."""

from __future__ import annotations

import json

from conftest import compose_config
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.records import Record
from nliforge.generate import generate
from nliforge.pipelines.longtext.prompts import LABELS
from nliforge.pipelines.longtext.pipeline import explain_examples, explain_training_records


def _rec(uid, intended, label=None):
    return Record(uid, "A premise.", "A hypothesis.", label, "longtext_generated", {"intended_label": intended})


def test_training_records_and_examples(tmp_path):
    recs = [_rec("a", "neutral"), _rec("b", "neutral"), _rec("c", "entailment"), _rec("d", "contradiction")]
    train, source = explain_training_records(recs, None)
    assert source == "intended_label" and [r.label for r in train] == ["neutral", "neutral", "entailment",
                                                                        "contradiction"]
    assert all("unreviewed" in r.meta["label_from"] for r in train)
    reviewed = tmp_path / "reviewed.jsonl"
    write_jsonl([_rec("a", "neutral", "contradiction"), _rec("b", "neutral")], reviewed)
    train, source = explain_training_records(recs, str(reviewed))
    assert source == str(reviewed) and [(r.uid, r.label) for r in train] == [("a", "contradiction")]
    assert [r.uid for r in explain_examples(recs, 3)] == ["c", "a", "d"]        # first of each label
    assert [r.uid for r in explain_examples(recs, 4)] == ["c", "a", "d", "b"]


def test_demo_explain_stage_end_to_end(tmp_path, world_cache):
    run = tmp_path / "run"
    cfg = compose_config("generate", ["pipeline=longtext", "generate_experiment@_global_=longtext_demo",
                                      "pipeline.statements.limit=4", "pipeline.explain.long_inputs=chunk",
                                      "pipeline.explain.max_length=64", "pipeline.explain.epochs=2",
                                      "pipeline.explain.n_steps=8"], run, world_cache)
    assert list(cfg.pipeline.stages)[-1] == "explain"
    manifest = generate(cfg)
    assert manifest["final"]["stage"] == "rubric"                       # a side stage makes no dataset
    entry = manifest["stages"]["explain"]
    assert entry["count_out"] == 3 and entry["extra"]["labels_from"] == "intended_label"
    train = read_jsonl(run / "explain" / "train.jsonl")
    assert train and all(r.label == r.meta["intended_label"] for r in train)
    model = run / "explain" / "classifier" / "model"
    assert (model / "config.json").is_file() and (model / "model.safetensors").is_file()
    assert json.loads((model / "config.json").read_text())["max_position_embeddings"] == 66
    rows = [json.loads(x) for x in (run / "stages" / "explain.jsonl").read_text().splitlines()]
    assert sorted(r["intended_label"] for r in rows) == sorted(LABELS)
    html = (run / rows[0]["html"]).read_text()
    assert "<html" in html.lower() or "<div" in html.lower()
    for row in rows:
        assert row["predicted_label"] in LABELS and abs(sum(row["probs"].values()) - 1) < 1e-3
        assert len(row["pngs"]) >= 2                                    # chunked: one PNG per window
        assert all((run / p).read_bytes()[:4] == b"\x89PNG" for p in row["pngs"])


def test_explain_is_skipped_with_its_reason_when_validation_keeps_too_little(tmp_path, world_cache):
    """A small real LM can break every instruction (SmolLM2-135M kept 0 of 18 passages): with allow_empty=true
    the run still finishes, with the rubric report, and the manifest says why no classifier was trained."""
    run = tmp_path / "run"
    cfg = compose_config("generate", ["pipeline=longtext", "generate_experiment@_global_=longtext_demo",
                                      "pipeline.statements.limit=2", "pipeline.longtext_validate.min_sentences=40",
                                      "pipeline.longtext_validate.max_sentences=50", "allow_empty=true"], run,
                         world_cache)
    manifest = generate(cfg)
    assert manifest["stages"]["longtext_validate"]["count_out"] == 0
    entry = manifest["stages"]["explain"]
    assert entry["count_out"] == 0 and "explain skipped" in entry["extra"]["skipped"]
    assert not (run / "explain" / "classifier").exists()
