"""Concatenate JSONL sets of the data model into one (first occurrence of a uid wins) and register it as a
training set, so that a composition can be cut to the same size as its controls.

    python -m experiments.combined.union OUT.jsonl NAME PART.jsonl [PART.jsonl ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

from nliforge.data.jsonl import read_jsonl, write_jsonl
from nliforge.review.reviewed_set import register_train_set
from nliforge.utils.cli import CONF_DIR

CONF = Path(CONF_DIR)   # where data/train_sets=[...] looks


def main(out: str, name: str, parts: list[str]) -> None:
    seen, records = set(), []
    for part in parts:
        for rec in read_jsonl(part):
            if rec.uid not in seen and rec.label is not None:
                seen.add(rec.uid)
                records.append(rec)
    path = write_jsonl(records, out)
    register_train_set(name, path, CONF, " + ".join(parts), tool="experiments/combined/union.py", key="NAME")
    print(f"{name}: {len(records)} records from {len(parts)} parts -> {path}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
