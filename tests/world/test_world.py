"""The synthetic NLI world: determinism, coverage, planted artifact strengths, challenge splits."""

from __future__ import annotations

import collections
import math

import pytest

from nliforge.data.jsonl import read_jsonl
from nliforge.data.labels import LABELS
from nliforge.world import (
    ARTIFACTS,
    PHENOMENA,
    SPLITS,
    WorldConfig,
    build_world,
    ensure_world,
    generate_split,
    measure_artifact,
    read_manifest,
)
from nliforge.world.generator import coverage

SMALL = dict(n_train=600, n_dev=90, n_test=150, n_challenge=90)
STRENGTHS = {"negation": 0.8, "overlap": 0.6, "length": 1.0}


@pytest.fixture(scope="module")
def big() -> WorldConfig:
    return WorldConfig(seed=3, n_train=6000, strengths=STRENGTHS)


@pytest.fixture(scope="module")
def biased(big) -> list:
    return generate_split(big, "train_biased")


@pytest.fixture(scope="module")
def unbiased(big) -> list:
    return generate_split(big, "train")


def _bytes(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_same_config_same_bytes_other_seed_differs(tmp_path):
    cfg = WorldConfig(**SMALL, n_extra=60)   # train_biased_extra is empty (the same bytes) unless n_extra > 0
    paths = build_world(cfg, tmp_path / "a")
    build_world(cfg, tmp_path / "b")
    assert set(paths) == set(SPLITS) and all(p.is_file() for p in paths.values())
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b")
    build_world(WorldConfig(seed=1, **SMALL, n_extra=60), tmp_path / "c")
    other = _bytes(tmp_path / "c")
    assert all(other[name] != data for name, data in _bytes(tmp_path / "a").items())


def test_build_leaves_no_temp_and_manifest_checks_out(tmp_path):
    cfg = WorldConfig(**SMALL)
    build_world(cfg, tmp_path / "w")
    build_world(cfg, tmp_path / "w")  # rebuilding over an existing world replaces it
    assert [p.name for p in tmp_path.iterdir()] == ["w"]
    manifest = read_manifest(tmp_path / "w")
    assert manifest["config"] == cfg.to_dict() and manifest["digest"] == cfg.digest()
    for split in SPLITS:
        records = read_jsonl(tmp_path / "w" / f"{split}.jsonl")
        assert manifest["splits"][split]["n"] == len(records) == cfg.split_size(split)
        assert manifest["splits"][split]["artifacts"]["negation"] == measure_artifact(records, "negation")


def test_ensure_world_builds_once(tmp_path):
    cfg = WorldConfig(**SMALL)
    folder = ensure_world(cfg, tmp_path)
    assert folder.name == f"world-{cfg.digest()}"
    stamp = (folder / "train.jsonl").stat().st_mtime_ns
    assert ensure_world(cfg, tmp_path) == folder
    assert (folder / "train.jsonl").stat().st_mtime_ns == stamp


def test_records_shape(biased):
    for i, rec in enumerate(biased[:200]):
        assert rec.uid == f"synthetic-train_biased-{i:06d}" and rec.source == "synthetic"
        assert rec.label in LABELS
        assert rec.premise.endswith(".") and rec.hypothesis.endswith(".")
        assert not rec.premise[0].islower() and not rec.hypothesis[0].islower()
        assert set(rec.meta) == {"phenomenon", "split", "features"} and rec.meta["split"] == "train_biased"


def test_phenomena_and_labels_covered(unbiased):
    assert len(PHENOMENA) >= 12
    counts = collections.Counter((r.meta["phenomenon"], r.label) for r in unbiased)
    for phen in PHENOMENA:
        per_label = [counts[(phen, lab)] for lab in LABELS]
        assert min(per_label) > 0, (phen, per_label)
        assert max(per_label) / sum(per_label) < 0.5, (phen, per_label)  # mix is not a label cue
    labels = collections.Counter(r.label for r in unbiased)
    assert max(labels.values()) - min(labels.values()) <= 1


def test_every_feature_cell_has_two_phenomena():
    for cell, phenomena in coverage(trials=15).items():
        assert len(phenomena) >= 2, (cell, phenomena)


def _within_3se(m: dict, expected: float) -> bool:
    se = math.sqrt(expected * (1 - expected) / m["n_feature"])
    return abs(m["p_target_given_feature"] - expected) <= 3 * se + 1e-9


@pytest.mark.parametrize("name", list(ARTIFACTS))
def test_biased_strengths_as_configured(biased, name):
    m = measure_artifact(biased, name)
    assert _within_3se(m, 1 / 3 + 2 * STRENGTHS[name] / 3), m
    assert abs(m["p_feature"] - 0.25) < 0.03 and abs(m["p_target"] - 1 / 3) < 0.01


@pytest.mark.parametrize("name", list(ARTIFACTS))
def test_unbiased_train_has_no_artifact(unbiased, name):
    m = measure_artifact(unbiased, name)
    assert _within_3se(m, 1 / 3), m
    assert abs(m["p_feature"] - 0.25) < 0.03


@pytest.mark.parametrize("name", list(ARTIFACTS))
def test_challenge_split_turns_artifact_against_its_label(big, name):
    records = generate_split(big, f"challenge_{name}")
    art = ARTIFACTS[name]
    assert len(records) == big.n_challenge
    assert all(art.present(r.premise, r.hypothesis) for r in records)
    labels = collections.Counter(r.label for r in records)
    assert art.target_label not in labels and len(labels) == 2
    assert abs(labels.most_common()[0][1] - labels.most_common()[1][1]) <= 1


def test_meta_features_agree_with_present(biased):
    for rec in biased:
        assert rec.meta["features"] == {n: a.present(rec.premise, rec.hypothesis) for n, a in ARTIFACTS.items()}


def test_eval_splits_do_not_depend_on_train_strengths():
    weak = WorldConfig(strengths={"negation": 0.0, "overlap": 0.1, "length": 0.0}, **SMALL)
    strong = WorldConfig(strengths={"negation": 1.0, "overlap": 1.0, "length": 1.0}, **SMALL)
    assert weak.digest() != strong.digest()
    for split in SPLITS:
        if split != "train_biased":
            assert generate_split(weak, split) == generate_split(strong, split), split
    assert generate_split(weak, "train_biased") != generate_split(strong, "train_biased")


def test_train_avoids_test_pairs():
    cfg = WorldConfig(**SMALL)
    held = {(r.premise, r.hypothesis) for s in ("dev", "test") for r in generate_split(cfg, s)}
    assert not held & {(r.premise, r.hypothesis) for r in generate_split(cfg, "train_biased")}


def test_artifact_detectors():
    neg, ov, ln = (ARTIFACTS[n] for n in ("negation", "overlap", "length"))
    assert neg.present("x.", "Tom didn't sing.") and neg.present("x.", "Nobody sang.")
    assert not neg.present("x.", "Tom is north of Alden.") and not neg.present("x.", "Tom knows Nora.")
    assert ov.present("The lawyer saw the doctor.", "The doctor saw the lawyer.")
    assert not ov.present("The lawyer saw the doctor.", "The doctor was seen by the lawyer.")
    assert ln.present("x.", "one two three four five six seven eight nine ten.")
    assert not ln.present("x.", "one two three four five six seven eight nine.")


def test_config_from_dict_and_errors():
    cfg = WorldConfig.from_dict({"seed": 2, "n_train": 30, "strengths": {"negation": 0.5}})
    assert cfg.strength_map == {"negation": 0.5, "overlap": 0.8, "length": 0.8}
    assert WorldConfig.from_dict(cfg.to_dict()) == cfg and hash(cfg) == hash(WorldConfig.from_dict(cfg.to_dict()))
    assert cfg.digest() == WorldConfig.from_dict(cfg.to_dict()).digest() != WorldConfig().digest()
    with pytest.raises(ValueError, match=r"'bogus'.*valid keys: negation, overlap, length"):
        WorldConfig.from_dict({"strengths": {"bogus": 0.5}})
    with pytest.raises(ValueError, match=r"strengths\.overlap"):
        WorldConfig.from_dict({"strengths": {"overlap": 1.5}})
    with pytest.raises(ValueError, match=r"feature_rate"):
        WorldConfig.from_dict({"feature_rate": 0.4})
    with pytest.raises(ValueError, match=r"'n_trian'.*valid keys: seed, n_train"):
        WorldConfig.from_dict({"n_trian": 5})
    with pytest.raises(ValueError, match=r"unknown world split 'val'"):
        generate_split(cfg, "val")
