"""A generation run in Weights & Biases (`nliforge-generate logger=wandb`): one W&B run per pipeline
run folder, read from its manifest once the pipeline is done, so the stages themselves stay W&B-free.

It logs the stage counts in/out, every drop reason, the cost/yield ledger, a sample of the generated
records, and the generated dataset as an artifact (the file itself is added: it is the new data).
The W&B settings are the `logger.wandb` node of the train config (project, entity, group, tags, offline).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from typing import TYPE_CHECKING

from omegaconf import DictConfig, OmegaConf

from nliforge.utils.run import sweep_group

if TYPE_CHECKING:   # pandas and the training-run helpers load only when W&B logging was asked for
    import pandas as pd

SAMPLES = 20           # generated records shown in the sample table
LEDGER_COUNTS = ("sent", "cached", "prompt_tokens", "completion_tokens", "retries", "cost")


def wandb_node(cfg: DictConfig) -> DictConfig | None:
    """The `logger.wandb` node when W&B logging was asked for, else None."""
    node = (cfg.get("logger") or {}).get("wandb")
    return node if node is not None and "_target_" in node else None


def stage_frames(manifest: Mapping) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per stage: count_in, count_out, dropped, seconds; one row per stage and drop reason)."""
    import pandas as pd

    stages, drops = [], []
    for name, entry in manifest.get("stages", {}).items():
        reasons = entry.get("drops", {})
        stages.append((name, int(entry.get("count_in", 0)), int(entry.get("count_out", 0)),
                       int(sum(reasons.values())), float(entry.get("seconds", 0.0))))
        drops += [(name, reason, int(count)) for reason, count in reasons.items()]
    return (pd.DataFrame(stages, columns=["stage", "count_in", "count_out", "dropped", "seconds"]),
            pd.DataFrame(drops, columns=["stage", "reason", "count"]))


def ledger_frame(manifest: Mapping) -> pd.DataFrame:
    """One row per stage that sent LLM requests: its counters, faults and failures."""
    import pandas as pd

    rows = []
    for stage, led in manifest.get("ledger", {}).items():
        rows.append({"stage": stage, **{k: led.get(k, 0) for k in LEDGER_COUNTS},
                     "faults": int(sum((led.get("faults") or {}).values())),
                     "failures": int(sum((led.get("failures") or {}).values()))})
    return pd.DataFrame(rows, columns=["stage", *LEDGER_COUNTS, "faults", "failures"])


def yield_summary(manifest: Mapping, ledger: pd.DataFrame) -> dict:
    """What the run cost and what it kept: final records per request sent and cost per final record
    (None when there is nothing to divide by)."""
    final = int((manifest.get("final") or {}).get("count", 0))
    sent, cost = int(ledger["sent"].sum()), float(ledger["cost"].sum())
    return {"final/records": final, "ledger/sent": sent, "ledger/cost": cost,
            "yield/records_per_request": final / sent if sent else None,
            "yield/cost_per_record": cost / final if final else None}


def sample_frame(rows: list[dict], k: int = SAMPLES) -> pd.DataFrame:
    """The first k generated records: uid, premise, hypothesis, label, intended label."""
    import pandas as pd

    keep = [{"uid": r.get("uid"), "premise": r.get("premise"), "hypothesis": r.get("hypothesis"),
             "label": r.get("label"), "intended_label": (r.get("meta") or {}).get("intended_label")}
            for r in rows[:k] if isinstance(r, dict)]
    return pd.DataFrame(keep, columns=["uid", "premise", "hypothesis", "label", "intended_label"])


def log_generation(cfg: DictConfig, root: Path, manifest: Mapping, rows: list[dict], final: str | None) -> str | None:
    """One W&B run (job_type=generate) for a finished pipeline run folder; returns its folder, or
    None when W&B logging was not asked for. Always finished, so a failure cannot leave it open."""
    node = wandb_node(cfg)
    if node is None:
        return None
    import wandb

    from nliforge.tracking.runs import artifact_name, keep_files_in

    root = Path(root)
    keep_files_in(root)
    name = f"{cfg.pipeline.name}-{root.name}"
    mode = "offline" if node.get("offline") else None
    run = wandb.init(project=node.get("project"), entity=node.get("entity"), name=name, job_type="generate",
                     group=node.get("group") or sweep_group(), tags=list(node.get("tags") or []),
                     dir=str(root), mode=mode, config=OmegaConf.to_container(cfg, resolve=True))
    try:
        stages, drops = stage_frames(manifest)
        ledger = ledger_frame(manifest)
        run.log({"stages": wandb.Table(dataframe=stages), "drops": wandb.Table(dataframe=drops),
                 "ledger": wandb.Table(dataframe=ledger), "samples": wandb.Table(dataframe=sample_frame(rows))})
        for key, value in yield_summary(manifest, ledger).items():
            run.summary[key] = value
        if final is not None:
            path = root / final
            art = wandb.Artifact(artifact_name(f"generated-{name}"), type="dataset",
                                 metadata={"pipeline": str(cfg.pipeline.name), "count": len(rows),
                                           "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
            art.add_file(str(path), name=final)
            run.log_artifact(art)
        return str(run.dir)
    finally:
        wandb.finish()
