"""Worlds on real text: the `world_part` set loader (part k of n disjoint seeded parts of a set, chosen by the
run's `world_part` node) and the registered part sets.

The toy tests check the cut against permutations written out by hand below. The real-data tests (slow; they
read NLIFORGE_DATA_DIR and skip without it, fail under NLIFORGE_REQUIRE_REAL_DATA=1) check that for worlds 1-5
the registered sets equal, record for record and in order, what experiments/real_text/parts.py and
experiments/real_effects/worlds.py build (their own functions, imported from the experiments package), and that the
training sets of HANS augmentation's three arms are the experiment's, as the datamodule receives them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import compose_config, real_data_dir
from omegaconf import OmegaConf

from nliforge.data.records import Record
from nliforge.data.registry import load_set, named_set_spec
from nliforge.data.training_set import build_training_set
from nliforge.errors import NLIDataError

ROOT = Path(__file__).resolve().parents[2]
WORLDS = (1, 2, 3, 4, 5)


def toy(tmp_path: Path, n: int, group=None) -> dict:
    """An inline jsonl base of n records r0..r(n-1), meta g = group(i) if given."""
    path = tmp_path / "toy.jsonl"
    labels = ("entailment", "neutral", "contradiction")
    rows = [Record(f"r{i}", f"p{i}", f"h{i}", labels[i % 3], "toy", {"g": group(i)} if group else {}) for i in range(n)]
    path.write_text("".join(r.to_json() + "\n" for r in rows))
    return {"name": "toy", "loader": "jsonl", "path": str(path)}


def part_set(base: dict, index, count=2, **options) -> list[Record]:
    spec = {"name": "toy_part", "loader": "world_part", "base": base,
            "part": {"index": index, "count": count, "seed": 0}, **options}
    return load_set(spec, "data.train_sets.toy_part", None, "data_cache")


def uids(records) -> list[int]:
    return [int(r.uid[1:]) for r in records]


# random.Random(0).shuffle(list(range(10))) -> [7, 8, 1, 5, 3, 4, 2, 0, 9, 6]
def test_a_plain_part_is_a_slice_of_one_seeded_permutation_in_its_order(tmp_path):
    base = toy(tmp_path, 10)
    assert uids(part_set(base, 1)) == [7, 8, 1, 5, 3]
    assert uids(part_set(base, 2)) == [4, 2, 0, 9, 6]
    assert uids(part_set(base, 2, split="train")) == [4, 2, 0, 9]     # round(0.7 * 5) = round(3.5) = 4
    assert uids(part_set(base, 2, split="test")) == [6]
    assert uids(part_set(base, 1, split="train", train_fraction=0.4)) == [7, 8]
    assert [uids(part_set(base, k, count=3)) for k in (1, 2, 3)] == [[7, 8, 1], [5, 3, 4], [2, 0, 9, 6]]
    assert uids(part_set(base, 1, limit=2)) == [7, 8]                  # the set's limit: the first N after the cut


# 12 records, g = a (even) / b (odd); a group's 6 indices shuffled with random.Random("0|a") -> positions
# [1, 2, 4, 3, 5, 0] = records [2, 4, 8, 6, 10, 0]; "0|b" -> positions [2, 0, 1, 4, 5, 3] = records
# [5, 1, 3, 9, 11, 7]. Count 3: 2 per group per world; world 2 = a's [8, 6] and b's [3, 9].
def test_a_stratified_part_takes_each_groups_slice_in_the_base_order_with_its_slot(tmp_path):
    base = toy(tmp_path, 12, group=lambda i: "ab"[i % 2])
    got = part_set(base, 2, count=3, stratify="g")
    assert uids(got) == [3, 6, 8, 9] and [r.meta["slot"] for r in got] == [0, 1, 0, 1]
    assert uids(part_set(base, 2, count=3, stratify="g", per_group_limit=1)) == [3, 8]
    assert uids(part_set(base, 1, count=3, stratify="g")) == [1, 2, 4, 5]
    assert uids(part_set(base, 3, count=3, stratify="g")) == [0, 7, 10, 11]


def test_relabel_maps_gold_labels_and_keeps_the_label_before(tmp_path):
    got = part_set(toy(tmp_path, 10), 1, relabel={"contradiction": "neutral"}, relabel_meta="was")
    assert [r.label for r in got] == ["neutral", "neutral", "neutral", "neutral", "entailment"]   # r7 r8 r1 r5 r3
    assert [r.meta["was"] for r in got] == ["neutral", "contradiction", "neutral", "contradiction", "entailment"]


@pytest.mark.parametrize(("index", "says"), [
    (None, r"world_part.index is not set: set 'toy_part' is one of 2 disjoint parts .* world_part.index=1 \(1..2\)"),
    (3, r"world_part.index=3: expected a whole number in 1..2 \(world_part.count\)"),
    (0, r"world_part.index=0: expected a whole number in 1..2"),
])
def test_an_unset_or_out_of_range_index_is_refused_naming_the_key(tmp_path, index, says):
    with pytest.raises(NLIDataError, match=says):
        part_set(toy(tmp_path, 10), index)


def test_bad_options_name_their_key(tmp_path):
    base = toy(tmp_path, 10)
    with pytest.raises(NLIDataError, match=r"toy_part.split='dev'; valid: train, test, all"):
        part_set(base, 1, split="dev")
    with pytest.raises(NLIDataError, match=r"toy_part.stratify='g': record r0 has no meta 'g'; its meta keys: \(none\)"):
        part_set(base, 1, stratify="g")
    with pytest.raises(NLIDataError, match=r"toy_part.per_group_limit needs data.train_sets.toy_part.stratify"):
        part_set(base, 1, per_group_limit=3)


def test_a_run_config_carries_world_part_to_every_part_set(tmp_path):
    cfg = compose_config("train", ["data/train_sets=[mnli_part_train_1000,hans_like_part_500]",
                                   "suite=real_effects_e1", "world_part.index=4"], tmp_path, tmp_path)
    assert OmegaConf.to_container(cfg.world_part) == {"index": 4, "count": 5, "seed": 0}
    for node in (*cfg.data.train_sets.values(), *cfg.suite.sets.values()):
        assert OmegaConf.to_container(node, resolve=True)["part"] == {"index": 4, "count": 5, "seed": 0}


# ------------------------------------------------------------------ the experiments' worlds, on real data

@pytest.fixture(scope="module")
def experiment_worlds() -> dict:
    """What the experiments build, by their own functions: per world k (0-based) the MNLI and SNLI parts
    (parts.cut), the HANS-like training slice and the HANS evaluation slice (worlds.py)."""
    real_data_dir("hans/hans_regenerated_seed0.tsv")
    from experiments.real_effects import worlds
    from experiments.real_text import parts
    from experiments.real_text.common import load_named

    snli = [r for name in parts.CORPORA["snli"] for r in load_named(name)]
    return {"mnli": parts.cut(load_named("mnli_dev_matched_mccoy")), "snli": parts.cut(snli),
            "hans_train": worlds.hans_train_slices(load_named("hans_train_regenerated")),
            "hans_eval": worlds.hans_eval_slices(load_named("hans_regenerated")), "module": worlds}


def _registered(name: str, k: int) -> list[Record]:
    spec = named_set_spec(name, name, "data_cache", {"index": k, "count": 5, "seed": 0})
    return load_set(spec, name, None, "data_cache")


@pytest.mark.slow
@pytest.mark.parametrize("k", WORLDS)
def test_the_part_sets_are_the_experiments_worlds_record_for_record(experiment_worlds, k):
    ex, w = experiment_worlds, experiment_worlds["module"]
    expected = {
        "mnli_part_train": ex["mnli"][k - 1][0], "mnli_part_test": ex["mnli"][k - 1][1],   # real_text parts
        "snli_cad_part_train": ex["snli"][k - 1][0], "snli_cad_part_test": ex["snli"][k - 1][1],
        "hans_like_part": ex["hans_train"][k - 1],
        "hans_part": [r for r in ex["hans_eval"][k - 1] if r.meta["slot"] < w.HANS_EVAL_PER_SUBCASE],
    }
    for name, records in expected.items():
        got = _registered(name, k)
        assert len(got) == len(records) > 0, name
        assert got == records, f"{name}, world {k}: first difference at {next(i for i, (a, b) in enumerate(zip(got, records)) if a != b)}"


@pytest.mark.slow
def test_a_derived_set_on_a_part_set_derives_from_that_world(experiment_worlds):
    """A derived set names a part set as its base and passes its own `part` on: the stress test of world 3's
    MNLI test pairs is the derivation of exactly those pairs (what worlds.py's E4 registers per world)."""
    from nliforge.data.derivations import derive

    spec = {"name": "mnli_part_test_negation", "loader": "derived", "base": "mnli_part_test",
            "derivation": "stress_negation", "part": {"index": 3, "count": 5, "seed": 0}}
    expected = derive(experiment_worlds["mnli"][2][1], "stress_negation", 0, "t", "mnli_part_test_negation")
    assert load_set(spec, "suite.sets.neg", None, "data_cache") == expected and len(expected) == 589


@pytest.mark.slow
@pytest.mark.parametrize("k", WORLDS)
def test_the_e1_arms_train_on_the_experiments_sets_in_its_order(experiment_worlds, k, tmp_path):
    ex, w = experiment_worlds, experiment_worlds["module"]
    base, hans = ex["mnli"][k - 1][0][:w.N_MNLI], ex["hans_train"][k - 1][:w.N_HANS]
    arms = {"mnli": (["mnli_part_train_1000"], base), "plus": (["mnli_part_train_1000", "hans_like_part_500"], base + hans),
            "diamond": (["mnli_part_train_500", "hans_like_part_500"], base[:w.N_HANS] + hans)}
    for arm, (sets, records) in arms.items():
        cfg = compose_config("train", [f"data/train_sets=[{','.join(sets)}]", f"world_part.index={k}",
                                       "experiment=real_text_datamap", "seed=1"], tmp_path, tmp_path)
        got = build_training_set(cfg).records
        assert len(got) == len(records) and got == records, f"arm {arm}, world {k}"


@pytest.mark.slow
def test_nliforge_train_runs_world_2_and_records_it(tmp_path):
    real_data_dir("snli_cad/original/train.tsv")
    out = tmp_path / "run"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "nliforge.train", "data/train_sets=[snli_cad_part_train]",
                           "suite=real_text_snli_cad_part", "world_part.index=2", "model=tiny", "model.max_epochs=1",
                           "logger=csv", "save_model=false", "trainer.enable_progress_bar=false",
                           "callbacks.dynamics.enabled=false", "num_threads=1", f"hydra.run.dir={out}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert OmegaConf.load(out / "config.yaml").world_part.index == 2
    manifest = json.loads((out / "train_set.manifest.json").read_text())
    assert manifest["sizes_in"] == {"snli_cad_part_train": 289}          # round(0.7 * 413)
    assert "snli_cad_part_test" in (out / "metrics.csv").read_text()


def test_the_e1_study_names_registered_sets_and_its_suite(tmp_path):
    from nliforge.study.schema import load_study

    study = load_study("hans_augmentation")     # conf/study/hans_augmentation.yaml: E1's third attempt
    assert study.suite == "real_effects_e1" and set(study.arms) == {"mnli", "plus", "diamond"}
    for arm, overrides in study.arms.items():
        cfg = compose_config("train", [*overrides, f"suite={study.suite}", "world_part.index=1"], tmp_path, tmp_path)
        assert sorted(cfg.suite.sets) == ["hans_part", "mnli_part_test"], arm
        assert all(s.endswith(("_1000", "_500")) for s in cfg.data.train_sets), arm


# The sha256 (first 16 hex digits, records_digest) of every part set in worlds 1-5, taken from the sets the
# tests above find equal to the experiments' records: they keep the check when the experiments' scripts go.
# Records name their file relative to NLIFORGE_DATA_DIR, so these are the same on every machine.
DIGESTS = {
    "mnli_part_train": ["d588550dd89ae551", "ad376c922ed40a74", "0b528aea5ce11057", "36df0e00186a3bd5", "21eaabe409495a84"],
    "mnli_part_test": ["d1f930c5e8e9476d", "6d71daa6f0f912e1", "49139ea66c9a8c58", "8d314fa00f8dd5ae", "f6aa3c9e84eef04a"],
    "snli_cad_part_train": ["fce22d3aa00972d5", "02535db5c7ba8e46", "01b98e4314f1c0a1", "1698ce801d0984bf", "db28b6b2912c0492"],
    "snli_cad_part_test": ["35ee06b9445edf85", "31a1ec82d2900964", "29e12bd21b913831", "05721dd427ed122b", "f6fcd16dd96eec22"],
    "hans_like_part": ["e3679f8a6759bb64", "f33a7852945ce428", "58948817ab5d7fed", "c76b2b15bb5d95c7", "4e0c0cdf3b99f51c"],
    "hans_part": ["358c09c3de55942e", "9d8c8d4ea9f0a4e5", "abedc04bbe8c525c", "453d60937b55294f", "cc4d7c67afb20f0e"],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_the_part_sets_keep_their_digests(name):
    from nliforge.data.jsonl import records_digest

    real_data_dir("hans/hans_regenerated_seed0.tsv")
    assert [records_digest(_registered(name, k))[:16] for k in WORLDS] == DIGESTS[name]
