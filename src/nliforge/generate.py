"""nliforge-generate: run a generation pipeline's stages over one run folder. `generate(cfg)` is
the pure function; `main` is the thin Hydra entry point."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.generation.stand_in.served import stand_in_servers
from nliforge.generation.types import GenerationError
from nliforge.engine.execute import dry_run, run_stages, summary_table
from nliforge.engine.registry import help_line, pipeline_conf_dirs
from nliforge.engine.run_folder import RunFolder
from nliforge.engine.shards import seed_merged_folder
from nliforge.generate_checks import final_config, preflight  # noqa: F401 - final_config re-exported
from nliforge.tracking.generation import log_generation
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import user_conf_dir
from nliforge.utils.cli import CONF_DIR, one_line_errors, run_cli
from nliforge.utils.run import configure_process

log = logging.getLogger("nliforge.generate")
FINAL = "dataset.jsonl"


def generate(cfg: DictConfig, on_accepted: Callable[[Path], None] | None = None) -> dict:
    """Run (or resume) the pipeline; write <run>/dataset.jsonl from the last non-side stage; return the
    manifest. Every check (`preflight`) comes before the run folder gets a file; `on_accepted(folder)` runs
    then (the console script writes Hydra's record there and opens the log)."""
    checked = preflight(cfg)                              # merge=, input=, stages, shard=, the folder's config
    cfg, shards, stages = checked["cfg"], checked["shards"], checked["stages"]
    shard, before, dry = checked["shard"], checked["before"], checked["dry"]
    configure_process(cfg)                                # thread pools, progress lines
    for noisy in ("httpx", "httpx2", "openai"):          # one INFO line per HTTP request otherwise
        logging.getLogger(noisy).setLevel(logging.WARNING)
    folder = RunFolder(cfg.paths.output_dir)
    if on_accepted is not None:
        on_accepted(folder.root)
    folder.bind_config(cfg)
    folder.update_manifest(pipeline=str(cfg.pipeline.name), stage_order=list(cfg.pipeline.stages))
    if shards:
        folder.update_manifest(**seed_merged_folder(folder, shards, before))
    if dry:
        return dry_run(cfg, folder, stages)
    if shard is not None:
        with stand_in_servers():                          # a stand-in generator's local server, for this run
            return _run_shard(cfg, folder, shard, before)
    with stand_in_servers():                              # a stand-in generator's local server, for this run
        manifest = run_stages(cfg, folder, merged=bool(shards))
    data_stages = [st.name for st in stages if not st.side] or [stages[-1].name]
    last = data_stages[-1]                               # side stages (explain) report, they make no dataset
    rows, final = folder.read_rows(last), None
    if not rows:
        manifest, final = _empty_run(cfg, folder, last), FINAL
    if rows and {"uid", "premise", "hypothesis", "label"} <= set(rows[0]):   # records, not prompts or reports
        atomic_write_text(Path(folder.root) / FINAL, (_record_line(r) for r in rows))
        manifest, final = folder.update_manifest(final={"path": FINAL, "stage": last, "count": len(rows)}), FINAL
        manifest = _register(cfg, folder) or manifest
    elif (cfg.get("register") or {}).get("name"):
        raise NLIDataError(f"register.name={cfg.register.name!r}: stage {last!r} made no records to register")
    log_generation(cfg, folder.root, manifest, rows, final)   # W&B, with logger=wandb only
    log.info("pipeline %s in %s\n%s%s", cfg.pipeline.name, folder.root, summary_table(manifest), _examples(rows))
    return manifest


def _empty_run(cfg: DictConfig, folder: RunFolder, last: str) -> dict:
    """A run whose last data stage kept no rows: an error naming each stage's count and drops (the run
    folder stays, resumable), unless `allow_empty=true`, which writes an empty dataset.jsonl with a warning."""
    stages = folder.manifest().get("stages", {})
    counts = "; ".join(f"{name} {e.get('count_in', '?')} -> {e.get('count_out', '?')}"
                       + (f" (dropped: {', '.join(f'{why} {n}' for why, n in e['drops'].items())})"
                          if e.get("drops") else "") for name, e in stages.items() if name in cfg.pipeline.stages)
    said = (f"pipeline {cfg.pipeline.name}: stage {last!r} kept 0 records ({counts}); the drops are in "
            f"{folder.stage_dir}/<stage>.drops.jsonl")
    if not cfg.get("allow_empty", False):
        raise NLIDataError(f"{said}; no {FINAL} written: pass allow_empty=true to accept an empty dataset")
    log.warning("%s; allow_empty=true: %s is empty", said, Path(folder.root) / FINAL)
    atomic_write_text(Path(folder.root) / FINAL, [])
    return folder.update_manifest(final={"path": FINAL, "stage": last, "count": 0})


def _run_shard(cfg: DictConfig, folder: RunFolder, shard, before: list[str]) -> dict:
    """A shard: the stages up to the shard stage, its requests only; then it marks itself complete."""
    manifest = run_stages(cfg, folder, shard=shard)
    split = list(cfg.pipeline.stages)[len(before)]
    manifest = folder.update_manifest(shard={"shard": str(shard), "stage": split, "complete": True})
    log.info("shard %s of pipeline %s complete in %s; merge the shards with nliforge-generate merge=<their folders "
             "or the multirun folder>\n%s", shard, cfg.pipeline.name, folder.root, summary_table(manifest))
    return manifest


def _register(cfg: DictConfig, folder: RunFolder) -> dict | None:
    """With `register.name`, make <run>/dataset.jsonl the training set data/train_sets=<name>."""
    name = (cfg.get("register") or {}).get("name")
    if not name:
        return None
    from nliforge.data.register import register_train_set

    conf = Path(cfg.register.dir) if cfg.register.get("dir") else user_conf_dir()
    target = register_train_set(str(name), Path(folder.root) / FINAL, conf, str(Path(folder.root).resolve()),
                                tool=f"nliforge-generate pipeline={cfg.pipeline.name} register.name={name}",
                                key="register.name")
    log.info("registered %s: data/train_sets=[%s]", target, name)
    return folder.update_manifest(registered={"train_set": str(name), "config": str(target)})


def _examples(rows: list[dict], k: int = 3) -> str:
    """The first k final records verbatim (premise / hypothesis, intended label), for the summary."""
    shown = [r for r in rows if isinstance(r, dict) and "premise" in r and "hypothesis" in r][:k]
    if not shown:
        return ""
    lines = [f"  [{(r.get('meta') or {}).get('intended_label') or r.get('label')}] {r['premise'][:160]!r} -> {r['hypothesis'][:160]!r}"
             for r in shown]
    return "\nfirst records of the output:\n" + "\n".join(lines)


def _record_line(row: dict) -> str:
    from nliforge.data.records import record_from_mapping

    return record_from_mapping(row, "final dataset").to_json() + "\n"


@hydra.main(version_base="1.3", config_path=CONF_DIR, config_name="generate")
def _hydra_main(cfg: DictConfig) -> None:
    from nliforge.utils.run_start import accept_run

    with one_line_errors(GenerationError, NLIDataError):
        generate(cfg, on_accepted=lambda out: accept_run(out, cfg))   # Hydra's record and the log, once checked


OmegaConf.register_new_resolver("nliforge_pipelines", help_line, replace=True)   # conf/hydra/help/nliforge_generate.yaml


def main() -> None:
    """Console script `nliforge-generate`."""
    run_cli(_hydra_main, CONF_DIR, quiet=True, extra_conf=pipeline_conf_dirs)   # pipelines from other packages


if __name__ == "__main__":
    main()
