"""JSONL reading with per-line validation (errors name `file:line`, and the column for JSON syntax) and
writing (atomically, through `nliforge.utils.atomic`)."""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from nliforge.data.checks import check_text_field
from nliforge.errors import NLIDataError
from nliforge.data.labels import ALL_GOLD_LABELS
from nliforge.data.records import Record, record_from_mapping
from nliforge.utils.atomic import atomic_write_text

LARGE_FILE = 20_000_000   # bytes: a file this large says how its reading goes
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # a JSON escape of a UTF-16 surrogate half


def read_jsonl(
    path: str | os.PathLike,
    allowed_labels: Iterable[str] = ALL_GOLD_LABELS,
    allow_unlabeled: bool = True,
    max_chars: int | None = None,
) -> list[Record]:
    """Read records, failing at the first bad line with `path:line: what is wrong`.

    An empty file gives no records (a caller that needs some says so, e.g. build_training_set). With
    `max_chars`, a premise or hypothesis longer than that is refused at its line.
    """
    path = Path(path)
    if not path.is_file():
        raise NLIDataError(f"{path}: file not found")
    allowed = tuple(allowed_labels)
    records, first_line = [], {}
    with reading_progress(path) as bar:
        for lineno, text in jsonl_lines(path):
            bar.update(len(text) + 1)
            records.append(_checked_record(text, f"{path}:{lineno}", lineno, allowed, allow_unlabeled, max_chars,
                                           first_line))
    return records


def reading_progress(path: Path):
    """Progress of reading a large file (a bar on a terminal, a line every `progress_every_s` in a log;
    characters as the unit): a 1,000,000-row file took 98 s to read with nothing said."""
    from nliforge.utils.progress import progress

    size = path.stat().st_size
    return progress(total=size, desc=f"read {path.name}", unit="B", unit_scale=True, disable=size < LARGE_FILE,
                    mininterval=2)


def _checked_record(text: str, where: str, lineno: int, allowed: tuple[str, ...], allow_unlabeled: bool,
                    max_chars: int | None, first_line: dict[str, int]) -> Record:
    """The record on one line, its texts' length and its uid's uniqueness checked."""
    rec = record_from_mapping(parse_json_line(text, where), where, allowed, allow_unlabeled)
    if max_chars is not None:
        check_text_field(rec.premise, "premise", where, max_chars)
        check_text_field(rec.hypothesis, "hypothesis", where, max_chars)
    if rec.uid in first_line:
        raise NLIDataError(f"{where}: duplicate uid {rec.uid!r} (first at line {first_line[rec.uid]}); "
                           "uids must be unique within a set")
    first_line[rec.uid] = lineno
    return rec


def jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line, its line ending removed.

    Lines are split on `\\n` only (as JSONL defines them), so line numbers are those an editor shows. A
    UTF-8 byte-order mark at the start of the file (what Excel and many Windows editors write) is
    skipped; bytes that are not UTF-8 fail with `path:line: ... column N`.
    """
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8):]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                column = len(raw[: err.start].decode("utf-8", "replace")) + 1
                raise NLIDataError(f"{path}:{lineno}: not UTF-8 text: byte 0x{raw[err.start]:02x} at column "
                                   f"{column}; save the file as UTF-8") from None
            text = text.rstrip("\r\n")
            if text.strip():
                yield lineno, text


def parse_json_line(text: str, where: str) -> Any:
    """The JSON value on one line; errors name `where` and the column (1-based, in characters) where the
    parser stopped, with the text found there."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        found = repr(text[err.pos: err.pos + 20]) if err.pos < len(text) else "the end of the line"
        raise NLIDataError(f"{where}: invalid JSON at column {err.pos + 1}: {err.msg}; found {found}") from None
    except RecursionError:
        raise NLIDataError(f"{where}: invalid JSON: nested too deeply for the parser") from None
    except ValueError as err:   # e.g. an integer longer than Python's 4300-digit limit
        raise NLIDataError(f"{where}: invalid JSON value: {err}") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise NLIDataError(f"{where}: text holds an unpaired surrogate escape (e.g. \\ud800), which is not "
                               "valid Unicode and cannot be written back") from None
    return value


def write_jsonl(records: Iterable[Record], path: str | os.PathLike) -> Path:
    """Write records one per line, atomically."""
    return atomic_write_text(path, (rec.to_json() + "\n" for rec in records))


def records_digest(records: Iterable[Record]) -> str:
    """sha256 of the canonical JSONL bytes: equal digest <=> byte-identical file."""
    h = hashlib.sha256()
    for rec in records:
        h.update((rec.to_json() + "\n").encode("utf-8"))
    return h.hexdigest()
