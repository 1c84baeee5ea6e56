"""`nliforge-report` questions the sweep it is given (before, all four exited 0 with no word): runs of one
training set that differ in a setting other than a seed or a path were pooled as its seeds; a job folder
without metrics.csv (preempted) was ignored; a torn metrics.csv silently dropped a seed from some columns;
and with unit=world the caption still said n=seeds."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from conftest import compose_plain

from nliforge.evaluation.suite import metrics_rows, write_metrics_csv
from nliforge.report import report

SETS = ("hans", "anli", "mnli_dev", "wanli_test", "snli_test", "synthetic_test")


def job(root: Path, n: int, seed: int, **changed) -> Path:
    """A training job folder as nliforge-train -m leaves it: config.yaml (with its own paths) and metrics.csv."""
    folder = root / str(n)
    results = {name: {"acc": 0.5 + 0.01 * seed + 0.001 * i} for i, name in enumerate(SETS)}
    write_metrics_csv(metrics_rows(results, "synthetic", seed), folder / "metrics.csv")
    cfg = {"seed": seed, "num_threads": 1 + seed, "trainer": {"max_epochs": 2, "enable_progress_bar": False},
           "data": {"batch_size": 16}, "paths": {"output_dir": str(folder)},
           "callbacks": {"checkpoint": {"dirpath": f"{folder}/checkpoints"}},
           "model": {"path": f"/models/tiny-{seed}"}}
    for key, value in changed.items():
        section, leaf = key.split("__")
        cfg[section][leaf] = value
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    return folder


def run(sweep: Path, *extra: str) -> dict:
    return report(compose_plain("report", [f"sweep={sweep}", f"out={sweep.parent / 'out'}", *extra]))


def test_runs_differing_in_a_setting_are_refused_naming_the_keys(tmp_path):
    sweep = tmp_path / "sweep"
    job(sweep, 0, 0), job(sweep, 1, 1), job(sweep, 2, 2, trainer__max_epochs=1, data__batch_size=32)
    with pytest.raises(ValueError, match=r"train_id 'synthetic' pools runs that differ in data\.batch_size: 16 "
                                         r"\(2 runs, e\.g\. .*/0\) vs 32 \(1 run, e\.g\. .*/2\); trainer\.max_epochs: "
                                         r"2 .* vs 1 .*report each setting from its own sweep"):
        run(sweep)
    assert not (tmp_path / "out").exists()


def test_seeds_paths_and_thread_counts_may_differ(tmp_path):
    sweep = tmp_path / "sweep"
    for n in range(3):
        job(sweep, n, n)   # seed, num_threads, output_dir, checkpoint dirpath and model.path all differ
    summary = run(sweep)["summary"]
    assert set(summary["n"]) == {3}
    job(sweep, 3, 3, model__path="FacebookAI/roberta-base")   # a Hub id, not a path: another model
    with pytest.raises(ValueError, match=r"differ in model\.path: '/models/tiny-0' .* vs 'FacebookAI/roberta-base'"):
        run(sweep)


def test_a_job_folder_without_results_is_named(tmp_path, caplog):
    sweep = tmp_path / "sweep"
    job(sweep, 0, 0), job(sweep, 1, 1)
    preempted = job(sweep, 2, 2)
    (preempted / "metrics.csv").unlink()
    (preempted / ".hydra").mkdir()
    with caplog.at_level(logging.WARNING, logger="nliforge.report"):
        run(sweep)
    said = [r.getMessage() for r in caplog.records if "hold no metrics.csv" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("1 job folder(s)") and str(preempted) in said[0]


@pytest.mark.parametrize("cut,says", [(-30, "torn or foreign row"), (-3, "last line has no line end")])
def test_a_torn_metrics_csv_is_refused_naming_it(tmp_path, cut, says):
    sweep = tmp_path / "sweep"
    job(sweep, 0, 0), job(sweep, 1, 1)
    path = job(sweep, 2, 2) / "metrics.csv"
    data = path.read_bytes()
    path.write_bytes(data[:cut] if cut == -3 else data[:cut].rsplit(b",", 1)[0] + b"\n")
    with pytest.raises(ValueError, match=f"^{path}(:\\d+)?: .*{says}"):
        run(sweep)


def test_a_seed_missing_cells_is_named(tmp_path, caplog):
    sweep = tmp_path / "sweep"
    job(sweep, 0, 0), job(sweep, 1, 1)
    folder = sweep / "2"
    write_metrics_csv(metrics_rows({"hans": {"acc": 0.6}}, "synthetic", 2), folder / "metrics.csv")
    with caplog.at_level(logging.WARNING, logger="nliforge.report"):
        summary = run(sweep)["summary"].set_index("eval_set")
    assert summary.loc["hans", "n"] == 3 and summary.loc["anli", "n"] == 2
    assert any("train_id 'synthetic' seed 2 has no anli/acc" in r.getMessage() for r in caplog.records)


def test_with_unit_world_the_captions_count_worlds(tmp_path):
    sweep = tmp_path / "sweep"
    n = 0
    for train_id in ("base", "aug"):
        for world in range(3):
            for seed in range(2):
                folder = sweep / str(n)
                acc = 0.5 + 0.02 * world + 0.01 * seed + (0.03 if train_id == "aug" else 0)
                write_metrics_csv(metrics_rows({"hans": {"acc": acc}}, train_id, seed), folder / "metrics.csv")
                (folder / "config.yaml").write_text(f"seed: {seed}\nworld:\n  seed: {world}\n")
                n += 1
    md = run(sweep, "unit=world", "baseline=base")["md"].read_text()
    legend = md.split("\n\n")[2]
    assert "over worlds" in legend and "n=worlds" in legend and "seeds (sample" not in legend
    caption = md.split("## Differences")[1]
    assert "n=worlds" in caption and "n=seeds" not in caption and "fewer than 3 worlds" in caption
    assert "n=3" in md   # three worlds, not six seeds
