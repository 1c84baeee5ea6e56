"""Nested training-set combinations: `data.combine` as a small expression over the selected sets,
e.g. `(mnli◇wanli)+disco` (WANLI §3.2's `+` and `◇`, composed).

Grammar: expr := term (op term)*, term := name | "(" expr ")", op := "+" | "◇" (ASCII: "_rep_").
One chain takes one operator: `a◇b+c` is refused (write `(a◇b)+c`). A chain is one n-ary node with the
flat semantics of `nliforge.data.combine`: `a+b+c` concatenates, `a◇b◇c` swaps |b|+|c| random
examples of a for all of b and c. `+` is associative, so `(a+b)+c` is `a+b+c`; `◇` is not, so
`(a◇b)◇c` (c replaces examples of a◇b, possibly some of b) keeps its parentheses.

Every selected set appears exactly once. The readable id is the expression re-rendered (`+` and `◇`,
parentheses only around a nested node), so a flat list keeps its id (`mnli+wanli`). The root `◇`
draws with the salt of a flat `replace` (the same records as before); a nested `◇` salts with its
own id, so two nodes of one tree draw independently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nliforge.data.combine import ASCII_SYMBOL, COMBINE_MODES, SYMBOL, augment, replace
from nliforge.errors import NLIDataError
from nliforge.data.records import Record, check_unique_uids

_TOKEN = re.compile(r"\s*(?:(?P<op>[+◇])|(?P<paren>[()])|(?P<name>[A-Za-z0-9_.\-]+))")
_MODE = {symbol: mode for mode, symbol in SYMBOL.items()}


@dataclass(frozen=True)
class Node:
    """A set (`mode` None, `name` its name) or a combination (`mode` augment|replace of `children`)."""

    name: str = ""
    mode: str | None = None
    children: tuple[Node, ...] = ()


def flat(names: Sequence[str], mode: str) -> Node:
    """The tree of a flat selection combined by one mode (`data.combine=augment|replace`)."""
    leaves = tuple(Node(n) for n in names)
    return leaves[0] if len(leaves) == 1 else Node(mode=mode, children=leaves)


def _tokens(text: str, key: str) -> list[tuple[str, str]]:
    text, out, pos = text.replace(ASCII_SYMBOL["replace"], SYMBOL["replace"]), [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if not m:
            raise NLIDataError(f"{key}={text!r}: unexpected {text[pos:].strip()[:1]!r} at position {pos}; "
                               "write set names joined by + or ◇ (or _rep_), with parentheses, e.g. (mnli◇wanli)+disco")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def parse(text: str, key: str = "data.combine") -> Node:
    """The tree of an expression; a malformed one is an error naming `key` and what was expected."""
    tokens, pos = _tokens(text, key), 0

    def fail(what: str):
        raise NLIDataError(f"{key}={text!r}: {what}; e.g. (mnli◇wanli)+disco (one operator per parenthesis level)")

    def term() -> Node:
        nonlocal pos
        if pos >= len(tokens):
            fail("a set name or '(' is missing at the end")
        kind, value = tokens[pos]
        pos += 1
        if kind == "name":
            return Node(value)
        if value != "(":
            fail(f"expected a set name or '(', got {value!r}")
        inner = chain()
        if pos >= len(tokens) or tokens[pos][1] != ")":
            fail("a ')' is missing")
        pos += 1
        return inner

    def chain() -> Node:
        nonlocal pos
        parts, ops = [term()], set()
        while pos < len(tokens) and tokens[pos][0] == "op":
            ops.add(tokens[pos][1])
            pos += 1
            parts.append(term())
        if len(ops) > 1:
            fail("+ and ◇ mixed at one level need parentheses")
        if not ops:
            return parts[0]
        mode = _MODE[ops.pop()]
        if mode == "augment":   # associative: (a+b)+c is a+b+c
            parts = [c for p in parts for c in (p.children if p.mode == "augment" else (p,))]
        return Node(mode=mode, children=tuple(parts))

    tree = chain()
    if pos != len(tokens):
        fail(f"unexpected {tokens[pos][1]!r} after a complete expression")
    return tree


def render(node: Node, ascii_only: bool = False) -> str:
    """The readable id: `(mnli◇wanli)+disco`; `ascii_only` writes ◇ as `_rep_` (for paths, Hydra keys)."""
    if node.mode is None:
        return node.name
    symbol = (ASCII_SYMBOL if ascii_only else SYMBOL)[node.mode]
    return symbol.join(render(c, ascii_only) if c.mode is None else f"({render(c, ascii_only)})"
                       for c in node.children)


def leaves(node: Node) -> list[str]:
    return [node.name] if node.mode is None else [n for c in node.children for n in leaves(c)]


def check_leaves(tree: Node, selected: Sequence[str], key: str = "data.combine") -> None:
    """Every selected set exactly once, and no other name."""
    used, text = leaves(tree), render(tree)
    unknown = [n for n in used if n not in selected]
    twice = sorted({n for n in used if used.count(n) > 1})
    unused = [n for n in selected if n not in used]
    if unknown or twice or unused:
        parts = [f"{what} {names}" for what, names in (("names sets not selected:", unknown),
                 ("uses more than once:", twice), ("leaves out selected sets:", unused)) if names]
        raise NLIDataError(f"{key}={text!r} {'; '.join(parts)}; the selected sets (data/train_sets) are "
                           f"{list(selected)}, each to appear once")


def evaluate(tree: Node, sets: Mapping[str, Sequence[Record]], seed: int, root: bool = True) -> list[Record]:
    """The records of the tree (see the module docstring for the salts of `◇`)."""
    if tree.mode is None:
        return list(sets[tree.name])
    parts = [evaluate(c, sets, seed, root=False) for c in tree.children]
    if tree.mode == "augment":
        out = augment(parts)
    else:
        out = replace(parts[0], parts[1:], seed, salt="replace" if root else f"replace:{render(tree)}")
    check_unique_uids(out, f"training set {render(tree)}")
    return out


def size(tree: Node, sets: Mapping[str, Sequence[Record]]) -> int:
    """Records in the tree's result: a sum for `+`, the base's size for `◇` (it keeps |A|)."""
    if tree.mode is None:
        return len(sets[tree.name])
    sizes = [size(c, sets) for c in tree.children]
    return sum(sizes) if tree.mode == "augment" else sizes[0]


def describe(tree: Node, sets: Mapping[str, Sequence[Record]]) -> dict:
    """The tree for the training manifest: each node's id, combination and size, sets at the leaves."""
    if tree.mode is None:
        return {"set": tree.name, "size": len(sets[tree.name])}
    return {"id": render(tree), "combine": tree.mode, "size": size(tree, sets),
            "children": [describe(c, sets) for c in tree.children]}


def combination_tree(combine: str, names: Sequence[str], key: str = "data.combine") -> Node:
    """`data.combine`: a mode (augment | replace: the selected sets in order) or an expression."""
    if combine in COMBINE_MODES:
        return flat(names, combine)
    if not any(sym in combine for sym in ("+", "◇", ASCII_SYMBOL["replace"], "(")) and combine not in names:
        raise NLIDataError(f"{key}={combine!r} is not a combination mode ({', '.join(COMBINE_MODES)}) nor an "
                           "expression over the selected sets, e.g. '(mnli◇wanli)+disco'")
    tree = parse(combine, key)
    check_leaves(tree, names, key)
    return tree
