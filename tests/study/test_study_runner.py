"""`run`: which runs are left, the multirun each (arm, seed) gets, and what the command line may add."""

from __future__ import annotations

import pytest
from study_files import write_run, write_study

from nliforge.errors import NLIDataError
from nliforge.study.gates import is_done, run_dir
from nliforge.study.runner import batches, check_run_args, group_command, groups, pending, run_study
from nliforge.study.schema import load_study


def test_finished_runs_are_skipped_and_the_rest_grouped_by_arm_and_seed(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    attempt = tmp_path / "attempt-1"
    write_run(run_dir(attempt, 0, "a", 1), {("test", "acc"): 0.5})
    (run_dir(attempt, 1, "a", 1)).mkdir(parents=True)          # started, no completion record: still to run
    (run_dir(attempt, 1, "a", 1) / "config.yaml").write_text("seed: 1\n")
    left = pending(study, attempt)
    assert len(left) == 19 and (0, "a", 1) not in left and (1, "a", 1) in left
    assert groups(left)[("a", 1)] == [1, 2, 3, 4] and groups(left)[("b", 2)] == [0, 1, 2, 3, 4]
    whole = batches(left, 1)                 # one process per arm and seed: 4 groups (a/b × seeds 1, 2)
    assert batches(left, None) == whole and sorted((a, s, len(w)) for a, s, w in whole) == \
        [("a", 1, 4), ("a", 2, 5), ("b", 1, 5), ("b", 2, 5)]
    # jobs=2: chunks of at most 19 // 4 = 4 worlds, so two processes stay busy to the end
    assert sorted(len(w) for _, _, w in batches(left, 2)) == [1, 1, 1, 4, 4, 4, 4]
    assert sorted((w, a, s) for a, s, ws in batches(left, 2) for w in ws) == sorted(left)
    assert [len(w) for _, _, w in batches(left[:3], 2)] == [1, 1, 1]     # few left: one process per run


def test_a_kept_model_is_part_of_the_completion_record(tmp_path):
    run = write_run(tmp_path / "r", {("test", "acc"): 0.5})
    assert is_done(run) and not is_done(run, save_model=True)
    (run / "model").mkdir()
    (run / "model" / "config.json").write_text("{}")
    assert is_done(run, save_model=True)


def test_each_group_is_one_multirun_into_deterministic_folders(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    cmd = group_command(study, tmp_path / "attempt-1", "b", 2, [1, 3], ["hydra/launcher=slurm"])
    assert cmd[1:4] == ["-m", "nliforge.train", "-m"]
    assert "world.seed=1,3" in cmd and "seed=2" in cmd and "ckpt_path=last" in cmd
    assert "data/train_sets=[synthetic_biased,synthetic]" in cmd and "world.n_train=300" in cmd
    assert f"hydra.sweep.dir={tmp_path / 'attempt-1' / 'runs' / 'b'}" in cmd
    assert cmd[-1] == "hydra.sweep.subdir=world-${world.seed}/seed-${seed}"
    assert "++suite.save_predictions=true" in cmd            # the learns gate reads the test set's gold labels
    assert cmd.index("hydra/launcher=slurm") > cmd.index("ckpt_path=last")


def test_the_command_line_may_say_where_runs_go_not_what_they_compute():
    ok = ["hydra/launcher=slurm", "hydra.launcher.partition=cpu", "num_threads=1", "logger=wandb"]
    assert check_run_args(ok) == ok
    for bad in ("model.max_epochs=3", "seed=4", "world.seed=1", "--cfg"):
        with pytest.raises(NLIDataError, match="put it in the study file"):
            check_run_args([bad])


def test_nothing_left_launches_nothing(tmp_path):
    study = load_study(str(write_study(tmp_path)))
    attempt = tmp_path / "attempt-1"
    for w, a, s in study.run_names():
        write_run(run_dir(attempt, w, a, s), {("test", "acc"): 0.5})
    said = []
    assert run_study(study, attempt, (), say=said.append, poll_s=0) == 0
    assert said == ["20 runs (5 worlds × 2 arms × 2 seeds): 20 done, 0 to run"]


def test_kept_models_are_rescored_once_per_suite(tmp_path, monkeypatch):
    import subprocess

    from nliforge.study import runner

    study = load_study(str(write_study(tmp_path, save_model=True, rescore=["synthetic_stress"])))
    attempt = tmp_path / "attempt-1"
    for w, a, s in study.run_names():
        run = write_run(run_dir(attempt, w, a, s), {("test", "acc"): 0.5})
        if (w, a, s) != (4, "b", 2):                              # a run whose model is not saved yet
            (run / "model").mkdir()
            (run / "model" / "config.json").write_text("{}")
    (run_dir(attempt, 0, "a", 1) / "rescore" / "synthetic_stress").mkdir(parents=True)
    (run_dir(attempt, 0, "a", 1) / "rescore" / "synthetic_stress" / "metrics.csv").write_text("done\n")
    calls = []
    monkeypatch.setattr(runner.subprocess, "run", lambda cmd, **kw: calls.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0, "", ""))
    runner.rescore(study, attempt, say=lambda line: None)
    assert len(calls) == 18                       # 20 runs: one already rescored, one without its model
    first = calls[0]
    assert first[1:3] == ["-m", "nliforge.evaluate"] and "suite=synthetic_stress" in first
    assert f"model.backbone.name_or_path={run_dir(attempt, 0, 'a', 2) / 'model'}" in first
    assert "world.n_train=300" in first and "world.seed=0" in first and "model.max_epochs=1" not in first
    assert first[-1] == f"hydra.run.dir={run_dir(attempt, 0, 'a', 2) / 'rescore' / 'synthetic_stress'}"


def test_rescoring_needs_kept_models(tmp_path):
    with pytest.raises(NLIDataError, match="rescore: scoring another suite needs the models kept"):
        load_study(str(write_study(tmp_path, rescore=["synthetic_stress"])))


def test_an_arm_that_does_not_compose_is_refused_before_preregistration(tmp_path):
    from nliforge.study.runner import check_composes

    check_composes(load_study(str(write_study(tmp_path))))
    arms = {"a": {"train_sets": ["synthetic_biased"]}, "b": {"train_sets": ["synthetic_biasd"]}}
    with pytest.raises(NLIDataError, match=r"arm b: data/train_sets: unknown option 'synthetic_biasd'; did you mean"):
        check_composes(load_study(str(write_study(tmp_path, arms=arms))))
    typo = {"a": {"train_sets": ["synthetic"], "overrides": {"model.max_epoch": 2}}, "b": {"train_sets": ["synthetic"]}}
    with pytest.raises(NLIDataError, match=r"arm a: model.max_epoch: no such setting; did you mean 'model.max_epochs'"):
        check_composes(load_study(str(write_study(tmp_path, arms=typo))))
