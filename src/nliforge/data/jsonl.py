"""JSONL reading with per-line validation and atomic writing."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from nliforge.data.errors import NLIDataError
from nliforge.data.labels import ALL_GOLD_LABELS
from nliforge.data.records import Record, check_unique_uids, record_from_mapping


def read_jsonl(
    path: str | os.PathLike,
    allowed_labels: Iterable[str] = ALL_GOLD_LABELS,
    allow_unlabeled: bool = True,
) -> list[Record]:
    """Read records, failing at the first bad line with `path:line: what is wrong`."""
    path = Path(path)
    if not path.is_file():
        raise NLIDataError(f"{path}: file not found")
    allowed = tuple(allowed_labels)
    records = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise NLIDataError(f"{where}: invalid JSON ({err.msg} at column {err.colno})") from None
            records.append(record_from_mapping(obj, where, allowed, allow_unlabeled))
    check_unique_uids(records, str(path))
    return records


def atomic_write_text(path: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Write lines to a temp file in the target folder, then rename: no half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                fh.write(line)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_jsonl(records: Iterable[Record], path: str | os.PathLike) -> Path:
    """Write records one per line, atomically."""
    return atomic_write_text(path, (rec.to_json() + "\n" for rec in records))


def records_digest(records: Iterable[Record]) -> str:
    """sha256 of the canonical JSONL bytes: equal digest <=> byte-identical file."""
    h = hashlib.sha256()
    for rec in records:
        h.update((rec.to_json() + "\n").encode("utf-8"))
    return h.hexdigest()
