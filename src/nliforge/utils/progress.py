"""Progress of long loops: a bar on a terminal, a line every N seconds when output goes to a file.

Under Slurm, CI or nohup, stderr is a file: a tqdm bar there is one line of carriage returns that
shows up (or is read) only at the end. `progress(...)` takes tqdm's arguments and gives tqdm's bar
when stderr is a terminal, else `LineProgress`: a tqdm that logs `desc: n/total (p%) rate, elapsed,
ETA` through `logging` every `interval` seconds (the run's `progress_every_s`, set once at start by
`set_interval`) and once at the end.
"""

from __future__ import annotations

import logging
import sys
import time

from tqdm import tqdm as plain_tqdm
from tqdm.auto import tqdm as auto_tqdm

log = logging.getLogger("nliforge.progress")
DEFAULT_INTERVAL = 30.0
_interval = DEFAULT_INTERVAL


def set_interval(seconds: float | None) -> float:
    """Seconds between two progress lines (null: the default, 30 s); returns the value now in use."""
    global _interval
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0):
        from nliforge.errors import NLIDataError

        raise NLIDataError(f"progress_every_s={seconds!r}: expected a positive number of seconds")
    _interval = DEFAULT_INTERVAL if seconds is None else float(seconds)
    return _interval


def interval() -> float:
    return _interval


def is_terminal(stream=None) -> bool:
    """True when `stream` (default stderr) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):      # closed or replaced by an object without isatty
        return False


class LineProgress(plain_tqdm):
    """tqdm that logs one line per `every` seconds instead of redrawing a bar. `clock` replaces tqdm's
    time source (tests pass a fake one); rate and ETA are averages since the start (smoothing 0)."""

    monitor_interval = 0                      # no tqdm monitor thread: lines come from update() only

    def __init__(self, iterable=None, *args, every: float | None = None, clock=time.monotonic, **kwargs):
        every = _interval if every is None else float(every)
        kwargs.update(mininterval=every, maxinterval=every, miniters=1, smoothing=0, dynamic_ncols=False)
        kwargs.setdefault("bar_format", "{desc}: {n_fmt}/{total_fmt} ({percentage:.0f}%), {rate_fmt}, elapsed "
                          "{elapsed}, ETA {remaining}{postfix}" if _total(iterable, kwargs) else
                          "{desc}: {n_fmt}, {rate_fmt}, elapsed {elapsed}{postfix}")
        super().__init__(iterable, *args, **kwargs)
        self._time = clock
        self.start_t = self.last_print_t = clock()

    def display(self, msg=None, pos=None):
        """Log the status line (tqdm calls this at most once per interval, and at close)."""
        if msg == "" or (msg is None and self.n == getattr(self, "_logged_n", None) and self.n):
            return True                        # leave=False clears the bar; close() repeats the last line
        self._logged_n = self.n
        log.info("%s", self.__str__() if msg is None else msg)
        return True

    def __str__(self):
        return self.format_meter(**self.format_dict)


def _total(iterable, kwargs) -> bool:
    if kwargs.get("total") is not None:
        return True
    try:
        return len(iterable) > 0
    except TypeError:
        return False


def progress(iterable=None, *args, **kwargs):
    """tqdm's bar on a terminal (or when disabled), else a LineProgress writing a line every interval."""
    if kwargs.get("disable") or is_terminal(kwargs.get("file")):
        return auto_tqdm(iterable, *args, **kwargs)
    kwargs.pop("file", None)
    return LineProgress(iterable, *args, **kwargs)
