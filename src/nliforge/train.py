"""nliforge-train: a classifier on a combination of training sets, with training dynamics, evaluated on a
suite. `train(cfg)` is the pure function (also behind the pipelines' classifier stages); `main` is the thin
Hydra entry point."""

from __future__ import annotations

import logging
import os
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import hydra
from omegaconf import DictConfig

from nliforge.errors import NLIDataError
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli

if TYPE_CHECKING:
    from nliforge.models.classifier import NLIClassifier
    from nliforge.models.poe import BiasTable

# torch, Lightning, the models and the data path are imported where they are used, so that
# `nliforge-train --help` and a config error come back without them (tests/cli/test_startup_imports.py).

__all__ = ["main", "train"]

log = logging.getLogger("nliforge.train")


def build_callbacks(cfg: DictConfig) -> list:
    """The `callbacks` group, plus the random state every checkpoint needs for an exact resume."""
    from nliforge.models.resume import RandomStateCallback, checkpoint_callbacks
    from nliforge.utils.instantiate import instantiate
    from nliforge.utils.progress_callback import progress_callback_for

    callbacks = [RandomStateCallback()]
    line_progress = progress_callback_for(cfg.trainer, cfg.get("progress_every_s"))
    if line_progress is not None:         # output to a file: a progress line every N seconds, not a bar
        callbacks.append(line_progress)
    dyn = cfg.callbacks.get("dynamics")
    if dyn is not None and dyn.get("enabled", False):
        from nliforge.cartography import TrainingDynamicsCallback

        callbacks.append(TrainingDynamicsCallback(dyn.dir, mode=dyn.mode))
    for key, node in cfg.callbacks.items():
        if isinstance(node, DictConfig) and "_target_" in node:
            if str(node._target_).endswith("ModelCheckpoint"):
                callbacks.extend(checkpoint_callbacks(node, f"callbacks.{key}"))
            else:
                callbacks.append(instantiate(node, f"callbacks.{key}"))
    return callbacks


def model_input(cfg: DictConfig) -> str:
    """`model.input` (pair | hypothesis | premise); configs that predate it mean the pair."""
    return str(cfg.model.get("input", "pair"))


def build_module(cfg: DictConfig, model, perm, val_names: list[str], poe: dict | None,
                 bias: BiasTable | None = None) -> NLIClassifier:
    """The LightningModule: PoEClassifier when `model.poe.enabled` (with the frozen expert's `bias`
    table when `model.poe.bias_model` is set), else the plain NLIClassifier.

    The model's config records `model.input`, so the saved folder says which view it was trained on.
    """
    from nliforge.models.classifier import NLIClassifier
    from nliforge.models.poe import PoEClassifier
    from nliforge.utils.instantiate import instantiate

    model.config.nliforge_input = model_input(cfg)
    args = (model, instantiate(cfg.model.optimizer, "model.optimizer"), cfg.model.weight_decay,
            cfg.model.warmup_ratio, perm, val_names)
    if poe is None:
        return NLIClassifier(*args)
    if bias is not None:
        log.info("product of experts: frozen bias expert %s, beta=%s (gamma unused)", bias.source, poe["beta"])
        return PoEClassifier(*args, beta=poe["beta"], gamma=0.0, bias_table=bias)
    log.info("product of experts: hypothesis-only bias head, beta=%s gamma=%s", poe["beta"], poe["gamma"])
    return PoEClassifier(*args, **poe)


def inference_device(cfg: DictConfig) -> str:
    """Where the frozen bias expert scores the training set: this process's GPU when the trainer may
    use one (LOCAL_RANK under DDP), else the CPU."""
    import torch

    if str(cfg.trainer.get("accelerator", "auto")) in ("auto", "gpu", "cuda") and torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}"
    return "cpu"


def frozen_bias(cfg: DictConfig, records) -> BiasTable | None:
    """`model.poe.bias_model`'s log-probs on every training hypothesis, checked, or None when unset.

    Runs before the run folder gets any file, so a wrong folder leaves nothing behind."""
    from nliforge.models.poe import bias_model_setting, check_bias_table, frozen_bias_table

    path = bias_model_setting(cfg.model)
    if path is None:
        return None
    table = frozen_bias_table(path, records, batch_size=int(cfg.data.eval_batch_size),
                              max_length=int(cfg.data.max_length), device=inference_device(cfg))
    check_bias_table(table, records)
    return table


def is_rank_zero() -> bool:
    """True in the process that writes files: the only one, or rank 0 of a DDP run (from the launcher's
    or Slurm's environment, read by Lightning at import)."""
    from lightning.fabric.utilities.rank_zero import rank_zero_only

    return getattr(rank_zero_only, "rank", 0) == 0


def compile_backbone(module: NLIClassifier, settings: DictConfig | None) -> None:
    """`compile.enabled`: torch.compile the backbone in place (`nn.Module.compile`), so checkpoints and
    the saved model keep their usual parameter names. Pays off on GPUs and long runs, not tiny CPU ones."""
    if settings is None or not settings.get("enabled", False):
        return
    kwargs = {k: settings.get(k) for k in ("mode", "dynamic", "backend") if settings.get(k) is not None}
    log.info("torch.compile of the backbone %s", kwargs)
    module.model.compile(**kwargs)


def check_distributed(cfg: DictConfig, trainer) -> None:
    """Several processes need nliforge's own batch sharding: Lightning's sampler would break the plan
    that makes a DDP run train on the same batches as one process (and cannot wrap our sampler)."""
    if trainer.world_size > 1 and cfg.trainer.get("use_distributed_sampler", True):
        raise NLIDataError(f"trainer: {trainer.world_size} processes need trainer.use_distributed_sampler=false "
                           "(nliforge splits each global batch itself); use trainer=ddp or trainer=ddp_sim")
    if int(cfg.data.batch_size) % trainer.world_size:
        raise NLIDataError(f"data.batch_size={cfg.data.batch_size} is the global batch and must divide evenly "
                           f"over {trainer.world_size} processes (trainer.devices x trainer.num_nodes)")


def check_run_settings(cfg: DictConfig) -> None:
    """Settings that no type or range check sees, checked before the run folder gets any file."""
    from nliforge.models.positions import check_max_length

    if cfg.model.get("kind") == "generator":
        raise NLIDataError("model: this is a Z-Aug generator config (kind: generator); nliforge-train needs a "
                           "classifier model (tiny, minilm, roberta_large, ...). Generators train in pipeline=zaug.")
    check_max_length(cfg.model.backbone, int(cfg.data.max_length), "model.max_length")
    if cfg.get("overwrite_output", False) and cfg.get("ckpt_path") is not None:
        raise NLIDataError(f"overwrite_output=true empties the run folder: it cannot also resume from "
                           f"ckpt_path={cfg.get('ckpt_path')}")


def read_inputs(cfg: DictConfig) -> dict:
    """Training set, suite, validation sets, input view, product-of-experts settings and the frozen bias
    expert: every input validated before the run folder gets any file."""
    from nliforge.data.datamodule import check_input
    from nliforge.data.training_set import build_training_set
    from nliforge.evaluation.registry import load_suite, pick_val_sets
    from nliforge.models.poe import poe_settings

    ts = build_training_set(cfg)
    eval_sets = load_suite(cfg)
    poe = poe_settings(cfg.model)
    return {"ts": ts, "eval_sets": eval_sets, "val_sets": pick_val_sets(cfg, eval_sets),
            "view": check_input(model_input(cfg)), "poe": poe,
            "bias": frozen_bias(cfg, ts.records) if poe is not None else None}


def train(cfg: DictConfig) -> dict:
    """Train, evaluate the suite, write metrics.csv, dynamics and the data map. Returns the results.

    The run folder holds this run alone (nliforge.utils.run_dir): a folder holding another run is refused
    unless this is its resume (`ckpt_path=last`) or `overwrite_output=true`, and it is locked while the
    run writes it. A SIGTERM (or a cluster's early warning) stops the run with a resumable checkpoint and
    a non-zero exit (`Preempted`, nliforge.models.preemption)."""
    from nliforge.data.registry import check_jsonl_paths
    from nliforge.data.world_part import check_world_parts
    from nliforge.utils.model_folder import check_model_folder

    # a mistyped model folder or data file is refused before torch and Lightning load (~7 CPU-s of imports)
    check_model_folder(cfg.model.get("backbone", {}).get("name_or_path"), "model.backbone.name_or_path")
    check_jsonl_paths(cfg.data.get("train_sets"), "data.train_sets")
    check_world_parts(cfg.data.get("train_sets"), "data.train_sets")
    check_world_parts((cfg.get("suite") or {}).get("sets"), "suite.sets")
    import lightning as L

    from nliforge.data.training_set import write_training_manifest
    from nliforge.models.checkpoint_io import check_checkpoint_file
    from nliforge.models.resume import check_resume_config, checkpoint_dir, ckpt_setting, resume_checkpoint
    from nliforge.utils.run import configure_process, prepare_output_dir
    from nliforge.utils.run_dir import check_run_dir, empty_run_dir, run_dir_lock

    configure_process(cfg)
    L.seed_everything(int(cfg.seed), workers=True)
    check_run_settings(cfg)
    out, overwrite = Path(cfg.paths.output_dir), bool(cfg.get("overwrite_output", False))
    ckpt = ckpt_setting(cfg, out)
    rank_zero = is_rank_zero()   # under DDP every process runs train(); one writes the run folder
    if rank_zero:
        check_run_dir(out, ckpt, overwrite)
    resume_from = resume_checkpoint(ckpt, checkpoint_dir(cfg))
    check_resume_config(cfg, out, resume_from)
    if resume_from is not None:
        check_checkpoint_file(resume_from)   # a torn or foreign file: one line, before anything is written
    inputs = read_inputs(cfg)
    with run_dir_lock(out) if rank_zero else nullcontext():
        if rank_zero:
            check_run_dir(out, ckpt, overwrite)   # again, holding the lock: a run may have ended meanwhile
            if overwrite:
                empty_run_dir(out)
            prepare_output_dir(cfg)
            bias = inputs["bias"]
            write_training_manifest(inputs["ts"], cfg, out,
                                    extra={"poe_bias_model": bias.source} if bias is not None else None)
        results = fit_and_record(cfg, inputs, out, resume_from)
    log.info("outputs in %s", out)
    return results


def trainer_plugins() -> list:
    """Checkpoints written atomically in their folder; under Slurm, requeueing is nliforge's (after its
    checkpoint, PreemptionCheckpoint), not Lightning's (a checkpoint from inside the signal handler)."""
    from nliforge.models.checkpoint_io import AtomicCheckpointIO
    from lightning.fabric.plugins.environments import SLURMEnvironment

    plugins: list = [AtomicCheckpointIO()]
    if SLURMEnvironment.detect():
        plugins.append(SLURMEnvironment(auto_requeue=False))
    return plugins


def fit_and_record(cfg: DictConfig, inputs: dict, out: Path, resume_from: str | None) -> dict:
    """Fit (from `resume_from` when given), evaluate the suite, save the model and the dynamics summary."""
    from lightning.pytorch.utilities.exceptions import SIGTERMException

    from nliforge.data.datamodule import NLIDataModule
    from nliforge.evaluation.record import evaluate_and_record
    from nliforge.models.backbone import build_backbone, save_backbone
    from nliforge.models.preemption import PreemptionCheckpoint
    from nliforge.models.resume import checkpoint_dir
    from nliforge.tracking.runs import log_training_run
    from nliforge.utils.instantiate import instantiate
    from nliforge.utils.run import build_loggers, close_loggers

    ts, val_sets, poe, bias = inputs["ts"], inputs["val_sets"], inputs["poe"], inputs["bias"]
    log.info("training set %s: %d examples %s", ts.train_id, len(ts.records), ts.sizes)
    # only a tiny backbone trains its tokenizer on the training texts
    texts = [t for r in ts.records for t in (r.premise, r.hypothesis)] if cfg.model.backbone.kind == "tiny" else ()
    model, tokenizer, perm = build_backbone(cfg.model.backbone, texts)
    dm = NLIDataModule(ts.records, tokenizer, cfg.data.batch_size, cfg.data.eval_batch_size, cfg.data.max_length,
                       cfg.data.num_workers, int(cfg.seed), val_sets,
                       group_by_length=cfg.data.get("group_by_length", True), input=inputs["view"],
                       hypothesis_view=poe is not None and bias is None,   # the joint head reads it; a frozen expert not
                       pad_to_multiple_of=cfg.data.get("pad_to_multiple_of"), pad_buckets=cfg.data.get("pad_buckets"))
    module = build_module(cfg, model, perm, list(val_sets), poe, bias)
    compile_backbone(module, cfg.get("compile"))
    loggers = build_loggers(cfg, f"{ts.train_id}-s{cfg.seed}", out, job_type="train")
    preemption = PreemptionCheckpoint(checkpoint_dir(cfg))
    trainer = instantiate(cfg.trainer, "trainer", callbacks=[*build_callbacks(cfg), preemption],
                          logger=loggers or False, plugins=trainer_plugins())
    check_distributed(cfg, trainer)
    try:
        try:
            trainer.fit(module, datamodule=dm, ckpt_path=resume_from)
        except SIGTERMException:
            raise preemption.preempted(trainer) from None
        finally:
            preemption.restore_signals()
        if not trainer.is_global_zero:  # a DDP worker of trainer=ddp: rank 0 evaluates and writes
            return {}
        results = evaluate_and_record(module, dm, inputs["eval_sets"], cfg, ts.train_id, out, loggers)
        if cfg.get("save_model", True):
            save_backbone(module.model, tokenizer, out / "model")
        _summarize_dynamics(cfg)
        log_training_run(loggers, cfg, out, results)   # W&B: tables, data map, training-set artifact
    finally:
        close_loggers(loggers)
    return results


def _summarize_dynamics(cfg: DictConfig) -> None:
    dyn = cfg.callbacks.get("dynamics")
    if dyn is None or not dyn.get("enabled", False) or not Path(dyn.dir).exists():
        return
    from nliforge.cartography import NEVER_LEARNED, summarize

    summarize(dyn.dir, plot_path=dyn.get("data_map"),
              never_learned=int(dyn.get("never_learned_forgetfulness", NEVER_LEARNED)))


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="train")
def _hydra_main(cfg: DictConfig) -> None:
    from nliforge.evaluation.run_table import run_table
    from nliforge.utils.environment import unpinned

    with one_line_errors(NLIDataError):   # expected refusals: one `error:` line, no traceback
        results = train(cfg)
    table = run_table(results)
    if table:   # the table the README shows for the demo (accuracy %, this run's seed)
        print(f"\n{cfg.get('task_name', 'run')}, seed {cfg.seed}: accuracy % (from metrics.csv)\n{table}\n")
        loose = unpinned()
        if loose:   # the README's numbers were made with the kernel paths pinned
            print("note: CPU kernel paths not pinned (" + ", ".join(f"{k}={v}" for k, v in loose.items()) + "): "
                  "another machine can print other numbers; `make demo` pins them (docs/reproducibility.md)\n")


def main() -> None:
    """Console script `nliforge-train`."""
    run_cli(_hydra_main, CONF_DIR, quiet=True)


if __name__ == "__main__":
    main()
