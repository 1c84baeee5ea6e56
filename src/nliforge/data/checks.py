"""Checks a set's YAML can ask of what it loads: the file's sha256, the row and label counts, the size
of a text field, and a fixed split of a set by a hash of each pair's uid.

- `sha256: <hex>`: the file read must be byte-identical to the release it was registered from
  (a re-saved, truncated or re-encoded copy is refused, naming the file).
- `expected_size: N` and `expected_labels: {entailment: N, ...}`: checked on every load (before
  `limit`). A mismatch is an error, because a wrong quoting rule merges or drops rows silently and only
  the count shows it; `allow_count_mismatch: true` turns it into a warning (e.g. for a locally edited copy).
- `max_field_chars: N` (default `DEFAULT_MAX_FIELD_CHARS`): a premise or hypothesis longer than N
  characters is refused at its `path:line`; tokenising one 50 MB field would otherwise hang a run.
- `hash_split: {part: train|test, test_fraction: 0.3, salt: <text>, expected_size: N}`: keeps the pairs
  whose sha256(`salt|uid`) falls in that part (and checks the part's size). The same uid always lands in the same part, whatever the
  file's order or the machine, so no pair is in both parts.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nliforge.errors import NLIDataError
from nliforge.data.records import Record

log = logging.getLogger(__name__)
DEFAULT_MAX_FIELD_CHARS = 100_000   # ~15,000 words: far above any NLI premise, long-text ones included
SPLIT_PARTS = ("train", "test")


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, computed once per (path, size, mtime): a suite reads one release file for
    several sets (the MNLI parts and the stress tests derived from them)."""
    stat = Path(path).stat()
    return _sha256_of(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_sha256(spec: Mapping[str, Any], where: str, path: Path) -> None:
    """Refuse a file whose bytes are not the registered release's (`sha256` in the set's YAML)."""
    expected = spec.get("sha256")
    if not expected:
        return
    got = file_sha256(path)
    if got != str(expected).lower():
        raise NLIDataError(f"{path}: sha256 {got} is not the registered {expected} ({where}.sha256); the file "
                           f"is not the release the set was registered from: fetch it again "
                           f"(nliforge-data fetch {spec.get('name')}) or override {where}.sha256=null")


def check_counts(records: Sequence[Record], spec: Mapping[str, Any], where: str) -> None:
    """Row and label counts against `expected_size` / `expected_labels`: an error unless
    `allow_count_mismatch` is set (then a warning)."""
    problems = []
    if spec.get("expected_size") is not None and len(records) != int(spec["expected_size"]):
        problems.append(f"{len(records)} rows, expected_size is {spec['expected_size']}")
    expected_labels = spec.get("expected_labels")
    if expected_labels:
        got = Counter(r.label for r in records)
        wrong = {k: got.get(k, 0) for k, v in dict(expected_labels).items() if got.get(k, 0) != int(v)}
        if wrong:
            problems.append(f"label counts {dict(sorted(got.items()))}, expected_labels is {dict(expected_labels)}")
    if not problems:
        return
    message = (f"{where}: loaded {'; '.join(problems)}" + (f" from {spec['path']}" if spec.get("path") else "")
               + "; a wrong quoting rule or a different copy of the file changes the count")
    if spec.get("allow_count_mismatch"):
        log.warning("%s (allowed by %s.allow_count_mismatch)", message, where)
        return
    raise NLIDataError(f"{message}; check {where}.quoting/format, or set {where}.allow_count_mismatch=true")


def check_text_field(value: Any, key: str, where: str, max_chars: int) -> str:
    """A premise or hypothesis: a non-empty string of at most max_chars characters."""
    if value is None:
        raise NLIDataError(f"{where}: {key} is missing or null; every row needs a premise and a hypothesis")
    if not isinstance(value, str):
        raise NLIDataError(f"{where}: {key} must be text, got {type(value).__name__}")
    if not value.strip():
        raise NLIDataError(f"{where}: {key} is empty")
    if len(value) > max_chars:
        raise NLIDataError(f"{where}: {key} has {len(value):,} characters, above the limit of {max_chars:,} "
                           "(the set's max_field_chars); raise it for a set of very long texts")
    return value


def max_field_chars(spec: Mapping[str, Any]) -> int:
    value = spec.get("max_field_chars")
    return DEFAULT_MAX_FIELD_CHARS if value is None else int(value)


def hash_fraction(salt: str, uid: str) -> float:
    """A number in [0, 1) fixed by (salt, uid): the first 8 bytes of sha256 over 2**64."""
    digest = hashlib.sha256(f"{salt}|{uid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def apply_hash_split(records: Sequence[Record], spec: Mapping[str, Any], where: str) -> list[Record]:
    """The records of one part of `hash_split` (see the module docstring); unchanged without one."""
    split = spec.get("hash_split")
    if not split:
        return list(records)
    part, fraction = split.get("part"), split.get("test_fraction")
    if part not in SPLIT_PARTS:
        raise NLIDataError(f"{where}.hash_split.part={part!r}; valid: {', '.join(SPLIT_PARTS)}")
    if fraction is None or not 0 < float(fraction) < 1:
        raise NLIDataError(f"{where}.hash_split.test_fraction={fraction!r}; expected a number in (0, 1)")
    salt = str(split.get("salt") or spec.get("name"))
    kept = [r for r in records if (hash_fraction(salt, r.uid) < float(fraction)) == (part == "test")]
    expected = split.get("expected_size")
    if expected is not None and len(kept) != int(expected) and not spec.get("allow_count_mismatch"):
        raise NLIDataError(f"{where}.hash_split: the {part} part holds {len(kept)} pairs, expected_size is {expected}; "
                           f"the uids (fields.uid, uid_prefix) or the salt changed")
    return kept
