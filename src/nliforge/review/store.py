"""The durable review store: items to review and the judgements given, in one SQLite file (WAL).

Why SQLite: every judgement is committed (synchronous=FULL) before the review page is told it was
saved, so a crash or a reload never loses work, and several server threads or processes can share
one file.

Assignment (`next_item`) and the two-annotator cap. Each item gets judgements from at most
ANNOTATORS_PER_ITEM distinct human annotators (WANLI §2.4). A page asks for work, then submits
minutes later, so "fewer than two judgements" alone would hand the same item to a third reviewer
who arrives in between. The store therefore keeps a short-lived *claim* row per (item, annotator):
`next_item` counts distinct annotators over judgements plus unexpired claims, and inserts its claim
in the same `BEGIN IMMEDIATE` transaction (SQLite's write lock), so two concurrent callers can never
both take the last slot. An annotator who asks again gets the item they already hold (a reload
shows the same item). Claims expire after `claim_ttl_s` so an abandoned item returns to the pool.
Claims cannot lock real annotators out: anyone holding the page token could claim every item under
made-up names, so when no item is free `next_item` takes over the oldest claim, on an item that still
lacks judgements, of an annotator who has never saved a judgement (an annotator at work keeps theirs).
A displaced newcomer meets ItemFullError (the page's 409, then the next item) if the item fills meanwhile.
Two tabs saving as one annotator: the page saves with `replace=False`, so the second save of an item is
AlreadyJudgedError (409), not a silent overwrite; imports and machine reviewers still replace.
As a second line of defence `save` re-checks the cap inside its own write transaction and raises
ItemFullError for a further page annotator (e.g. one whose claim expired and was taken over).
Judgements imported from a crowd platform (amt, label_studio) count towards the cap but are never
refused (that platform did its own assignment; refusing would drop paid work); machine judgements
(teacher, llm_judge) are stored too and do not count.

Thread safety: one connection per thread (sqlite3 connections must not be shared), all writes in
explicit transactions; busy_timeout lets concurrent writers wait instead of failing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.data.judgements import ANNOTATORS_PER_ITEM, Judgement

HUMAN_SOURCES = ("page", "amt", "label_studio")
DEFAULT_CLAIM_TTL_S = 30 * 60.0
__all__ = ["HUMAN_SOURCES", "AlreadyJudgedError", "ItemFullError", "ReviewStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
  uid TEXT PRIMARY KEY, premise TEXT NOT NULL, hypothesis TEXT NOT NULL, label TEXT,
  source TEXT NOT NULL DEFAULT '', meta TEXT NOT NULL DEFAULT '{}', ord INTEGER NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS judgements (
  uid TEXT NOT NULL REFERENCES items(uid), annotator TEXT NOT NULL, label TEXT NOT NULL,
  premise TEXT NOT NULL, hypothesis TEXT NOT NULL, revised INTEGER NOT NULL, source TEXT NOT NULL,
  rubric TEXT, confidence REAL, created_at REAL NOT NULL, extra TEXT NOT NULL DEFAULT '{}',
  UNIQUE (uid, annotator));
CREATE INDEX IF NOT EXISTS judgements_annotator ON judgements(annotator);
CREATE TABLE IF NOT EXISTS claims (
  uid TEXT NOT NULL, annotator TEXT NOT NULL, expires_at REAL NOT NULL, PRIMARY KEY (uid, annotator));
"""
_HUMAN_SQL = "(" + ",".join(f"'{s}'" for s in HUMAN_SOURCES) + ")"
# Distinct human annotators of item `i.uid` other than `?`: judgements plus live claims.
_TAKEN = f"""(SELECT COUNT(*) FROM (
  SELECT annotator FROM judgements WHERE uid = i.uid AND source IN {_HUMAN_SQL} AND annotator != :who
  UNION SELECT annotator FROM claims WHERE uid = i.uid AND annotator != :who))"""
_NEXT_FREE = f"""SELECT i.* FROM items i
  WHERE NOT EXISTS (SELECT 1 FROM judgements j WHERE j.uid = i.uid AND j.annotator = :who)
    AND {_TAKEN} < :cap ORDER BY i.ord LIMIT 1"""
_HELD = """SELECT i.* FROM items i JOIN claims c ON c.uid = i.uid AND c.annotator = :who
  WHERE NOT EXISTS (SELECT 1 FROM judgements j WHERE j.uid = i.uid AND j.annotator = :who)
  ORDER BY i.ord LIMIT 1"""

# When nothing is free: the oldest claim, on an item that still lacks judgements, of another annotator who
# has judged nothing at all (a made-up name holds a claim and never saves; a working annotator keeps theirs).
_TAKEOVER = f"""SELECT c.uid, c.annotator FROM claims c JOIN items i ON i.uid = c.uid
  WHERE c.annotator != :who
    AND NOT EXISTS (SELECT 1 FROM judgements j WHERE j.annotator = c.annotator)
    AND NOT EXISTS (SELECT 1 FROM judgements j WHERE j.uid = c.uid AND j.annotator = :who)
    AND (SELECT COUNT(DISTINCT annotator) FROM judgements j
         WHERE j.uid = c.uid AND j.source IN {_HUMAN_SQL} AND j.annotator != :who) < :cap
  ORDER BY c.expires_at, i.ord LIMIT 1"""

_UPSERT = """INSERT INTO judgements VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (uid, annotator) DO UPDATE
  SET label=excluded.label, premise=excluded.premise, hypothesis=excluded.hypothesis, revised=excluded.revised,
      source=excluded.source, rubric=excluded.rubric, confidence=excluded.confidence,
      created_at=excluded.created_at, extra=excluded.extra"""


class ItemFullError(NLIDataError):
    """A judgement from a further annotator for an item that already has its ANNOTATORS_PER_ITEM."""


class AlreadyJudgedError(NLIDataError):
    """A second judgement of an item by the same annotator where replacing was not asked for (two tabs)."""


class ReviewStore:
    """Items and judgements in one SQLite file; see the module docstring for assignment rules."""

    def __init__(self, path: str | os.PathLike, claim_ttl_s: float = DEFAULT_CLAIM_TTL_S,
                 annotators_per_item: int = ANNOTATORS_PER_ITEM):
        self.path = Path(path)
        self.claim_ttl_s = float(claim_ttl_s)
        self.cap = int(annotators_per_item)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._conn().executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (created on first use): WAL, FULL sync, 10 s busy wait."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _write(self):
        """A write transaction taking SQLite's write lock at once (no check-then-act gap)."""
        return _Transaction(self._conn())

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # items -----------------------------------------------------------------------------------
    def add_items(self, records: Iterable[Record]) -> int:
        """Append records not yet present (by uid), keeping their order; returns how many were new.

        Adding the same records again changes nothing; a known uid with different texts is an
        error, since judgements already given would silently refer to another example.
        """
        added = 0
        with self._write() as conn:
            nxt = conn.execute("SELECT COALESCE(MAX(ord), -1) + 1 FROM items").fetchone()[0]
            for rec in records:
                row = conn.execute("SELECT premise, hypothesis FROM items WHERE uid = ?", (rec.uid,)).fetchone()
                if row is not None:
                    if (row["premise"], row["hypothesis"]) != (rec.premise, rec.hypothesis):
                        raise NLIDataError(f"{self.path}: item {rec.uid!r} is already in the store with other "
                                           "texts; expected the same premise and hypothesis (or a new uid)")
                    continue
                conn.execute("INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (rec.uid, rec.premise, rec.hypothesis, rec.label, rec.source,
                              json.dumps(rec.meta, ensure_ascii=False), nxt + added))
                added += 1
        return added

    def items(self) -> list[Record]:
        return [_record(r) for r in self._conn().execute("SELECT * FROM items ORDER BY ord")]

    def item(self, uid: str) -> Record | None:
        row = self._conn().execute("SELECT * FROM items WHERE uid = ?", (uid,)).fetchone()
        return _record(row) if row is not None else None

    # judgements ------------------------------------------------------------------------------
    def save(self, judgement: Judgement, replace: bool = True) -> Judgement:
        """Store (or, with `replace`, replace this annotator's earlier) judgement, committed before returning.

        Raises NLIDataError for an unknown uid, ItemFullError when a page annotator would be one more
        than `annotators_per_item` human annotators of the item, and AlreadyJudgedError when this
        annotator already judged it and `replace` is false. Returns the judgement as stored.
        """
        j = judgement
        if not j.created_at:
            j = dataclasses.replace(j, created_at=time.time())
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM items WHERE uid = ?", (j.uid,)).fetchone() is None:
                raise NLIDataError(f"{self.path}: no item with uid {j.uid!r}; judgements must refer to stored items")
            if not replace and conn.execute("SELECT 1 FROM judgements WHERE uid = ? AND annotator = ?",
                                            (j.uid, j.annotator)).fetchone() is not None:
                raise AlreadyJudgedError(f"item {j.uid!r} was already judged by {j.annotator!r} (another tab or "
                                         "window?); the judgement saved first is kept")
            if j.source == "page":
                others = conn.execute(f"SELECT COUNT(DISTINCT annotator) FROM judgements WHERE uid = ? AND "
                                      f"annotator != ? AND source IN {_HUMAN_SQL}", (j.uid, j.annotator)).fetchone()[0]
                if others >= self.cap:
                    raise ItemFullError(f"item {j.uid!r} already has {others} annotators; expected at most "
                                        f"{self.cap}, so {j.annotator!r} cannot add another")
            conn.execute(
                _UPSERT,
                (j.uid, j.annotator, j.label, j.premise, j.hypothesis, int(j.revised), j.source,
                 None if j.rubric is None else json.dumps(j.rubric), j.confidence, j.created_at,
                 json.dumps(j.extra, ensure_ascii=False)))
            conn.execute("DELETE FROM claims WHERE uid = ? AND annotator = ?", (j.uid, j.annotator))
        return j

    def judgements(self, uid: str | None = None) -> list[Judgement]:
        """All judgements (or those of one item), oldest first."""
        sql = "SELECT * FROM judgements" + (" WHERE uid = ?" if uid is not None else "")
        rows = self._conn().execute(sql + " ORDER BY created_at, rowid", () if uid is None else (uid,))
        return [_judgement(r) for r in rows]

    # assignment ------------------------------------------------------------------------------
    def next_item(self, annotator: str) -> Record | None:
        """The item this annotator should review now (claimed for them), or None when none is left."""
        if not annotator:
            raise NLIDataError("next_item: annotator is required (a non-empty id)")
        now = time.time()
        params = {"who": annotator, "cap": self.cap}
        with self._write() as conn:
            conn.execute("DELETE FROM claims WHERE expires_at <= ?", (now,))
            row = conn.execute(_HELD, params).fetchone() or conn.execute(_NEXT_FREE, params).fetchone()
            if row is None and (taken := conn.execute(_TAKEOVER, params).fetchone()) is not None:
                conn.execute("DELETE FROM claims WHERE uid = ? AND annotator = ?", (taken["uid"], taken["annotator"]))
                row = conn.execute("SELECT * FROM items WHERE uid = ?", (taken["uid"],)).fetchone()
            if row is None:
                return None
            conn.execute("INSERT INTO claims VALUES (?, ?, ?) ON CONFLICT (uid, annotator) DO UPDATE "
                         "SET expires_at = excluded.expires_at", (row["uid"], annotator, now + self.claim_ttl_s))
        return _record(row)

    def progress(self, annotator: str | None = None) -> dict[str, int]:
        """`done` by this annotator, items `fully_reviewed` (cap reached by humans), `total` items."""
        conn = self._conn()
        done = conn.execute("SELECT COUNT(*) FROM judgements WHERE annotator = ?", (annotator or "",)).fetchone()[0]
        full = conn.execute(f"SELECT COUNT(*) FROM (SELECT uid FROM judgements WHERE source IN {_HUMAN_SQL} "
                            "GROUP BY uid HAVING COUNT(DISTINCT annotator) >= ?)", (self.cap,)).fetchone()[0]
        total = conn.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        return {"done": done, "fully_reviewed": full, "total": total, "annotators_per_item": self.cap}


class _Transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT` (or `ROLLBACK` on error) on one connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type, *exc) -> None:
        self.conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")


def _record(row: sqlite3.Row) -> Record:
    return Record(row["uid"], row["premise"], row["hypothesis"], row["label"], row["source"], json.loads(row["meta"]))


def _judgement(row: sqlite3.Row) -> Judgement:
    return Judgement(uid=row["uid"], annotator=row["annotator"], label=row["label"], premise=row["premise"],
                     hypothesis=row["hypothesis"], revised=bool(row["revised"]), source=row["source"],
                     rubric=None if row["rubric"] is None else json.loads(row["rubric"]),
                     confidence=row["confidence"], created_at=row["created_at"], extra=json.loads(row["extra"]))
