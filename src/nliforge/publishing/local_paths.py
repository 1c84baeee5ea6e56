"""What gets published carries no path of this machine: a dataset card or a row's meta that said
`/home/<user>/runs/<run>/stages/generator_lm/model` told the world a user name and a folder layout, and
means nothing to a reader. A path inside the run folder becomes relative to it
(`stages/generator_lm/model`); any other absolute path keeps its last part only (`model`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _roots(run: Path) -> list[str]:
    """The run folder as given and as resolved, longest first (a link resolves elsewhere)."""
    return sorted({str(run).rstrip("/"), str(run.resolve()).rstrip("/")}, key=len, reverse=True)


def public_text(text: str, run: Path) -> str:
    """`text` with the run folder's path taken out and an absolute path cut to its last part."""
    for root in _roots(run):
        if text == root:
            return "."
        if text.startswith(root + "/"):
            return text[len(root) + 1:]
        text = text.replace(root + "/", "")
    if os.path.isabs(text) and "\n" not in text and len(text) < 4096:
        return Path(text).name or text
    home = str(Path.home()).rstrip("/")
    return text.replace(home + "/", "~/") if len(home) > 1 else text


def without_local_paths(value: Any, run: Path) -> Any:
    """`value` (a manifest, a config, a record's meta) with `public_text` applied to every string in it."""
    if isinstance(value, str):
        return public_text(value, run)
    if isinstance(value, Mapping):
        return {k: without_local_paths(v, run) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_local_paths(v, run) for v in value]
    return value


def public_set(chosen, run: Path):
    """A `PublishedSet` whose records' `source` and `meta` and whose review report carry no local path."""
    from dataclasses import replace

    splits = {name: [replace(r, source=public_text(r.source, run) if isinstance(r.source, str) else r.source,
                             meta=without_local_paths(r.meta, run)) for r in recs]
              for name, recs in chosen.splits.items()}
    return replace(chosen, splits=splits, review=without_local_paths(chosen.review, run))
