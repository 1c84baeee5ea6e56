"""Runs a pipeline's stages in order over one run folder. Each stage reads earlier stages' datasets
from the folder and writes its own; a stage whose output is already there (and whose inputs did
not change) is skipped, so a killed or finished run picks up where it stopped."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

from omegaconf import DictConfig

from nliforge.engine.registry import load_pipeline
from nliforge.engine.run_folder import RunFolder
from nliforge.engine.stages import Stage, StageContext

log = logging.getLogger("nliforge.generate")


def check_stage_list(names: Sequence[str], pipeline: str) -> list[Stage]:
    """The Stage objects for `pipeline.stages`, in order, from the registered pipeline `pipeline`
    (nliforge.engine.registry): an unknown stage, or one reading a field no stage before it writes,
    fails here with the pipeline's valid stages or the missing fields."""
    return load_pipeline(pipeline).resolve(names)


def run_stages(cfg: DictConfig, folder: RunFolder) -> dict:
    """Run (or skip, when current) each configured stage; returns the final manifest."""
    names = list(cfg.pipeline.stages)
    stages = check_stage_list(names, str(cfg.pipeline.name))
    for st in stages:
        inputs = [name for name in st.inputs if name in names]   # an optional input this pipeline lacks is none
        if not st.rerun and folder.is_current(st.name, inputs):
            entry = folder.stage_entry(st.name)
            log.info("stage %-11s already done: %d -> %d (skipped)", st.name, entry["count_in"], entry["count_out"])
            continue
        log.info("stage %-11s running", st.name)
        start = time.perf_counter()
        out = st.run(StageContext(cfg, folder, st.name))
        entry = folder.write_stage(st.name, out.rows, out.drops, out.count_in, inputs,
                                   time.perf_counter() - start, out.extra)
        log.info("stage %-11s %d -> %d  drops %s", st.name, entry["count_in"], entry["count_out"],
                 format_drops(entry["drops"]))
    return folder.manifest()


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

