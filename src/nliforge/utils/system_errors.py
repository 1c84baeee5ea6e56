"""Errors of the system, not of nliforge's input, as one `error:` line on every console script: a full disk or
quota, a read-only or forbidden folder (exit 1), and a mandatory setting (`???`) the command line left out
(exit 2: Hydra's MissingMandatoryValue, raised when the script first reads it)."""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable
from contextlib import contextmanager

DISK_ERRORS = {errno.ENOSPC: "free space there (or point the run elsewhere) and rerun",
               errno.EDQUOT: "free space within your quota (or point the run elsewhere) and rerun",
               errno.EROFS: "the folder is on a read-only file system: choose a writable one (e.g. hydra.run.dir=)",
               errno.EACCES: "you may not write there: choose a folder you can write (e.g. hydra.run.dir=)",
               errno.EPERM: "you may not write there: choose a folder you can write (e.g. hydra.run.dir=)"}


def disk_error_line(err: BaseException) -> str | None:
    """One line for an error whose chain (cause or context) holds a full disk, a quota, a read-only file
    system or a permission refusal (as torch's checkpoint writer wraps the OSError of a full disk in its own
    RuntimeError), naming the file; None for any other error."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno in DISK_ERRORS:
            where = f"{err.filename}: " if err.filename else ""
            return f"{where}{err.strerror or os.strerror(err.errno)} [{errno.errorcode[err.errno]}]: {DISK_ERRORS[err.errno]}"
        err = err.__cause__ or err.__context__
    return None


def missing_value_line(err: BaseException) -> str | None:
    """One line for a mandatory setting (`???`) the command line did not give, read directly or through an
    interpolation (`hydra.run.dir: ${run}`); None for any other error."""
    from omegaconf.errors import InterpolationToMissingValueError, MissingMandatoryValue

    if not isinstance(err, (MissingMandatoryValue, InterpolationToMissingValueError)):
        return None
    found = re.search(r"Missing mandatory value: ([\w.\[\]]+)", str(err))
    key = found.group(1) if found else getattr(err, "full_key", None) or "a setting"
    return f"{key}: a mandatory setting with no value; give it on the command line: {key}=<value> (see --help)"


@contextmanager
def system_errors(enabled: bool = True, cleanup: Callable[[], object] | None = None):
    """A full disk, a read-only or forbidden folder (exit 1) and a missing mandatory setting (exit 2) as one
    `error:` line instead of a traceback, on every console script; `cleanup` runs first (the Hydra scripts
    remove a run folder holding nothing but Hydra's own files). `enabled=False` (HYDRA_FULL_ERROR=1) lets
    the traceback through."""
    try:
        yield
    except Exception as err:
        disk, missing = disk_error_line(err), missing_value_line(err)
        if not enabled or not (disk or missing):
            raise
        if cleanup is not None:
            cleanup()
        print(f"error: {disk or missing}", file=sys.stderr)
        raise SystemExit(1 if disk else 2) from None
