"""The gates of `experiments/summary.csv`'s claims: a condition stated before a run, checked before its claim is
read. A gate is never a row of its own: a claim whose gate failed reads `not tested (gate …)` by the package's
rule (`nliforge.evaluation.verdict`, its `gate=`), the sentence in the brackets computed here from the gate's
own results rows (its estimate and interval, or its failing worlds), never typed in.

    OverWorlds("G4", "the random third's MNLI test accuracy − its largest class", RealWorlds("3ep:G4-random", …))
      -> "G4: the random third's MNLI test accuracy − its largest class +0.6 [−1.2, +2.4] points over 5 worlds,
          interval not entirely above 0"   (None when the interval lies above 0)
    EveryWorld("G3-N", "kept counterfactuals N_k − 100", RealWorlds("G3-N", …))
      -> None when every world's value ≥ its bound (0 here), else the failing worlds with their numbers
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nliforge.errors import NLIDataError


def signed(x: float, digits: int = 1) -> str:
    return "nan" if math.isnan(x) else f"{x:+.{digits}f}".replace("-", "−")


def plain(x: float, digits: int = 1) -> str:
    return "nan" if math.isnan(x) else f"{x:.{digits}f}".replace("-", "−")


@dataclass(frozen=True)
class OverWorlds:
    """Gate `name`: the t interval over worlds of `source` (a margin per world: value − bound, in `unit`) lies
    entirely above 0. `what` names the margin; `why` says what a failure means."""
    name: str
    what: str
    source: object
    why: str = ""
    unit: str = "points"
    digits: int = 1

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self.source.files)

    def failure(self, root: Path) -> str | None:
        e = self.source.read(root)
        if e.has_interval and e.low > 0:
            return None
        n, why = e.n_worlds or 0, f": {self.why}" if self.why else ""
        worlds = f"{n} world{'s' if n != 1 else ''}"
        if not e.has_interval:
            return f"{self.name}: {self.what} {signed(e.estimate, self.digits)} {self.unit} in {worlds}, no interval{why}"
        numbers = f"{signed(e.estimate, self.digits)} [{signed(e.low, self.digits)}, {signed(e.high, self.digits)}]"
        return f"{self.name}: {self.what} {numbers} {self.unit} over {worlds}, interval not entirely above 0{why}"


@dataclass(frozen=True)
class EveryWorld:
    """Gate `name`: in every world, `source`'s value ≥ its bound. The source's `per_world(root)` gives
    {world: value} (against `bound`) or {world: (value, that world's bound)}; `what` names the value,
    `bound_what` the bound, `unit` follows each number (`%`)."""
    name: str
    what: str
    source: object
    bound: float = 0.0
    bound_what: str = ""
    why: str = ""
    digits: int = 1
    unit: str = ""

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self.source.files)

    def failure(self, root: Path) -> str | None:
        values = self.source.per_world(root)
        if not values:
            raise NLIDataError(f"{root / self.files[0]}: gate {self.name}: no world's value")
        pairs = {w: v if isinstance(v, tuple) else (v, self.bound) for w, v in values.items()}
        bad = [w for w, (v, b) in sorted(pairs.items()) if math.isnan(v) or v < b]
        if not bad:
            return None
        bound = f"{self.bound_what} " if self.bound_what else ""
        num = lambda x: plain(x, self.digits) + self.unit  # noqa: E731
        parts = ", ".join(f"{num(pairs[w][0])} < {bound}{num(pairs[w][1])} in world {w}" for w in bad)
        passed = [str(w) for w in sorted(pairs) if w not in bad]
        also = f" (passed in world{'s' if len(passed) > 1 else ''} {', '.join(passed)})" if passed else ""
        why = f": {self.why}" if self.why else ""
        return f"{self.name}: {self.what} {parts}{also}{why}"


def failed(gates: tuple, root: Path) -> str | None:
    """The sentences of the gates that failed, joined by '; ', or None when every gate passed."""
    sentences = [s for s in (g.failure(root) for g in gates) if s]
    return "; ".join(sentences) if sentences else None
