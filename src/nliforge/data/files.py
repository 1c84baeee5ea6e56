"""Loader for eval sets released only as the authors' files (`loader: file`).

The YAML names where the file comes from (`url`) and where it is expected (`path`); a missing
file raises DatasetNotCachedError saying where to put it, so a suite with `skip_missing: true`
skips the set. Formats:

- `jsonl`: one JSON object per line (SNLI/MNLI/Naik `sentence1`, `sentence2`, `gold_label`, ...);
  a UTF-8 byte-order mark is skipped (also in `tsv` and `aligned_lines`); a file with no rows is an error;
- `tsv`: tab-separated with a header row, no quoting (GLUE `diagnostic-full.tsv`, HANS); `quoting: csv`
  for files whose fields may be CSV-quoted (Human-CAD: `"... ""Politie"" ..."`);
- `aligned_lines`: `path` is a folder and `files` maps premise/hypothesis/label to line-aligned
  plain-text files (MNLI-hard `s1.test`, `s2.test`, `labels.test`).

Fields and label maps work as for Hub sets (`fields`, `label_map` by name, `meta_fields`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nliforge.data.errors import DatasetNotCachedError, NLIDataError
from nliforge.data.hub import columns_to_records, resolve_source
from nliforge.data.jsonl import jsonl_lines, parse_json_line
from nliforge.data.records import Record

FORMATS = ("jsonl", "tsv", "aligned_lines")


def missing_file_error(spec: Mapping[str, Any], where: str, path: Path) -> DatasetNotCachedError:
    url = spec.get("url")
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
    if fmt == "aligned_lines":
        columns = _read_aligned(spec, where, path)
    else:
        if not path.is_file():
            raise missing_file_error(spec, where, path)
        columns = _read_jsonl_columns(path) if fmt == "jsonl" else _read_tsv_columns(path, _quoting(spec, where))
    names = list(columns)
    n = len(next(iter(columns.values()))) if columns else 0
    if n == 0:
        raise NLIDataError(f"{where}.path: {path} holds no rows (the file is empty or has only a header); "
                           "expected the set's examples")
    if spec.get("limit") is not None:
        n = min(n, int(spec["limit"]))
    resolved = resolve_source(spec, {"fields": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}})
    return columns_to_records(spec, where, columns, names, n, resolved, {"file": str(path)}, f"{path} row")


def _read_jsonl_columns(path: Path) -> dict[str, list]:
    """Columns of a JSONL file of objects (any schema); a BOM is skipped, errors name `path:line`."""
    rows = []
    for lineno, text in jsonl_lines(path):
        row = parse_json_line(text, f"{path}:{lineno}")
        if not isinstance(row, dict):
            raise NLIDataError(f"{path}:{lineno}: expected a JSON object (one row), got {type(row).__name__}")
        rows.append(row)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    return {k: [row.get(k) for row in rows] for k in keys}


def _quoting(spec: Mapping[str, Any], where: str) -> int:
    mode = spec.get("quoting", "none")
    if mode not in ("none", "csv"):
        raise NLIDataError(f"{where}.quoting={mode!r}; valid: none (fields taken verbatim), csv (\"...\" with \"\" inside)")
    return csv.QUOTE_NONE if mode == "none" else csv.QUOTE_MINIMAL


def _read_tsv_columns(path: Path, quoting: int = csv.QUOTE_NONE) -> dict[str, list]:
    with path.open(encoding="utf-8-sig", newline="") as fh:   # -sig: a BOM is not part of the first column name
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=quoting))
    keys = list(rows[0]) if rows else []
    return {k: [row.get(k) if row.get(k) is not None else "" for row in rows] for k in keys}


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
