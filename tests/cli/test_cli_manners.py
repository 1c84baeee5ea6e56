"""CLI manners: every console script answers `--help` with exit 0 and its actions and
main options; expected refusals are one `error:` line on stderr, a nonzero exit and no traceback.

The scripts run as real subprocesses (the installed console scripts, started together to save time).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from conftest import CONF_DIR
from nliforge.data import Record, write_jsonl
from nliforge.review.cli import ACTIONS

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
HYDRA_APPS = {"nliforge-train": "train", "nliforge-evaluate": "evaluate", "nliforge-generate": "generate",
              "nliforge-review": "review", "nliforge-report": "report", "nliforge-publish": "publish"}
# What each --help must name besides `usage:`: its actions (or subcommands) and main options.
MUST_SHOW = {
    "nliforge-train": ["data/train_sets=", "data.combine=", "model=", "trainer=", "suite=", "ckpt_path="],
    "nliforge-evaluate": ["model.backbone.name_or_path=", "suite=", "trainer="],
    "nliforge-generate": ["pipeline=", "generator=", "experiment=", "pipeline.stages"],
    "nliforge-review": [*ACTIONS, "run=", "serve.host=", "export.format=", "teacher.model_dir="],
    "nliforge-report": ["sweep=", "metric=", "in_domain="],
    "nliforge-analyze": ["stats", "partial-input", "word-label", "similarity", "data-map"],
    "nliforge-vllm": ["install", "start", "serve", "stop", "status"],
    "nliforge-publish": ["run=", "repo_id=", "set=", "dry_run=", "card.license="],
    "nliforge-data": ["list", "fetch", "check", "NLIFORGE_DATA_DIR"],
    "nliforge-study": ["preregister", "run", "status", "verdict", "amend", "root="],
}
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
       "WANDB_MODE": "disabled"}
ENV.pop("NLIFORGE_REVIEW_TOKEN", None)


def _command(script: str) -> list[str]:
    """The installed console script, or (not installed) its entry point through this Python."""
    found = shutil.which(script, path=str(Path(sys.executable).parent)) or shutil.which(script)
    if found:
        return [found]
    module, func = SCRIPTS[script].split(":")
    return [sys.executable, "-c", f"import sys; sys.argv[0] = {script!r}; from {module} import {func}; {func}()"]


def _run_all(commands: dict, cwd: Path) -> dict:
    """Start every command at once, then collect (returncode, stdout, stderr) by key."""
    procs = {key: subprocess.Popen(cmd, cwd=cwd, env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for key, cmd in commands.items()}
    out = {}
    for key, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        out[key] = (proc.returncode, stdout, stderr)
    return out


@pytest.fixture(scope="module")
def helps(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("help")
    return _run_all({s: [*_command(s), "--help"] for s in SCRIPTS}, cwd), cwd


def test_every_console_script_is_covered():
    assert set(SCRIPTS) == set(MUST_SHOW)


@pytest.mark.parametrize("script", sorted(MUST_SHOW))
def test_help_exits_0_with_the_actions_and_main_options(helps, script):
    (code, stdout, stderr), cwd = helps[0][script], helps[1]
    assert code == 0, (script, stderr[-2000:])
    assert "Traceback" not in stdout + stderr
    assert "usage:" in stdout.lower()
    missing = [word for word in MUST_SHOW[script] if word not in stdout]
    assert not missing, f"{script} --help does not show {missing}"
    assert not list(cwd.iterdir()), "--help must not write anything"


def _main_options(text: str) -> list[str]:
    """The option names listed under `Main options` in a Hydra app's help."""
    block = text.split("Main options", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0].split("=")[0] for line in block.splitlines()[1:]     # continuation lines (deeper
            if line.strip() and len(line) - len(line.lstrip()) <= 4]           # indent) describe an option


@pytest.mark.parametrize("script, app", sorted(HYDRA_APPS.items()))
def test_the_main_options_shown_exist_in_the_config(helps, script, app):
    """The help text is written by hand (conf/hydra/help/): every option it names must be a config group
    or a key of the composed config, so the help cannot drift from the config unnoticed."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose(app)
    GlobalHydra.instance().clear()
    options = _main_options(helps[0][script][1])
    assert len(options) >= 3
    for option in options:
        if (Path(CONF_DIR) / option).is_dir():
            continue
        node = cfg
        for part in option.split("."):                      # keys() also lists mandatory (???) values
            assert OmegaConf.is_dict(node) and part in node.keys(), f"{script}: {option} is not in the config"
            node = node._get_node(part)


def _one_line_error(code: int, stdout: str, stderr: str, needle: str) -> None:
    assert code != 0
    assert "Traceback" not in stdout + stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], stderr


def test_expected_refusals_are_one_line_errors_without_a_traceback(tmp_path):
    run = tmp_path / "gen_run"
    write_jsonl([Record("u1", "A premise.", "A hypothesis.", None)], run / "dataset.jsonl")
    missing = tmp_path / "no" / "such" / "model"
    got = _run_all({
        "serve": [*_command("nliforge-review"), "serve", f"run={run}", "serve.host=0.0.0.0", "serve.port=0"],
        "evaluate": [*_command("nliforge-evaluate"), f"model.backbone.name_or_path={missing}",
                     f"hydra.run.dir={tmp_path / 'eval_run'}", f"paths.cache_dir={tmp_path / 'cache'}"],
        "teacher": [*_command("nliforge-review"), "teacher", f"run={run}", f"teacher.model_dir={missing}"],
        "train": [*_command("nliforge-train"), "model=pretrained", f"model.backbone.name_or_path={missing}",
                  f"hydra.run.dir={tmp_path / 'train_run'}", f"paths.cache_dir={tmp_path / 'cache'}"],
        "no_action": [*_command("nliforge-review")],
        "publish": [*_command("nliforge-publish"), f"run={tmp_path / 'no_run'}", "repo_id=me/set"],
    }, tmp_path)
    _one_line_error(*got["serve"], "serve.host=0.0.0.0: refusing to serve the review page on '0.0.0.0' without "
                                   "a token")
    assert not (run / "review" / "review.sqlite").exists()
    _one_line_error(*got["evaluate"], f"model.backbone.name_or_path='{missing}': no such folder")
    assert not (tmp_path / "eval_run" / "config.yaml").exists()
    _one_line_error(*got["teacher"], f"teacher.model_dir='{missing}': no such folder")
    _one_line_error(*got["train"], f"model.backbone.name_or_path='{missing}': no such folder")
    assert not (tmp_path / "train_run" / "config.yaml").exists()
    _one_line_error(*got["publish"], f"run={tmp_path / 'no_run'}: not a generation run folder")
    assert not (tmp_path / "no_run").exists()
    code, stdout, stderr = got["no_action"]
    assert code == 2 and "Traceback" not in stderr and re.search(r"usage: nliforge-review \{serve\|", stderr)
    assert "nliforge-review --help" in stderr


def test_a_failed_cluster_job_ends_in_one_line(monkeypatch, capsys):
    """A multirun whose Slurm job failed (submitit's UncompletedJobError, raised in the launching process)
    ends in one `error:` line naming the job and the job's own error line, exit 1, no traceback."""
    import submitit

    from nliforge.utils.cli import run_cli

    message = ("Job 12_1 (task: 0) with path /tmp/sweep/.submitit/12_1/12_1_0_result.pkl\nhas not produced any "
               "output (state: FAILED)\nError stream produced:\n----------------------------------------\n"
               "error: model.max_epochs=-5: expected an integer >= 1 (got -5)\nsrun: error: node: task 0: Exited "
               "with exit code 2\n")

    def failing_main():
        raise submitit.core.utils.UncompletedJobError(message)

    monkeypatch.setattr(sys, "argv", ["nliforge-train"])
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    with pytest.raises(SystemExit) as exit_:
        run_cli(failing_main, CONF_DIR)
    assert exit_.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: a job of the multirun failed: Job 12_1 (task: 0) with path "
                   "/tmp/sweep/.submitit/12_1/12_1_0_result.pkl; the job said: model.max_epochs=-5: expected an "
                   "integer >= 1 (got -5)"]
