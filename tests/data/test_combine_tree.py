"""Nested training-set combinations written in `data.combine`: `(a◇b)+c` parses to
the tree it says, gets a readable id and a manifest listing the tree, and combines as + and ◇ do."""

from __future__ import annotations

import json
import re

import pytest
from omegaconf import open_dict

from conftest import compose_config
from nliforge.data import NLIDataError, Record
from nliforge.data.combine import combine
from nliforge.data.combine_tree import Node, combination_tree, evaluate, parse, render
from nliforge.data.jsonl import write_jsonl
from nliforge.data.training_set import build_training_set, write_training_manifest


def _set(name, n):
    return [Record(f"{name}-{i}", f"premise {i}", f"hyp {i}", "neutral", name) for i in range(n)]


SETS = {"a": _set("a", 6), "b": _set("b", 2), "c": _set("c", 3)}


@pytest.mark.parametrize("text, rendered, ascii_id", [
    ("(mnli◇wanli)+disco", "(mnli◇wanli)+disco", "(mnli_rep_wanli)+disco"),
    ("(mnli_rep_wanli) + disco", "(mnli◇wanli)+disco", "(mnli_rep_wanli)+disco"),
    ("(a+b)+c", "a+b+c", "a+b+c"),                        # + is associative: one node
    ("a+(b+c)", "a+b+c", "a+b+c"),
    ("(a◇b)◇c", "(a◇b)◇c", "(a_rep_b)_rep_c"),            # ◇ is not: the parentheses stay
    ("a◇(b+c)", "a◇(b+c)", "a_rep_(b+c)"),
    ("((a))", "a", "a"),
])
def test_ids_render_the_tree(text, rendered, ascii_id):
    tree = parse(text)
    assert render(tree) == rendered and render(tree, ascii_only=True) == ascii_id


def test_parse_gives_the_tree():
    assert parse("(a◇b)+c") == Node(mode="augment", children=(
        Node(mode="replace", children=(Node("a"), Node("b"))), Node("c")))


@pytest.mark.parametrize("text, message", [
    ("a◇b+c", "mixed at one level need parentheses"),
    ("(a+b", "a '\\)' is missing"),
    ("a+", "missing at the end"),
    ("a+b)", "unexpected '\\)'"),
    ("a+b*c", "unexpected '\\*'"),
])
def test_malformed_expressions_name_the_key(text, message):
    with pytest.raises(NLIDataError, match=re.escape(f"data.combine={text!r}") + f".*{message}"):
        parse(text)


def test_every_selected_set_exactly_once():
    with pytest.raises(NLIDataError, match=r"names sets not selected: \['d'\]"):
        combination_tree("(a◇b)+d", ["a", "b", "c"])
    with pytest.raises(NLIDataError, match=r"leaves out selected sets: \['c'\]"):
        combination_tree("a◇b", ["a", "b", "c"])
    with pytest.raises(NLIDataError, match=r"uses more than once: \['a'\]"):
        combination_tree("(a◇b)+a", ["a", "b"])
    with pytest.raises(NLIDataError, match=r"data.combine='mix' is not a combination mode"):
        combination_tree("mix", ["a", "b"])


def test_nested_combination_contents_and_sizes():
    out = evaluate(parse("(a◇b)+c"), SETS, seed=0)
    assert len(out) == 6 - 2 + 2 + 3                       # |a◇b| = |a|, then + c
    kept_a = out[:4]
    assert [r.uid for r in kept_a] == [r.uid for r in SETS["a"] if r in kept_a]   # a's order kept
    assert out[4:6] == SETS["b"] and out[6:] == SETS["c"]
    assert evaluate(parse("(a◇b)+c"), SETS, seed=0) == out    # deterministic
    deep = evaluate(parse("(a◇b)◇c"), SETS, seed=0)
    assert len(deep) == 6 and deep[-3:] == SETS["c"] and sum(r.source == "b" for r in deep) <= 2


def test_flat_expression_equals_the_flat_mode():
    """A flat ◇ chain written as an expression draws exactly what data.combine=replace draws."""
    named = [("a", SETS["a"]), ("b", SETS["b"]), ("c", SETS["c"][:1])]
    for seed in range(5):
        assert evaluate(parse("a◇b◇c"), dict(named), seed) == combine(named, "replace", seed)
    assert evaluate(parse("a+b+c"), dict(named), 0) == combine(named, "augment", 0)


def _cfg(tmp_path, combine_expr):
    cfg = compose_config("train", [f"data.combine='{combine_expr}'"], tmp_path / "run", tmp_path / "cache")
    with open_dict(cfg):
        cfg.data.train_sets = {name: {"name": name, "loader": "jsonl", "num_classes": 3, "limit": None,
                                      "path": str(write_jsonl(recs, tmp_path / f"{name}.jsonl"))}
                               for name, recs in SETS.items()}
    return cfg


def test_training_set_id_and_manifest_list_the_tree(tmp_path):
    cfg = _cfg(tmp_path, "(a◇b)+c")
    assert cfg.data.combine == "(a◇b)+c"                   # a quoted Hydra override keeps the expression
    ts = build_training_set(cfg)
    assert ts.train_id == "(a◇b)+c" and ts.train_id_ascii == "(a_rep_b)+c" and len(ts.records) == 9
    write_training_manifest(ts, cfg, tmp_path)
    manifest = json.loads((tmp_path / "train_set.manifest.json").read_text())
    assert manifest["train_id"] == "(a◇b)+c" and manifest["size"] == 9
    assert manifest["tree"] == {"id": "(a◇b)+c", "combine": "augment", "size": 9, "children": [
        {"id": "a◇b", "combine": "replace", "size": 6, "children": [{"set": "a", "size": 6}, {"set": "b", "size": 2}]},
        {"set": "c", "size": 3}]}


def test_flat_modes_keep_their_ids_and_records(tmp_path):
    cfg = _cfg(tmp_path, "replace")
    ts = build_training_set(cfg)
    assert ts.train_id == "a◇b◇c" and ts.records == combine(list(SETS.items()), "replace", 0)
    assert ts.tree["combine"] == "replace" and [c["set"] for c in ts.tree["children"]] == ["a", "b", "c"]


def test_a_bad_expression_fails_before_any_set_is_loaded(tmp_path):
    cfg = _cfg(tmp_path, "(a◇b)+c+d")
    (tmp_path / "a.jsonl").write_text("not json\n")       # would fail on loading, were it loaded first
    with pytest.raises(NLIDataError, match=r"data.combine='\(a◇b\)\+c\+d' names sets not selected: \['d'\]"):
        build_training_set(cfg)
