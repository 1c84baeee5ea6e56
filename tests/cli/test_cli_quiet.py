"""Issue 24, the command line: --help lists only the groups an entry point uses; expected mistakes are one
`error:` line and leave no run folder; a Lightning message is printed once and its tip not at all.

The refusals run as real subprocesses of `python -m nliforge.<script>`, started together to save time."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nliforge.utils.cli import app_groups, did_you_mean, hydra_error_line
from nliforge.utils.threads import warn_if_contended

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
       "WANDB_MODE": "disabled", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
ENV.pop("HYDRA_FULL_ERROR", None)
ENV.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)


def _run_all(commands: dict, cwd: Path) -> dict:
    procs = {k: subprocess.Popen([sys.executable, "-m", *cmd], cwd=cwd, env=ENV, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE) for k, cmd in commands.items()}
    return {k: (p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for k, p in procs.items()}


def _groups(help_text: str) -> set[str]:
    block = help_text.split("Configuration groups (group=option):", 1)[1].split("\n\n", 1)[0]
    return {line.split(":")[0] for line in block.splitlines() if ":" in line}


def test_help_lists_only_the_groups_the_script_uses(tmp_path):
    got = _run_all({"train": ["nliforge.train", "--help"], "review": ["nliforge.review.cli", "--help"],
                    "generate": ["nliforge.generate", "--help"]}, tmp_path)
    assert all(code == 0 for code, _, _ in got.values()), {k: v[2][-500:] for k, v in got.items()}
    train, review, generate = (_groups(got[k][1]) for k in ("train", "review", "generate"))
    assert {"model", "data/train_sets", "trainer", "suite", "experiment", "debug"} <= train
    assert not train & {"pipeline", "generator", "generate_experiment"}
    assert review == {"generator", "paths"}
    assert {"pipeline", "generator", "model", "data/train_sets"} <= generate
    assert not list(tmp_path.iterdir())


def test_app_groups_reads_the_defaults_list_and_the_choices():
    groups = app_groups("train", ["model", "data/eval_sets@suite.sets.x", "hydra/help"])
    assert "data/train_sets" in groups and "data/eval_sets" in groups and "local" in groups
    assert not any(g.startswith("hydra") for g in groups) and "pipeline" not in groups


def test_did_you_mean_only_when_close():
    assert did_you_mean("tinny", ["tiny", "minilm"]) == " did you mean 'tiny'?"
    assert did_you_mean("roberta", ["tiny", "minilm"]) == ""


def test_hydra_errors_become_one_line_naming_the_closest_key():
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException

    from conftest import CONF_DIR

    lines = []
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        for override in ("data.batch_sise=3", "modle=tiny", "data.zzz=1", "data.batch_size"):
            with pytest.raises(HydraException) as err:
                compose("train", overrides=[override])
            lines.append(hydra_error_line(err.value))
    assert lines[0] == "data.batch_sise: no such setting; did you mean 'data.batch_size'? (+data.batch_sise=... " \
                       "adds a new key)"
    assert lines[1].startswith("modle: no such setting; did you mean 'model'?")
    assert lines[2] == "data.zzz: no such setting; (+data.zzz=... adds a new key)"
    assert "\n" not in lines[3] and lines[3].startswith("Error parsing override 'data.batch_size'")


def test_a_jsonl_set_without_its_file_names_the_key(tmp_path):
    from nliforge.errors import NLIDataError
    from nliforge.data.registry import load_set

    spec = {"name": "jsonl", "loader": "jsonl", "path": "???", "num_classes": 3}
    with pytest.raises(NLIDataError, match=r"^data\.train_sets\.jsonl\.path is not set: a jsonl set needs"):
        load_set(spec, "data.train_sets.jsonl")
    missing = tmp_path / "no.jsonl"
    with pytest.raises(NLIDataError, match=rf"^data\.train_sets\.jsonl\.path='{missing}': file not found; expected"):
        load_set({**spec, "path": str(missing)}, "data.train_sets.jsonl")


@pytest.mark.slow   # five entry points at once: ~25 s alone, ~55 s with the cores shared
def test_expected_mistakes_are_one_line_and_leave_no_run_folder(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"uid": "a", "premise": "p.", "hypothesis": "h.", "label": "entailment"}\n{bad\n')
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "stage.jsonl").write_text("{}\n")                # a run folder with work in it is never removed
    jsonl = ["nliforge.train", "data/train_sets=[jsonl]"]
    cache = f"paths.cache_dir={tmp_path / 'cache'}"
    got = _run_all({
        "bad_line": [*jsonl, f"data.train_sets.jsonl.path={bad}", f"hydra.run.dir={tmp_path / 'r1'}", cache],
        "unset": [*jsonl, f"hydra.run.dir={tmp_path / 'r2'}", cache],
        "missing": [*jsonl, f"data.train_sets.jsonl.path={tmp_path / 'no.jsonl'}", f"hydra.run.dir={kept}", cache],
        "key": ["nliforge.train", "data.batch_sise=3", f"hydra.run.dir={tmp_path / 'r3'}"],
        "option": ["nliforge.evaluate", "suite=synthetc", f"hydra.run.dir={tmp_path / 'r4'}"],
    }, tmp_path)
    expect = {"bad_line": f"error: {bad}:2: invalid JSON at column 2",
              "unset": "error: data.train_sets.jsonl.path is not set: a jsonl set needs a JSONL file",
              "missing": f"error: data.train_sets.jsonl.path='{tmp_path / 'no.jsonl'}': file not found",
              "key": "error: data.batch_sise: no such setting; did you mean 'data.batch_size'?",
              "option": "error: suite: unknown option 'synthetc'; did you mean 'synthetic'?"}
    for key, start in expect.items():
        code, stdout, stderr = got[key]
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert code != 0 and len(lines) == 1 and lines[0].startswith(start), (key, stderr[-1500:])
        assert "Traceback" not in stdout + stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("r")) == []
    assert (kept / "stage.jsonl").is_file()


LIGHTNING_ONCE = """
import logging, sys, warnings
logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="[%(name)s] %(message)s")  # as Hydra does
from nliforge.utils.quiet import quiet_libraries
quiet_libraries()
from lightning.pytorch.utilities.rank_zero import rank_zero_info
rank_zero_info("GPU available: False, used: False")
rank_zero_info("💡 Tip: For seamless cloud logging and experiment tracking, try installing [litlogger]")
warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use something else", DeprecationWarning)
warnings.warn("an unknown warning stays", UserWarning)
from lightning.pytorch.utilities.rank_zero import rank_zero_warn
rank_zero_warn("Total length of `list` across ranks is zero. Please make sure this was your intention.")
rank_zero_warn("Total length of `DataLoader` across ranks is zero. Please make sure this was your intention.")
from transformers.utils import logging as hf_logging
print("hf bars", hf_logging.is_progress_bar_enabled())   # stderr is a pipe here: off
"""


def test_a_lightning_message_is_printed_once_and_the_tip_not_at_all():
    """Lightning imported after the root logger has a handler (inside nliforge-generate) printed each
    message twice: through its own `lightning` handler and through the root's."""
    out = subprocess.run([sys.executable, "-W", "always", "-c", LIGHTNING_ONCE], env=ENV, text=True,
                         capture_output=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    both = out.stdout + out.stderr
    assert both.count("GPU available: False") == 1, both
    assert "litlogger" not in both and "LeafSpec" not in both
    assert "an unknown warning stays" in both
    assert "`list` across ranks" not in both          # no data.val_sets: an empty list of loaders on purpose
    assert "`DataLoader` across ranks is zero" in both   # an empty DataLoader is still worth a warning
    assert "hf bars False" in out.stdout


def test_the_contention_warning_compares_load_and_threads(caplog):
    with caplog.at_level(logging.WARNING, logger="nliforge.threads"):
        assert warn_if_contended(2, load=2.4) and not warn_if_contended(1, load=8.0)
        assert not warn_if_contended(4, load=3.9)
    assert len(caplog.records) == 1 and "load average is 2.4" in caplog.records[0].getMessage()


def test_a_pretrained_backbone_trains_in_training_mode(recwarn):
    """`from_pretrained` returns eval mode, and Lightning keeps a module's mode: NLIClassifier switches to
    training mode when fit starts, so dropout is on and Lightning has no "module(s) in eval mode" to say."""
    import lightning as L

    from nliforge.data import Record
    from nliforge.data.datamodule import NLIDataModule
    from nliforge.models.backbone import build_backbone
    from nliforge.models.classifier import NLIClassifier

    records = [Record(f"u{i}", f"A person number {i} walks.", "Someone walks.", "entailment") for i in range(8)]
    model, tokenizer, perm = build_backbone({"kind": "tiny", "vocab_size": 200, "hidden_size": 16, "num_layers": 1,
                                             "num_heads": 2}, [t for r in records for t in (r.premise, r.hypothesis)])
    model.eval()                                          # as from_pretrained leaves it
    seen = []

    class Probe(NLIClassifier):
        def training_step(self, batch, batch_idx):
            seen.append(all(m.training for m in self.modules()))
            return super().training_step(batch, batch_idx)

    module = Probe(model, label_permutation=perm)
    dm = NLIDataModule(records, tokenizer, 4, 4, 32, 0, 0)
    L.Trainer(max_steps=2, logger=False, enable_checkpointing=False, enable_progress_bar=False,
              enable_model_summary=False, accelerator="cpu").fit(module, datamodule=dm)
    assert seen == [True, True]
    assert not [w for w in recwarn if "in eval mode" in str(w.message)]
