"""Runs a pipeline's stages in order over one run folder. Each stage reads earlier stages' datasets
from the folder and writes its own; a stage whose output is already there (and whose inputs did
not change) is skipped, so a killed or finished run picks up where it stopped."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping

from omegaconf import DictConfig

from nliforge.engine.dry_run import first_generator_stage, render_prompts
from nliforge.engine.registry import load_pipeline
from nliforge.engine.run_folder import RunFolder
from nliforge.engine.stages import Stage, StageContext
from nliforge.generation.shard import Shard, sending_nothing, sharding

log = logging.getLogger("nliforge.generate")
MERGED = "merge: the shards answered every request of the shard stage"


def check_run(cfg: DictConfig, dry_run: bool = False) -> list[Stage]:
    """Everything about a resolved run config that can fail before the run folder exists: its stage list
    (fields, with `messages` for a chat generator) and every generator slot its stages call (a dry run
    calls none: it needs a stage that sends prompts instead)."""
    from nliforge.engine.stand_in import check_generator_slots

    spec = load_pipeline(str(cfg.pipeline.name))
    stages = spec.resolve(list(cfg.pipeline.stages), chat=bool(cfg.generator.get("chat", False)))
    if dry_run:
        first_generator_stage(spec.name, stages)
    else:
        check_generator_slots(cfg, spec.slots_of(stages))
    return stages


def run_stages(cfg: DictConfig, folder: RunFolder, until: str | None = None, shard: Shard | None = None,
               merged: bool = False) -> dict:
    """Run (or skip, when current) each configured stage, or those before the stage `until`; with `shard`,
    those up to the shard stage, which sends only the shard's requests; `merged` (a merge of shards): every
    stage, the shard stage answered from the merged cache alone (engine/shards.py). Returns the manifest."""
    from nliforge.engine.shards import shard_stage

    names = list(cfg.pipeline.stages)
    stages = check_run(cfg, dry_run=until is not None)
    split = shard_stage(str(cfg.pipeline.name), stages).name if shard is not None or merged else None
    for st in stages:
        if st.name == until:
            break
        inputs = [name for name in st.inputs if name in names]   # an optional input this pipeline lacks is none
        if not st.rerun and folder.is_current(st.name, inputs):
            entry = folder.stage_entry(st.name)
            log.info("stage %-11s already done: %d -> %d (skipped)", st.name, entry["count_in"], entry["count_out"])
        else:
            with sharding(shard if st.name == split else None), \
                    sending_nothing(MERGED if merged and st.name == split else None):
                _run_stage(cfg, folder, st, inputs)
        if st.name == split and shard is not None:
            break
    return folder.manifest()


def _run_stage(cfg: DictConfig, folder: RunFolder, st: Stage, inputs: list[str]) -> None:
    log.info("stage %-11s running", st.name)
    start = time.perf_counter()
    out = st.run(StageContext(cfg, folder, st.name))
    entry = folder.write_stage(st.name, out.rows, out.drops, out.count_in, inputs,
                               time.perf_counter() - start, out.extra)
    log.info("stage %-11s %d -> %d  drops %s", st.name, entry["count_in"], entry["count_out"],
             format_drops(entry["drops"]))


def dry_run(cfg: DictConfig, folder: RunFolder, stages: list[Stage]) -> dict:
    """Run the stages before the run's first generator stage and print its first prompts (nothing is sent);
    returns the manifest."""
    target = first_generator_stage(str(cfg.pipeline.name), stages)
    manifest = run_stages(cfg, folder, until=target.name)
    rows = folder.read_rows(target.inputs[0])
    print(render_prompts(rows, bool(cfg.generator.get("chat", False))), end="", flush=True)
    log.info("dry run: %d prompts from stage %s, none sent (the same command without dry_run sends them)",
             len(rows), target.inputs[0])
    return manifest


def format_drops(drops: Mapping[str, int], limit: int = 8) -> str:
    """Drop reasons, most frequent first; past `limit` reasons (z-filtering names one per feature)
    a count of the rest, which manifest.json keeps in full."""
    ranked = sorted(drops.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{k}={v}" for k, v in ranked[:limit]) or "-"
    rest = ranked[limit:]
    if rest:
        text += f", and {len(rest)} more reasons ({sum(v for _, v in rest)} records; all in manifest.json)"
    return text


def summary_table(manifest: Mapping) -> str:
    """A small text table of every stage's counts and drop reasons (printed at the end of a run)."""
    width = max([len(n) for n in manifest.get("stages", {})] + [10]) + 2
    lines = [f"{'stage':<{width}}{'in':>8}{'out':>8}  drops"]
    for name, entry in manifest.get("stages", {}).items():
        drops = format_drops(entry.get("drops", {}))
        lines.append(f"{name:<{width}}{entry.get('count_in', 0):>8}{entry.get('count_out', 0):>8}  {drops}")
    return "\n".join(lines)

