"""`pipeline.classifier.reuse`: a classifier trained once is copied, bit for bit, into a later run with the
same config, world data, code and environment; anything else trains (engine/classifier_reuse.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.engine.classifier_reuse import source_digest, world_only
from nliforge.generate import generate

ARGS = ["experiment=demo", "pipeline=wanli", "pipeline.stages=[classifier]", "world.n_train=300", "world.n_dev=60",
        "world.n_test=60", "world.n_challenge=60", "model.max_epochs=2", "trainer.enable_progress_bar=false",
        "num_threads=1"]


def classifier_row(run: Path) -> dict:
    return json.loads((run / "stages" / "classifier.jsonl").read_text().splitlines()[0])


def files(folder: Path) -> dict[str, bytes]:
    """Every file of a classifier folder but the logs and config (they name the folder) and the lock, by
    relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix not in (".log", ".yaml") and p.name != ".run.lock"}


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


# -- integrity records: a damaged or partial entry is never copied; it is rebuilt ---------------------------
EXPECT = {"epochs": 2, "epoch_checkpoints": True}


def fake_classifier(folder: Path) -> Path:
    """The files of a two-epoch classifier run folder (contents made up: the record checks bytes, not meaning)."""
    for name in ("model/model.safetensors", "model/config.json", "train_set.jsonl", "metrics.csv", "config.yaml",
                 "dynamics/epoch_000.parquet", "dynamics/epoch_001.parquet", "checkpoints/epoch_00.ckpt",
                 "checkpoints/epoch_01.ckpt", "checkpoints/last.ckpt", ".run.lock"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(name.encode() * 50)
    return folder


def test_a_whole_entry_is_copied_without_its_record(tmp_path):
    from nliforge.engine.classifier_reuse import MANIFEST, copy_kept, keep

    keep(fake_classifier(tmp_path / "trained"), tmp_path / "kept", "k", EXPECT)
    record = json.loads((tmp_path / "kept" / "k" / MANIFEST).read_text())
    assert len(record["files"]) == 10 and ".run.lock" not in record["files"]   # every file but the lock
    assert copy_kept(tmp_path / "kept", "k", tmp_path / "run", EXPECT)
    assert files(tmp_path / "run") == files(tmp_path / "trained") and not (tmp_path / "run" / MANIFEST).exists()


def damage(entry: Path, how: str) -> None:
    from nliforge.engine.classifier_reuse import MANIFEST

    if how == "bytes":            # the probe: overwritten bytes of the kept model
        with open(entry / "model" / "model.safetensors", "r+b") as fh:
            fh.seek(10)
            fh.write(b"\xff" * 20)
    elif how == "epoch":          # the probe: one epoch's dynamics and checkpoint deleted
        (entry / "dynamics" / "epoch_001.parquet").unlink()
        (entry / "checkpoints" / "epoch_01.ckpt").unlink()
    elif how == "epoch+record":   # ... and the record edited to match
        (entry / "dynamics" / "epoch_001.parquet").unlink()
        record = json.loads((entry / MANIFEST).read_text())
        del record["files"]["dynamics/epoch_001.parquet"]
        (entry / MANIFEST).write_text(json.dumps(record))
    elif how == "extra":
        (entry / "dynamics" / "epoch_002.parquet").write_bytes(b"x")
    elif how == "no record":      # an entry an older nliforge kept, or one cut short
        (entry / MANIFEST).unlink()


@pytest.mark.parametrize("how", ["bytes", "epoch", "epoch+record", "extra", "no record"])
def test_a_damaged_or_partial_entry_is_never_copied_and_is_rebuilt(tmp_path, caplog, how):
    from nliforge.engine.classifier_reuse import copy_kept, keep

    trained = fake_classifier(tmp_path / "trained")
    keep(trained, tmp_path / "kept", "k", EXPECT)
    entry = tmp_path / "kept" / "k"
    damage(entry, how)
    assert not copy_kept(tmp_path / "kept", "k", tmp_path / "run", EXPECT)
    assert not (tmp_path / "run").exists()                      # nothing copied in
    assert f"kept entry {entry} is not used" in caplog.text     # the warning names the entry, not the run's copy
    keep(trained, tmp_path / "kept", "k", EXPECT)               # what the stage does after training again
    assert copy_kept(tmp_path / "kept", "k", tmp_path / "run", EXPECT)   # so the next run does not fail the same way
    assert files(tmp_path / "run") == files(trained)


def test_an_entry_kept_for_fewer_epochs_than_the_config_trains_is_not_used(tmp_path):
    from nliforge.engine.classifier_reuse import copy_kept, entry_problem, keep

    keep(fake_classifier(tmp_path / "trained"), tmp_path / "kept", "k", EXPECT)
    three = {"epochs": 3, "epoch_checkpoints": True}
    assert "this config needs" in entry_problem(tmp_path / "kept" / "k", three)
    assert not copy_kept(tmp_path / "kept", "k", tmp_path / "run", three)


def test_a_classifier_lacking_an_epoch_is_not_kept(tmp_path):
    from nliforge.engine.classifier_reuse import keep

    trained = fake_classifier(tmp_path / "trained")
    (trained / "checkpoints" / "epoch_01.ckpt").unlink()
    with pytest.raises(NLIDataError, match="lacks epoch 1's checkpoint"):
        keep(trained, tmp_path / "kept", "k", EXPECT)
    assert not (tmp_path / "kept" / "k").exists()


def test_a_copy_that_differs_from_the_record_names_the_entry_and_leaves_no_folder(tmp_path, monkeypatch):
    import shutil as sh

    from nliforge.engine import classifier_reuse

    keep_dir = tmp_path / "kept"
    classifier_reuse.keep(fake_classifier(tmp_path / "trained"), keep_dir, "k", EXPECT)
    real_copy = sh.copytree

    def torn_copy(src, dst, **kw):   # the entry changes under the copy (another process, a failing disk)
        real_copy(src, dst, **kw)
        (Path(dst) / "metrics.csv").write_bytes(b"torn")
    monkeypatch.setattr(classifier_reuse, "shutil", SimpleNamespace(copytree=torn_copy,
                                                                    ignore_patterns=sh.ignore_patterns))
    with pytest.raises(NLIDataError, match=f"kept entry {keep_dir / 'k'} changed while it was copied"):
        classifier_reuse.copy_kept(keep_dir, "k", tmp_path / "run", EXPECT)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_tampered_or_partial_kept_classifier_is_trained_again_and_the_next_run_reuses_it(tmp_path, world_cache):
    keep = tmp_path / "kept"
    run = lambda name: generate(compose_config(   # noqa: E731
        "generate", [*ARGS, f"pipeline.classifier.reuse={keep}"], tmp_path / name, world_cache))
    run("first")
    [entry] = list(keep.iterdir())
    # a retrained classifier has the same weights and dynamics (its checkpoints also record their folder)
    learned = lambda run: {k: v for k, v in files(tmp_path / run / "classifier").items()   # noqa: E731
                           if k == "model/model.safetensors" or k.startswith("dynamics/epoch_")}
    first = learned("first")
    assert len(first) == 3
    for n, how in enumerate(("bytes", "epoch")):
        damage(entry, how)
        run(f"damaged{n}")
        row = classifier_row(tmp_path / f"damaged{n}")
        assert row["reused"] is False and row["epochs"] == 2            # trained again, both epochs
        assert learned(f"damaged{n}") == first
        run(f"after{n}")                                                 # the rebuilt entry is used
        assert classifier_row(tmp_path / f"after{n}")["reused"] is True
        assert files(tmp_path / f"after{n}" / "classifier") == files(tmp_path / f"damaged{n}" / "classifier")
