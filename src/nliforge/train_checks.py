"""nliforge-train's checks that need no training input (the settings, the run folder, the resume and its
checkpoint), run before Hydra makes the run folder (`nliforge.utils.run_start.Preflight`) and again by
`nliforge.train.train`. They write nothing."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from nliforge.errors import NLIDataError


def is_rank_zero() -> bool:
    """True in the process that writes files: the only one, or rank 0 of a DDP run (from the launcher's
    or Slurm's environment, read by Lightning at import)."""
    from lightning.fabric.utilities.rank_zero import rank_zero_only

    return getattr(rank_zero_only, "rank", 0) == 0


def check_run_settings(cfg: DictConfig) -> None:
    """Settings that no type or range check sees, checked before the run folder gets any file."""
    from nliforge.models.positions import check_max_length

    if cfg.model.get("kind") == "generator":
        raise NLIDataError("model: this is a Z-Aug generator config (kind: generator); nliforge-train needs a "
                           "classifier model (tiny, minilm, roberta_large, ...). Generators train in pipeline=zaug.")
    check_max_length(cfg.model.backbone, int(cfg.data.max_length), "model.max_length")
    if cfg.data.get("static_widths") is not None and cfg.data.get("pad_buckets") is not None:
        raise NLIDataError(f"data.static_widths={cfg.data.static_widths} chooses the widths itself: leave "
                           f"data.pad_buckets={list(cfg.data.pad_buckets)} unset (null)")
    if cfg.get("compile") is not None and cfg.compile.get("enabled", False):
        from nliforge.models.graphs import check_compile_settings

        check_compile_settings(cfg.compile)
    if cfg.get("overwrite_output", False) and cfg.get("ckpt_path") is not None:
        raise NLIDataError(f"overwrite_output=true empties the run folder: it cannot also resume from "
                           f"ckpt_path={cfg.get('ckpt_path')}")


def preflight(cfg: DictConfig) -> dict:
    """Every check that needs no training input: the settings, the run folder (a new run into one holding a
    run, a resume into a finished one), the resume's config and its checkpoint (digest, plain data, a
    Lightning checkpoint, finite weights). Writes nothing; `nliforge-train` runs it before Hydra makes the
    run folder (`Preflight`), `train` again (the checkpoint is read once)."""
    from nliforge.data.registry import check_jsonl_paths
    from nliforge.data.world_part import check_world_parts
    from nliforge.utils.model_folder import check_model_folder

    # a mistyped model folder or data file is refused before torch and Lightning load (~7 CPU-s of imports)
    check_model_folder(cfg.model.get("backbone", {}).get("name_or_path"), "model.backbone.name_or_path")
    check_jsonl_paths(cfg.data.get("train_sets"), "data.train_sets")
    check_world_parts(cfg.data.get("train_sets"), "data.train_sets")     # a part set without a world
    check_world_parts((cfg.get("suite") or {}).get("sets"), "suite.sets")
    from nliforge.models.checkpoint_io import verify_checkpoint
    from nliforge.models.resume import check_resume_config, checkpoint_dir, ckpt_setting, resume_checkpoint
    from nliforge.utils.run_dir import check_run_dir

    check_run_settings(cfg)
    out, overwrite = Path(cfg.paths.output_dir), bool(cfg.get("overwrite_output", False))
    ckpt = ckpt_setting(cfg, out)
    rank_zero = is_rank_zero()   # under DDP every process runs train(); one writes the run folder
    if rank_zero:
        check_run_dir(out, ckpt, overwrite)
    resume_from = resume_checkpoint(ckpt, checkpoint_dir(cfg))
    changed = check_resume_config(cfg, out, resume_from, keep_old=False)
    if resume_from is not None:
        verify_checkpoint(resume_from)   # torn, changed, foreign, pickled code, NaN: one line, nothing written
    return {"out": out, "overwrite": overwrite, "ckpt": ckpt, "rank_zero": rank_zero, "resume_from": resume_from,
            "config_changed": changed is not None}
