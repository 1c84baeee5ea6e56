"""A study's gates and claims as validated records, and `Where`: a key path's place in the study file."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from nliforge.errors import NLIDataError

SIDES = ("greater", "less")
SCOPES = ("every_world", "over_worlds")
_METRIC = re.compile(r"^[\w.{}\-]+/[\w.@:\-]+$")   # <eval set>/<metric>, or train/<metric>; {world} in a set name
_ID = re.compile(r"^[A-Za-z0-9_][\w.\-]*$")


@dataclass(frozen=True)
class Where:
    """The study file and the line of each key path, for errors that name `file:line: key:`."""
    path: Path
    lines: dict

    def error(self, key: tuple, message: str) -> NLIDataError:
        line = self.lines.get(tuple(key))
        for n in range(len(key), -1, -1):   # the nearest key that has a line
            if line is None:
                line = self.lines.get(tuple(key[:n]))
        dotted = ".".join(str(k) for k in key)
        return NLIDataError(f"{self.path}{f':{line}' if line else ''}: {dotted + ': ' if dotted else ''}{message}")


@dataclass(frozen=True)
class Gate:
    """`arm`'s `metric` at least (at_most: at most) `threshold`, or above the set's largest class
    (threshold None), in every world or over worlds (the t interval of value − threshold)."""
    name: str
    arm: str
    metric: str
    op: str
    threshold: float | None
    scope: str
    why: str = ""                  # what a failure means (free text, shown beside the numbers)

    def plain(self) -> dict:
        return asdict(self)

    @property
    def bound(self) -> str:
        return "its largest class" if self.threshold is None else f"{self.threshold:g}"


@dataclass(frozen=True)
class Claim:
    """`a − b` on `cells` (one metric cell, or the mean of several), on the stated side of 0."""
    id: str
    a: str
    b: str
    cells: tuple[str, ...]
    side: str
    family: str
    needs: tuple[str, ...]
    paper: str = ""
    paper_number: str = ""
    paper_value: float | None = None

    def plain(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @property
    def contrast(self) -> str:
        return f"{self.a} − {self.b}"

    @property
    def metric(self) -> str:
        return self.cells[0] if len(self.cells) == 1 else "mean of " + ", ".join(self.cells)


def _metric(value, where: Where, key: tuple) -> str:
    if not isinstance(value, str) or not _METRIC.match(value):
        raise where.error(key, f"{value!r}: expected <eval set>/<metric> (synthetic_test/acc) or train/<metric> "
                               "(train/acc, train/acc@<uid prefix>, train/n)")
    return value


def parse_gates(value, arms: dict, where: Where) -> dict[str, Gate]:
    if not isinstance(value, dict):
        raise where.error(("gates",), "expected a mapping: gate name -> {arm, metric, at_least|at_most|above, ...}")
    return {str(name): parse_gate(str(name), spec, arms, where) for name, spec in value.items()}


def parse_gate(name: str, spec, arms: dict, where: Where) -> Gate:
    key = ("gates", name)
    allowed = {"arm", "metric", "at_least", "at_most", "above", "every_world", "over_worlds", "last_epoch", "rows", "why"}
    if not isinstance(spec, dict) or set(spec) - allowed:
        extra = sorted(set(spec) - allowed) if isinstance(spec, dict) else []
        raise where.error(key + tuple(extra[:1]), f"expected {{arm, metric, at_least | at_most | above: "
                                                  f"largest_class, every_world | over_worlds: true}}; got {spec!r}")
    if spec.get("arm") not in arms:
        raise where.error(key + ("arm",), f"{spec.get('arm')!r}: expected one of the arms {', '.join(arms)}")
    metric = _metric(spec.get("metric"), where, key + ("metric",))
    rows = spec.get("rows")
    if rows is not None:    # train/<metric> over the training pairs whose uid starts with a prefix
        if not (isinstance(rows, dict) and set(rows) == {"uid_prefix"} and metric.startswith("train/")
                and "@" not in metric and _ID.match(str(rows["uid_prefix"]))):
            raise where.error(key + ("rows",), f"{rows!r}: expected {{uid_prefix: <prefix>}} on a train/ metric")
        metric = f"{metric}@{rows['uid_prefix']}"
    bounds = [k for k in ("at_least", "at_most", "above") if k in spec]
    if len(bounds) != 1:
        raise where.error(key, "expected exactly one of at_least, at_most, above: largest_class")
    if bounds[0] == "above":
        if spec["above"] != "largest_class" or metric.startswith("train/") or not metric.endswith("/acc"):
            raise where.error(key + ("above",), f"{spec['above']!r}: expected largest_class, on an eval set's acc")
        op, threshold = "at_least", None
    else:
        op, threshold = bounds[0], spec[bounds[0]]
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise where.error(key + (op,), f"{threshold!r}: expected a number in the metric's own units (0.65)")
    if spec.get("last_epoch", True) is not True or ("last_epoch" in spec and not metric.startswith("train/")):
        raise where.error(key + ("last_epoch",), "only train/ metrics have epochs, and they are read at the last one")
    scopes = [s for s in SCOPES if spec.get(s)]
    if len(scopes) > 1 or any(not isinstance(spec.get(s, False), bool) for s in SCOPES):
        raise where.error(key, "expected one of every_world: true (default) and over_worlds: true")
    return Gate(name, spec["arm"], metric, op, None if threshold is None else float(threshold),
                scopes[0] if scopes else "every_world", str(spec.get("why") or ""))


GROUP_KEYS = {"family", "needs", "side", "contrast"}


def parse_claims(value, arms: dict, gates: dict, where: Where) -> tuple[Claim, ...]:
    """A list of claims and groups, or one group: a group is {family, needs, side, contrast, list: [claims]},
    the keys every claim of its list shares."""
    items = [(("claims",), value)] if isinstance(value, dict) else \
        [(("claims", i), v) for i, v in enumerate(value)] if isinstance(value, list) and value else None
    if items is None:
        raise where.error(("claims",), "expected a non-empty list of claims (or groups {family, needs, list})")
    claims = []
    for key, item in items:
        if isinstance(item, dict) and "list" in item:
            shared = {k: v for k, v in item.items() if k != "list"}
            if set(shared) - GROUP_KEYS or not isinstance(item["list"], list) or not item["list"]:
                raise where.error(key, f"a group of claims: expected {{{', '.join(sorted(GROUP_KEYS))}, list: [claims]}}")
            claims += [parse_claim({**shared, **c} if isinstance(c, dict) else c, arms, gates, where,
                                   key + ("list", i)) for i, c in enumerate(item["list"])]
        elif key == ("claims",):
            raise where.error(key, "expected a list of claims, or {family, needs, side, contrast, list: [claims]}")
        else:
            claims.append(parse_claim(item, arms, gates, where, key))
    ids = [c.id for c in claims]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup:
        raise where.error(("claims",), f"claim id {dup!r} appears twice")
    return tuple(claims)


def parse_claim(spec, arms: dict, gates: dict, where: Where, key: tuple) -> Claim:
    allowed = {"id", "contrast", "cell", "mean_of", "side", "family", "needs", "paper", "paper_number", "paper_value"}
    if not isinstance(spec, dict) or set(spec) - allowed:
        extra = sorted(set(spec) - allowed) if isinstance(spec, dict) else []
        raise where.error(key + tuple(extra[:1]), f"expected {{id, contrast: a - b, cell | mean_of, side, family, "
                                                  f"needs, paper, paper_number}}; got {spec!r}")
    if not isinstance(spec.get("id"), str) or not _ID.match(spec["id"]):
        raise where.error(key + ("id",), f"{spec.get('id')!r}: expected a name (letters, digits, _ . -)")
    parts = re.split(r"\s+[-−]\s+", str(spec.get("contrast", "")).strip())
    if len(parts) != 2 or not all(p in arms for p in parts) or parts[0] == parts[1]:
        raise where.error(key + ("contrast",), f"{spec.get('contrast')!r}: expected 'a - b' with two different "
                                               f"arms of {', '.join(arms)}")
    if ("cell" in spec) == ("mean_of" in spec):
        raise where.error(key, "expected exactly one of cell: <set>/<metric> and mean_of: [cells]")
    cells = [spec["cell"]] if "cell" in spec else spec["mean_of"]
    if not isinstance(cells, list) or not cells:
        raise where.error(key + ("mean_of",), "expected a non-empty list of <set>/<metric> cells")
    cells = [_metric(c, where, key + ("cell" if "cell" in spec else "mean_of",)) for c in cells]
    side = spec.get("side", "greater")
    if side not in SIDES:
        raise where.error(key + ("side",), f"{side!r}: expected greater or less")
    needs = spec.get("needs", [])
    needs = [needs] if isinstance(needs, str) else needs
    unknown = [n for n in needs if n not in gates] if isinstance(needs, list) else [needs]
    if unknown:
        raise where.error(key + ("needs",), f"{unknown[0]!r}: not a gate of this study; gates: "
                                            f"{', '.join(gates) or 'none'}")
    value = spec.get("paper_value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise where.error(key + ("paper_value",), f"{value!r}: expected a number on the claim's scale")
    return Claim(spec["id"], parts[0], parts[1], tuple(cells), side, str(spec.get("family", "main")), tuple(needs),
                 str(spec.get("paper", "")), str(spec.get("paper_number", "")),
                 None if value is None else float(value))
