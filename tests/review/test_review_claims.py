"""Claims on the review page cannot lock real annotators out, and two tabs saving as one annotator get a
conflict: any local process holding the page token can ask /api/next under many made-up names."""

from __future__ import annotations

import json

import pytest

from nliforge.data.records import Record
from nliforge.review.server import ReviewServer
from nliforge.review.store import AlreadyJudgedError, ReviewStore
from nliforge.data.judgements import Judgement
from test_review_server import _request

ITEMS = [Record(f"u{i}", f"Premise {i} is here.", f"Hypothesis {i}.", None) for i in range(12)]


def _judge(store, uid, who, label="neutral", replace=True):
    rec = store.item(uid)
    return store.save(Judgement(uid, who, label, rec.premise, rec.hypothesis), replace=replace)


def test_25_made_up_names_cannot_lock_a_real_annotator_out(tmp_path):
    with ReviewStore(tmp_path / "r.sqlite") as store:
        store.add_items(ITEMS)
        squatted = {store.next_item(f"fake{i}").uid for i in range(25)}
        assert squatted == {r.uid for r in ITEMS}        # 24 claims fill every item; the 25th takes one over
        assert store.next_item("fake99") is not None      # still no lock-out, for anyone
        got = store.next_item("alice")
        assert got is not None
        _judge(store, got.uid, "alice")
        assert store.next_item("alice").uid != got.uid    # and the next one after that


def test_only_claims_of_names_that_never_judged_are_taken_over(tmp_path):
    with ReviewStore(tmp_path / "r.sqlite") as store:
        store.add_items(ITEMS[:2])
        assert store.next_item("bob").uid == "u0"
        _judge(store, "u0", "bob")
        assert store.next_item("bob").uid == "u1"         # bob, who works, holds a claim on u1
        for name in ("fake1", "fake2", "fake3"):          # fake1 fills u0, fake2 u1, fake3 takes fake1's over
            store.next_item(name)
        held = store.next_item("alice")
        assert held is not None and store.next_item("bob").uid == "u1"   # bob kept his claim


def test_an_item_with_its_two_judgements_is_never_taken_over(tmp_path):
    with ReviewStore(tmp_path / "r.sqlite") as store:
        store.add_items(ITEMS[:1])
        _judge(store, "u0", "a")
        _judge(store, "u0", "b")
        assert store.next_item("carol") is None


def test_two_tabs_saving_as_one_annotator_get_a_conflict_not_an_overwrite(tmp_path):
    with ReviewStore(tmp_path / "r.sqlite") as store:
        store.add_items(ITEMS[:1])
        _judge(store, "u0", "alice", "entailment", replace=False)
        with pytest.raises(AlreadyJudgedError, match="already judged by 'alice'"):
            _judge(store, "u0", "alice", "contradiction", replace=False)
        assert [j.label for j in store.judgements("u0")] == ["entailment"]


def test_the_page_api_answers_409_to_the_second_tab(tmp_path):
    with ReviewServer(tmp_path / "review.sqlite", items=ITEMS[:2]) as srv:
        first = _request(srv.url + "api/next?annotator=alice")
        second = _request(srv.url + "api/next?annotator=alice")           # the second tab: same item
        uid = json.loads(first[1])["item"]["uid"]
        assert json.loads(second[1])["item"]["uid"] == uid
        assert _request(srv.url + "api/judgement", {"uid": uid, "annotator": "alice", "label": "neutral"})[0] == 200
        status, body = _request(srv.url + "api/judgement", {"uid": uid, "annotator": "alice", "label": "entailment"})
        assert status == 409 and "already judged by 'alice'" in json.loads(body)["error"]
        with ReviewStore(tmp_path / "review.sqlite") as store:
            assert [j.label for j in store.judgements(uid)] == ["neutral"]


def test_claims_of_annotators_at_work_are_kept(tmp_path):
    """Annotators who have saved judgements keep their claims: a newcomer waits instead of displacing them."""
    with ReviewStore(tmp_path / "r.sqlite") as store:
        store.add_items(ITEMS[:2])
        for who in ("bob", "carol"):
            assert store.next_item(who).uid == "u0"
            _judge(store, "u0", who)
            assert store.next_item(who).uid == "u1"
        assert store.next_item("alice") is None
        assert store.next_item("bob").uid == "u1" and store.next_item("carol").uid == "u1"
