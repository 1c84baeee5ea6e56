"""Which pipelines exist: every `PipelineSpec` (nliforge.engine.stages) registered under the entry-point
group `nliforge.pipelines`, so another package adds one in its own pyproject.toml

    [project.entry-points."nliforge.pipelines"]
    toy = "toy_nli:PIPELINE"

(docs/adding-a-pipeline.md). nliforge's own five are found by their module paths too, so an editable
checkout whose installed metadata predates them still runs. A pipeline name registered twice for
different objects is an error naming both."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.engine.stages import PipelineSpec

GROUP = "nliforge.pipelines"
BUILTIN = {                      # as in pyproject.toml's [project.entry-points."nliforge.pipelines"]
    "wanli": "nliforge.pipelines.wanli.pipeline:PIPELINE",
    "disco": "nliforge.pipelines.disco.pipeline:PIPELINE",
    "zaug": "nliforge.pipelines.zaug.pipeline:PIPELINE",
    "zfilter": "nliforge.pipelines.zfilter.pipeline:PIPELINE",
    "longtext": "nliforge.pipelines.longtext.pipeline:PIPELINE",
}
GUIDE = "docs/adding-a-pipeline.md"


def registered() -> dict[str, str]:
    """Pipeline name -> `module:attribute` of its PipelineSpec, the built-in ones first."""
    found = dict(BUILTIN)
    for ep in entry_points(group=GROUP):
        known = found.setdefault(ep.name, ep.value)
        if known != ep.value:
            raise NLIDataError(f"entry points {GROUP}: pipeline {ep.name!r} is registered twice ({known} and "
                               f"{ep.value}); pipeline names must be unique")
    return found


def load_target(name: str, target: str) -> PipelineSpec:
    """The PipelineSpec a `module:attribute` reference names; anything else is a one-line error."""
    module, _, attr = target.partition(":")
    where = f"entry point {GROUP} {name} = {target}"
    try:
        obj = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise NLIDataError(f"{where}: cannot load it ({type(err).__name__}: {err})") from None
    if not isinstance(obj, PipelineSpec):
        raise NLIDataError(f"{where}: a {type(obj).__name__}, not a nliforge.engine.stages.PipelineSpec")
    if obj.name != name:
        raise NLIDataError(f"{where}: it declares pipeline {obj.name!r}; the entry point's name must be the same")
    return obj


def load_pipeline(name: str) -> PipelineSpec:
    """The registered pipeline `name` (a config's `pipeline.name`)."""
    targets = registered()
    if name not in targets:
        raise NLIDataError(f"pipeline.name={name!r}: no pipeline registered under this name; registered: "
                           f"{', '.join(sorted(targets))} (a package adds one under the entry-point group "
                           f"{GROUP}: {GUIDE})")
    return load_target(name, targets[name])


def pipelines() -> dict[str, PipelineSpec]:
    """Every registered pipeline, loaded."""
    return {name: load_target(name, target) for name, target in registered().items()}


def pipeline_conf_dirs() -> list[Path]:
    """The config folders that pipelines from other packages ship (PipelineSpec.conf_dir), for Hydra's
    search path; the built-in pipelines are not imported for this (their YAML is in nliforge's conf/)."""
    specs = [load_target(n, t) for n, t in registered().items() if BUILTIN.get(n) != t]
    return [Path(s.conf_dir) for s in specs if s.conf_dir]
