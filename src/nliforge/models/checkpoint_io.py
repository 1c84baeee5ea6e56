"""Checkpoint files written whole, with a digest, and read only when they are what was written.

Lightning's own writer puts the bytes in a temporary file under /tmp (fsspec's transaction) and moves it
into the run folder: a copy when the two are different file systems, so a full disk leaves a truncated
`last.ckpt` behind. `AtomicCheckpointIO` writes into a temporary sibling, fsyncs and renames
(nliforge.utils.atomic), and records the sha256 of every checkpoint it writes in a sidecar,
`<file>.digest.json`, written just before the rename (with the previous file's digest, so a kill between
the two leaves a pair that still agrees). `verify_checkpoint` is what a resume trusts: a regular file in
torch's zip format whose bytes match its recorded digest, that loads as plain data (no pickled code), is
a Lightning checkpoint, and holds finite weights; anything else is one `NLIDataError` naming the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
import zipfile
from pathlib import Path
from typing import Any

import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from nliforge.errors import NLIDataError
from nliforge.utils.atomic import atomic_write_stream, atomic_write_text

log = logging.getLogger(__name__)
DIGEST_SUFFIX = ".digest.json"
LIGHTNING_KEYS = ("pytorch-lightning_version", "state_dict")
_verified: dict[tuple, dict] = {}   # one checkpoint verified (and loaded) but not yet handed to Lightning


def digest_path(path: str | Path) -> Path:
    return Path(str(path) + DIGEST_SUFFIX)


def file_sha256(path: str | Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def recorded_digests(path: str | Path) -> set[str] | None:
    """The digests the sidecar allows for `path` (this write's and the one before), None without a sidecar."""
    side = digest_path(path)
    if not side.is_file():
        return None
    try:
        record = json.loads(side.read_text(encoding="utf-8"))
        return {record["sha256"], *([record["previous"]] if record.get("previous") else [])}
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return set()                       # a torn or foreign sidecar matches nothing


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


def check_digest(path: Path, key: str) -> bool:
    """The file's bytes are the ones recorded when it was written; False when nothing records them (a
    checkpoint written elsewhere or by an older nliforge: only the checks on its contents apply)."""
    allowed = recorded_digests(path)
    if allowed is None:
        return False
    if file_sha256(path) not in allowed:
        raise NLIDataError(f"{key}={str(path)!r}: its bytes differ from the sha256 recorded when it was written "
                           f"({digest_path(path).name}): the file was damaged or changed; resume from another "
                           "checkpoint or start a new run folder")
    return True


def load_plain(path: Path, key: str) -> dict:
    """torch.load of plain data only: a pickle that would build other Python objects is refused."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise NLIDataError(f"{key}={str(path)!r}: holds pickled Python objects that are not plain data (loading "
                           "it could run code); a checkpoint nliforge writes holds none: refused") from None
    except Exception as err:   # noqa: BLE001  torn zip members, wrong contents
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if "weights_only" in first:
            first = "not plain data"
        raise NLIDataError(f"{key}={str(path)!r}: cannot be read as a checkpoint ({type(err).__name__}: "
                           f"{first[:200]})") from None


def first_non_finite(tree, prefix: str = "") -> str | None:
    """The name of the first floating tensor in `tree` (dicts, lists) holding NaN or inf, else None."""
    if isinstance(tree, torch.Tensor):
        return prefix if tree.is_floating_point() and not bool(torch.isfinite(tree).all()) else None
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list | tuple) else ()
    for name, value in items:
        if (found := first_non_finite(value, f"{prefix}.{name}" if prefix else str(name))) is not None:
            return found
    return None


def verify_checkpoint(path: str | Path, key: str = "ckpt_path") -> dict:
    """The checkpoint at `path`, checked (see the module docstring); an `NLIDataError` naming `key` and the
    file otherwise. The result is kept for the `load_checkpoint` that follows, so it is read once."""
    path = check_checkpoint_file(path, key)
    st = path.stat()
    stamp = (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    if stamp in _verified:
        return _verified[stamp]
    recorded = check_digest(path, key)
    checkpoint = load_plain(path, key)
    if not isinstance(checkpoint, dict) or any(k not in checkpoint for k in LIGHTNING_KEYS):
        raise NLIDataError(f"{key}={str(path)!r}: a torch file but not a Lightning training checkpoint (no "
                           f"{' or '.join(repr(k) for k in LIGHTNING_KEYS)}); give a last.ckpt or epoch_*.ckpt")
    bad = first_non_finite({"state_dict": checkpoint["state_dict"],
                            "optimizer_states": checkpoint.get("optimizer_states", [])})
    if bad is not None:
        raise NLIDataError(f"{key}={str(path)!r}: holds non-finite values (NaN or inf) in {bad}; a resume from "
                           "it would train on them: resume from another checkpoint or start a new run folder")
    if not recorded:
        log.warning("%s=%s has no digest record (%s): its contents are checked, its bytes cannot be",
                    key, path, digest_path(path).name)
    _verified.clear()
    _verified[stamp] = checkpoint
    return checkpoint


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's torch checkpoint format, written atomically in the target folder with a digest record,
    and read only after `verify_checkpoint`."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path, storage_options: Any | None = None) -> None:
        if storage_options is not None:
            raise TypeError(f"{type(self).__name__}.save_checkpoint takes no storage_options")
        side = digest_path(path)
        before = recorded_digests(path) if Path(path).is_file() else None
        previous = json.loads(side.read_text())["sha256"] if before else None

        def record(tmp: Path) -> None:
            body = {"sha256": file_sha256(tmp), "previous": previous}
            atomic_write_text(side, [json.dumps(body, indent=1) + "\n"])

        atomic_write_stream(path, lambda fh: torch.save(checkpoint, fh), before_replace=record)

    def load_checkpoint(self, path, map_location: Any | None = lambda storage, loc: storage,
                        weights_only: bool | None = None) -> dict[str, Any]:
        checkpoint = verify_checkpoint(path)
        _verified.clear()   # handed over: not kept beyond this load
        return checkpoint

    def remove_checkpoint(self, path) -> None:
        super().remove_checkpoint(path)
        digest_path(path).unlink(missing_ok=True)
