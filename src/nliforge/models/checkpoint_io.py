"""Checkpoint files written whole and read with one-line errors.

Lightning's own writer puts the bytes in a temporary file under /tmp (fsspec's transaction) and moves it
into the run folder: a copy when the two are different file systems, so a full disk leaves a truncated
`last.ckpt` behind. `AtomicCheckpointIO` writes into a temporary sibling, fsyncs and renames
(nliforge.utils.atomic), and turns a checkpoint that cannot be read (truncated, empty, random bytes, a
device or a folder, a pickle that is not plain data) into an `NLIDataError` naming the file.
`check_checkpoint_file` does the cheap part of that check before a run writes anything.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from nliforge.errors import NLIDataError
from nliforge.utils.atomic import atomic_write_stream


def check_checkpoint_file(path: str | Path, key: str = "ckpt_path") -> Path:
    """`path` if it looks like a checkpoint (a regular, non-empty file in torch's zip format, whole up to
    its index), else an error naming `key` and the file."""
    path = Path(path)
    if not path.exists():
        raise NLIDataError(f"{key}={str(path)!r}: no such file")
    if path.is_dir():
        raise NLIDataError(f"{key}={str(path)!r}: is a folder, not a checkpoint file")
    if not path.is_file():
        raise NLIDataError(f"{key}={str(path)!r}: not a regular file (a device or a pipe), not a checkpoint")
    if path.stat().st_size == 0:
        raise NLIDataError(f"{key}={str(path)!r}: empty file (a checkpoint whose writing was cut short)")
    if not zipfile.is_zipfile(path):
        raise NLIDataError(f"{key}={str(path)!r}: not a checkpoint (truncated, or another kind of file); "
                           "resume from another checkpoint or start a new run folder")
    return path


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's torch checkpoint format, written atomically in the target folder and read with errors
    that name the file."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path, storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__}.save_checkpoint takes no storage_options")
        atomic_write_stream(path, lambda fh: torch.save(checkpoint, fh))

    def load_checkpoint(self, path, map_location: Any | None = lambda storage, loc: storage,
                        weights_only: bool | None = None) -> dict[str, Any]:
        check_checkpoint_file(path)
        try:
            return torch.load(path, map_location=map_location, weights_only=True)
        except Exception as err:   # noqa: BLE001  torn zip members, unpickling refused, wrong contents
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise NLIDataError(f"ckpt_path={str(path)!r}: cannot be read as a checkpoint ({type(err).__name__}: "
                               f"{first[:200]})") from None
