"""Loader for sets released only as the authors' files (`loader: file`), for training and evaluation.

The YAML names where the file comes from (`url`) and where it is expected (`path`); a missing
file raises DatasetNotCachedError saying where to put it (and, for a registered release, the
`nliforge-data fetch` command), so a suite with `skip_missing: true` skips the set. Formats:

- `jsonl`: one JSON object per line (SNLI/MNLI/Naik `sentence1`, `sentence2`, `gold_label`, ...);
  a UTF-8 byte-order mark is skipped (also in `tsv` and `aligned_lines`); a file with no rows is an error;
- `wanli_jsonl`: WANLI's release (Liu et al. 2022): JSONL with `id`, `premise`, `hypothesis`, `gold`,
  `genre`, `pairID`; uids from `id`, gold labels by name, genre and pairID kept in meta;
- `tsv`: tab-separated with a header row, no quoting (GLUE `diagnostic-full.tsv`, HANS, McCoy et al.'s
  MNLI dev file); `quoting: csv` for files whose fields may be CSV-quoted (Kaushik et al.'s CAD files:
  `"... ""Politie"" ..."`). Read with `quoting: none`, a field that starts and ends with `"` and holds
  a doubled `""` is CSV quoting left in the text: an error naming `path:line`;
- `aligned_lines`: `path` is a folder and `files` maps premise/hypothesis/label to line-aligned
  plain-text files (MNLI-hard `s1.test`, `s2.test`, `labels.test`).

Fields and label maps work as for Hub sets (`fields`, `label_map` by name, `meta_fields`). Every row is
checked (a missing or null text, one longer than `max_field_chars`) at `path:line`; `sha256`,
`expected_size` and `expected_labels` are checked on load (data/checks.py). The format read is logged.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nliforge.data.checks import check_sha256
from nliforge.errors import DatasetNotCachedError, NLIDataError
from nliforge.data.hub import columns_to_records, resolve_source
from nliforge.data.jsonl import jsonl_lines, parse_json_line
from nliforge.data.records import Record

log = logging.getLogger(__name__)
FORMATS = ("jsonl", "wanli_jsonl", "tsv", "aligned_lines")
# WANLI's release format: what `format: wanli_jsonl` means, and how the jsonl loader recognises it
WANLI_FIELDS = {"uid": "id", "premise": "premise", "hypothesis": "hypothesis", "label": "gold"}
WANLI_META = ["genre", "pairID"]
_CSV_ESCAPED = re.compile(r'^".*"".*"$', re.DOTALL)


def recorded_path(path: Path) -> str:
    """The file as a record's `meta.file` names it: relative to NLIFORGE_DATA_DIR when it lies there, so that
    the same release gives byte-identical records (and digests) on every machine; else the path as given."""
    root = os.environ.get("NLIFORGE_DATA_DIR")
    if root:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def missing_file_error(spec: Mapping[str, Any], where: str, path: Path) -> DatasetNotCachedError:
    url = spec.get("url")
    if spec.get("sha256") and url:            # a registered release (data/fetch.py)
        return DatasetNotCachedError(
            f"{where}.path: {path} not found; get it with `nliforge-data fetch {spec.get('name')}` (from {url}), "
            f"or set NLIFORGE_DATA_DIR to a folder laid out like the download")
    how = f"download it from {url}" if url else "obtain it"
    extra = f" ({spec['instructions']})" if spec.get("instructions") else ""
    return DatasetNotCachedError(
        f"{where}.path: {path} not found; set {spec.get('name')!r} is distributed only as the authors' "
        f"file: {how} and put it at {path}{extra}, or override {where}.path"
    )


def load_file_records(spec: Mapping[str, Any], where: str) -> list[Record]:
    fmt = spec.get("format", "jsonl")
    if fmt not in FORMATS:
        raise NLIDataError(f"{where}.format={fmt!r}; valid formats: {', '.join(FORMATS)}")
    if not spec.get("path"):
        raise NLIDataError(f"{where}.path: a file set needs the expected local path of its file")
    path = Path(str(spec["path"]))
    lines = None
    if fmt == "aligned_lines":
        columns = _read_aligned(spec, where, path)
    else:
        if not path.is_file():
            raise missing_file_error(spec, where, path)
        check_sha256(spec, where, path)
        if fmt == "tsv":
            columns, lines = _read_tsv_columns(path, _quoting(spec, where))
        else:
            columns, lines = _read_jsonl_columns(path)
    names = list(columns)
    n = len(next(iter(columns.values()))) if columns else 0
    if n == 0:
        raise NLIDataError(f"{where}.path: {path} holds no rows (the file is empty or has only a header); "
                           "expected the set's examples")
    if spec.get("limit") is not None and not spec.get("expected_size") and not spec.get("hash_split"):
        n = min(n, int(spec["limit"]))
    defaults = {"fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}}
    if fmt == "wanli_jsonl":
        defaults = {"fields": WANLI_FIELDS, "label_map": "wanli", "meta_fields": WANLI_META}
    resolved = resolve_source(spec, defaults)
    records = columns_to_records(spec, where, columns, names, n, resolved, {"file": recorded_path(path)},
                                 f"{path} row", lines, shown_path=str(path))
    log.info("%s: read %s as %s%s: %d rows", where, path, fmt,
             f" (quoting: {spec.get('quoting', 'none')})" if fmt == "tsv" else "", len(records))
    return records


def looks_like_wanli(path: Path) -> bool:
    """True when the first JSON line of `path` has WANLI's release fields (and not our `uid`/`label`)."""
    for _, text in jsonl_lines(path):
        try:
            first = json.loads(text)
        except ValueError:
            return False
        return isinstance(first, dict) and set(WANLI_FIELDS.values()) <= set(first) and "uid" not in first
    return False


def _read_jsonl_columns(path: Path) -> tuple[dict[str, list], list[int]]:
    """Columns of a JSONL file of objects (any schema) and each row's line; errors name `path:line`."""
    rows, lines = [], []
    for lineno, text in jsonl_lines(path):
        row = parse_json_line(text, f"{path}:{lineno}")
        if not isinstance(row, dict):
            raise NLIDataError(f"{path}:{lineno}: expected a JSON object (one row), got {type(row).__name__}")
        rows.append(row)
        lines.append(lineno)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    return {k: [row.get(k) for row in rows] for k in keys}, lines


def _quoting(spec: Mapping[str, Any], where: str) -> int:
    mode = spec.get("quoting", "none")
    if mode not in ("none", "csv"):
        raise NLIDataError(f"{where}.quoting={mode!r}; valid: none (fields taken verbatim), csv (\"...\" with \"\" inside)")
    return csv.QUOTE_NONE if mode == "none" else csv.QUOTE_MINIMAL


def _read_tsv_columns(path: Path, quoting: int = csv.QUOTE_NONE) -> tuple[dict[str, list], list[int]]:
    """Columns of a TSV file with a header row, and each row's (last) line number. A row with fewer or
    more fields than the header, or (with no quoting) a CSV-escaped field, is refused at `path:line`."""
    rows, lines = [], []
    with path.open(encoding="utf-8-sig", newline="") as fh:   # -sig: a BOM is not part of the first column name
        reader = csv.DictReader(fh, delimiter="\t", quoting=quoting)
        for row in reader:
            if None in row or None in row.values():
                found = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or [])
                raise NLIDataError(f"{path}:{reader.line_num}: {found} tab-separated fields, the header has "
                                   f"{len(reader.fieldnames or [])} ({', '.join(reader.fieldnames or [])})")
            if quoting == csv.QUOTE_NONE:
                _refuse_csv_quoting(row, path, reader.line_num)
            rows.append(row)
            lines.append(reader.line_num)
    keys = list(rows[0]) if rows else []
    return {k: [row.get(k) for row in rows] for k in keys}, lines


def _refuse_csv_quoting(row: Mapping[str, Any], path: Path, line: int) -> None:
    for key, value in row.items():
        if isinstance(value, str) and _CSV_ESCAPED.match(value):
            raise NLIDataError(f"{path}:{line}: column {key!r} is CSV-quoted ({value[:60]!r}...) but the set is read "
                               "with quoting: none; set quoting: csv for this file")


def _read_aligned(spec: Mapping[str, Any], where: str, folder: Path) -> dict[str, list]:
    files = dict(spec.get("files") or {})
    if set(files) < {"premise", "hypothesis", "label"}:
        raise NLIDataError(f"{where}.files: aligned_lines needs file names for premise, hypothesis and label")
    columns = {}
    for key, name in files.items():
        file = folder / str(name)
        if not file.is_file():
            raise missing_file_error(spec, where, file)
        columns[key] = file.read_text(encoding="utf-8-sig").rstrip("\n").split("\n")
    sizes = {k: len(v) for k, v in columns.items()}
    if len(set(sizes.values())) != 1:
        raise NLIDataError(f"{where}.files: line counts differ {sizes}; the files must be line-aligned")
    columns["label"] = [x.strip() for x in columns["label"]]
    return columns
