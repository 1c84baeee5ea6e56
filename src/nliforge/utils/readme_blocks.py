"""Generated blocks in a Markdown file, so the numbers a README shows come from real runs.

A block is `<!-- numbers:NAME -->` ... `<!-- /numbers:NAME -->`; `scripts/readme_numbers.py` writes
its body from a run folder and checks it against a fresh run. Blocks whose name starts with
`measured.` hold wall times: written, never checked (they depend on the machine and its load)."""

from __future__ import annotations

import re

from nliforge.errors import NLIDataError

BLOCK = re.compile(r"<!-- numbers:(?P<name>[\w.\-]+) -->\n(?P<body>.*?)<!-- /numbers:(?P=name) -->", re.S)
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
UNCHECKED_PREFIX = "measured."


def read_blocks(text: str) -> dict[str, str]:
    """Every generated block's body by name; a name used twice is an error (which one would be true?)."""
    blocks: dict[str, str] = {}
    for m in BLOCK.finditer(text):
        if m["name"] in blocks:
            raise NLIDataError(f"README block numbers:{m['name']} appears twice")
        blocks[m["name"]] = m["body"]
    return blocks


def replace_blocks(text: str, bodies: dict[str, str]) -> str:
    """`text` with each named block's body replaced. A name with no block is an error: the README
    must place every number the script writes."""
    missing = sorted(set(bodies) - set(read_blocks(text)))
    if missing:
        raise NLIDataError(f"README has no block for {missing}; add `<!-- numbers:NAME -->` / "
                           "`<!-- /numbers:NAME -->` where each should go")

    def body(m: re.Match) -> str:
        if m["name"] not in bodies:
            return m.group(0)
        new = bodies[m["name"]].rstrip("\n") + "\n"
        return f"<!-- numbers:{m['name']} -->\n{new}<!-- /numbers:{m['name']} -->"

    return BLOCK.sub(body, text)


def _number(token: str) -> float:
    return float(token.replace(",", ""))


def block_differences(shown: str, fresh: str, tolerance: float = 0.0) -> list[str]:
    """Where a README block and a fresh run's rendering disagree: the words around the numbers must
    be equal and every number within `tolerance` (absolute). One line per difference."""
    if NUMBER.sub("#", shown).split() != NUMBER.sub("#", fresh).split():
        return [f"text differs:\n  README: {shown.strip()!r}\n  fresh:  {fresh.strip()!r}"]
    out = []
    for a, b in zip(NUMBER.findall(shown), NUMBER.findall(fresh)):
        if abs(_number(a) - _number(b)) > tolerance:
            out.append(f"README {a} vs fresh {b}")
    return out


def check_blocks(text: str, fresh: dict[str, str], tolerances: dict[str, float] | None = None) -> dict[str, list[str]]:
    """The disagreements of the README `text` with freshly rendered blocks, by block name (empty when
    they agree). `measured.*` blocks are skipped; a fresh block the README lacks is a disagreement."""
    shown, tolerances = read_blocks(text), tolerances or {}
    problems: dict[str, list[str]] = {}
    for name, body in fresh.items():
        if name.startswith(UNCHECKED_PREFIX):
            continue
        if name not in shown:
            problems[name] = ["the README has no such block"]
            continue
        diff = block_differences(shown[name], body, tolerances.get(name, 0.0))
        if diff:
            problems[name] = diff
    return problems
