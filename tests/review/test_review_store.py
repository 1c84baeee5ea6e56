"""The review store: item order, replacement, two-annotator assignment under races, durability."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter, defaultdict

import pytest

from nliforge.errors import NLIDataError
from nliforge.data.records import Record
from nliforge.review.store import ItemFullError, ReviewStore
from nliforge.data.judgements import ANNOTATORS_PER_ITEM, Judgement


def _items(n: int) -> list[Record]:
    return [Record(f"u{i}", f"The premise number {i}.", f"The hypothesis {i}.", None, "wanli", {"k": i})
            for i in range(n)]


def _judge(store: ReviewStore, rec: Record, who: str, label: str = "neutral", **kw) -> Judgement:
    return store.save(Judgement(rec.uid, who, label, rec.premise, rec.hypothesis, **kw))


@pytest.fixture
def store(tmp_path):
    with ReviewStore(tmp_path / "review.sqlite") as s:
        s.add_items(_items(4))
        yield s


def test_add_items_is_idempotent_keeps_order_and_refuses_changed_texts(store):
    assert store.add_items(_items(4)) == 0
    assert store.add_items(_items(6)) == 2
    assert [r.uid for r in store.items()] == [f"u{i}" for i in range(6)]
    assert store.items()[3] == _items(4)[3]          # meta and source round-trip
    with pytest.raises(NLIDataError, match="u1.*other texts"):
        store.add_items([Record("u1", "Another premise.", "The hypothesis 1.", None)])


def test_a_later_judgement_by_the_same_annotator_replaces_theirs(store):
    rec = store.items()[0]
    _judge(store, rec, "alice", "neutral")
    _judge(store, rec, "alice", "contradiction")
    got = store.judgements(rec.uid)
    assert [(j.annotator, j.label) for j in got] == [("alice", "contradiction")]
    assert got[0].created_at > 0


def test_unknown_uid_is_refused(store):
    with pytest.raises(NLIDataError, match="no item with uid 'nope'"):
        store.save(Judgement("nope", "alice", "neutral", "p", "h"))


def test_two_annotators_share_an_item_and_a_third_gets_the_next(store):
    assert ANNOTATORS_PER_ITEM == 2
    assert store.next_item("alice").uid == "u0"
    assert store.next_item("bob").uid == "u0"
    assert store.next_item("carol").uid == "u1"      # u0 is claimed by two already
    assert store.next_item("alice").uid == "u0"      # asking again returns the item one holds
    _judge(store, store.item("u0"), "alice")
    assert store.next_item("alice").uid == "u1"      # carol holds one slot of u1, one is free
    assert store.next_item("dave").uid == "u2"       # u0 (bob), u1 (alice, carol) are taken


def test_next_item_is_none_when_everything_has_its_annotators(store):
    for rec in store.items():
        _judge(store, rec, "alice")
        _judge(store, rec, "bob")
    assert store.next_item("carol") is None
    assert store.next_item("alice") is None
    assert store.progress("alice") == {"done": 4, "fully_reviewed": 4, "total": 4, "annotators_per_item": 2}
    assert store.progress("carol")["done"] == 0


def test_save_refuses_a_third_page_annotator_but_not_crowd_imports_or_machines(store):
    rec = store.items()[0]
    _judge(store, rec, "alice")
    _judge(store, rec, "bob")
    with pytest.raises(ItemFullError, match="already has 2 annotators"):
        _judge(store, rec, "carol")
    _judge(store, rec, "alice", "entailment")                       # replacing one's own is fine
    _judge(store, rec, "teacher", "entailment", source="teacher", confidence=0.9)
    _judge(store, rec, "W123", "neutral", source="amt")             # a crowd batch is never dropped
    assert sorted(j.annotator for j in store.judgements(rec.uid)) == ["W123", "alice", "bob", "teacher"]


def test_machine_judgements_do_not_take_a_human_slot(store):
    rec = store.items()[0]
    _judge(store, rec, "teacher", source="teacher", confidence=0.7)
    _judge(store, rec, "alice")
    assert store.next_item("bob").uid == "u0"
    assert store.progress("bob")["fully_reviewed"] == 0


def test_an_abandoned_claim_expires_and_the_item_goes_to_someone_else(tmp_path):
    with ReviewStore(tmp_path / "r.sqlite", claim_ttl_s=0.2) as s:
        s.add_items(_items(2))
        assert s.next_item("alice").uid == "u0"
        assert s.next_item("bob").uid == "u0"
        assert s.next_item("carol").uid == "u1"
        time.sleep(0.3)
        assert s.next_item("carol").uid == "u0"        # both claims on u0 lapsed; u0 comes first
        _judge(s, s.item("u0"), "carol")
        _judge(s, s.item("u0"), "dave")
        with pytest.raises(ItemFullError):             # alice comes back late: her slot was taken
            _judge(s, s.item("u0"), "alice")


def _worker(path, who: str, barrier: threading.Barrier, saved: dict, refused: list, errors: list) -> None:
    """One annotator's page loop: ask, judge, save; a 409 (ItemFullError) moves on to the next item."""
    try:
        with ReviewStore(path) as s:
            barrier.wait()
            while (rec := s.next_item(who)) is not None:
                try:
                    _judge(s, rec, who, "entailment")
                except ItemFullError:
                    refused.append((who, rec.uid, len(saved[who])))
                    continue
                saved[who].append(rec.uid)
    except Exception as err:  # noqa: BLE001 - reported by the test
        errors.append(f"{who}: {err!r}")


def test_concurrent_annotators_never_give_an_item_a_third_annotator(tmp_path):
    """Six annotators, each with its own store object (separate connections, as separate server
    processes would have), race for 15 items: every item ends with exactly two, nothing is lost.

    A slow thread whose claim was taken over (it had saved nothing yet, the takeover rule) meets the
    page's 409 and goes on; on a loaded machine that happens, so it is allowed, but only to an
    annotator with no saved judgement at that moment."""
    path = tmp_path / "race.sqlite"
    with ReviewStore(path) as s:
        s.add_items(_items(15))
    names = [f"a{i}" for i in range(6)]
    barrier, saved, refused, errors = threading.Barrier(len(names)), defaultdict(list), [], []
    threads = [threading.Thread(target=_worker, args=(path, n, barrier, saved, refused, errors)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert all(saved_before == 0 for _, _, saved_before in refused), refused
    with ReviewStore(path) as s:
        per_item = defaultdict(set)
        for j in s.judgements():
            per_item[j.uid].add(j.annotator)
        assert {uid: len(who) for uid, who in per_item.items()} == {f"u{i}": 2 for i in range(15)}
        assert sum(len(v) for v in saved.values()) == 30 == len(s.judgements())
        assert Counter(j.annotator for j in s.judgements()) == Counter({n: len(v) for n, v in saved.items()})


def test_a_saved_judgement_is_committed_at_once_and_survives_reopening(tmp_path):
    path = tmp_path / "durable.sqlite"
    s = ReviewStore(path)
    s.add_items(_items(2))
    saved = _judge(s, s.item("u1"), "alice", "contradiction", revised=True, extra={"note": "ß"})
    # Another connection sees it before the store is closed: the commit happened inside save().
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT label FROM judgements WHERE uid='u1'").fetchall() == [("contradiction",)]
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    s.close()
    with ReviewStore(path) as again:
        assert again.judgements() == [saved]
        assert [r.uid for r in again.items()] == ["u0", "u1"]
        assert again.progress("alice")["done"] == 1


def test_store_is_usable_from_many_threads(store):
    results, lock = [], threading.Lock()

    def work(i: int) -> None:
        _judge(store, store.item(f"u{i % 4}"), f"t{i}" if i < 4 else f"t{i - 4}", "neutral")
        with lock:
            results.append(store.progress(f"t{i % 4}")["total"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [4] * 8
    assert len(store.judgements()) == 4   # t0..t3 each replaced their own judgement of one item
