"""Pipelines composed by config: `nliforge-generate pipeline=zfilter input=<set>`
z-filters any set in the data model, conditional on a seed set when one is given; `input=` takes an
earlier run's folder, so runs chain and their provenance with them; DISCO takes `input=` as its source."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.data.records import Record
from nliforge.filtering.zfilter import z_filter
from nliforge.generate import generate

LABELS = ("entailment", "neutral", "contradiction")
FILTER = ["pipeline.zfilter.k=3", "pipeline.zfilter.batch_size=10"]


def biased_records(prefix: str, n: int, seed: int) -> list[Record]:
    """Labeled pairs where `never` marks contradiction and `tall` marks neutral most of the time."""
    rng, out = random.Random(seed), []
    for i in range(n):
        label = LABELS[i % 3]
        cue = {"contradiction": "never", "neutral": "tall"}.get(label, "") if rng.random() < 0.8 else \
            rng.choice(["never", "tall", ""])
        hyp = f"the {rng.choice(['cat', 'dog', 'bird'])} {cue} {rng.choice(['sleeps', 'runs', 'sings'])}".replace("  ", " ")
        out.append(Record(f"{prefix}{i}", f"a {rng.choice(['small', 'old'])} animal is in the {rng.choice(['yard', 'house'])}",
                          hyp, label, f"src_{prefix}", {"i": i}))
    return out


def zcfg(tmp_path: Path, run: str, extra=()):
    return compose_config("generate", ["pipeline=zfilter", *FILTER, *extra], tmp_path / run, tmp_path / "cache")


@pytest.fixture
def files(tmp_path):
    cands, seed = biased_records("c", 90, 1), biased_records("s", 60, 2)
    return write_jsonl(cands, tmp_path / "cands.jsonl"), write_jsonl(seed, tmp_path / "seed.jsonl")


def shuffled(records: list[Record], seed: int = 0) -> list[Record]:
    out = list(records)
    random.Random(seed).shuffle(out)
    return out


def test_unconditional_zfilter_of_a_file_is_algorithm_1_and_records_provenance(tmp_path, files):
    cands_path, _ = files
    manifest = generate(zcfg(tmp_path, "run", [f"input={cands_path}"]))
    expected = z_filter(shuffled(read_jsonl(cands_path)), k=3, batch_size=10)
    out = read_jsonl(tmp_path / "run" / "dataset.jsonl")
    assert [r.uid for r in out] == [r.uid for r in expected.accepted] and 0 < len(out) < 90
    assert all(r.meta["zfilter"]["kept"] and r.meta["zfilter"]["condition"].startswith("zaug: Z(input)") for r in out)
    zf = manifest["stages"]["zfilter"]
    assert zf["count_in"] == 90 == zf["count_out"] + sum(zf["drops"].values())
    assert zf["extra"]["rejected"] == len(expected.rejected)
    (prov,) = manifest["input"]
    assert prov["kind"] == "jsonl" and prov["count"] == 90 and prov["path"] == str(cands_path.resolve())
    assert prov["sha256"] == hashlib.sha256(cands_path.read_bytes()).hexdigest()
    assert (tmp_path / "run" / "zfilter_report.md").is_file()


def test_conditional_zfilter_given_a_seed_set(tmp_path, files):
    cands_path, seed_path = files
    seed = read_jsonl(seed_path)
    overlap = seed[:4]                                     # candidates already in the seed are not filtered
    write_jsonl(read_jsonl(cands_path) + overlap, tmp_path / "cands_plus.jsonl")
    manifest = generate(zcfg(tmp_path, "run", [f"input={tmp_path / 'cands_plus.jsonl'}",
                                               f"pipeline.zfilter_seed.set={seed_path}"]))
    expected = z_filter(shuffled(read_jsonl(cands_path)), seed=seed, k=3, batch_size=10)
    out = read_jsonl(tmp_path / "run" / "dataset.jsonl")
    assert [r.uid for r in out] == [r.uid for r in expected.accepted]
    unconditional = z_filter(shuffled(read_jsonl(cands_path)), k=3, batch_size=10)
    assert [r.uid for r in expected.accepted] != [r.uid for r in unconditional.accepted]   # the seed matters
    zf = manifest["stages"]["zfilter"]
    assert zf["drops"]["in_seed"] == 4 and zf["count_in"] == 94 == zf["count_out"] + sum(zf["drops"].values())
    assert manifest["zfilter_seed"][0]["count"] == 60
    with_seed = generate(zcfg(tmp_path, "run_z", [f"input={cands_path}", f"pipeline.zfilter_seed.set={seed_path}",
                                                  "pipeline.zfilter.with_seed=true"]))
    z = read_jsonl(tmp_path / "run_z" / "dataset.jsonl")
    assert [r.uid for r in z] == [r.uid for r in expected.dataset] and with_seed["final"]["count"] == 60 + len(out)


def test_runs_chain_by_input_and_register(tmp_path, files):
    """zfilter -> zfilter over the first run's folder: its final dataset is the input, its provenance nests."""
    cands_path, _ = files
    generate(zcfg(tmp_path, "first", [f"input={cands_path}"]))
    conf = tmp_path / "conf"
    second = generate(zcfg(tmp_path, "second", [f"input={tmp_path / 'first'}", "register.name=z_twice",
                                                 f"register.dir={conf}", "pipeline.zfilter.k=2"]))
    (prov,) = second["input"]
    assert prov["kind"] == "run" and prov["pipeline"] == "zfilter" and prov["stage"] == "zfilter"
    assert prov["count"] == len(read_jsonl(tmp_path / "first" / "dataset.jsonl"))
    assert prov["input"][0]["sha256"] == hashlib.sha256(cands_path.read_bytes()).hexdigest()
    registered = (conf / "data" / "train_sets" / "z_twice.yaml").read_text()
    assert json.dumps(str((tmp_path / "second" / "dataset.jsonl").resolve())) in registered
    assert second["registered"]["train_set"] == "z_twice"


def test_rerun_skips_the_filter_unless_the_input_changed(tmp_path, files):
    cands_path, _ = files
    cfg = zcfg(tmp_path, "run", [f"input={cands_path}"])
    generate(cfg)
    out = tmp_path / "run" / "stages" / "zfilter.jsonl"
    first = (out.stat().st_ino, out.stat().st_mtime_ns)
    again = generate(cfg)["stages"]
    assert (out.stat().st_ino, out.stat().st_mtime_ns) == first and again["input"]["count_out"] == 90   # skipped
    write_jsonl(read_jsonl(cands_path)[:60], cands_path)                                  # the file changes
    changed = generate(cfg)["stages"]
    assert changed["input"]["count_out"] == 60 and changed["zfilter"]["count_in"] == 60


def test_a_list_of_inputs_is_concatenated_without_repeated_uids(tmp_path, files):
    cands_path, seed_path = files
    manifest = generate(zcfg(tmp_path, "run", [f"input=[{cands_path},{seed_path},{cands_path}]"]))
    assert manifest["stages"]["input"]["count_out"] == 150
    assert manifest["stages"]["input"]["drops"] == {"duplicate_uid": 90}
    assert [p["count"] for p in manifest["input"]] == [90, 60, 90]


def test_bad_inputs_fail_before_anything_is_written(tmp_path, files):
    with pytest.raises(NLIDataError, match=r"input: pipeline 'zfilter' needs a dataset"):
        generate(zcfg(tmp_path, "none"))
    with pytest.raises(NLIDataError, match=r"pipeline 'wanli' does not consume a dataset"):
        generate(compose_config("generate", [f"input={files[0]}"], tmp_path / "wanli", tmp_path / "cache"))
    assert not (tmp_path / "none").exists() and not (tmp_path / "wanli").exists()
    with pytest.raises(NLIDataError, match=r"register.name='bad name'"):
        generate(zcfg(tmp_path, "reg", [f"input={files[0]}", "register.name=bad name"]))
    assert not (tmp_path / "reg").exists()
    with pytest.raises(NLIDataError, match=r"input='no_such_set': not a file, a run folder"):
        generate(zcfg(tmp_path, "bad", ["input=no_such_set"]))
    unlabeled = write_jsonl([Record("u1", "a b", "c d", None)], tmp_path / "unlabeled.jsonl")
    with pytest.raises(NLIDataError, match=r"input: record 'u1' is unlabeled"):
        generate(zcfg(tmp_path, "unl", [f"input={unlabeled}"]))


def test_input_from_a_saved_hf_dataset_and_a_set_name(tmp_path, files):
    import datasets

    recs = read_jsonl(files[0])
    rows = [{**r.to_dict(), "meta": json.dumps(r.meta)} for r in recs]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "hf"))
    manifest = generate(zcfg(tmp_path, "hf_run", [f"input={tmp_path / 'hf'}"]))
    assert manifest["input"][0]["kind"] == "hf_disk" and manifest["stages"]["input"]["count_out"] == 90
    assert manifest["input"][0]["records_sha256"] == generate(zcfg(tmp_path, "js", [f"input={files[0]}"]))["input"][0]["records_sha256"]
    small = ["world.n_train=300", "world.n_dev=30", "world.n_test=30", "world.n_challenge=30"]
    by_name = generate(zcfg(tmp_path, "named", ["input=synthetic_biased", *small]))
    assert by_name["input"][0]["kind"] == "set" and by_name["stages"]["input"]["count_out"] == 300


def test_disco_takes_its_source_pairs_from_input(tmp_path, files):
    """DISCO's D^s from `input=` (an earlier run or a file) instead of the classifier's training set."""
    cands_path, _ = files
    cfg = compose_config("generate", ["pipeline=disco", f"input={cands_path}", f"pipeline.classifier.run_dir={tmp_path}",
                                      "pipeline.stages=[disco_source,spans]", "pipeline.disco_source.select=all",
                                      "pipeline.disco_source.max_per_label=5"], tmp_path / "disco", tmp_path / "cache")
    manifest = generate(cfg)
    assert list(manifest["stages"]) == ["input", "disco_source", "spans"]
    source = [json.loads(x) for x in (tmp_path / "disco" / "stages" / "disco_source.jsonl").read_text().splitlines()]
    assert len(source) == 15 and {r["uid"] for r in source} <= {r.uid for r in read_jsonl(cands_path)}
    bad = compose_config("generate", ["pipeline=disco", f"input={cands_path}", f"pipeline.classifier.run_dir={tmp_path}",
                                      "pipeline.stages=[disco_source]"], tmp_path / "disco2", tmp_path / "cache")
    with pytest.raises(NLIDataError, match=r"has no data map: use pipeline.disco_source.select=all"):
        generate(bad)
