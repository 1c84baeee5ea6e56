"""Files and folders written whole or not at all: every writer builds a temporary sibling (same folder,
so the same file system: a rename, never a copy across file systems), fsyncs it, and renames it into
place, so a reader, or a run killed halfway (or a disk that fills up), never sees half a file. The one
place nliforge writes output atomically:

* `atomic_write_text` / `atomic_write_bytes`: replace a file;
* `atomic_write_stream`: replace a file with what a writer function writes to it (checkpoints);
* `write_new_file`: create a file only if it does not exist yet, even against a concurrent writer;
* `save_figure`: a matplotlib figure as PNG;
* `build_folder` / `replace_folder`: a whole folder;
* `read_json_file`: the reading side, a torn or foreign JSON file as one error naming it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from pathlib import Path


def umask() -> int:
    """The process's umask, read without changing it where Linux says it (/proc/self/status), else by
    setting and restoring it."""
    try:
        for line in Path("/proc/self/status").read_text().split("\n"):
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def shared_mode(fd_or_path: int | str | os.PathLike, folder: bool = False) -> None:
    """Give a file (0666) or folder (0777) that mkstemp/mkdtemp made private the mode `open`/`mkdir`
    would have given it under the umask: results in a lab's shared project folder stay readable by the
    group the umask lets read them."""
    mode = (0o777 if folder else 0o666) & ~umask()
    if isinstance(fd_or_path, int):
        os.fchmod(fd_or_path, mode)
    else:
        os.chmod(fd_or_path, mode)


def share_tree(folder: str | os.PathLike) -> Path:
    """Every file and folder under `folder` (itself included) given the umask's mode: a library that
    saves through mkstemp (transformers' `save_pretrained` writes model.safetensors so) leaves 0600."""
    folder = Path(folder)
    shared_mode(folder, folder=True)
    for path in folder.rglob("*"):
        if not path.is_symlink():
            shared_mode(path, folder=path.is_dir())
    return folder


def _unnamed_os_error(err: BaseException | None) -> OSError | None:
    """The OSError without a file name in `err`'s chain (a write to a full disk, which torch's checkpoint
    writer wraps in its own RuntimeError), or None."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno is not None and not err.filename:
            return err
        err = err.__cause__ or err.__context__
    return None


@contextlib.contextmanager
def _temp_sibling(path: Path) -> Iterator[tuple[int, str]]:
    """(descriptor, name) of a new temporary file next to `path`; removed at the end unless renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        shared_mode(fd)   # mkstemp's 0600 would survive the rename
        yield fd, tmp
    except Exception as err:
        unnamed = _unnamed_os_error(err)
        if unnamed is None:
            raise
        raise OSError(unnamed.errno, unnamed.strerror, str(path)) from err   # a full disk names the file
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _sync(fh) -> None:
    """The file's bytes on disk before it is renamed into place (a crash then leaves the old file or the
    new one, never a renamed empty one)."""
    fh.flush()
    os.fsync(fh.fileno())


def _sync_folder(folder: Path) -> None:
    """The rename itself on disk (where the file system lets a folder be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_stream(path: str | os.PathLike, write: Callable[[io.BufferedWriter], None],
                        before_replace: Callable[[Path], None] | None = None) -> Path:
    """`write(fh)` into a temp file in the target folder, fsync, rename: a full disk or a kill mid-write
    leaves the previous file (or none), and the temp file is removed. `before_replace(tmp)` runs on the
    whole temp file just before the rename (e.g. to record its digest)."""
    path = Path(path)
    with _temp_sibling(path) as (fd, tmp):
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            _sync(fh)
        if before_replace is not None:
            before_replace(Path(tmp))
        os.replace(tmp, path)
    _sync_folder(path.parent)
    return path


def atomic_write_text(path: str | os.PathLike, lines: Iterable[str]) -> Path:
    """Write lines (UTF-8, `\\n` kept as is) to a temp file in the target folder, fsync, then rename."""
    path = Path(path)
    with _temp_sibling(path) as (fd, tmp):
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                fh.write(line)
            _sync(fh)
        os.replace(tmp, path)
    _sync_folder(path.parent)
    return path


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes via a temp file, fsync and `os.replace`: readers never see half a file."""
    return atomic_write_stream(path, lambda fh: fh.write(data))


def write_new_file(path: str | os.PathLike, data: bytes) -> bool:
    """Write `data` to `path` only if `path` does not exist yet; False if it did.

    Writes a temp file in the same folder and hard-links it into place, which fails atomically when
    the target exists, so an existing file is never replaced, even by a concurrent writer. Falls back
    to check-then-rename where hard links are unsupported.
    """
    path = Path(path)
    if path.exists():
        return False
    with _temp_sibling(path) as (fd, tmp):
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:
            if path.exists():
                return False
            os.replace(tmp, path)
    return True


def save_figure(fig, path: str | os.PathLike, close: bool = True, **savefig) -> Path:
    """A matplotlib figure as PNG at `path`, atomically; `savefig` settings (dpi, bbox_inches ...) go to
    `Figure.savefig`. `close` closes it through pyplot (pass False for a figure pyplot does not manage)."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", **savefig)
    finally:
        if close:
            import matplotlib.pyplot as plt

            plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())


def replace_folder(tmp: Path, out_dir: Path) -> None:
    """Rename tmp to out_dir; an existing out_dir is moved aside first and deleted afterwards."""
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
        os.replace(out_dir, old / "previous")
    os.replace(tmp, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def build_folder(out_dir: str | os.PathLike, build: Callable[[Path], None],
                 done: Callable[[Path], bool] | None = None) -> Path:
    """Run `build(tmp)` in a temporary sibling of out_dir, then put it in out_dir's place.

    A failure (or a kill) leaves out_dir as it was: nothing half-written. With `done`, an out_dir that
    is done by the time the build finishes (another process built the same thing meanwhile) is kept
    and the new copy dropped.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        shared_mode(tmp, folder=True)  # mkdtemp makes it private; an output folder follows the umask
        build(tmp)
        if done is not None and done(out_dir):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            replace_folder(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def read_json_file(path: str | os.PathLike) -> Any:
    """The JSON value in `path`; a torn (half-written by an older version, or cut short by a full disk),
    empty or foreign file is an `NLIDataError` naming the file and where the parser stopped."""
    import json

    from nliforge.errors import NLIDataError

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise NLIDataError(f"{path}: not a JSON file (byte {err.start} is not UTF-8)") from None
    except IsADirectoryError:
        raise NLIDataError(f"{path}: is a folder, not a JSON file") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        what = "empty" if not text.strip() else f"not valid JSON at line {err.lineno} column {err.colno} ({err.msg})"
        raise NLIDataError(f"{path}: {what}; the file is torn or not nliforge's: restore it or start the run "
                           "folder again") from None
