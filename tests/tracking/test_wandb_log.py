"""What W&B receives from a training run, a sweep report and a generation run: each test runs the real
entry point with WANDB_MODE=offline and parses the run's `.wandb` records (nliforge.testing.wandb_records)."""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import open_dict

from conftest import SMALL_WORLD, compose_config
from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.testing import wandb_records as wr

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SWEEP = "sweep_2026"
T_975_DF1 = 12.706205   # Student t quantile, 95% two-sided, 1 degree of freedom


@pytest.fixture
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DATA_DIR", str(tmp_path / "wb_data"))   # artifact staging, not ~/.local
    return tmp_path


def only_run(folder: Path) -> Path:
    runs = list(Path(folder).rglob("offline-run-*"))
    assert len(runs) == 1, runs
    return runs[0]


def md5_b64(path: Path) -> str:
    return base64.b64encode(hashlib.md5(path.read_bytes()).digest()).decode()


# -- training run ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def train_run(tmp_path_factory, world_cache):
    """One offline training run, as job 0 of a sweep folder (the group is set the way a multirun sets it)."""
    from nliforge.train import train

    tmp = tmp_path_factory.mktemp("wandb_train")
    out = tmp / SWEEP / "0"
    cfg = compose_config("train", ["experiment=demo", *SMALL_WORLD, "model.max_epochs=2", "logger=wandb",
                                   f"logger.wandb.group={SWEEP}", "trainer.enable_progress_bar=false"],
                         out, world_cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        mp.setenv("WANDB_DATA_DIR", str(tmp / "wb_data"))
        results = train(cfg)
    run_dir = only_run(out)
    return out, results, run_dir, wr.finished_run(run_dir)


def test_training_run_names_group_config_and_suite_table(train_run):
    out, results, run_dir, records = train_run
    (run,) = wr.of_type(records, "run")
    assert (run.display_name, run.run_group, run.job_type) == ("synthetic_biased-s0", SWEEP, "train")
    assert wr.config(records)["data"]["combine"] == "augment"
    with (out / "metrics.csv").open() as fh:
        on_disk = [(r["train_id"], int(r["seed"]), r["eval_set"], r["metric"], float(r["value"]))
                   for r in csv.DictReader(fh)]
    logged = [tuple(r.values()) for r in wr.table(run_dir, records, "suite/results")]
    assert logged == on_disk and len(logged) == sum(len(m) for m in results.values())
    assert list(wr.table(run_dir, records, "suite/results")[0]) == ["train_set", "seed", "eval_set", "metric", "value"]


def test_training_run_logs_data_map_and_dynamics(train_run):
    out, _, run_dir, records = train_run
    hist = wr.history(records)
    assert hist["dynamics/data_map/_type"] == "image-file"
    assert (run_dir / "files" / hist["dynamics/data_map/path"]).read_bytes() == (out / "data_map.png").read_bytes()
    metrics = pd.read_parquet(out / "dynamics" / "metrics.parquet")
    for name in ("confidence", "variability"):
        assert hist[f"dynamics/{name}/_type"] == "histogram"
        assert sum(hist[f"dynamics/{name}/values"]) == len(metrics) == 900
        bins = hist[f"dynamics/{name}/bins"]
        assert bins[0] == pytest.approx(metrics[name].min()) and bins[-1] == pytest.approx(metrics[name].max())
    regions = wr.table(run_dir, records, "dynamics/regions")
    assert {r["region_size"] for r in regions} == {297}              # floor(0.33 * 900)
    by_var = metrics.reset_index().sort_values(["variability", "uid"], ascending=[False, True])
    top = by_var.head(297)["gold"].value_counts()
    ambiguous = {r["label"]: r["count"] for r in regions if r["region"] == "ambiguous"}
    assert ambiguous == {"entailment": top.get(0, 0), "neutral": top.get(1, 0), "contradiction": top.get(2, 0)}
    for region in ("ambiguous", "hard", "easy"):
        assert sum(r["count"] for r in regions if r["region"] == region) == 297


def test_training_run_uses_its_training_set_by_reference(train_run):
    out, _, _, records = train_run
    (art,) = [a for a in wr.of_type(records, "artifact") if a.type == "dataset"]
    manifest = json.loads((out / "train_set.manifest.json").read_text())
    assert art.name == "trainset-synthetic_biased" and art.use_after_commit
    assert json.loads(art.metadata)["sha256"] == manifest["sha256"]
    (entry,) = art.manifest.contents
    assert entry.ref == (out / "train_set.manifest.json").resolve().as_uri()
    assert entry.digest == md5_b64(out / "train_set.manifest.json") and not entry.local_path   # not uploaded


# -- report -------------------------------------------------------------------------------------------------
ACC = {  # train_id -> seed -> eval set -> accuracy; `dev` is in-domain for both
    "mnli": {0: {"dev": 0.9, "c1": 0.6, "c2": 0.8}, 1: {"dev": 0.9, "c1": 0.8, "c2": 1.0}},
    "mnli+wanli": {0: {"dev": 0.9, "c1": 0.5, "c2": 0.7}},
}


def test_report_joins_the_sweep_group_with_nulls_and_challenge_intervals(offline):
    from test_report import _cfg
    from nliforge.report import report

    sweep, job = offline / "multirun" / SWEEP, 0
    for train_id, seeds in ACC.items():
        for seed, sets in seeds.items():
            results = {name: {"acc": acc, "n": 10.0} for name, acc in sets.items()}
            write_metrics_csv(metrics_rows(results, train_id, seed), sweep / str(job) / "metrics.csv")
            job += 1
    result = report(_cfg([f"sweep={sweep}", "wandb=true", "in_domain={mnli:[dev],mnli+wanli:[dev]}"]))
    run_dir = only_run(sweep / "report")
    records = wr.finished_run(run_dir)
    assert Path(result["wandb_dir"]).is_relative_to(run_dir)
    (run,) = wr.of_type(records, "run")
    assert (run.display_name, run.run_group, run.job_type) == (f"report-{SWEEP}", SWEEP, "report")
    table = wr.table(run_dir, records, "report")
    single = [r for r in table if r["train_id"] == "mnli+wanli"]
    assert len(single) == 3 and all(r["std"] is None and r["ci_low"] is None and r["n"] == 1 for r in single)
    challenge = {r["train_id"]: r for r in wr.table(run_dir, records, "challenge_avg")}
    # mnli: seed averages (0.6+0.8)/2 = 0.7 and (0.8+1.0)/2 = 0.9; std 0.1414; half = t * 0.1414 / sqrt(2)
    half = T_975_DF1 * math.sqrt(0.02) / math.sqrt(2)
    assert challenge["mnli"]["mean"] == pytest.approx(0.8) and challenge["mnli"]["n"] == 2
    # 0.8 ± 1.27 leaves accuracy's range, so the interval is clipped to it
    assert (challenge["mnli"]["ci_low"], challenge["mnli"]["ci_high"]) == pytest.approx(
        (max(0.0, 0.8 - half), min(1.0, 0.8 + half)))
    assert half > 0.2 and challenge["mnli"].get("std", math.sqrt(0.02)) == pytest.approx(math.sqrt(0.02))
    assert challenge["mnli+wanli"]["mean"] == pytest.approx(0.6) and challenge["mnli+wanli"]["ci_low"] is None
    bar = wr.config(records)["_wandb/visualize/challenge_avg_bar"]
    assert bar["panel_config"]["panelDefId"] == "wandb/bar/v0"
    assert wr.history(records)["challenge_avg_interval/_type"] == "image-file"


# -- generation -------------------------------------------------------------------------------------------
def test_generation_run_logs_stages_ledger_samples_and_dataset(offline, world_cache, classifier_run_dir,
                                                               monkeypatch):
    from test_generate_pipeline import KEY_ENV, gen_config
    from nliforge.generate import generate
    from nliforge.generation.stand_in.server import LocalOpenAIServer
    from nliforge.pipelines.wanli.stand_in import wanli_responder

    monkeypatch.setenv(KEY_ENV, "test-key")
    out = offline / "gen"
    with LocalOpenAIServer(latency_s=0.001, responder=wanli_responder) as srv:
        cfg = gen_config(out, world_cache, classifier_run_dir, srv.base_url, ["logger=wandb"])
        manifest = generate(cfg)
    run_dir = only_run(out)
    records = wr.finished_run(run_dir)
    (run,) = wr.of_type(records, "run")
    assert (run.display_name, run.job_type) == ("wanli-gen", "generate")
    stages = {r["stage"]: r for r in wr.table(run_dir, records, "stages")}
    assert list(stages) == list(manifest["stages"])
    for name, entry in manifest["stages"].items():
        assert (stages[name]["count_in"], stages[name]["count_out"]) == (entry["count_in"], entry["count_out"])
    drops = {(r["stage"], r["reason"]): r["count"] for r in wr.table(run_dir, records, "drops")}
    assert drops == {(s, k): v for s, e in manifest["stages"].items() for k, v in e["drops"].items()} and drops
    (ledger,) = wr.table(run_dir, records, "ledger")
    led = manifest["ledger"]["generate"]
    assert ledger["sent"] == led["sent"] > 0 and ledger["cost"] == pytest.approx(led["cost"]) and led["cost"] > 0
    summary = {k: v for s in wr.of_type(records, "summary") for k, v in _items(s)}
    final = manifest["final"]["count"]
    assert summary["yield/records_per_request"] == pytest.approx(final / led["sent"])
    assert summary["yield/cost_per_record"] == pytest.approx(led["cost"] / final)
    dataset = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    samples = wr.table(run_dir, records, "samples")
    assert [(r["uid"], r["hypothesis"]) for r in samples] == [(d["uid"], d["hypothesis"]) for d in dataset[:20]]
    (art,) = [a for a in wr.of_type(records, "artifact") if a.type == "dataset"]
    assert art.name == "generated-wanli-gen" and not art.use_after_commit
    assert json.loads(art.metadata)["sha256"] == hashlib.sha256((out / "dataset.jsonl").read_bytes()).hexdigest()
    (entry,) = art.manifest.contents
    assert entry.path == "dataset.jsonl" and entry.digest == md5_b64(out / "dataset.jsonl")


def _items(summary_record):
    for item in summary_record.update:
        yield ("/".join(item.nested_key) if item.nested_key else item.key), json.loads(item.value_json)


def test_generate_composes_with_logger_wandb_and_defaults_to_csv(tmp_path):
    cfg = compose_config("generate", ["logger=wandb"], tmp_path / "g", tmp_path / "c")
    assert cfg.logger.wandb._target_.endswith("WandbLogger")
    plain = compose_config("generate", [], tmp_path / "g", tmp_path / "c")
    from nliforge.tracking.generation import wandb_node

    assert wandb_node(plain) is None and wandb_node(cfg) is not None
    with open_dict(plain):
        plain.logger = None
    assert wandb_node(plain) is None


def test_artifact_names_keep_combinations_apart():
    from nliforge.tracking.runs import artifact_name

    assert artifact_name("trainset-mnli+wanli") == "trainset-mnli_plus_wanli"
    assert artifact_name("trainset-mnli_rep_wanli") == "trainset-mnli_rep_wanli"
    assert artifact_name("generated-wanli-2026-01-01/12:00") == "generated-wanli-2026-01-01_12_00"
