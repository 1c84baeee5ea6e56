"""The real data files a user gets with one command (`nliforge-data`).

A *registered file* is a set YAML (under data/train_sets or data/eval_sets, in conf/ or a user config
folder) with a `url` and a `sha256`: the authors' release the set was registered from. `fetch` downloads
it into the data folder (NLIFORGE_DATA_DIR, else `<cache>/real`) at the path the YAML names, checks its
sha256 and only then moves it into place, so a failed or altered download leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nliforge.data.checks import file_sha256
from nliforge.errors import NLIDataError
from nliforge.data.registry import config_folders, paths_node
from nliforge.utils.atomic import shared_mode

KINDS = ("train_sets", "eval_sets")
TIMEOUT_S = 60


@dataclass(frozen=True)
class RegisteredFile:
    name: str          # the set's name
    kind: str          # train_sets or eval_sets
    url: str
    sha256: str
    path: Path         # where the set reads it (paths.data_dir resolved)
    spec: dict


def _set_nodes(yaml_path: Path, kind: str) -> list[dict]:
    from omegaconf import OmegaConf

    node = OmegaConf.to_container(OmegaConf.load(yaml_path), resolve=False)
    if kind == "train_sets":                     # a train-set file wraps its node under the set's key
        return [v for v in node.values() if isinstance(v, dict)]
    return [node]


def _resolve_path(spec: dict[str, Any], cache_dir: str | Path) -> Path:
    from omegaconf import OmegaConf

    node = OmegaConf.create({"paths": paths_node(cache_dir), "p": spec["path"]})
    return Path(OmegaConf.to_container(node, resolve=True)["p"])


def registered_files(cache_dir: str | Path = "data_cache") -> list[RegisteredFile]:
    """Every set that names a release file by url and sha256, in name order (first config folder wins)."""
    found: dict[str, RegisteredFile] = {}
    for folder in config_folders():
        for kind in KINDS:
            for yaml_path in sorted((folder / "data" / kind).glob("*.yaml")):
                for spec in _set_nodes(yaml_path, kind):
                    if spec.get("url") and spec.get("sha256") and spec.get("path") and spec["name"] not in found:
                        found[spec["name"]] = RegisteredFile(spec["name"], kind, str(spec["url"]), str(spec["sha256"]),
                                                             _resolve_path(spec, cache_dir), spec)
    return [found[k] for k in sorted(found)]


def select(names: list[str], files: list[RegisteredFile]) -> list[RegisteredFile]:
    """The files of the named sets (`all` for every one); an unknown name lists the known ones."""
    if names == ["all"]:
        return files
    by_name = {f.name: f for f in files}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise NLIDataError(f"unknown set(s) {unknown}; sets with a registered release file: {', '.join(by_name)} (or all)")
    return [by_name[n] for n in names]


def status(f: RegisteredFile) -> str:
    """`ok`, `missing` or `sha256 differs`."""
    if not f.path.is_file():
        return "missing"
    return "ok" if file_sha256(f.path) == f.sha256 else "sha256 differs"


def download(url: str, path: Path, sha256: str, timeout: float = TIMEOUT_S) -> Path:
    """Download url to path through a temporary sibling; the sha256 must match before it is moved in."""
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        shared_mode(fd)   # mkstemp's 0600 would survive the rename
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
            for block in iter(lambda: response.read(1 << 16), b""):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != sha256:
            raise NLIDataError(f"{url}: downloaded file has sha256 {digest.hexdigest()}, the registered release has "
                               f"{sha256}; nothing was written to {path}")
        os.replace(tmp, path)
    except OSError as err:
        raise NLIDataError(f"{url}: download failed ({err}); nothing was written to {path}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def fetch(files: list[RegisteredFile], log=print) -> list[Path]:
    """Download each file not already present with the right sha256 (one per path)."""
    done: dict[Path, Path] = {}
    for f in files:
        if f.path in done:
            continue
        state = status(f)
        if state == "ok":
            log(f"{f.name}: {f.path} already present (sha256 ok)")
        else:
            log(f"{f.name}: {state}; downloading {f.url}")
            download(f.url, f.path, f.sha256)
            log(f"{f.name}: wrote {f.path} (sha256 ok)")
        done[f.path] = f.path
    return list(done)
