"""A pytest plugin that records each test's CPU time: its own (the pytest process) and its reaped children's
(console scripts, servers it stopped), from getrusage, as `nodeid<TAB>self<TAB>children` lines appended to
$PYTEST_CPU_TIME_OUT (default pytest_cpu_time.tsv). With xdist each worker appends its own tests' lines.

    PYTHONPATH=scripts python -m pytest -p pytest_cpu_time -n 2 ...
    sort -t$'\\t' -k3 -rn pytest_cpu_time.tsv | head        # the costliest children

Wall time says little on shared cores (CI runs five lanes on two); CPU time is what CI's total is bounded by.
A child that is not reaped by the test (a server's engine, a Slurm job) is not counted."""

from __future__ import annotations

import os
import resource

import pytest


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = _cpu()
    yield
    after = _cpu()
    with open(os.environ.get("PYTEST_CPU_TIME_OUT", "pytest_cpu_time.tsv"), "a", encoding="utf-8") as fh:
        fh.write(f"{item.nodeid}\t{after[0] - before[0]:.2f}\t{after[1] - before[1]:.2f}\n")
