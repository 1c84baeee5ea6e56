"""A study file: one YAML that holds a comparison's whole design (docs/studies.md).

`load_study(name_or_path)` finds `study/<name>.yaml` on the config search path (NLIFORGE_CONFIG_PATH's
folders, the user data home's conf/, the package's conf/) or reads a path, validates every key and
returns a `Study`; a mistake is one NLIDataError naming `file:line: key:` and what was expected.
`Study.plan()` is the resolved design as plain data: what pre-registration hashes and compares.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nliforge.errors import NLIDataError
from nliforge.study.parts import Claim, Gate, Where, parse_claims, parse_gates

TOP_KEYS = ("name", "question", "base", "worlds", "seeds", "arms", "suite", "gates", "claims", "min_worlds",
            "evaluation_data", "save_model", "rescore", "scale", "paper")
EVALUATION_DATA = ("fresh_per_attempt", "corrected_across_attempts")
PARTS_KEY = "world_part.index"          # the part k of n of the registered real sets (nliforge-train config)
_PLAIN = re.compile(r"^[\w./:@+\-]+$")
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


@dataclass(frozen=True)
class Worlds:
    """The override that carries the world, its values, and overrides every world shares."""
    key: str
    values: tuple
    fixed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Study:
    name: str
    question: str
    source: Path
    base: tuple[str, ...]
    worlds: Worlds
    seeds: tuple[int, ...]
    arms: dict[str, tuple[str, ...]]
    suite: str
    gates: dict[str, Gate]
    claims: tuple[Claim, ...]
    min_worlds: int = 5
    evaluation_data: str = "fresh_per_attempt"
    save_model: bool = False
    rescore: tuple[str, ...] = ()
    scale: float = 100.0
    paper: str = ""
    raw: dict = field(default_factory=dict, compare=False)

    def plan(self) -> dict[str, Any]:
        """The resolved design (every default filled in) as plain data; `question` is its only free text."""
        return {"name": self.name, "question": self.question, "base": list(self.base),
                "worlds": {"key": self.worlds.key, "values": list(self.worlds.values),
                           "fixed": list(self.worlds.fixed)},
                "seeds": list(self.seeds), "arms": {k: list(v) for k, v in self.arms.items()},
                "suite": self.suite, "gates": {k: g.plain() for k, g in self.gates.items()},
                "claims": {c.id: c.plain() for c in self.claims}, "min_worlds": self.min_worlds,
                "evaluation_data": self.evaluation_data, "save_model": self.save_model,
                "rescore": list(self.rescore), "scale": self.scale, "paper": self.paper}

    def run_names(self) -> list[tuple[Any, str, int]]:
        """Every (world, arm, seed) of the design, worlds outermost."""
        return [(w, a, s) for w in self.worlds.values for a in self.arms for s in self.seeds]


def study_dirs() -> list[Path]:
    """The `study/` folders searched for a study by name, first match wins."""
    from nliforge.utils.cli import CONF_DIR, USER_CONFIG_ENV
    from nliforge.utils.home import user_conf_dir

    env = [Path(p) for p in os.environ.get(USER_CONFIG_ENV, "").split(os.pathsep) if p.strip()]
    return [d / "study" for d in (*env, user_conf_dir(), Path(CONF_DIR))]


def find_study(name: str) -> Path:
    path = Path(name).expanduser()
    if path.suffix in (".yaml", ".yml") or os.sep in name:
        if not path.is_file():
            raise NLIDataError(f"{name}: no such study file")
        return path
    for folder in study_dirs():
        if (folder / f"{name}.yaml").is_file():
            return folder / f"{name}.yaml"
    known = sorted({p.stem for d in study_dirs() if d.is_dir() for p in d.glob("*.yaml")})
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" did you mean {close[0]!r}?" if close else ""
    raise NLIDataError(f"study {name!r}: not found in {', '.join(str(d) for d in study_dirs())};{hint} "
                       f"known: {', '.join(known) or 'none'} (or give a path to a .yaml file)")


def key_lines(node: yaml.Node, prefix: tuple = ()) -> dict[tuple, int]:
    """Each key path of a composed YAML document -> its 1-based line."""
    out: dict[tuple, int] = {prefix: node.start_mark.line + 1}
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            out[prefix + (k.value,)] = k.start_mark.line + 1
            out.update({p: n for p, n in key_lines(v, prefix + (k.value,)).items() if p != prefix + (k.value,)})
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            out.update(key_lines(v, prefix + (i,)))
    return out


def load_study(name: str) -> Study:
    path = find_study(name)
    text = path.read_text(encoding="utf-8")
    try:
        data, node = yaml.safe_load(text), yaml.compose(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise NLIDataError(f"{path}{line}: not YAML ({getattr(err, 'problem', err)})") from None
    where = Where(path, key_lines(node) if node is not None else {})
    if not isinstance(data, dict):
        raise where.error((), "expected a mapping of the study's keys (name, worlds, arms, claims, ...)")
    return parse_study(data, where)


def parse_study(data: dict, where: Where) -> Study:
    unknown = [k for k in data if k not in TOP_KEYS]
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), TOP_KEYS, n=1)
        hint = f" did you mean {close[0]!r}?" if close else ""
        raise where.error((unknown[0],), f"no such key;{hint} valid: {', '.join(TOP_KEYS)}")
    for key in ("name", "worlds", "seeds", "arms", "suite", "claims"):
        if key not in data:
            raise where.error((), f"{key}: missing (a study needs name, worlds, seeds, arms, suite and claims)")
    name = str(data["name"])
    if not _NAME.match(name):
        raise where.error(("name",), f"{name!r}: expected letters, digits, _ . - (it names the study's folder)")
    arms = {str(a): arm_overrides(spec, where, ("arms", a)) for a, spec in _mapping(data, "arms", where).items()}
    if len(arms) < 2:
        raise where.error(("arms",), "expected at least two arms (a claim contrasts two)")
    gates = parse_gates(data.get("gates") or {}, arms, where)
    claims = parse_claims(data["claims"], arms, gates, where)
    min_worlds = data.get("min_worlds", 5)
    if isinstance(min_worlds, bool) or not isinstance(min_worlds, int) or min_worlds < 2:
        raise where.error(("min_worlds",), f"{min_worlds!r}: expected an integer >= 2")
    worlds = parse_worlds(data["worlds"], where)
    if len(worlds.values) < min_worlds:
        raise where.error(("worlds",), f"{len(worlds.values)} worlds, fewer than min_worlds={min_worlds}: no claim "
                                       "could be reproduced")
    evaluation = data.get("evaluation_data", EVALUATION_DATA[0])
    if evaluation not in EVALUATION_DATA:
        raise where.error(("evaluation_data",), f"{evaluation!r}: expected {' or '.join(EVALUATION_DATA)}")
    save_model, rescore = data.get("save_model", False), data.get("rescore") or []
    if not isinstance(save_model, bool):
        raise where.error(("save_model",), f"{save_model!r}: expected true or false")
    if not isinstance(rescore, list) or not all(isinstance(s, str) and _NAME.match(s) for s in rescore):
        raise where.error(("rescore",), "expected a list of suite names (conf/suite/<name>.yaml)")
    if rescore and not save_model:
        raise where.error(("rescore",), "scoring another suite needs the models kept: set save_model: true")
    scale = data.get("scale", 100.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale <= 0:
        raise where.error(("scale",), f"{scale!r}: expected a positive number (100: accuracies in points)")
    return Study(name, str(data.get("question") or ""), where.path, override_list(data.get("base") or {}, where,
                 ("base",)), worlds, parse_seeds(data["seeds"], where), arms, _suite(data["suite"], where), gates,
                 claims, min_worlds, evaluation, save_model, tuple(rescore), float(scale), str(data.get("paper") or ""),
                 data)


def _mapping(data: dict, key: str, where: Where) -> dict:
    value = data[key]
    if not isinstance(value, dict) or not value:
        raise where.error((key,), "expected a non-empty mapping")
    return value


def _suite(value, where: Where) -> str:
    if not isinstance(value, str) or not _NAME.match(value):
        raise where.error(("suite",), f"{value!r}: expected the name of a suite (conf/suite/<name>.yaml)")
    return value


def parse_seeds(value, where: Where) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           for s in value) or len(set(value)) != len(value):
        raise where.error(("seeds",), f"{value!r}: expected a list of distinct integers (training seeds per world)")
    return tuple(value)


def parse_worlds(value, where: Where) -> Worlds:
    """`{key: world.seed, values: [0, 1, 2, 3, 4]}`, or `{parts: n, seed: s}`: part k = 1..n of the
    registered real sets (world_part.index=k world_part.count=n world_part.seed=s)."""
    if not isinstance(value, dict):
        raise where.error(("worlds",), "expected {key: world.seed, values: [...]} or {parts: 5, seed: 0}")
    if "parts" in value:
        extra = sorted(set(value) - {"parts", "seed"})
        parts, seed = value["parts"], value.get("seed", 0)
        if extra or not isinstance(parts, int) or parts < 2 or not isinstance(seed, int):
            raise where.error(("worlds",), f"{value!r}: expected {{parts: n >= 2, seed: integer}}")
        return Worlds(PARTS_KEY, tuple(range(1, parts + 1)), (f"world_part.count={parts}", f"world_part.seed={seed}"))
    key, values = value.get("key"), value.get("values")
    extra = sorted(set(value) - {"key", "values", "overrides"})
    if extra or not isinstance(key, str) or not re.fullmatch(r"\+{0,2}[A-Za-z_][\w.]*", key):
        raise where.error(("worlds",), f"{value!r}: expected {{key: <config key, e.g. world.seed>, values: [...]}}")
    if not isinstance(values, list) or not values or len(set(map(str, values))) != len(values) \
            or not all(isinstance(v, (int, str)) and _PLAIN.match(str(v)) for v in values):
        raise where.error(("worlds", "values"), f"{values!r}: expected a list of distinct integers or plain names")
    return Worlds(key, tuple(values), override_list(value.get("overrides") or {}, where, ("worlds", "overrides")))


def hydra_value(value) -> str:
    """A YAML value as a Hydra override's value: lists as [a,b], strings quoted unless plain."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    text = str(value)
    if isinstance(value, (int, float)) or _PLAIN.match(text):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override_list(value, where: Where, key: tuple) -> tuple[str, ...]:
    """A mapping {config key: value} (or a list of override strings) as Hydra overrides."""
    if isinstance(value, list) and all(isinstance(v, str) and "=" in v for v in value):
        return tuple(value)
    if not isinstance(value, dict):
        raise where.error(key, f"{value!r}: expected a mapping of config keys to values (model.max_epochs: 1)")
    if any(isinstance(v, dict) for v in value.values()):
        bad = next(k for k, v in value.items() if isinstance(v, dict))
        raise where.error(key + (bad,), "expected a value, not a mapping (write nested keys dotted: a.b: 1)")
    return tuple(f"{k}={hydra_value(v)}" for k, v in value.items())


def arm_overrides(spec, where: Where, key: tuple) -> tuple[str, ...]:
    """An arm's nliforge-train overrides: its training-set tree (`train_sets`, `combine`, `limit`,
    `limit_seed`) and any other `overrides`."""
    allowed = {"train_sets", "combine", "limit", "limit_seed", "overrides"}
    if not isinstance(spec, dict) or "train_sets" not in spec or set(spec) - allowed:
        raise where.error(key, f"expected {{train_sets: [...], combine, limit, limit_seed, overrides}}; got {spec!r}")
    sets = spec["train_sets"]
    if not isinstance(sets, list) or not sets or not all(isinstance(s, str) and _NAME.match(s) for s in sets):
        raise where.error(key + ("train_sets",), f"{sets!r}: expected a list of training-set names")
    out = [f"data/train_sets=[{','.join(sets)}]"]
    if "combine" in spec:
        out.append(f"data.combine={hydra_value(spec['combine'])}")
    limit = spec.get("limit")
    if limit is not None:
        limits = dict(zip(sets, limit)) if isinstance(limit, list) else limit if isinstance(limit, dict) \
            else {sets[0]: limit} if len(sets) == 1 else None
        if limits is None or (isinstance(limit, list) and len(limit) != len(sets)) or set(limits) - set(sets) \
                or not all(v is None or (isinstance(v, int) and v > 0) for v in limits.values()):
            raise where.error(key + ("limit",), f"{limit!r}: expected one positive integer per training set "
                                                "(a list in train_sets' order, or {set: n})")
        seed = spec.get("limit_seed", 0)
        for name, n in limits.items():
            if n is not None:
                out += [f"++data.train_sets.{name}.limit={n}", f"++data.train_sets.{name}.limit_seed={seed}"]
    return tuple(out) + override_list(spec.get("overrides") or {}, where, key + ("overrides",))
