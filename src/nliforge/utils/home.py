"""The user data home: what runs register and keep goes here, never into the package or a checkout.

`NLIFORGE_HOME` (default `$XDG_CACHE_HOME/nliforge`, else `~/.cache/nliforge`) holds `conf/`, a config
folder of the same layout as the package's (`data/train_sets/<name>.yaml` written by `register.name=`,
`aggregate.name=` and DISCO's augment stage). Every entry point puts it on Hydra's search path, after
the package's configs and the folders of NLIFORGE_CONFIG_PATH.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "NLIFORGE_HOME"


def data_home() -> Path:
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "nliforge"


def user_conf_dir(create: bool = False) -> Path:
    """`<home>/conf`: where registered training sets go (made on request)."""
    folder = data_home() / "conf"
    if create:
        (folder / "data" / "train_sets").mkdir(parents=True, exist_ok=True)
    return folder


def cache_root() -> Path:
    """Where nliforge keeps what it can rebuild (models, vLLM's environment, type specs): `$NLIFORGE_CACHE`,
    else `$XDG_CACHE_HOME/nliforge`, else `~/.cache/nliforge`."""
    if os.environ.get("NLIFORGE_CACHE"):
        return Path(os.environ["NLIFORGE_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "nliforge"
