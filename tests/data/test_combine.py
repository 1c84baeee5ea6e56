"""Training-set combinations: A + B and A ◇ B sizes, contents and determinism."""

import pytest

from nliforge.data import NLIDataError, Record, records_digest
from nliforge.data.combine import combination_id, combine


def _set(name, n):
    return [Record(f"{name}-{i}", f"premise {i}", f"hyp {i}", "neutral", name) for i in range(n)]


A, B, C = _set("a", 100), _set("b", 30), _set("c", 10)


def test_augment_concatenates_in_order():
    out = combine([("a", A), ("b", B)], "augment", seed=0)
    assert len(out) == 130 and out[:100] == A and out[100:] == B


def test_replace_keeps_size_and_includes_all_of_b():
    out = combine([("a", A), ("b", B)], "replace", seed=0)
    assert len(out) == len(A)
    uids = {r.uid for r in out}
    assert all(r.uid in uids for r in B)
    kept_a = [r for r in out if r.source == "a"]
    assert len(kept_a) == 70 and set(r.uid for r in kept_a) <= set(r.uid for r in A)
    assert [r.uid for r in kept_a] == [r.uid for r in A if r.uid in uids]  # A's order is kept


def test_replace_is_seeded_and_deterministic():
    one = combine([("a", A), ("b", B)], "replace", seed=3)
    two = combine([("a", A), ("b", B)], "replace", seed=3)
    other = combine([("a", A), ("b", B)], "replace", seed=4)
    assert records_digest(one) == records_digest(two)
    assert records_digest(one) != records_digest(other)


def test_replace_with_several_sets():
    out = combine([("a", A), ("b", B), ("c", C)], "replace", seed=0)
    assert len(out) == 100 and sum(r.source in ("b", "c") for r in out) == 40


def test_replace_larger_b_is_an_error():
    with pytest.raises(NLIDataError, match=r"\|B\| <= \|A\|"):
        combine([("b", B), ("a", A)], "replace", seed=0)


def test_ids_and_bad_mode():
    assert combination_id(["mnli", "wanli"], "augment") == "mnli+wanli"
    assert combination_id(["mnli", "wanli"], "replace") == "mnli◇wanli"
    assert combination_id(["mnli", "wanli"], "replace", ascii_only=True).isascii()
    with pytest.raises(NLIDataError, match="data.combine='mix'.*valid: augment, replace"):
        combine([("a", A)], "mix", 0)


def test_duplicate_uids_across_sets_rejected():
    with pytest.raises(NLIDataError, match="duplicate uid"):
        combine([("a", A), ("a2", A[:5])], "augment", 0)
