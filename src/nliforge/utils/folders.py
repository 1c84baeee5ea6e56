"""Folders written whole or not at all: build in a temporary sibling, then rename into place."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_folder(tmp: Path, out_dir: Path) -> None:
    """Rename tmp to out_dir; an existing out_dir is moved aside first and deleted afterwards."""
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
        os.replace(out_dir, old / "previous")
    os.replace(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_folder(out_dir: str | os.PathLike, build: Callable[[Path], None]) -> Path:
    """Run `build(tmp)` in a temporary sibling of out_dir, then put it in out_dir's place.

    A failure (or a kill) leaves out_dir as it was: nothing half-written.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        os.chmod(tmp, 0o755)
        build(tmp)
        replace_folder(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir
