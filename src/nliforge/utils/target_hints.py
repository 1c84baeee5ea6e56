"""The parameter types of a config node's `_target_`, as small JSON specs, kept on disk per package version.

Reading a target's annotations means importing it: for the Lightning Trainer that is torch and lightning,
~8 CPU-seconds, which a command stopped by a wrong setting (`data.batch_size=abc`) would pay for its one-line
error. A spec keeps what the type check needs (nliforge.utils.schema: does a value fit, and how to name the
type) and no more:

    "bool" "int" "float" "str" "none" "list" "dict"   a base type (list: any sequence; dict: any mapping)
    ["union", [spec, ...]]                              Optional[...], Union[...], X | Y
    ["literal", [base, ...]]                            Literal[...], by the types of its values
    ["other", "Name"]                                   anything else (a class, a callable): decides nothing

Specs of targets outside nliforge are read once and stored in
`<cache>/target_hints.json` (cache: `$NLIFORGE_CACHE`, else `$XDG_CACHE_HOME/nliforge`, else
`~/.cache/nliforge`) under the target, Python's version and the version of the distribution that holds it;
another version is read afresh."""

from __future__ import annotations

import functools
import importlib.metadata
import inspect
import json
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.home import cache_root

Spec = str | list
BASES: dict[Any, str] = {bool: "bool", int: "int", float: "float", str: "str", type(None): "none",
                         list: "list", tuple: "list", Sequence: "list", typing.Sequence: "list",
                         dict: "dict", Mapping: "dict", typing.Mapping: "dict"}
CACHE_FILE = "target_hints.json"


def spec_of(hint: Any) -> Spec:
    """The spec of a type hint (module doc)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return ["union", [spec_of(arg) for arg in typing.get_args(hint)]]
    if origin is typing.Literal:
        kinds = (BASES.get(type(c)) or ["other", type(c).__name__] for c in typing.get_args(hint))
        return ["literal", list({json.dumps(k): k for k in kinds}.values())]
    base = origin or hint
    try:
        return BASES[base]
    except (KeyError, TypeError):   # not a base type, or unhashable
        return ["other", getattr(base, "__name__", str(base))]


def read_specs(target: str) -> dict[str, Spec]:
    """Import `target` (`module.Name`) and read its parameters' specs (a class's __init__, or a function);
    empty when it cannot be imported or its annotations cannot be read (instantiation will say why)."""
    try:
        module, _, name = target.rpartition(".")
        obj = getattr(__import__(module, fromlist=[name]), name)
        func = obj.__init__ if inspect.isclass(obj) else obj
        return {param: spec_of(hint) for param, hint in typing.get_type_hints(func).items()}
    except Exception:  # noqa: BLE001 - any failure means: no annotations to check against
        return {}


def cache_key(target: str) -> str | None:
    """`target|python|distribution==version`, or None where the target is not to be kept (nliforge's own,
    whose code changes under one version, or one whose distribution is not found)."""
    top = target.split(".")[0]
    if top == "nliforge":
        return None
    for dist in (top, *_distributions().get(top, ())):   # most are named as their module (torch, lightning)
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        return f"{target}|{sys.version_info[0]}.{sys.version_info[1]}|{dist}=={version}"
    return None


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    return importlib.metadata.packages_distributions()   # ~0.4 s: only where a module is named otherwise


def _load(path) -> dict:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):   # none yet, or unreadable: read afresh
        return {}


@functools.cache
def target_specs(target: str) -> Mapping[str, Spec]:
    """The specs of `target`'s parameters, from the disk cache where it may be kept (module doc)."""
    if (key := cache_key(target)) is None:
        return read_specs(target)
    path = cache_root() / CACHE_FILE
    if isinstance(found := _load(path).get(key), dict):
        return found
    specs = read_specs(target)
    if specs:   # a target that could not be read is not kept: it may be installed later
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, [json.dumps({**_load(path), key: specs}, indent=1, sort_keys=True)])
        except OSError:   # a read-only cache: the check still works, only slower next time
            pass
    return specs
