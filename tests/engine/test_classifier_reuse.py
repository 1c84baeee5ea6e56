"""`pipeline.classifier.reuse`: a classifier trained once is copied, bit for bit, into a later run with the
same config, world data, code and environment; anything else trains (engine/classifier_reuse.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import compose_config
from nliforge.engine.classifier_reuse import source_digest, world_only
from nliforge.generate import generate

ARGS = ["experiment=demo", "pipeline=wanli", "pipeline.stages=[classifier]", "world.n_train=300", "world.n_dev=60",
        "world.n_test=60", "world.n_challenge=60", "model.max_epochs=2", "trainer.enable_progress_bar=false",
        "num_threads=1"]


def classifier_row(run: Path) -> dict:
    return json.loads((run / "stages" / "classifier.jsonl").read_text().splitlines()[0])


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a classifier folder but the logs and config (they name the folder), by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix not in (".log", ".yaml")}


def test_the_same_classifier_is_copied_and_a_changed_one_trained(tmp_path, world_cache):
    keep = tmp_path / "kept"
    run = lambda name, *extra: generate(compose_config(   # noqa: E731
        "generate", [*ARGS, f"pipeline.classifier.reuse={keep}", *extra], tmp_path / name, world_cache))
    run("first")
    assert classifier_row(tmp_path / "first")["reused"] is False and len(list(keep.iterdir())) == 1
    run("second", "task_name=another")                      # names and paths change no weight
    assert classifier_row(tmp_path / "second")["reused"] is True
    first, second = files(tmp_path / "first" / "classifier"), files(tmp_path / "second" / "classifier")
    assert "model/model.safetensors" in first and first == second
    run("third", "seed=1")                                  # another seed is another classifier
    assert classifier_row(tmp_path / "third")["reused"] is False and len(list(keep.iterdir())) == 2
    assert files(tmp_path / "third" / "classifier")["model/model.safetensors"] != first["model/model.safetensors"]


def test_the_demos_keep_theirs_in_the_cache_folder_and_null_keeps_none(tmp_path, world_cache):
    cache = tmp_path / "cache"
    generate(compose_config("generate", [*ARGS, "pipeline.classifier.reuse=null"], tmp_path / "off", cache))
    assert classifier_row(tmp_path / "off")["reused"] is False and not (cache / "classifiers").exists()
    generate(compose_config("generate", ARGS, tmp_path / "demo", cache))   # the demo's setting
    assert len(list((cache / "classifiers").iterdir())) == 1


def test_only_world_data_is_kept():
    world = {"name": "w", "loader": "world", "split": "train"}
    assert world_only({"data": {"train_sets": {"w": world}}, "suite": {"sets": {"t": world}}})
    from_file = {"name": "f", "loader": "jsonl", "path": "pairs.jsonl"}
    assert not world_only({"data": {"train_sets": {"f": from_file}}, "suite": {"sets": {"t": world}}})
    assert not world_only({"data": {"train_sets": {"w": world}}, "suite": {"sets": {"m": {"loader": "file"}}}})
    assert not world_only({"data": {"train_sets": {}}, "suite": {"sets": {}}})


def test_the_source_digest_changes_with_a_byte_of_code(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "b.yaml").write_text("k: v\n")
    before = source_digest.__wrapped__(tmp_path)
    (tmp_path / "notes.txt").write_text("not code")
    assert source_digest.__wrapped__(tmp_path) == before
    (tmp_path / "conf" / "b.yaml").write_text("k: w\n")
    assert source_digest.__wrapped__(tmp_path) != before
