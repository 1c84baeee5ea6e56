"""Pieces every entry point shares: output folder, loggers, closing the run."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.instantiate import instantiate

log = logging.getLogger("nliforge")


def configure_process(cfg: DictConfig) -> None:
    """Once per run, before any work: size the thread pools (`num_threads`, null = the usable cores) and
    set the seconds between progress lines when output goes to a file (`progress_every_s`)."""
    from nliforge.utils.progress import set_interval
    from nliforge.utils.threads import set_num_threads

    set_num_threads(cfg.get("num_threads"))
    set_interval(cfg.get("progress_every_s"))


def prepare_output_dir(cfg: DictConfig) -> Path:
    """Create the run folder and save the resolved config in it (never any secret: keys come from env), and
    the environment the numbers depend on (environment.json: packages, kernel path, threads, commit)."""
    from nliforge.utils.environment import write_environment

    out = Path(cfg.paths.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "config.yaml", [OmegaConf.to_yaml(cfg, resolve=True)])
    write_environment(out)
    return out


def sweep_group() -> str | None:
    """The sweep folder's name when this job is part of a Hydra multirun, else None."""
    try:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        hc = HydraConfig.get()
    except (ImportError, ValueError):   # not under @hydra.main (tests, library use)
        return None
    return Path(hc.sweep.dir).name if hc.mode == RunMode.MULTIRUN else None


def build_loggers(cfg: DictConfig, run_name: str, out: Path, job_type: str | None = None) -> list:
    """Lightning loggers from the `logger` group; W&B files are kept inside the run folder, and a W&B
    run gets `job_type` (train, ...) so a sweep's group tells training runs from its report."""
    loggers = []
    for key, node in (cfg.get("logger") or {}).items():
        if node is None or "_target_" not in node:
            continue
        kwargs = {}
        if "WandbLogger" in node._target_:
            # per run, not setdefault: in a multirun each job keeps its W&B files in its own folder
            for var in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR"):
                os.environ[var] = str(out / "wandb_files")
            Path(out / "wandb_files").mkdir(parents=True, exist_ok=True)
            kwargs = {"name": run_name, **({"job_type": job_type} if job_type else {})}
            if node.get("group") is None and sweep_group():
                kwargs["group"] = sweep_group()   # a multirun's jobs side by side in W&B
        logger = instantiate(node, f"logger.{key}", **kwargs)
        logger.log_hyperparams(OmegaConf.to_container(cfg, resolve=True))
        loggers.append(logger)
    return loggers


def log_final_metrics(loggers: list, results: dict) -> None:
    """Log suite results as `test/<set>/<metric>` to every logger."""
    flat = {f"test/{name}/{metric}": value for name, metrics in results.items() for metric, value in metrics.items()}
    for lg in loggers:
        lg.log_metrics(flat)
        lg.save()


def close_loggers(loggers: list) -> None:
    """Always finish W&B, so one failed job of a multirun cannot poison the next."""
    for lg in loggers:
        try:
            lg.finalize("success")
        except Exception as err:  # noqa: BLE001
            log.warning("logger %s did not finalize: %s", type(lg).__name__, err)
    if any(type(lg).__name__ == "WandbLogger" for lg in loggers):
        import wandb

        wandb.finish()
