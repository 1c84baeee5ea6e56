"""Tell a model folder from a Hub id before anything tries to load it.

`model.backbone.name_or_path` takes either. Handed to transformers, a folder that does not exist becomes
a Hub id, and the user reads a Hub error ("Repo id must be in the form 'repo_name' or
'namespace/repo_name'") about a path they mistyped. A value that can only be a path is checked here
instead, so the error says "no such folder".
"""

from __future__ import annotations

from pathlib import Path

from nliforge.errors import NLIDataError

__all__ = ["check_model_folder", "looks_like_folder"]


def looks_like_folder(name: str) -> bool:
    """True when `name` cannot be a Hub id (`name` or `namespace/name`): an absolute or home path, one that
    starts with `.`, holds a backslash, ends with a slash, or has more than one `/`."""
    return (Path(name).is_absolute() or name.startswith((".", "~")) or "\\" in name
            or name.endswith("/") or name.count("/") >= 2)


def check_model_folder(name: str | None, key: str) -> None:
    """Refuse a path-like `name` that is not an existing folder, naming the config `key`.

    Hub ids (and `namespace/name` values that exist as neither) are left to the loader; so are names
    that exist as folders.
    """
    if not name:
        return
    name = str(name)
    path = Path(name).expanduser()
    if path.is_dir() or not looks_like_folder(name):
        return
    what = "is a file, not a folder" if path.exists() else "no such folder"
    raise NLIDataError(f"{key}={name!r}: {what} ({path.resolve()}); expected a model folder such as "
                       "outputs/train/<time>/model, or a Hub id such as roberta-large")
