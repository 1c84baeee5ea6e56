"""One claim of `experiments/summary.csv` (the lists of claims: `summary_claims`, `summary_claims_zaug`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    """kind: tested | descriptive | calibration | not run (summary_stats.VERDICTS); direction +1: the claim
    says the estimate is above `reference`, -1: below; `costly`: a run costs > 30 min per world on 2 cores
    (3 worlds allowed as low power); `digits`: decimals in the README; `family`: claims stated together as one
    family (e.g. the WANLI mechanism test's M1-M4), whose one-sided p values get Holm's correction; `gates`: the
    claim's pre-registered gates (`summary_gates`: OverWorlds, EveryWorld), every one checked before the claim is
    read: one that failed makes the claim `not tested (gate …)`, its sentence computed from the gate's rows."""
    claim: str
    paper: str
    paper_number: str
    source: object | None
    kind: str = "tested"
    direction: int = 1
    reference: float = 0.0
    tolerance: float = 0.0
    costly: bool = False
    digits: int = 1
    diagnosis: str = ""
    files: tuple[str, ...] = ()   # a claim without a source (not run): where its command is
    family: str = ""              # claims committed as one family: Holm's correction over them
    paper_value: float | None = None   # the paper's number on this claim's own scale (a correlation), else None
    gates: tuple = ()             # summary_gates' gates this claim needs

    @property
    def data_files(self) -> tuple[str, ...]:
        """The files its number is read from (its source's; without a source, where its command is)."""
        return tuple(self.source.files if self.source is not None else self.files)

    @property
    def file(self) -> str:
        """Its data files, then its gates' files not among them (`; ` between)."""
        return "; ".join(dict.fromkeys([*self.data_files, *(f for g in self.gates for f in g.files)]))
