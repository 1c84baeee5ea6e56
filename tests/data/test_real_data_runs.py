"""The real-data experiments (`experiments/wanli_table3/run.sh`, `experiments/zaug_tables/run.sh`): they need
downloads and GPUs, so here they are checked up to the point where they would start training: the preflight
stops them with the missing sets named and nothing written; it reads a set that is there; and the jobs
added with the oracle-free redesign (same-size floors, G* by the debiasing stage) compose with Hydra."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import compose_plain

from experiments import real_data_preflight as preflight

ROOT = Path(__file__).resolve().parents[2]


def run_script(folder: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """The script with an empty HF cache, offline, its output folder under tmp_path."""
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "hf" / "datasets"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "R": str(tmp_path / "R")}
    return subprocess.run(["bash", str(ROOT / "experiments" / folder / "run.sh")], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("folder, sets", [("wanli_table3", ["mnli", "wanli", "anli_r1", "fever_nli"]),
                                          ("zaug_tables", ["mnli", "snli"])])
def test_a_set_not_in_the_cache_stops_the_run_before_any_job(folder, sets, tmp_path):
    res = run_script(folder, tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    for name in sets:
        assert f"{name}: conf/data/train_sets/{name}.yaml: Hub dataset" in res.stderr
    assert "cannot be read; nothing was run" in res.stderr
    assert "download: HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 python -c" in res.stderr
    assert not (tmp_path / "R").exists()


def test_preflight_reads_a_set_that_is_there(tmp_path, monkeypatch, capsys):
    data = tmp_path / "localset"
    data.mkdir()
    rows = [{"premise": "a", "hypothesis": "b", "label": 0}] * 7
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    conf = tmp_path / "train_sets"
    conf.mkdir()
    (conf / "localset.yaml").write_text(f"localset:\n  name: localset\n  loader: hub\n  path: {data}\n  split: train\n")
    (conf / "world.yaml").write_text("world:\n  name: world\n  loader: world\n")
    monkeypatch.setattr(preflight, "CONF", conf)
    assert preflight.main(["localset", "world"]) == 0
    out = capsys.readouterr().out
    assert f"localset: {data} [train] 7 rows" in out and "world: loader 'world', not a Hub set: not checked" in out
    with pytest.raises(SystemExit, match="nosuch.yaml: no such training-set config; known: localset, world"):
        preflight.main(["nosuch"])


def test_wanli_table3_floor_job_composes():
    cfg = compose_plain("train", ["data/train_sets=[mnli]", "data.train_sets.mnli.limit=102885",
                                  "+data.train_sets.mnli.limit_seed=0", "data.train_sets.mnli.name=mnli_n102885",
                                  "model=roberta_large", "trainer=gpu", "suite=wanli_table3", "seed=1"])
    mnli = cfg.data.train_sets.mnli
    assert (mnli.limit, mnli.limit_seed, mnli.name, mnli.path) == (102885, 0, "mnli_n102885", "nyu-mll/multi_nli")


def test_zaug_tables_floor_and_generation_jobs_compose():
    floor = compose_plain("train", ["data/train_sets=[snli,jsonl]", "data.combine=augment",
                                    "data.train_sets.jsonl.path=outputs/zaug_snli_seq_z/stages/confidence.jsonl",
                                    "data.train_sets.jsonl.limit=1000", "+data.train_sets.jsonl.limit_seed=0",
                                    "data.train_sets.jsonl.name=gen_n1000_for_seq_z", "model=bert_base",
                                    "model.optimizer.lr=1e-5", "trainer=gpu", "suite=zaug", "seed=1"])
    assert list(floor.data.train_sets) == ["snli", "jsonl"] and floor.data.train_sets.jsonl.limit_seed == 0
    gen = compose_plain("generate", ["pipeline=zaug", "data/train_sets=[snli]", "model=roberta_large", "trainer=gpu",
                                     "pipeline.classifier.run_dir=outputs/zaug_teacher_snli",
                                     "model@pipeline.generator_model=gpt2_large_generator",
                                     "pipeline.zaug_sample.n_samples=5000000", "pipeline.zaug_sample.device=cuda",
                                     "pipeline.confidence.device=cuda",
                                     "pipeline.stages=[classifier,zaug_generator,zaug_debias,zaug_sample,confidence,zfilter]",
                                     "pipeline.zfilter.recipe=seq_z"])
    assert "zaug_debias" in gen.pipeline.stages and gen.pipeline.zfilter.recipe == "seq_z"
    assert "gpt2-large" in str(gen.pipeline.generator_model)
