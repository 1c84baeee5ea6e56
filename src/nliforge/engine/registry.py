"""Which pipelines exist: every `PipelineSpec` (nliforge.engine.stages) registered under the entry-point
group `nliforge.pipelines`, so another package adds one in its own pyproject.toml

    [project.entry-points."nliforge.pipelines"]
    toy = "toy_nli:PIPELINE"

(docs/adding-a-pipeline.md). nliforge's own five are found by their module paths too, so an editable
checkout whose installed metadata predates them still runs. A pipeline name registered twice for
different objects is an error naming both."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
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


def help_line() -> str:
    """The registered pipelines for `nliforge-generate --help` (`${nliforge_pipelines:}` in its template):
    the built-in ones, then each installed one with the distribution that registers it; nothing is imported."""
    outside = []
    for ep in entry_points(group=GROUP):
        if BUILTIN.get(ep.name) != ep.value and ep.name not in (n for n, _ in outside):
            outside.append((ep.name, f"{ep.dist.name} {ep.dist.version}" if ep.dist else ep.value))
    line = f"built in: {', '.join(BUILTIN)}"
    if outside:
        line += "; installed: " + ", ".join(f"{name} ({dist})" for name, dist in outside)
    return line


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
    """The config folders that pipelines from other packages ship, for Hydra's search path, found without
    running their code: the `conf/` folder beside the module an entry point names (module_folder) when it
    holds `pipeline/<name>.yaml`; only a pipeline whose YAML is elsewhere is imported to read its
    PipelineSpec.conf_dir. The built-in pipelines are not looked at (their YAML is in nliforge's conf/)."""
    found: list[Path] = []
    for name, target in registered().items():
        if BUILTIN.get(name) == target:
            continue
        folder = module_folder(target.partition(":")[0].strip())
        conf = folder / "conf" if folder is not None else None
        if conf is None or not (conf / "pipeline" / f"{name}.yaml").is_file():
            conf_dir = load_target(name, target).conf_dir
            conf = Path(conf_dir) if conf_dir else None
        if conf is not None and conf not in found:
            found.append(conf)
    return found


def module_folder(module: str) -> Path | None:
    """The folder of a module's files (a package's own folder, or the folder holding `module.py`), found
    through the import system's finders (editable installs included) without executing the module or its
    parent packages; None when no finder knows it."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(f"{spec.name}.{part}", list(spec.submodule_search_locations))
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None
