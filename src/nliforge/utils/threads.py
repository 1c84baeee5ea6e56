"""Size the CPU thread pools from the cores this process may use, once, at the start of a run.

torch (intra-op and inter-op pools) and the Rust tokenizers start one thread per core of the
machine by default, not per core the process may run on (`taskset`, a Slurm cgroup, a container's
cpuset). When other processes compete for the cores, that many threads thrash: a tiny model
trained ~100x slower beside two busy processes on 2 cores (benchmarks/README.md measures
it with `benchmarks/threads_under_load.py`). `num_threads` (a top-level config key; null = OMP_NUM_THREADS
when set, else the cores in `os.sched_getaffinity(0)`) sizes torch's pools and the tokenizers' pool.
"""

from __future__ import annotations

import logging
import os

from nliforge.errors import NLIDataError

log = logging.getLogger("nliforge.threads")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), not the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:            # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def default_threads() -> int:
    """OMP_NUM_THREADS when it is set to a positive integer (a Slurm script's or the user's choice), else
    the usable cores."""
    given = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(given) if given.isdigit() and int(given) > 0 else usable_cores()


def resolve_num_threads(value, key: str = "num_threads") -> int:
    """`value` as a thread count: null means default_threads(); anything else must be an integer >= 1."""
    if value is None:
        return default_threads()
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise NLIDataError(f"{key}={value!r}: expected a positive integer, or null for the usable cores "
                           f"({usable_cores()} here)")
    return value


def set_num_threads(value=None, key: str = "num_threads") -> int:
    """Size torch's intra-op pool (and its inter-op pool while that can still change) and the tokenizers'
    pool to `value` (null: default_threads()). Returns the count used.

    The tokenizers read RAYON_NUM_THREADS when their pool starts, so it is set only when not already in
    the environment; TOKENIZERS_PARALLELISM is turned off with one thread (no pool at all).
    """
    import torch

    n = resolve_num_threads(value, key)
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(n)
    except RuntimeError:              # the inter-op pool is fixed once torch ran any parallel work
        pass
    os.environ.setdefault("RAYON_NUM_THREADS", str(n))
    if n == 1:
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
    log.debug("thread pools: %d (usable cores %d)", n, usable_cores())
    warn_if_contended(n)
    return n


def warn_if_contended(n: int, load: float | None = None) -> bool:
    """One warning when `n` > 1 threads start while the 1-minute load average (other processes' runnable
    threads) is already at least n: torch's threads then wait on each other across busy cores, ~10x slower
    than one thread in benchmarks/README.md. Returns whether it warned."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):
            return False
    if n <= 1 or load < n:
        return False
    log.warning("%d threads on a machine whose load average is %.1f: other processes compete for the cores; "
                "num_threads=1 was ~10x faster in that case (benchmarks/README.md)", n, load)
    return True
