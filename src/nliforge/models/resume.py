"""Exact resume: the random state of every process in each checkpoint, and step checkpoints.

A checkpoint from Lightning holds the weights, the optimizer, the scheduler and the loops' position,
and (through `ResumableDataLoader`) where the epoch's batch plan had got to. What it lacks is the
random state: without it a resumed run draws new dropout masks from the step it resumes at, and all
that follows differs from an uninterrupted run. `RandomStateCallback` adds torch's, CUDA's, numpy's
and Python's generators, one set per process, and puts them back just before the first training
batch after the resume, which is where the uninterrupted run went on from the same state (no
DataLoader draws from the global generators: each has its own, `NLIDataModule.loader`).
"""

from __future__ import annotations

import logging
import random
import shutil
from pathlib import Path

import numpy as np
import torch
from lightning.pytorch import Callback
from omegaconf import DictConfig, open_dict

from nliforge.utils.instantiate import instantiate

log = logging.getLogger(__name__)
# Keys a resume may change (besides a generation folder's volatile ones: paths, logger, progress bar):
# how the run goes, not what it trains; the epoch limits, since training longer is what a resume is
# for; and the number of processes, which works but warns that the run will not match.
RESUME_MAY_CHANGE = ("ckpt_path", "num_threads", "progress_every_s", "allow_config_change", "overwrite_output",
                     "callbacks.checkpoint.every_n_train_steps", "model.max_epochs", "trainer.max_epochs",
                     "trainer.max_steps", "trainer.devices", "trainer.num_nodes")


def gather_per_rank(obj) -> list:
    """`obj` of every process, by global rank (a list of one outside distributed training).

    Lightning builds a checkpoint on every rank and rank 0 writes it, so state that differs per
    process has to be collected first; this is a collective call, made by every rank."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return [obj]
    parts = [None] * dist.get_world_size()
    dist.all_gather_object(parts, obj)
    return parts


def collect_random_state() -> dict:
    """This process's generators as plain values (tensors, ints, lists), so the checkpoint also
    loads under `torch.load(weights_only=True)`."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, mt, py_gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": {"kind": kind, "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)), "pos": int(pos),
                  "has_gauss": int(has_gauss), "gauss": float(gauss)},
        "python": {"version": version, "state": list(mt), "gauss": py_gauss},
    }


def set_random_state(state: dict) -> None:
    """Put back what `collect_random_state` took (CUDA only when this machine has the same devices)."""
    torch.set_rng_state(state["torch"])
    cuda = state.get("cuda") or []
    if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
    elif cuda:
        log.warning("checkpoint has CUDA random state for %d device(s); not restored here", len(cuda))
    npy = state["numpy"]
    np.random.set_state((npy["kind"], npy["keys"].numpy().astype(np.uint32), npy["pos"], npy["has_gauss"],
                         npy["gauss"]))
    py = state["python"]
    random.setstate((py["version"], tuple(py["state"]), py["gauss"]))


class RandomStateCallback(Callback):
    """Saves every process's random state in each checkpoint; restores it when training resumes.

    Restoring waits for the first `on_train_batch_start` after loading: between loading a checkpoint
    and that batch, a resumed run builds its model and data loaders, which the uninterrupted run had
    done long before the state was saved. A checkpoint from a different number of processes restores
    the ranks it has and warns (the run then differs from an uninterrupted one).
    """

    def __init__(self) -> None:
        self._pending: list[dict] | None = None

    def state_dict(self) -> dict:
        return {"ranks": gather_per_rank(collect_random_state())}

    def load_state_dict(self, state_dict: dict) -> None:
        self._pending = list(state_dict.get("ranks") or []) or None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx: int) -> None:
        if self._pending is None:
            return
        states, self._pending = self._pending, None
        if len(states) != trainer.world_size:
            log.warning("checkpoint holds the random state of %d process(es), this run has %d: "
                        "the resumed run will not match an uninterrupted one", len(states), trainer.world_size)
        if trainer.global_rank < len(states):
            set_random_state(states[trainer.global_rank])


def checkpoint_callbacks(node: DictConfig, key: str) -> list:
    """The `callbacks.checkpoint` node as ModelCheckpoint callbacks.

    Lightning's ModelCheckpoint takes only one of `every_n_epochs` and `every_n_train_steps`. With both
    set, the node keeps its per-epoch files and a second callback rewrites `last.ckpt` every N optimizer
    steps, so a killed run loses at most N steps. Both write `last.ckpt` without a version suffix, so it
    is always the newest state.
    """
    steps = node.get("every_n_train_steps")
    if not steps or not node.get("every_n_epochs"):   # `last.ckpt` always, never `last-v1.ckpt`
        return [instantiate(node, key, enable_version_counter=False)]
    node = node.copy()
    with open_dict(node):
        node.every_n_train_steps = None
        if node.get("save_last"):
            node.enable_version_counter = False
    by_steps = instantiate(node, key, every_n_train_steps=int(steps), every_n_epochs=None, save_top_k=0,
                           save_last=True, enable_version_counter=False)
    return [instantiate(node, key, enable_version_counter=False), by_steps]


def checkpoint_dir(cfg: DictConfig) -> Path:
    """The folder the run's config names for its checkpoints (`callbacks.checkpoint.dirpath`)."""
    node = (cfg.get("callbacks") or {}).get("checkpoint") or {}
    return Path(node.get("dirpath") or Path(cfg.paths.output_dir) / "checkpoints")


def ckpt_setting(cfg: DictConfig, out: Path) -> str | None:
    """`ckpt_path` as given, with this run folder's own `last.ckpt` spelled `last`; a Slurm job that Slurm
    requeued (SLURM_RESTART_COUNT) into a folder its first start wrote resumes by itself: from `last.ckpt`,
    or from the start when it was stopped before writing one."""
    from nliforge.models.preemption import slurm_restart

    ckpt = cfg.get("ckpt_path")
    last = checkpoint_dir(cfg) / "last.ckpt"
    if ckpt is None and slurm_restart() and (last.is_file() or (out / "config.yaml").is_file()):
        log.info("requeued Slurm job (restart %d): resuming from %s", slurm_restart(),
                 last if last.is_file() else "the start (stopped before its first checkpoint)")
        return "last"
    if ckpt not in (None, "last") and Path(str(ckpt)).resolve() == last.resolve():
        return "last"
    return None if ckpt is None else str(ckpt)


def resume_checkpoint(ckpt: str | None, folder: Path) -> str | None:
    """The file a resume loads: `last` is the folder's `last.ckpt` (none yet: a fresh start, as a run
    killed before its first checkpoint), a path is that file. Check it with
    `nliforge.models.checkpoint_io.check_checkpoint_file` before anything is written."""
    if ckpt is None:
        return None
    path = folder / "last.ckpt" if ckpt == "last" else Path(ckpt)
    return None if ckpt == "last" and not path.exists() else str(path)


def check_resume_config(cfg: DictConfig, out: Path, ckpt: str | None, keep_old: bool = True) -> str | None:
    """A resume from a checkpoint into a run folder whose `config.yaml` differs (another seed or lr) is
    refused naming the key, as a generation run folder refuses one (`RunFolder.bind_config`): its
    metrics.csv would report the new config for epochs trained with the old. `allow_config_change=true`
    accepts it: a warning names the key and the old config is kept as `config.before_resume_<n>.yaml`
    (with `keep_old=False` not yet: the caller keeps it with `keep_config_before_resume` once every check
    has passed). Returns the difference accepted, or None."""
    from omegaconf import OmegaConf

    from nliforge.errors import NLIDataError
    from nliforge.utils.config_diff import VOLATILE_KEYS, config_difference

    saved = out / "config.yaml"
    if ckpt is None or not saved.is_file():
        return None
    new = OmegaConf.to_container(cfg, resolve=True)
    old = OmegaConf.to_container(OmegaConf.load(saved), resolve=True)
    old = _moved(old, str((old.get("paths") or {}).get("output_dir") or ""), str(new["paths"]["output_dir"]))
    diff = config_difference(old, new, (*VOLATILE_KEYS, *RESUME_MAY_CHANGE))
    if diff is None:
        return None
    if not cfg.get("allow_config_change", False):
        raise NLIDataError(f"ckpt_path={cfg.get('ckpt_path')}: {out} was trained with a different config: {diff}. "
                           "Resume with the old value, use a new run folder, or pass allow_config_change=true "
                           "to continue this run under the new config")
    log.warning("resuming %s under a changed config (allow_config_change=true): %s", out, diff)
    if keep_old:
        keep_config_before_resume(out)
    return diff


def keep_config_before_resume(out: Path) -> Path:
    """Copy the run folder's config.yaml to `config.before_resume_<n>.yaml` (a resume under a changed config)."""
    n = len(list(out.glob("config.before_resume_*.yaml"))) + 1
    kept = out / f"config.before_resume_{n}.yaml"
    shutil.copyfile(out / "config.yaml", kept)
    log.warning("the old config is kept as %s", kept.name)
    return kept


def _moved(value, old_dir: str, new_dir: str):
    """`value` with every path under the run folder's old place moved to its new one (a copied or moved
    run folder resumes: its checkpoint and dynamics folders follow `paths.output_dir`)."""
    if isinstance(value, dict):
        return {k: _moved(v, old_dir, new_dir) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, old_dir, new_dir) for v in value]
    if old_dir and isinstance(value, str) and (value == old_dir or value.startswith(old_dir.rstrip("/") + "/")):
        return new_dir + value[len(old_dir):]
    return value
