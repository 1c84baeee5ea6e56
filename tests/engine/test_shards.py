"""Sharded generation runs and their merge: the rule, the same dataset as an unsharded run (WANLI, DISCO,
long-text), every request sent by exactly one shard, and a bad merge refused with one error, writing nothing."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from omegaconf import open_dict

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.generate import generate
from nliforge.generation.shard import Shard, parse_shard
from nliforge.generation.stand_in.server import LocalOpenAIServer
from nliforge.pipelines.wanli.stand_in import wanli_responder

KEY_ENV = "NLIFORGE_TEST_API_KEY"


def test_shard_rule_partitions_every_key_once_and_never_moves():
    keys = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(2000)]
    for n in (1, 2, 3, 4, 7):
        owners = [[k for k in range(n) if Shard(k, n).holds(key)] for key in keys]
        assert all(len(o) == 1 for o in owners)                      # each request in exactly one shard
        sizes = Counter(o[0] for o in owners)
        assert min(sizes.values()) > 2000 / n * 0.8                  # and roughly evenly
    # by hand: the key's first 16 hex digits as a number, modulo n
    assert Shard(int("00000000000000ff", 16) % 4, 4).holds("00000000000000ff" + "0" * 48)
    assert parse_shard("2/4") == Shard(2, 4) and str(parse_shard(" 0 / 1 ")) == "0/1" and parse_shard(None) is None
    for bad in ("4/4", "1", "-1/2", "a/b", "0/0"):
        with pytest.raises(NLIDataError, match="expected k/n"):
            parse_shard(bad)


def wanli_cfg(run: Path, cache: Path, clf: Path, url, extra=()):
    urls = f"[{','.join(url)}]" if isinstance(url, list) else url
    return compose_config("generate", [
        "generator=openai_completions", f"generator.base_url={urls}", f"generator.api_key_env={KEY_ENV}",
        "generator.model=stand-in", "generator.runner.progress=false", "generator.runner.concurrency=4",
        "generator.runner.backoff_base_s=0.01", "generator.runner.requests_per_minute=null",
        "generator.runner.tokens_per_minute=null", "pipeline.generate.per_request=1",
        f"pipeline.classifier.run_dir={clf}", "pipeline.seeds.max_per_label=6", *extra], run, cache)


def merge_cfg(out: Path, cache: Path, merge) -> object:
    value = f"[{','.join(str(m) for m in merge)}]" if isinstance(merge, list) else str(merge)
    return compose_config("generate", [f"merge={value}"], out, cache)


def answered(log: Path) -> Counter:
    rows = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    return Counter(r["sha256"] for r in rows if r["event"] == "answered" and r["status"] == 200)


@pytest.fixture(scope="module")
def wanli_runs(tmp_path_factory, world_cache, classifier_run_dir):
    """An unsharded WANLI run, and the same run as 3 shards (shard 1 against two servers) merged."""
    import os

    os.environ[KEY_ENV] = "test-key"
    root = tmp_path_factory.mktemp("wanli_shards")
    logs = {name: root / f"{name}.jsonl" for name in ("ref", "a", "b")}
    with LocalOpenAIServer(latency_s=0.001, responder=wanli_responder, log_path=logs["ref"]) as ref, \
            LocalOpenAIServer(latency_s=0.001, responder=wanli_responder, log_path=logs["a"]) as a, \
            LocalOpenAIServer(latency_s=0.001, responder=wanli_responder, log_path=logs["b"]) as b:
        generate(wanli_cfg(root / "single", world_cache, classifier_run_dir, ref.base_url))
        urls = [a.base_url, [a.base_url, b.base_url], b.base_url]
        shards = [root / "multirun" / str(k) for k in range(3)]
        for k, folder in enumerate(shards):
            generate(wanli_cfg(folder, world_cache, classifier_run_dir, urls[k], [f"shard={k}/3"]))
        manifest = generate(merge_cfg(root / "merged", world_cache, root / "multirun"))
    return root, shards, manifest, {name: answered(log) for name, log in logs.items()}


def test_merged_wanli_dataset_is_the_unsharded_one_byte_for_byte(wanli_runs):
    root, shards, manifest, counts = wanli_runs
    single = (root / "single" / "dataset.jsonl").read_bytes()
    assert single and (root / "merged" / "dataset.jsonl").read_bytes() == single
    for stage in ("generate", "parse", "heuristics", "variability"):   # every stage's output, not only the last
        assert (root / "merged" / "stages" / f"{stage}.jsonl").read_bytes() == \
            (root / "single" / "stages" / f"{stage}.jsonl").read_bytes(), stage
    # each request answered once, by the shards together, and the merge sent nothing
    n_requests = manifest["stages"]["generate"]["count_in"]
    shard_answers = counts["a"] + counts["b"]
    assert sum(counts["ref"].values()) == n_requests == len(shard_answers) and max(shard_answers.values()) == 1
    assert set(shard_answers) == set(counts["ref"])
    assert manifest["ledger"]["generate"]["sent"] == n_requests                     # summed over the shards
    assert manifest["ledger"]["generate"]["cached"] == n_requests                   # the merge: all from the cache
    assert [m["shard"] for m in manifest["merged_from"]] == ["0/3", "1/3", "2/3"]
    assert sum(m["answers"] for m in manifest["merged_from"]) == n_requests


def test_each_shard_holds_its_own_requests_and_stops_before_the_all_record_stages(wanli_runs):
    root, shards, manifest, _ = wanli_runs
    sent = []
    for k, folder in enumerate(shards):
        m = json.loads((folder / "manifest.json").read_text())
        assert m["shard"] == {"shard": f"{k}/3", "stage": "generate", "complete": True}
        assert list(m["stages"]) == ["classifier", "seeds", "exemplars", "prompts", "generate"]
        assert not (folder / "dataset.jsonl").exists()
        sent.append(m["ledger"]["generate"]["sent"])
        assert m["ledger"]["generate"]["other_shard"] == manifest["stages"]["generate"]["count_in"] - sent[-1]
    assert sum(sent) == manifest["stages"]["generate"]["count_in"] and min(sent) > 0
    # shard 1 ran against two servers: the merged ledger keeps its per-endpoint counts
    endpoints = manifest["ledger"]["generate"]["endpoints"]
    assert len(endpoints) == 2 and sum(e["answers"] for e in endpoints.values()) == sent[1]
    assert all(e["answers"] > 0 for e in endpoints.values())


def _copy_shards(shards: list[Path], dest: Path) -> list[Path]:
    import shutil

    out = []
    for folder in shards:
        shutil.copytree(folder, dest / folder.name)
        out.append(dest / folder.name)
    return out


def test_bad_merges_are_one_error_and_write_nothing(wanli_runs, tmp_path, world_cache):
    root, shards, _, _ = wanli_runs
    out = tmp_path / "merged"
    cases = [([shards[0], shards[2]], r"shard\(s\) 1/3 missing"),
             ([*shards, shards[1]], r"two copies of shard 1/3: .*1 and .*1"),
             ([tmp_path / "nowhere"], "no such folder")]
    for merge, message in cases:
        with pytest.raises(NLIDataError, match=message):
            generate(merge_cfg(out, world_cache, merge))
        assert not out.exists()
    # a shard from another config: the key is named
    other = _copy_shards(shards, tmp_path / "other")
    text = (other[2] / "config.yaml").read_text()
    assert "max_per_label: 6" in text
    (other[2] / "config.yaml").write_text(text.replace("max_per_label: 6", "max_per_label: 7"))
    with pytest.raises(NLIDataError, match=r"shard 2/3 .*another config.*pipeline.seeds.max_per_label was 6, now 7"):
        generate(merge_cfg(out, world_cache, tmp_path / "other"))
    # an unfinished shard (killed before its generate stage finished)
    manifest = json.loads((other[1] / "manifest.json").read_text())
    manifest.pop("shard")
    (other[1] / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(NLIDataError, match="shard 1/3 in .* has not finished"):
        generate(merge_cfg(out, world_cache, other[:2]))
    assert not out.exists()


def test_a_pipeline_without_a_generate_stage_cannot_be_sharded(tmp_path, world_cache, classifier_run_dir):
    cfg = wanli_cfg(tmp_path / "run", world_cache, classifier_run_dir, "http://127.0.0.1:9/v1",
                    ["pipeline.stages=[classifier,seeds]", "shard=0/2"])
    with pytest.raises(NLIDataError, match="no stage that calls a generator"):
        generate(cfg)
    assert not (tmp_path / "run").exists()


def _shard_and_merge(make_cfg, root: Path, cache: Path, n: int) -> dict:
    for k in range(n):
        generate(make_cfg(root / "multirun" / str(k), [f"shard={k}/{n}"]))
    return generate(merge_cfg(root / "merged", cache, root / "multirun"))


def test_merged_disco_dataset_is_the_unsharded_one(tmp_path, world_cache, classifier_run_dir, monkeypatch):
    from nliforge.pipelines.disco.stand_in import disco_responder

    monkeypatch.setenv(KEY_ENV, "test-key")

    def disco(run: Path, extra=()):
        return compose_config("generate", [
            "pipeline=disco", "generator=openai_completions", f"generator.base_url={srv.base_url}",
            f"generator.api_key_env={KEY_ENV}", "generator.model=stand-in", "generator.runner.progress=false",
            "generator.runner.requests_per_minute=null", "generator.runner.tokens_per_minute=null",
            f"pipeline.classifier.run_dir={classifier_run_dir}", f"pipeline.disco_teacher.run_dirs=[{classifier_run_dir}]",
            "pipeline.disco_source.max_per_label=3", "pipeline.teacher_filter.threshold=0.0",
            f"pipeline.augment.register_dir={run.parent / 'conf'}", "pipeline.augment.name=disco_t", *extra],
            run, world_cache)

    logs = tmp_path / "single.jsonl", tmp_path / "shards.jsonl"
    with LocalOpenAIServer(latency_s=0.0, responder=disco_responder, log_path=logs[0]) as srv:
        generate(disco(tmp_path / "single"))
    with LocalOpenAIServer(latency_s=0.0, responder=disco_responder, log_path=logs[1]) as srv:
        manifest = _shard_and_merge(disco, tmp_path, world_cache, 2)
    assert (tmp_path / "merged" / "dataset.jsonl").read_bytes() == (tmp_path / "single" / "dataset.jsonl").read_bytes()
    assert "shard" not in manifest and [m["shard"] for m in manifest["merged_from"]] == ["0/2", "1/2"]
    single = answered(logs[0])
    assert answered(logs[1]) == single and max(single.values()) == 1   # the shards sent what one run sends, once each


def test_merged_longtext_dataset_is_the_unsharded_one(tmp_path, world_cache):
    """The long-text demo (two stand-in generators on the in-process server, then the judge after the merge;
    the explain stage, a report that trains a classifier, left out for time)."""
    def longtext(run: Path, extra=()):
        return compose_config("generate", ["pipeline=longtext", "generate_experiment@_global_=longtext_demo",
                                           "pipeline.statements.limit=4", "pipeline.stages=[statements,"
                                           "longtext_prompts,longtext_generate,longtext_validate,rubric]", *extra],
                              run, world_cache)

    generate(longtext(tmp_path / "single"))
    manifest = _shard_and_merge(longtext, tmp_path, world_cache, 2)
    assert (tmp_path / "merged" / "dataset.jsonl").read_bytes() == (tmp_path / "single" / "dataset.jsonl").read_bytes()
    sent = [json.loads((tmp_path / "multirun" / str(k) / "manifest.json").read_text())["ledger"] for k in range(2)]
    for name in ("longtext_generate:standin_a", "longtext_generate:standin_b"):
        assert sent[0][name]["sent"] + sent[1][name]["sent"] == 12 == manifest["ledger"][name]["cached"]
        assert min(s[name]["sent"] for s in sent) > 0


def test_merge_into_the_multirun_folder_skips_its_own_folder(wanli_runs, world_cache):
    """The merge's folder inside the multirun folder is no shard: merging again there finds the same shards."""
    root, shards, manifest, _ = wanli_runs
    again = generate(merge_cfg(root / "multirun" / "merged", world_cache, root / "multirun"))
    assert (root / "multirun" / "merged" / "dataset.jsonl").read_bytes() == (root / "single" / "dataset.jsonl").read_bytes()
    again = generate(merge_cfg(root / "multirun" / "merged", world_cache, root / "multirun"))   # and resumes
    assert again["stages"]["variability"]["sha256"] == manifest["stages"]["variability"]["sha256"]
