"""The LLM response cache: one SQLite file per generation run, the source of truth for what has
been answered, plus a per-stage ledger (requests, tokens, retries, faults, failures, cost).

Why SQLite: an answer must be durable before the runner counts it, so that a run killed at any
moment (SIGKILL included) resumes without sending an answered request again. Every `put` is one
transaction; SQLite's atomic commit means a reopened file never holds a half-written row.

Durability vs speed: the file is in WAL mode with `synchronous=NORMAL`. A commit then costs a
write to the WAL (no fsync), which survives the death of the process (the OS still holds the
pages); only a power loss / kernel crash can lose the last few commits. That trade-off is what
makes a commit per answer cheap enough to run at hundreds of answers per second.

Ledger counters are accumulated in memory (`count`) and written in the same transaction as the
next answer (or by `flush`), so they cost no extra commit and are as durable as the answers they
describe. Counters of a request that was in flight at a kill (its `sent`, its faults) are lost
with it; the answers never are.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from nliforge.generation.types import Failure, Response

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('response', 'failure')),
    body TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger (
    stage TEXT NOT NULL,
    name TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (stage, name)
);
"""
# Counter names with a fixed place in `ledger(stage)`; `fault:<kind>` and `failure:<kind>` are grouped.
LEDGER_FIELDS = ("sent", "cached", "prompt_tokens", "completion_tokens", "retries", "cost")


class ResponseCache:
    """Answers keyed by `types.cache_key(...)`, each a `Response` or a `Failure`, in a SQLite file."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db: sqlite3.Connection | None = sqlite3.connect(str(self.path), isolation_level=None,
                                                             check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._pending: dict[tuple[str, str], float] = defaultdict(float)

    # ------------------------------------------------------------------ answers
    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise ValueError(f"response cache {self.path} is closed")
        return self._db

    def get(self, key: str) -> Response | Failure | None:
        """The stored answer for `key`, or None when it was never answered."""
        row = self.db.execute("SELECT kind, body FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        kind, body = row
        if kind == "failure":
            return Failure(**json.loads(body))
        return Response.from_json(body)

    def put(self, key: str, stage: str, result: Response | Failure) -> bool:
        """Store one answer and the pending ledger counters in one committed transaction.

        A key is answered once: a second `put` of the same key keeps the first answer (a request
        in flight at a kill may come back twice; the first answer recorded wins) and returns False."""
        if isinstance(result, Response):
            kind, body = "response", result.to_json()
        elif isinstance(result, Failure):
            kind, body = "failure", json.dumps({"kind": result.kind, "message": result.message})
        else:
            raise TypeError(f"expected a Response or a Failure for cache key {key}, got {type(result).__name__}")
        db = self.db
        db.execute("BEGIN")
        try:
            inserted = db.execute("INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?)",
                                  (key, stage, kind, body, time.time())).rowcount == 1
            self._write_pending(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return inserted

    def keys(self) -> set[str]:
        return {k for (k,) in self.db.execute("SELECT key FROM answers")}

    def __len__(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def __contains__(self, key: str) -> bool:
        return self.db.execute("SELECT 1 FROM answers WHERE key = ?", (key,)).fetchone() is not None

    def items(self) -> Iterator[tuple[str, Response | Failure]]:
        """Every (key, answer), in key order (for comparing two caches)."""
        for key, kind, body in self.db.execute("SELECT key, kind, body FROM answers ORDER BY key").fetchall():
            yield key, (Failure(**json.loads(body)) if kind == "failure" else Response.from_json(body))

    # ------------------------------------------------------------------ ledger
    def count(self, stage: str, name: str, amount: float = 1) -> None:
        """Add `amount` to a ledger counter; written with the next `put` or `flush`."""
        self._pending[(stage, name)] += amount

    def flush(self) -> None:
        """Commit pending ledger counters now (end of a run; `put` does it for free otherwise)."""
        if not self._pending:
            return
        db = self.db
        db.execute("BEGIN")
        try:
            self._write_pending(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _write_pending(self, db: sqlite3.Connection) -> None:
        if self._pending:
            db.executemany(
                "INSERT INTO ledger VALUES (?, ?, ?) ON CONFLICT(stage, name) DO UPDATE SET value = value + excluded.value",
                [(stage, name, value) for (stage, name), value in self._pending.items()])
            self._pending.clear()

    def ledger(self, stage: str) -> dict:
        """Counters of one stage: sent, cached, prompt/completion tokens, retries, cost (in the
        configured currency), `faults` and `failures` by kind; zeros for a stage never run."""
        out: dict = {name: 0 for name in LEDGER_FIELDS}
        out["cost"] = 0.0
        out["faults"], out["failures"] = {}, {}
        rows = self.db.execute("SELECT name, value FROM ledger WHERE stage = ?", (stage,)).fetchall()
        pending = [(n, v) for (s, n), v in self._pending.items() if s == stage]
        for name, value in rows + pending:
            group, _, kind = name.partition(":")
            if group == "endpoint" and "|" in kind:   # several endpoints: endpoint:<url>|<field>
                _add_endpoint(out.setdefault("endpoints", {}), *kind.rsplit("|", 1), value)
            elif kind and group in ("fault", "failure"):
                bucket = out["faults" if group == "fault" else "failures"]
                bucket[kind] = bucket.get(kind, 0) + int(value)
            elif name == "cost":
                out["cost"] += value
            else:
                out[name] = out.get(name, 0) + int(value)
        return out

    def merge_from(self, other: ResponseCache, skip: tuple[str, ...] = ()) -> int:
        """Add another cache's answers (a key already here keeps its answer) and ledger counters (summed,
        but those named in `skip`): the merge of a sharded run. Returns how many answers were new."""
        db, new = self.db, 0
        db.execute("BEGIN")
        try:
            for row in other.db.execute("SELECT key, stage, kind, body, created FROM answers ORDER BY key"):
                new += db.execute("INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?)", row).rowcount
            rows = [r for r in other.db.execute("SELECT stage, name, value FROM ledger") if r[1] not in skip]
            db.executemany("INSERT INTO ledger VALUES (?, ?, ?) ON CONFLICT(stage, name) DO UPDATE SET "
                           "value = value + excluded.value", rows)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return new

    def ledger_all(self) -> dict[str, dict]:
        """`ledger(stage)` for every stage that has counters, by stage name."""
        stages = {s for (s,) in self.db.execute("SELECT DISTINCT stage FROM ledger")}
        stages |= {s for (s, _) in self._pending}
        return {s: self.ledger(s) for s in sorted(stages)}

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        """Commit pending counters, checkpoint the WAL into the main file and close (idempotent)."""
        if self._db is None:
            return
        try:
            self.flush()
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._db.close()
            self._db = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _add_endpoint(endpoints: dict, url: str, field: str, value: float) -> None:
    """One endpoint counter into `ledger()["endpoints"][url]`: requests, answers, tokens, latency (mean
    seconds per answer) and errors by kind."""
    ep = endpoints.setdefault(url, {"requests": 0, "answers": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                    "errors": {}, "latency_s": 0.0, "mean_latency_s": 0.0})
    if field.startswith("error:"):
        kind = field.partition(":")[2]
        ep["errors"][kind] = ep["errors"].get(kind, 0) + int(value)
    elif field == "latency_s":
        ep["latency_s"] += value
    else:
        ep[field] = ep.get(field, 0) + int(value)
    ep["mean_latency_s"] = round(ep["latency_s"] / ep["answers"], 4) if ep["answers"] else 0.0
