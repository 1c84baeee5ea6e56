"""The stage registry: what a stage is (`Stage`), what it gets (`StageContext`) and returns
(`StageOutput`), and the `@stage` decorator that registers it in `STAGES`. Pipelines import this
module, never the engine, so the engine can import every pipeline without a circle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf

from nliforge.pipeline.run_folder import RunFolder


@dataclass
class StageOutput:
    """What a stage produced: rows for the next stage, (uid, reason) for every drop, counts."""

    rows: list[dict]
    drops: list[tuple[str, str]] = field(default_factory=list)
    count_in: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class StageContext:
    """Everything a stage may use: the whole config, its own settings node and the run folder."""

    cfg: DictConfig
    folder: RunFolder
    name: str

    @property
    def settings(self) -> DictConfig:
        node = self.cfg.pipeline.get(self.name)
        return node if node is not None else OmegaConf.create({})

    def rows(self, stage: str) -> list[dict]:
        return self.folder.read_rows(stage)


@dataclass(frozen=True)
class Stage:
    name: str
    inputs: tuple[str, ...]
    run: Callable[[StageContext], StageOutput]
    side: bool = False   # a report stage (e.g. explain): its rows are not the pipeline's dataset
    rerun: bool = False  # run on every start (a cheap loading stage: a changed file reaches the stages after it)


STAGES: dict[str, Stage] = {}


def stage(name: str, inputs: Sequence[str] = (), side: bool = False, rerun: bool = False) -> Callable:
    """Register a stage function under `name`; `inputs` are the stages whose outputs it may read (those
    the pipeline runs count). A `side` stage writes a report (files, one row per item); the final dataset
    comes from the last other stage. A `rerun` stage is never skipped."""
    def register(fn: Callable[[StageContext], StageOutput]) -> Callable:
        STAGES[name] = Stage(name, tuple(inputs), fn, side, rerun)
        return fn
    return register
