"""Right-typed but meaningless settings (a batch of 0 or -4, a negative learning rate, 0 or -2 epochs, a
max_length of 0) are refused by the typed check (nliforge.utils.schema with nliforge.utils.ranges),
naming the key and the allowed range, before any run folder exists; valid special values pass."""

from __future__ import annotations

import os
import subprocess

import pytest

from conftest import compose_config
from nliforge.utils.ranges import RANGES, Choice, Range, range_problem
from nliforge.utils.schema import ConfigTypeError, check_config


@pytest.mark.parametrize("setting,message", [
    ("data.batch_size=-4", "data.batch_size=-4: expected an integer >= 1"),
    ("data.batch_size=0", "data.batch_size=0: expected an integer >= 1"),
    ("data.eval_batch_size=0", "data.eval_batch_size=0: expected an integer >= 1"),
    ("model.optimizer.lr=-1", "model.optimizer.lr=-1: expected a number > 0"),
    ("trainer.max_epochs=-2", "trainer.max_epochs=-2: expected an integer >= 1"),
    ("trainer.max_epochs=0", "trainer.max_epochs=0: expected an integer >= 1"),
    ("model.max_length=0", "model.max_length=0: expected an integer >= 1"),
    ("model.warmup_ratio=1.5", "model.warmup_ratio=1.5: expected a number in [0, 1]"),
    ("model.weight_decay=-0.1", "model.weight_decay=-0.1: expected a number >= 0"),
    ("+trainer.accumulate_grad_batches=0", "trainer.accumulate_grad_batches=0: expected an integer >= 1"),
    ("data.num_workers=-1", "data.num_workers=-1: expected an integer >= 0"),
    ("seed=-1", "seed=-1: expected an integer in [0, 4294967295]"),
    ("data.combine=concat", "data.combine='concat': expected one of augment, replace"),
])
def test_a_setting_out_of_range_is_refused_naming_key_and_range(tmp_path, setting, message):
    cfg = compose_config("train", [setting], tmp_path, tmp_path)
    defaults = compose_config("train", [], tmp_path, tmp_path)
    with pytest.raises(ConfigTypeError) as err:
        check_config(cfg, defaults)
    assert str(err.value) == message


@pytest.mark.parametrize("setting", ["+trainer.max_steps=-1", "trainer.devices=-1", "trainer.num_sanity_val_steps=-1",
                                     "callbacks.checkpoint.save_top_k=-1", "model.warmup_ratio=0",
                                     "+trainer.limit_val_batches=0", "model.max_length=1", "seed=4294967295"])
def test_the_edges_and_special_values_pass(tmp_path, setting):
    cfg = compose_config("train", [setting], tmp_path, tmp_path)
    check_config(cfg, compose_config("train", [], tmp_path, tmp_path))


def test_every_range_describes_itself_and_a_wrong_type_is_left_to_the_typed_check():
    for key, allowed in RANGES.items():
        assert isinstance(allowed, (Range, Choice)) and allowed.describe(), key
    assert range_problem("data.batch_size", "abc") is None          # the typed check names the type
    assert range_problem("data.batch_size", True) is None
    assert range_problem("data.batch_size", None) is None           # null: "the default"
    assert range_problem("model.optimizer.lr", float("nan")) == "model.optimizer.lr=nan: expected a number > 0"
    assert range_problem("world.strengths.negation", 1.2) == "world.strengths.negation=1.2: expected a number in [0, 1]"
    assert range_problem("suite.sets.x.batch_size", 0) is None      # only the listed keys


def test_the_console_script_exits_2_with_one_line_and_no_folder(tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(["nliforge-train", "data.batch_size=-4", "model.optimizer.lr=-1", "trainer.max_epochs=0",
                           f"hydra.run.dir={out}"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == ["error: data.batch_size=-4: expected an integer >= 1; model.optimizer.lr=-1: expected a number "
                     "> 0; trainer.max_epochs=0: expected an integer >= 1"], proc.stderr[-2000:]
    assert not out.exists()
