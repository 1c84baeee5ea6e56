"""Registering a JSONL file of records as a named training set: `<conf_dir>/data/train_sets/<name>.yaml`,
so `data/train_sets=[<name>]` trains on it (conf_dir is the user data home's conf/ unless told otherwise).

A name belongs to one set: registering a built-in set's name (which Hydra would pick over the registered
one, silently) or one that another run registered is refused naming the owner; the same run registering
again is not. `set_origin` says where a selected set comes from, for the training log."""

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
    target = check_can_register(name, conf_dir, origin, tool, key)
    text = (f"# Registered by {tool} from {origin}\n"
            f"{name}:\n  name: {name}\n  loader: jsonl\n  path: {json.dumps(str(Path(path).resolve()))}\n"
            "  num_classes: 3\n  limit: null\n")
    atomic_write_text(target, [text])
    return target


def check_can_register(name: str, conf_dir: Path, origin: str, tool: str = "nliforge-review aggregate",
                       key: str = "aggregate.name") -> Path:
    """The YAML `register_train_set` would write, after checking the name is valid and free (call it
    before writing anything else, so a refused name leaves nothing behind)."""
    check_train_set_name(name, key)
    target = Path(conf_dir) / "data" / "train_sets" / f"{name}.yaml"
    check_name_is_free(name, target, f"{tool} from {origin}", key)
    return target


def train_set_files(name: str, extra: tuple[Path, ...] = ()) -> list[Path]:
    """Every `data/train_sets/<name>.yaml` in the config folders, in Hydra's order (the package's first)."""
    from nliforge.data.registry import config_folders

    folders = [*config_folders(), *(f.resolve() for f in extra)]
    return list(dict.fromkeys(f / "data" / "train_sets" / f"{name}.yaml" for f in folders
                              if (f / "data" / "train_sets" / f"{name}.yaml").is_file()))


def registered_by(path: Path) -> str | None:
    """`<tool> from <origin>` of a registered set's YAML, or None for a set written by hand."""
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    return first.removeprefix("# Registered by ") if first.startswith("# Registered by ") else None


def set_origin(name: str) -> str:
    """Where the training set `name` comes from: built in, registered (by what, from where) or a user
    config folder, with its YAML; the first file is the one Hydra uses."""
    from nliforge.utils.cli import CONF_DIR

    files = train_set_files(name)
    if not files:
        return "given in the config (no data/train_sets YAML)"
    path, builtin = files[0], Path(CONF_DIR).resolve()
    owner = registered_by(path)
    text = ("built in" if path.is_relative_to(builtin) else f"registered by {owner}" if owner
            else "a user config folder's") + f" ({path})"
    return text + (f"; also defined in {', '.join(map(str, files[1:]))}, not used" if len(files) > 1 else "")


def check_name_is_free(name: str, target: Path, owner: str, key: str) -> None:
    """Refuse `name` when a built-in set, a user folder's set or another run's registration has it."""
    from nliforge.utils.cli import CONF_DIR

    for path in train_set_files(name, (target.parent.parent.parent,)):
        if path.resolve() == target.resolve() and registered_by(path) == owner:
            continue   # this very run registering its set again
        held = ("a built-in training set" if path.is_relative_to(Path(CONF_DIR).resolve())
                else f"a set registered by {registered_by(path)}" if registered_by(path) else "a user config folder's set")
        raise NLIDataError(f"{key}={name!r}: the name is taken by {held} ({path}); choose another name "
                           "(data/train_sets=[<name>] would select that set, not this one)")
