"""What a stage is (`Stage`), what it gets (`StageContext`) and returns (`StageOutput`), the `@stage`
decorator that declares one, and `PipelineSpec`, a pipeline's declaration: its stages in order, the
fields each reads and writes, its generator slots and its config file. Stage names are a pipeline's own
(two pipelines may each have a `zfilter` stage); the engine finds pipelines through
`nliforge.engine.registry`. Pipelines import this module, never the engine or the registry."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from nliforge.data.records import Record
from nliforge.errors import NLIDataError
from nliforge.engine.run_folder import RunFolder

RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(Record))  # a row that is a Record of the data model


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
    """A declared stage; calling it runs it. `inputs`: the stages whose outputs it may read (those the
    run's list holds count for resuming); `reads`: the row fields it needs from earlier stages' rows
    (`chat_reads`: and those it needs when the generator is a chat model); `writes`: the fields of its own
    rows; `generators`: the config keys of the generator nodes it calls."""

    name: str
    inputs: tuple[str, ...]
    run: Callable[[StageContext], StageOutput]
    side: bool = False   # a report stage (e.g. explain): its rows are not the pipeline's dataset
    rerun: bool = False  # run on every start (a cheap loading stage: a changed file reaches the stages after it)
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    chat_reads: tuple[str, ...] = ()   # fields it reads as well when the run's generator is a chat model
    generators: tuple[str, ...] = ()   # config keys of the generator nodes it calls (checked before the run)

    def __call__(self, ctx: StageContext) -> StageOutput:
        return self.run(ctx)

    @property
    def where(self) -> str:
        return f"{self.run.__module__}.{self.run.__qualname__}"


def stage(name: str, inputs: Sequence[str] = (), side: bool = False, rerun: bool = False,
          reads: Sequence[str] = (), writes: Sequence[str] = (), chat_reads: Sequence[str] = (),
          generators: Sequence[str] = ()) -> Callable[[Callable], Stage]:
    """Declare a stage function as the Stage `name` (a pipeline lists it in its PipelineSpec). A `side`
    stage writes a report (files, one row per item); the final dataset comes from the last other stage.
    A `rerun` stage is never skipped. `reads`/`writes`/`chat_reads`/`generators`: see Stage."""
    def declare(fn: Callable[[StageContext], StageOutput]) -> Stage:
        return Stage(name, tuple(inputs), fn, side, rerun, tuple(reads), tuple(writes), tuple(chat_reads),
                     tuple(generators))
    return declare


@dataclass(frozen=True)
class PipelineSpec:
    """A pipeline: `stages` in their default order (its YAML's `stages:` list), `optional` stages a
    config may add to that list (e.g. `input`, a demo's stand-in generator), `generator_slots` (the config
    keys of the generator or model nodes its stages call, e.g. `generator`, `pipeline.rubric.judge`),
    `conf_dir`, a config folder holding `pipeline/<name>.yaml` (None: nliforge's own conf/), and two optional
    hooks: `stand_in_documents`, the training documents of the demo's stand-in LM in this pipeline's prompt
    format, and `use_generator`, which points the pipeline's own LLM nodes at a chosen `generator=`."""

    name: str
    stages: tuple[Stage, ...]
    optional: tuple[Stage, ...] = ()
    generator_slots: tuple[str, ...] = ()
    conf_dir: str | None = None
    # (records, pipeline.generator_lm settings, seed) -> documents the demo's tiny stand-in LM learns from
    stand_in_documents: Callable[..., list[str]] | None = None
    # (config being resolved) -> None: puts a chosen `generator=` into the pipeline's own LLM nodes
    use_generator: Callable[[Any], None] | None = None

    def __post_init__(self) -> None:
        seen: dict[str, Stage] = {}
        for st in (*self.stages, *self.optional):
            if not isinstance(st, Stage):
                raise NLIDataError(f"pipeline {self.name!r}: {st!r} is not a Stage (declare it with @stage)")
            if seen.setdefault(st.name, st) is not st:
                raise NLIDataError(f"pipeline {self.name!r}: two stages named {st.name!r} ({seen[st.name].where} "
                                   f"and {st.where}); stage names must be unique within a pipeline")

    @property
    def config_file(self) -> Path:
        from nliforge.utils.cli import CONF_DIR

        return Path(self.conf_dir or CONF_DIR) / "pipeline" / f"{self.name}.yaml"

    def table(self) -> dict[str, Stage]:
        return {st.name: st for st in (*self.stages, *self.optional)}

    def resolve(self, names: Sequence[str], chat: bool = False) -> list[Stage]:
        """The Stage objects of a run's `pipeline.stages`, in order: an unknown name, or a stage reading a
        field no stage before it writes (with a chat generator, its `chat_reads` too), fails here, before
        anything runs."""
        table = self.table()
        unknown = [n for n in names if n not in table]
        if unknown:
            raise NLIDataError(f"pipeline.stages: unknown stage(s) {unknown} for pipeline {self.name!r}; "
                               f"valid: {', '.join(table)}")
        stages = [table[n] for n in names]
        check_fields(self.name, stages, chat)
        return stages

    def slots_of(self, stages: Sequence[Stage]) -> list[str]:
        """The generator slots a run of `stages` calls: those its stages declare, and every slot of the
        pipeline that none of its stages claims (a pipeline that declares its slots only here)."""
        claimed = {slot for st in self.table().values() for slot in st.generators}
        used = [slot for st in stages for slot in st.generators]
        return list(dict.fromkeys([*used, *(s for s in self.generator_slots if s not in claimed)]))


def check_fields(pipeline: str, stages: Sequence[Stage], chat: bool = False) -> None:
    """Every field a stage reads is written by a stage before it (the `input` stage writes the records'
    fields; with `chat`, the stages' `chat_reads` count too), else one error naming the pipeline, the
    stage and the fields."""
    written: set[str] = set()
    for st in stages:
        missing = [f for f in (*st.reads, *(st.chat_reads if chat else ())) if f not in written]
        if missing:
            raise NLIDataError(f"pipeline {pipeline!r}: stage {st.name!r} reads {', '.join(missing)}, which no "
                               f"stage before it writes (pipeline.stages: {', '.join(s.name for s in stages)})")
        written.update(st.writes)
