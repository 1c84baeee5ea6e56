"""Registering a JSONL file of records as a named training set: `<conf_dir>/data/train_sets/<name>.yaml`,
so `data/train_sets=[<name>]` trains on it (conf_dir is the user data home's conf/ unless told otherwise)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from nliforge.errors import NLIDataError
from nliforge.utils.atomic import atomic_write_text

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def check_train_set_name(name: str, key: str = "aggregate.name") -> str:
    """A name `data/train_sets=[<name>]` can select; `key` is the config key named in the error."""
    if not _NAME.match(name):
        raise NLIDataError(f"{key}={name!r}: use letters, digits and underscores, starting with a letter")
    return name


def register_train_set(name: str, path: Path, conf_dir: Path, origin: str,
                       tool: str = "nliforge-review aggregate", key: str = "aggregate.name") -> Path:
    """Write `<conf_dir>/data/train_sets/<name>.yaml` pointing at `path` (a JSONL of the data model)."""
    check_train_set_name(name, key)
    target = Path(conf_dir) / "data" / "train_sets" / f"{name}.yaml"
    text = (f"# Registered by {tool} from {origin}\n"
            f"{name}:\n  name: {name}\n  loader: jsonl\n  path: {json.dumps(str(Path(path).resolve()))}\n"
            "  num_classes: 3\n  limit: null\n")
    atomic_write_text(target, [text])
    return target
