"""nliforge-generate's checks (the settings, `input=`, the pipeline and its stages, the shards of a merge, the
run folder's config), run before Hydra makes the run folder (`nliforge.utils.run_start.Preflight`) and again
by `nliforge.generate.generate`. They write nothing."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf

from nliforge.engine.execute import check_run
from nliforge.engine.input_set import check_input
from nliforge.engine.run_folder import RunFolder
from nliforge.engine.shards import check_same_inputs, check_shards, merged_config, shard_stage
from nliforge.engine.stand_in import resolve_generator
from nliforge.generation.shard import parse_shard


def final_config(cfg: DictConfig) -> DictConfig:
    """The run's config, resolved once before anything runs: the chosen generator (or the demo's stand-in)
    and `input` applied, then read-only, so no stage can rewrite what config.yaml records (a stage that
    needs a variant, e.g. the classifier's training config, derives its own copy)."""
    final = check_input(resolve_generator(cfg))
    OmegaConf.set_readonly(final, True)
    return final


def before_shard_stage(cfg: DictConfig, stages: list, shards) -> list[str]:
    """The stages before the shard stage of a shard or a merge (checked before the folder exists), else []."""
    if not shards and cfg.get("shard") is None:
        return []
    split = shard_stage(str(cfg.pipeline.name), stages).name
    return [st.name for st in stages[:[s.name for s in stages].index(split)]]


def preflight(cfg: DictConfig) -> dict:
    """Every check before the run folder gets a file: the shards of `merge=` (each there, finished, one
    config), `input=`, the pipeline's stages and generator slots, `shard=`, `register.name`, and a folder
    started with another config. Returns the run's final config (`cfg`), `shards`, `stages`, `shard`,
    `before` (the stages before the shard stage) and `dry` (a dry run)."""
    shards = check_shards(cfg.merge) if cfg.get("merge") else None
    final = merged_config(cfg, shards) if shards else final_config(cfg)
    dry = bool(final.get("dry_run"))                       # print the first prompts, call no LLM
    stages = check_run(final, dry_run=dry)                 # stages, fields, generator slots
    shard, before = parse_shard(final.get("shard")), before_shard_stage(final, stages, shards)
    if shards:
        check_same_inputs(shards, before)
    if (final.get("register") or {}).get("name"):
        from nliforge.review.reviewed_set import check_train_set_name

        check_train_set_name(str(final.register.name), "register.name")
    RunFolder(final.paths.output_dir).check_config(final)   # a folder started with another config
    return {"cfg": final, "shards": shards, "stages": stages, "shard": shard, "before": before, "dry": dry}
