"""The one record type every pipeline stage reads and writes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from nliforge.errors import NLIDataError
from nliforge.data.labels import ALL_GOLD_LABELS

FIELDS: tuple[str, ...] = ("uid", "premise", "hypothesis", "label", "source", "meta")
REQUIRED: tuple[str, ...] = ("uid", "premise", "hypothesis", "label")


@dataclass(frozen=True)
class Record:
    """One NLI example. `label` is a name or None (unlabeled generation); `meta` is provenance."""

    uid: str
    premise: str
    hypothesis: str
    label: str | None
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        """Canonical one-line JSON (stable key order), so equal records give equal bytes."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False, separators=(",", ":"))


def record_from_mapping(
    obj: Mapping[str, Any],
    where: str,
    allowed_labels: Iterable[str] = ALL_GOLD_LABELS,
    allow_unlabeled: bool = True,
) -> Record:
    """Validate a mapping and build a Record; errors start with `where` (e.g. `file:line`)."""
    if not isinstance(obj, Mapping):
        raise NLIDataError(f"{where}: expected a JSON object with fields {list(FIELDS)}, got {type(obj).__name__}")
    missing = [k for k in REQUIRED if k not in obj]
    if missing:
        raise NLIDataError(f"{where}: missing field(s) {missing}; a record needs {list(REQUIRED)} (a file in "
                           "another schema, e.g. SNLI's sentence1/sentence2/gold_label, reads as a set with "
                           "loader: file, format: jsonl and fields: {premise: ..., hypothesis: ..., label: ...})")
    unknown = [k for k in obj if k not in FIELDS]
    if unknown:
        raise NLIDataError(f"{where}: unknown field(s) {unknown}; valid fields: {list(FIELDS)}")
    for key in ("uid", "premise", "hypothesis"):
        value = obj[key]
        if not isinstance(value, str):
            raise NLIDataError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
        if not value.strip():
            raise NLIDataError(f"{where}: field {key!r} is empty")
    label = obj["label"]
    allowed = tuple(allowed_labels)
    if label is None and not allow_unlabeled:
        raise NLIDataError(f"{where}: label is null but this set must be labeled; valid labels: {', '.join(allowed)}")
    if label is not None and label not in allowed:
        raise NLIDataError(f"{where}: unknown label {label!r}; valid labels: {', '.join(allowed)}")
    source = obj.get("source", "")
    if not isinstance(source, str):
        raise NLIDataError(f"{where}: field 'source' must be a string, got {type(source).__name__}")
    meta = obj.get("meta", {}) or {}
    if not isinstance(meta, Mapping):
        raise NLIDataError(f"{where}: field 'meta' must be an object, got {type(meta).__name__}")
    return Record(obj["uid"], obj["premise"], obj["hypothesis"], label, source, dict(meta))


def check_unique_uids(records: Iterable[Record], where: str) -> None:
    """Training dynamics are keyed by uid, so duplicates would silently merge two examples."""
    seen: set[str] = set()
    for rec in records:
        if rec.uid in seen:
            raise NLIDataError(f"{where}: duplicate uid {rec.uid!r}; uids must be unique within a set")
        seen.add(rec.uid)
