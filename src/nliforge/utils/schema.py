"""Typed validation of a composed config, before any run folder or file exists.

A value set on the command line (`data.batch_size=abc`, `trainer.max_epochs=abc`) would otherwise
fail deep inside a library, after the run folder, its config.yaml, the manifest and the logger's
files were written, with an error that names no setting. Every leaf is checked against the type
its setting expects, taken from two sources:

1. a node with `_target_` (the Lightning Trainer, ModelCheckpoint, loggers, optimizers, ...): the
   annotation of that parameter in the target's signature (`Optional[int]`, `Union[int, str,
   list[int]]`, `Literal[...]` by the types of its values); annotations that cannot be checked
   here (classes, callables) decide nothing; read without importing the target where it was read
   before for the same package version (nliforge.utils.target_hints: a wrong setting costs no torch);
2. any other setting: the type of the value the same config has without the command line's value
   overrides (its group choices kept): a setting whose default is an integer, a number or a
   boolean must stay one (an integer is a valid number); `KNOWN` types settings whose default is
   null. Strings, lists and nodes are not checked.

A value of the right type must also lie in its key's range or choices (nliforge.utils.ranges: batch
sizes >= 1, `lr` > 0, `warmup_ratio` in [0, 1], ...). Interpolations are checked where they point, missing values (`???`) are left to the task, and null
is accepted everywhere (it means "off" or "default" throughout nliforge's configs).
`ValidateConfig` runs the check as a Hydra callback of every entry point (conf/hydra/default.yaml,
conf/report.yaml, conf/review.yaml): before the run starts, so a wrong type stops the command with
one line naming the key, the value and the expected type, exit status 2, and nothing written. In a
multirun each job is checked when it starts (its Hydra job folder exists; none of nliforge's files).
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Iterator
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, ListConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.utils.ranges import range_problem
from nliforge.utils.target_hints import BASES, Spec, spec_of, target_specs

KNOWN: dict[str, type] = {   # by key pattern: settings whose default is null, or says less than the type
    "data.pad_to_multiple_of": int,
    "data.pad_buckets": list,
    "data.static_widths": int,
    "compile.cache_dir": str,
    "compile.recompile_limit": int,
    "data.train_sets.*.limit": int,
    "ckpt_path": str,
    "seed": int,                # nliforge-evaluate: null = the model folder's training seed
    "num_threads": int,         # null: the cores this process may use (nliforge.utils.threads)
    "progress_every_s": float,  # 30 by default, any positive number of seconds
    "scale": float,             # nliforge-report: 100 by default, any number (1 keeps raw values)
    "baseline": str,            # nliforge-report: a train_id to take differences to
    "bounds": list,             # nliforge-report: [low, high] of the metric, to clip intervals to
    "family": list,             # nliforge-report unit=world: the cells Holm corrects over
}
_NAMES = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string", "list": "a list",
          "dict": "a mapping", "none": "null"}
_KINDS = {"bool": bool, "int": int, "float": float, "str": str}


class ConfigTypeError(NLIDataError):
    """One or more settings have a value of the wrong type or range; the message names each key."""


def leaves(node: DictConfig, prefix: str = "") -> Iterator[tuple[str, DictConfig, str]]:
    """(dotted key, parent node, key in parent) of every leaf to check: not under `hydra`, not a
    `_private_` key, not an interpolation or a missing value; lists count as leaves."""
    for key in node.keys():
        full = f"{prefix}{key}"
        if full == "hydra" or str(key).startswith("_") or OmegaConf.is_missing(node, key):
            continue
        if OmegaConf.is_interpolation(node, key):
            continue
        value = node._get_node(key)
        if isinstance(value, DictConfig):
            yield from leaves(value, f"{full}.")
        else:
            yield full, node, str(key)


def matches(value: Any, spec: Spec) -> bool | None:
    """Whether `value` has a type `spec` allows (nliforge.utils.target_hints): True, False, or None when it
    cannot be told here."""
    if isinstance(spec, list):
        if spec[0] == "union":
            results = [matches(value, arg) for arg in spec[1]]
            return True if True in results else (None if None in results else False)
        return BASES.get(type(value)) in spec[1] if spec[0] == "literal" else None
    if spec == "none":
        return value is None
    if spec in _KINDS:
        return _is(value, _KINDS[spec])
    if spec == "list":
        return isinstance(value, (list, tuple, ListConfig))
    if spec == "dict":
        return isinstance(value, (dict, DictConfig))
    return None


def _is(value: Any, kind: type) -> bool:
    """isinstance, except that a boolean is not an integer or a number, and an integer is a number."""
    if kind is bool or isinstance(value, bool):
        return isinstance(value, bool) and kind is bool
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


def describe(spec: Spec) -> str:
    """'an integer or null' for Optional[int]'s spec, and so on."""
    if isinstance(spec, list) and spec[0] in ("union", "literal"):
        return " or ".join(dict.fromkeys(describe(arg) for arg in spec[1]))
    if isinstance(spec, list):
        return spec[1]
    return _NAMES[spec]


def expected_types(key: str, parent: DictConfig, name: str, defaults: DictConfig | None) -> Iterator[tuple[Any, str]]:
    """(type spec, where it comes from) for one setting, most specific first: the target's signature,
    then `KNOWN`, then the type of the default."""
    target = parent.get("_target_") if isinstance(parent, DictConfig) else None
    if target and name in (specs := target_specs(str(target))):
        yield specs[name], f"{target}({name}=...)"
    for pattern, kind in KNOWN.items():
        if fnmatch.fnmatchcase(key, pattern):
            yield spec_of(kind), "nliforge.utils.schema.KNOWN"
    if defaults is not None:
        default = OmegaConf.select(defaults, key, default=None, throw_on_resolution_failure=False)
        for kind in (bool, int, float):
            if _is(default, kind) and not (kind is float and isinstance(default, int)):
                yield spec_of(kind), f"the default is {default!r}"
                break


def problem(key: str, value: Any, candidates: Iterator[tuple[Any, str]]) -> str | None:
    """What is wrong with `value` by the first source that can tell; None when it fits or none can."""
    for spec, source in candidates:
        verdict = matches(value, spec)
        if verdict is False:
            return f"{key}={value!r}: expected {describe(spec)} ({source})"
        if verdict:
            return None
    return None


def check_config(cfg: DictConfig, defaults: DictConfig | None = None) -> None:
    """Raise ConfigTypeError naming every setting whose value has the wrong type (see module doc), or a
    right type outside the values its key allows (nliforge.utils.ranges.RANGES: `data.batch_size=0`)."""
    problems = []
    for key, parent, name in leaves(cfg):
        value = parent[name]
        if value is None:
            continue
        if found := (problem(key, value, expected_types(key, parent, name, defaults)) or range_problem(key, value)):
            problems.append(found)
    if problems:
        raise ConfigTypeError("; ".join(problems))


def _is_group(override: str, loader) -> bool:
    """Whether a command-line override selects a config group option (`model=tiny`, `+x/y=z`, `~g`)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        key = OverridesParser.create().parse_overrides([override])[0].key_or_group
        parent, _, leaf = key.rpartition("/")
        return leaf in loader.list_groups(parent)
    except Exception:  # noqa: BLE001 - an override the check cannot read is not a group choice
        return False


def defaults_of(config: DictConfig) -> DictConfig | None:
    """The same config composed without the command line's value overrides (group choices and Hydra's
    own settings kept): what each setting would be by default. None outside a Hydra app or when it
    cannot be composed (then only the targets' signatures and `KNOWN` are checked)."""
    from hydra import compose
    from hydra.core.global_hydra import GlobalHydra

    try:
        loader = GlobalHydra.instance().config_loader()
        task = [o for o in config.hydra.overrides.task if _is_group(o, loader)]
        return compose(config.hydra.job.config_name, overrides=[*config.hydra.overrides.hydra, *task])
    except Exception:  # noqa: BLE001 - the check must never be the reason a valid run cannot start
        return None


def check_or_exit(config: DictConfig) -> None:
    """`check_config` against the defaults; a wrong type ends the command: one line, exit status 2."""
    try:
        check_config(config, defaults_of(config))
    except ConfigTypeError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


class ValidateConfig(Callback):
    """Hydra callback of every entry point: the typed check before a run starts (a multirun: before
    each job). SystemExit, because Hydra turns a callback's exceptions into warnings."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        check_or_exit(config)

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        from hydra.types import RunMode

        if config.hydra.mode == RunMode.MULTIRUN:
            check_or_exit(config)
