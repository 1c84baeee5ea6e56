"""Read an offline W&B run back: the records of its `run-<id>.wandb` file, as `wandb sync` would
upload them, so tests assert on what W&B receives rather than on what the code meant to send.

The file is a LevelDB-style log (what W&B's writer produces): a 7-byte header (b":W&B", magic 0xBEE1,
version 0), then 32 KiB blocks of chunks, each `<crc32 u32><length u16><type u8>` followed by
`length` bytes; type 1 is a whole record, 2/3/4 the first/middle/last piece of a longer one, and a
block tail shorter than a chunk header is zero padding. The crc covers the type byte and the bytes.
Each reassembled record is a `wandb_internal_pb2.Record` protobuf.
"""

from __future__ import annotations

import json
import struct
import time
import zlib
from pathlib import Path

BLOCK = 32 * 1024
HEADER = struct.Struct("<4sHB")
CHUNK = struct.Struct("<IHB")
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _payloads(data: bytes, path: Path) -> list[bytes]:
    ident, magic, _version = HEADER.unpack_from(data, 0)
    if ident != b":W&B" or magic != 0xBEE1:
        raise ValueError(f"{path}: not a W&B run file (header {data[:7]!r})")
    pos, pending, out = HEADER.size, b"", []
    while pos + CHUNK.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < CHUNK.size:
            pos += left
            continue
        crc, length, kind = CHUNK.unpack_from(data, pos)
        if kind == 0 and length == 0:           # zero padding to the end of the block
            pos += left
            continue
        body = data[pos + CHUNK.size:pos + CHUNK.size + length]
        if zlib.crc32(body, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF != crc or len(body) != length:
            break                                # a record still being written: stop at the last whole one
        pos += CHUNK.size + length
        if kind == FULL:
            out.append(body)
        elif kind == FIRST:
            pending = body
        elif kind in (MIDDLE, LAST):
            pending += body
            if kind == LAST:
                out.append(pending)
    return out


def read_records(path: str | Path) -> list:
    """Every record of one `.wandb` file, in order."""
    from wandb.proto import wandb_internal_pb2 as pb

    path = Path(path)
    records = []
    for body in _payloads(path.read_bytes(), path):
        rec = pb.Record()
        rec.ParseFromString(body)
        records.append(rec)
    return records


def finished_run(run_dir: str | Path, timeout_s: float = 60.0) -> list:
    """The records of the offline run in `run_dir` (an `offline-run-*` folder), waiting until its exit
    record is written: W&B's writer process may still be flushing after `wandb.finish()` returns."""
    run_dir = Path(run_dir)
    deadline = time.monotonic() + timeout_s
    while True:
        files = list(run_dir.glob("run-*.wandb"))
        records = read_records(files[0]) if len(files) == 1 else []
        if any(r.WhichOneof("record_type") == "exit" for r in records) or time.monotonic() > deadline:
            if not records:
                raise FileNotFoundError(f"{run_dir}: no readable run-*.wandb file")
            return records
        time.sleep(0.2)


def of_type(records: list, kind: str) -> list:
    """The records of one kind (`run`, `history`, `summary`, `artifact`, `config`, `exit`, ...)."""
    return [getattr(r, kind) for r in records if r.WhichOneof("record_type") == kind]


def history(records: list) -> dict:
    """Every logged key (nested keys joined by '/') to its last value, JSON-decoded."""
    out = {}
    for rec in of_type(records, "history"):
        for item in rec.item:
            key = "/".join(item.nested_key) if item.nested_key else item.key
            out[key] = json.loads(item.value_json)
    return out


def config(records: list) -> dict:
    """The run's config as logged (the run record's and every later config update), JSON-decoded."""
    out = {}
    for rec in [r.config for r in of_type(records, "run")] + of_type(records, "config"):
        for item in rec.update:
            key = "/".join(item.nested_key) if item.nested_key else item.key
            out[key] = json.loads(item.value_json)
    return out


def table(run_dir: str | Path, records: list, key: str) -> list[dict]:
    """A logged wandb.Table as row dicts, read from the file its history entry points to."""
    path = history(records).get(f"{key}/path")
    if path is None:
        raise KeyError(f"no table {key!r} in the run's history")
    data = json.loads((Path(run_dir) / "files" / path).read_text(encoding="utf-8"))
    return [dict(zip(data["columns"], row)) for row in data["data"]]
