"""A generation run folder: the run's config, one dataset per stage with its drops, and a manifest.

Layout::

    <run>/config.yaml                 the resolved config of the run's first start
    <run>/stages/<stage>.jsonl        each stage's output rows (written atomically)
    <run>/stages/<stage>.drops.jsonl  one row per dropped item: uid and reason
    <run>/manifest.json               versions (and the git commit of the code), counts in/out and drop
                                      reasons per stage, ledger
    <run>/environment.json            packages, lock hash, CPU kernel path, threads (nliforge.utils.environment)
    <run>/llm_cache.sqlite            answered requests (the runner's exactly-once cache)

A folder is tied to one config: starting it again with an output-changing difference is refused,
naming the key, so two configs never mix in one dataset.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.utils.atomic import atomic_write_text, read_json_file
from nliforge.utils.config_diff import VOLATILE_KEYS, config_difference, first_difference, moved_paths  # noqa: F401 - re-exported
from nliforge.utils.environment import source_commit, versions, write_environment  # noqa: F401 - re-exported


def rows_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


class RunFolder:
    """Reads and writes one generation run folder (see the module docstring)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.stage_dir = self.root / "stages"

    # -- config --------------------------------------------------------------------------------
    def bind_config(self, cfg: DictConfig | Mapping) -> None:
        """Save the config on the first start; refuse a later start whose config differs. Each start
        (re)writes environment.json."""
        plain = self.check_config(cfg)
        saved = self.root / "config.yaml"
        if saved.exists():
            write_environment(self.root)     # this start's environment (a resume may run elsewhere)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write_text(saved, [OmegaConf.to_yaml(OmegaConf.create(plain))])
        write_environment(self.root)

    def check_config(self, cfg: DictConfig | Mapping) -> dict:
        """Refuse `cfg` when the folder was started with an output-changing difference (a moved folder's own
        paths are no difference); writes nothing. Returns `cfg` as plain data."""
        plain = OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)
        saved = self.root / "config.yaml"
        if self.root.exists() and not self.root.is_dir():
            raise NLIDataError(f"paths.output_dir={str(self.root)!r}: is a file, not a folder")
        if saved.exists():
            old = OmegaConf.to_container(OmegaConf.load(saved), resolve=True)
            was, now = ((c.get("paths") or {}).get("output_dir") or "" for c in (old, plain))
            diff = config_difference(moved_paths(old, str(was), str(now or self.root)), plain)   # a moved folder
            if diff:
                raise NLIDataError(
                    f"{self.root}: this run folder was made with a different config: {diff}. Use a new "
                    "folder (or the old value) so two configs never mix in one dataset.")
        return plain

    # -- stage datasets --------------------------------------------------------------------------
    def output_path(self, stage: str) -> Path:
        return self.stage_dir / f"{stage}.jsonl"

    def drops_path(self, stage: str) -> Path:
        return self.stage_dir / f"{stage}.drops.jsonl"

    def read_rows(self, stage: str) -> list[dict]:
        """The rows a finished stage wrote; a clear error if that stage has not run."""
        path = self.output_path(stage)
        data = path.read_bytes() if path.exists() else b""   # read once: checked and parsed from the same bytes
        entry = self.stage_entry(stage)
        if entry.get("status") != "done" or entry.get("sha256") != hashlib.sha256(data).hexdigest():
            raise NLIDataError(f"{path}: stage {stage!r} has not finished in this run folder; "
                               f"run the pipeline with {stage!r} in pipeline.stages first")
        return [json.loads(line) for line in data.decode("utf-8").split("\n") if line.strip()]

    def write_stage(self, stage: str, rows: Iterable[Mapping], drops: Sequence[tuple[str, str]],
                    count_in: int, inputs: Sequence[str], seconds: float, extra: Mapping | None = None) -> dict:
        """Write a stage's rows and drops atomically, then record it as done in the manifest."""
        rows = list(rows)
        atomic_write_text(self.output_path(stage),
                          (json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
        atomic_write_text(self.drops_path(stage),
                          (json.dumps({"uid": u, "reason": why}, ensure_ascii=False) + "\n" for u, why in drops))
        entry = {
            "status": "done", "count_in": count_in, "count_out": len(rows),
            "drops": dict(sorted(Counter(why for _, why in drops).items())),
            "output": str(self.output_path(stage).relative_to(self.root)),
            "sha256": rows_digest(self.output_path(stage)),
            "inputs": {name: self.stage_entry(name).get("sha256", "") for name in inputs},
            "seconds": round(seconds, 3), "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
            **({"extra": dict(extra)} if extra else {}),
        }
        self.update_manifest(stages={stage: entry})
        return entry

    # -- manifest -----------------------------------------------------------------------------------
    def manifest(self) -> dict:
        path = self.root / "manifest.json"
        return read_json_file(path) if path.exists() else {"stages": {}}

    def update_manifest(self, stages: Mapping[str, Mapping] | None = None, **fields: Any) -> dict:
        data = self.manifest()
        data.setdefault("stages", {}).update(stages or {})
        data.update(fields)
        data["versions"] = versions()
        atomic_write_text(self.root / "manifest.json", [json.dumps(data, indent=2, ensure_ascii=False) + "\n"])
        return data

    def stage_entry(self, stage: str) -> dict:
        return self.manifest().get("stages", {}).get(stage, {})

    def is_done(self, stage: str) -> bool:
        entry = self.stage_entry(stage)
        return entry.get("status") == "done" and entry.get("sha256") == rows_digest(self.output_path(stage))

    def is_current(self, stage: str, inputs: Sequence[str]) -> bool:
        """Done, and every input stage still holds the output this stage was computed from."""
        if not self.is_done(stage):
            return False
        recorded = self.stage_entry(stage).get("inputs", {})
        return all(recorded.get(name) == self.stage_entry(name).get("sha256") for name in inputs)
