"""A checkpoint is resumed only when it is what was written (models/checkpoint_io.py): each carries a sha256
record written with it; flipped bytes, non-finite weights, a foreign torch file and a pickle that would run
code are one `error:` line naming the file, before anything is written (before: 400 flipped bytes in the
embeddings loaded as NaN weights, the resume exited 0 and overwrote a finished run's metrics.csv and
model/; a foreign torch file was a 66-line `KeyError: 'pytorch-lightning_version'` traceback and left a
run folder; the pickle refusal came after the folder existed and passed on torch's advice to load with
`weights_only=False`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import compose_config
from nliforge.errors import NLIDataError
from nliforge.models.checkpoint_io import AtomicCheckpointIO, digest_path, verify_checkpoint

ROOT = Path(__file__).resolve().parents[2]
D = ["experiment=demo", "world.n_train=200", "world.n_dev=60", "world.n_test=60", "world.n_challenge=60",
     "model.max_epochs=1", "logger=none", "trainer.enable_progress_bar=false", "num_threads=1"]


def lightning_like(value: float = 1.0) -> dict:
    return {"pytorch-lightning_version": "2.6", "epoch": 0, "global_step": 3,
            "state_dict": {"model.embeddings.weight": torch.full((50, 8), value), "model.head.bias": torch.zeros(3)},
            "optimizer_states": [{"state": {0: {"exp_avg": torch.zeros(50, 8)}}}]}


def saved(tmp_path: Path, checkpoint: dict | None = None) -> Path:
    path = tmp_path / "checkpoints" / "last.ckpt"
    AtomicCheckpointIO().save_checkpoint(checkpoint or lightning_like(), path)
    return path


def flip(path: Path, n: int = 400) -> None:
    """Flip n bytes in the middle of the largest member (the embeddings), as the probe did."""
    data = bytearray(path.read_bytes())
    start = len(data) // 3
    for i in range(start, start + n):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text and "weights_only" not in text
    return text


def test_a_checkpoint_is_written_with_its_digest_and_read_back(tmp_path):
    path = saved(tmp_path)
    record = json.loads(digest_path(path).read_text())
    assert len(record["sha256"]) == 64 and record["previous"] is None
    assert torch.equal(verify_checkpoint(path)["state_dict"]["model.embeddings.weight"], torch.ones(50, 8))
    AtomicCheckpointIO().save_checkpoint(lightning_like(2.0), path)     # the next save remembers this one
    assert json.loads(digest_path(path).read_text())["previous"] == record["sha256"]
    AtomicCheckpointIO().remove_checkpoint(path)
    assert not path.exists() and not digest_path(path).exists()


def test_flipped_bytes_are_refused_naming_the_file(tmp_path):
    path = saved(tmp_path)
    flip(path)
    with pytest.raises(NLIDataError) as err:
        verify_checkpoint(path)
    assert f"ckpt_path='{path}': its bytes differ from the sha256 recorded" in one_line(err)


def test_non_finite_weights_are_refused_even_with_a_matching_digest(tmp_path):
    path = saved(tmp_path, lightning_like(float("nan")))
    with pytest.raises(NLIDataError) as err:
        verify_checkpoint(path)
    assert "non-finite values (NaN or inf) in state_dict.model.embeddings.weight" in one_line(err)
    inf_moment = lightning_like()
    inf_moment["optimizer_states"][0]["state"][0]["exp_avg"][3, 3] = float("inf")
    with pytest.raises(NLIDataError, match=r"in optimizer_states\.0\.state\.0\.exp_avg"):
        verify_checkpoint(saved(tmp_path / "inf", inf_moment))


def test_a_foreign_torch_file_is_one_line_not_a_key_error(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save({"embeddings": torch.zeros(3)}, path)
    with pytest.raises(NLIDataError) as err:
        verify_checkpoint(path)
    assert "not a Lightning training checkpoint (no 'pytorch-lightning_version' or 'state_dict')" in one_line(err)


class RunsCode:
    def __reduce__(self):
        return (os.system, ("touch ran_code",))


def test_a_pickle_that_would_run_code_is_refused_without_suggesting_weights_only_false(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.ckpt"
    torch.save({"pytorch-lightning_version": "2.6", "state_dict": {}, "x": RunsCode()}, path)
    with pytest.raises(NLIDataError) as err:
        verify_checkpoint(path)
    assert "pickled Python objects that are not plain data" in one_line(err)
    assert not (tmp_path / "ran_code").exists()


def test_a_kill_between_the_record_and_the_rename_leaves_a_pair_that_agrees(tmp_path, monkeypatch):
    path = saved(tmp_path)
    real_replace = os.replace

    def killed(src, dst):   # the record of the new file is in place; the kill comes before the rename
        if str(dst) == str(path):
            raise KeyboardInterrupt
        real_replace(src, dst)
    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        AtomicCheckpointIO().save_checkpoint(lightning_like(3.0), path)
    monkeypatch.setattr(os, "replace", real_replace)
    assert torch.equal(verify_checkpoint(path)["state_dict"]["model.embeddings.weight"], torch.ones(50, 8))


def test_a_checkpoint_without_a_record_is_checked_for_its_contents_and_warned_about(tmp_path, caplog):
    path = tmp_path / "elsewhere.ckpt"
    torch.save(lightning_like(), path)
    assert verify_checkpoint(path)["global_step"] == 3
    assert "has no digest record" in caplog.text
    torch.save(lightning_like(float("inf")), path)
    with pytest.raises(NLIDataError, match="non-finite"):
        verify_checkpoint(path)


def nliforge_train(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NLIFORGE_CACHE": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "nliforge.train", *D, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow   # two console-script starts (torch and Lightning imports): ~20-80 s on a shared machine
def test_the_console_script_refuses_foreign_and_code_running_files_before_the_run_folder_exists(tmp_path):
    foreign, evil = tmp_path / "weights.pt", tmp_path / "evil.ckpt"
    torch.save({"embeddings": torch.zeros(3)}, foreign)
    torch.save({"pytorch-lightning_version": "2.6", "state_dict": {}, "x": RunsCode()}, evil)
    for ckpt, says in ((foreign, "not a Lightning training checkpoint"), (evil, "not plain data")):
        out = tmp_path / f"run_{ckpt.stem}"
        done = nliforge_train(tmp_path, f"ckpt_path={ckpt}", f"hydra.run.dir={out}")
        assert done.returncode == 1 and done.stderr.strip().splitlines() == [
            line for line in done.stderr.strip().splitlines() if line.startswith("error: ")], done.stderr[-3000:]
        assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr and "weights_only" not in done.stderr
        assert not out.exists()
    assert not (ROOT / "ran_code").exists()


@pytest.mark.slow
def test_a_damaged_resume_stops_and_a_finished_run_is_never_overwritten(tmp_path):
    from nliforge.train import train

    finished = tmp_path / "finished"
    train(compose_config("train", D, finished, tmp_path / "cache"))
    results = {name: (finished / name).read_bytes() for name in ("metrics.csv", "model/model.safetensors")}
    last = finished / "checkpoints" / "last.ckpt"
    with pytest.raises(NLIDataError, match="holds a finished run's results .*a resume would overwrite them"):
        train(compose_config("train", [*D, "ckpt_path=last", "model.max_epochs=2"], finished, tmp_path / "cache"))
    assert {name: (finished / name).read_bytes() for name in results} == results

    stopped = tmp_path / "stopped"          # a run stopped after its checkpoint, before its results
    shutil.copytree(finished, stopped, ignore=shutil.ignore_patterns("metrics.csv", "model"))
    good = (stopped / "checkpoints" / "last.ckpt").read_bytes()
    flip(stopped / "checkpoints" / "last.ckpt")
    resume = compose_config("train", [*D, "ckpt_path=last", "model.max_epochs=2"], stopped, tmp_path / "cache")
    with pytest.raises(NLIDataError, match="its bytes differ from the sha256 recorded"):
        train(resume)
    checkpoint = torch.load(last, weights_only=True)        # NaN weights with a digest that matches them
    checkpoint["state_dict"]["model.roberta.embeddings.word_embeddings.weight"][:5] = float("nan")
    AtomicCheckpointIO().save_checkpoint(checkpoint, stopped / "checkpoints" / "last.ckpt")
    with pytest.raises(NLIDataError, match="non-finite values .* in state_dict.model.roberta.embeddings.word_embeddings"):
        train(resume)
    assert not (stopped / "metrics.csv").exists() and not (stopped / "model").exists()
    (stopped / "checkpoints" / "last.ckpt").write_bytes(good)
    digest_path(stopped / "checkpoints" / "last.ckpt").write_bytes(digest_path(last).read_bytes())
    train(resume)                           # the whole checkpoint resumes
    assert (stopped / "metrics.csv").is_file() and (stopped / "dynamics" / "epoch_001.parquet").is_file()
