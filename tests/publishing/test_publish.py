"""nliforge-publish: a real long-text demo run folder (local stand-in LLMs) written
in the Hub's dataset layout; the card parses with huggingface_hub and carries the manifest's numbers;
the folder loads back with datasets.load_dataset; the upload goes through huggingface_hub's own client
to the local Hub stand-in (nliforge.testing.hub_server), which must receive the files byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra

from conftest import CONF_DIR, compose_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.labels import LABELS
from nliforge.generate import generate
from nliforge.publish import publish
from nliforge.publishing.card import size_category
from nliforge.publishing.provenance import provenance_markdown
from nliforge.testing.hub_server import LocalHubServer

ROOT = Path(__file__).resolve().parents[2]
STAGES = "[statements,longtext_prompts,longtext_generate,longtext_validate,rubric]"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """A finished long-text demo run: 8 statements, two stand-in writers, validation drops, a judge's cost."""
    root = tmp_path_factory.mktemp("publish")
    cfg = compose_config("generate", ["pipeline=longtext", "generate_experiment@_global_=longtext_demo",
                                      "pipeline.statements.limit=8", f"pipeline.stages={STAGES}"],
                          root / "run", root / "cache")
    generate(cfg)
    return root / "run"


def publish_cfg(run: Path, out: Path, *extra: str):
    """conf/publish.yaml composed as the command line would (publish has no paths group)."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("publish", overrides=[f"run={run}", "repo_id=me/longtext-demo", f"out={out}", *extra])
    GlobalHydra.instance().clear()
    return cfg


def test_size_categories_at_the_bounds():
    assert [size_category(n) for n in (0, 999, 1000, 9999, 10_000, 2_500_000)] == \
        ["n<1K", "n<1K", "1K<n<10K", "1K<n<10K", "10K<n<100K", "1M<n<10M"]


def test_provenance_of_a_hand_made_manifest():
    manifest = {"pipeline": "wanli", "stage_order": ["parse", "heuristics"],
                "stages": {"parse": {"count_in": 40, "count_out": 30, "drops": {"no_hypothesis": 4, "bad": 6}},
                           "heuristics": {"count_in": 30, "count_out": 24, "drops": {"copied_premise": 6}}},
                "generator": {"backend": "openai_completions", "model": "gpt-3"},
                "ledger": {"generate": {"sent": 8, "cached": 2, "prompt_tokens": 1000, "completion_tokens": 300,
                                        "cost": 0.0026916},
                           "judge": {"sent": 3, "cached": 0, "prompt_tokens": 10, "completion_tokens": 5, "cost": 0.001}},
                "final": {"stage": "heuristics", "count": 24},
                "versions": {"nliforge": "0.1.0", "nliforge_commit": "abc123", "python": "3.11.7"}}
    config = {"seed": 3, "world": {"seed": 7}, "hydra": {"seed": 424242},
              "pipeline": {"generate": {"n": 5, "per_request": 5, "sampling": {"temperature": 1.0, "top_p": 0.5}}}}
    review = {"mode": "annotators", "examples": 24, "kept": 20, "kappa": 0.6049, "counts": {"keep": 15, "revised": 5}}
    text = provenance_markdown(manifest, config, review)
    assert "`wanli`: `parse` → `heuristics`" in text
    assert "| parse | 40 | 30 | 75.0% | bad=6, no_hypothesis=4 |" in text          # 30/40, reasons by count
    assert "| heuristics | 30 | 24 | 80.0% | copied_premise=6 |" in text
    assert "| generator | backend=openai_completions, model=gpt-3 |" in text
    assert "| pipeline.generate | temperature=1.0, top_p=0.5, n=5, per_request=5 |" in text
    assert "| seed | 3 |" in text and "| world.seed | 7 |" in text and "424242" not in text   # hydra's own keys are not provenance
    assert "Cohen's kappa between the two annotators: 0.605" in text and "keep=15, revised=5" in text
    assert "| generate | 8 | 2 | 1000 | 300 | 0.0027 |" in text
    assert "| **total** | 11 | 2 | 1010 | 305 | 0.0037 |" in text                  # 0.0026916 + 0.001
    assert "| nliforge | 0.1.0 |" in text and "| git commit | abc123 |" in text


def _card_and_rows(out: Path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(out / "README.md")
    loaded = load_dataset(str(out))
    return card, loaded


def test_dry_run_card_carries_the_manifest_and_the_folder_loads_back(run_dir, tmp_path):
    out = tmp_path / "hub"
    result = publish(publish_cfg(run_dir, out, "card.license=cc-by-4.0"))
    assert result["uploaded"] is False and result["set"] == "final"
    assert sorted(result["files"]) == ["README.md", "data/train-00000-of-00001.parquet"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    records = read_jsonl(run_dir / "dataset.jsonl")
    card, loaded = _card_and_rows(out)
    data = card.data
    assert (data.license, data.language, data.task_categories, data.task_ids) == \
        ("cc-by-4.0", ["en"], ["text-classification"], ["natural-language-inference"])
    assert data.size_categories == ["n<1K"] and data.pretty_name == "longtext-demo"
    assert data.source_datasets == ["original"]
    assert data.configs == [{"config_name": "default",
                             "data_files": [{"split": "train", "path": "data/train-00000-of-00001.parquet"}]}]
    assert data.dataset_info["splits"][0] == {"name": "train", "num_bytes": data.dataset_info["splits"][0]["num_bytes"],
                                              "num_examples": manifest["final"]["count"]}
    label_feature = next(f for f in data.dataset_info["features"] if f["name"] == "label")
    assert label_feature["dtype"]["class_label"]["names"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    # every stage's numbers and drop reasons, the ledger's cost, the version and the commit
    for name, entry in manifest["stages"].items():
        assert f"| {name} | {entry['count_in']} | {entry['count_out']} |" in card.text
        for reason, count in entry["drops"].items():
            assert f"{reason}={count}" in card.text
    assert manifest["stages"]["longtext_validate"]["drops"], "the demo run should drop some texts"
    total = sum(e["cost"] for e in manifest["ledger"].values())
    assert total > 0 and f"{total:.4f} |" in card.text
    assert f"| nliforge | {manifest['versions']['nliforge']} |" in card.text
    assert f"| git commit | {manifest['versions']['nliforge_commit']} |" in card.text
    assert "| pipeline.longtext_generate | max_tokens=600, temperature=0.7" in card.text
    # the same records, label names and intended labels come back
    train = loaded["train"]
    assert list(loaded) == ["train"] and train.features["label"].names == list(LABELS)
    assert len(train) == len(records)
    for rec, row in zip(records, train):
        assert (row["uid"], row["premise"], row["hypothesis"], row["source"]) == \
            (rec.uid, rec.premise, rec.hypothesis, rec.source)
        assert row["label"] is None and rec.label is None
        assert train.features["intended_label"].int2str(row["intended_label"]) == rec.meta["intended_label"]
        assert json.loads(row["meta"]) == rec.meta


def test_reviewed_set_is_published_with_its_agreement(run_dir, tmp_path):
    run = tmp_path / "run"
    subprocess.run(["cp", "-r", str(run_dir), str(run)], check=True)
    records = read_jsonl(run / "dataset.jsonl")[:10]
    labeled = [r.__class__(r.uid, r.premise, r.hypothesis, r.meta["intended_label"], r.source, r.meta) for r in records]
    write_jsonl(labeled, run / "review" / "reviewed.jsonl")
    (run / "review" / "review_report.json").write_text(json.dumps(
        {"mode": "annotators", "examples": 44, "kept": 10, "kappa": 0.4321, "counts": {"keep": 10}}))
    test_split = tmp_path / "held_out.jsonl"
    write_jsonl(labeled[:3], test_split)
    out = tmp_path / "hub"
    result = publish(publish_cfg(run, out, f"splits={{test:{test_split}}}"))
    assert result["set"] == "reviewed" and result["splits"] == {"train": 10, "test": 3}
    card, loaded = _card_and_rows(out)
    assert "Cohen's kappa between the two annotators: 0.432" in card.text and "- kept: 10" in card.text
    assert [s["name"] for s in card.data.dataset_info["splits"]] == ["train", "test"]
    names = loaded["train"].features["label"].names
    assert [names[i] for i in loaded["train"]["label"]] == [r.label for r in labeled]
    assert loaded["test"]["uid"] == [r.uid for r in labeled[:3]]


def test_bad_input_names_the_key_and_leaves_the_folder_as_it_was(run_dir, tmp_path):
    out = tmp_path / "hub"
    publish(publish_cfg(run_dir, out))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(NLIDataError, match=r"repo_id='noslash'"):
        publish(publish_cfg(run_dir, out, "repo_id=noslash"))
    with pytest.raises(NLIDataError, match=r"reviewed\.jsonl: no reviewed set"):
        publish(publish_cfg(run_dir, out, "set=reviewed"))
    with pytest.raises(NLIDataError, match=r"splits\.train: "):
        publish(publish_cfg(run_dir, out, f"splits={{train:{run_dir / 'dataset.jsonl'}}}"))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".hub.")]   # no temporary folder left


def test_upload_while_offline_is_refused_after_the_folder_is_written(run_dir, tmp_path):
    assert os.environ.get("HF_HUB_OFFLINE") == "1"            # set by conftest for the whole suite
    with pytest.raises(NLIDataError, match="HF_HUB_OFFLINE"):
        publish(publish_cfg(run_dir, tmp_path / "hub", "dry_run=false"))
    assert (tmp_path / "hub" / "README.md").is_file()


def test_upload_through_huggingface_hub_to_the_local_hub(run_dir, tmp_path):
    """The command line with dry_run=false: huggingface_hub's create_repo and upload_folder (legacy LFS
    path, HF_HUB_DISABLE_XET=1) against the stand-in; the server must hold the folder's exact bytes."""
    out = tmp_path / "hub"
    env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1", "HF_TOKEN": "hf_test_token",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           "HF_HUB_DISABLE_PROGRESS_BARS": "1", "OMP_NUM_THREADS": "1"}
    with LocalHubServer(token="hf_test_token") as hub:
        cmd = [sys.executable, "-m", "nliforge.publish", f"run={run_dir}", "repo_id=me/longtext-demo",
               f"out={out}", "dry_run=false", f"hub.endpoint={hub.endpoint}"]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        repo = hub.repos[("dataset", "me/longtext-demo")]
        local = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
        assert repo.files == local and repo.private
        assert f"uploaded to {hub.endpoint}/datasets/me/longtext-demo" in done.stdout
        parquet = local["data/train-00000-of-00001.parquet"]
        assert parquet in hub.lfs.values() and local["README.md"] not in hub.lfs.values()   # LFS vs regular
        paths = [p for _, p in hub.requests]
        assert paths[0] == "/api/repos/create" and paths[-1] == "/api/datasets/me/longtext-demo/commit/main"
        assert "/datasets/me/longtext-demo.git/info/lfs/objects/batch" in paths
        assert len(repo.commits) == 1 and repo.commits[0]["summary"] == f"nliforge-publish longtext run {run_dir.name}"
        # publishing again keeps the repo (exists_ok) and commits nothing new
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr[-3000:]
        assert repo.files == local and len(repo.commits) == 1       # unchanged files: no second commit
        assert ("GET", "/api/datasets/me/longtext-demo/revision/main") in hub.requests
