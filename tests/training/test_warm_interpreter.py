"""The warm interpreter the stop-and-resume tests fork their runs from (nliforge.testing.warm): a fork
behaves as `python -m module` in a fresh process would, for what those tests read."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from nliforge.testing.warm import WarmInterpreter

PROBE = '''
import os, sys, signal, time
if __name__ != "__main__":
    raise SystemExit("not run as __main__")
what = sys.argv[1]
print("argv", sys.argv[1:], "cwd", os.getcwd(), "var", os.environ.get("PROBE_VAR"), flush=True)
print("to stderr", file=sys.stderr)
if what == "exit":
    sys.exit(int(sys.argv[2]))
if what == "term":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    os.kill(os.getpid(), signal.SIGTERM)
if what == "sleep":
    open("started", "w").close()
    time.sleep(60)
if what == "raise":
    raise ValueError("boom")
'''


@pytest.fixture(scope="module")
def warm():
    with WarmInterpreter(dict(os.environ), preload=("json",)) as interpreter:
        yield interpreter


@pytest.fixture
def probe_dir(tmp_path):
    (tmp_path / "probe_mod.py").write_text(PROBE)
    return tmp_path


def test_a_fork_runs_the_module_as_main_with_its_argv_cwd_env_and_exit_code(warm, probe_dir):
    env = {**warm.env, "PROBE_VAR": "seen"}
    done = warm.run("probe_mod", ["exit", "3"], cwd=probe_dir, env=env, timeout=60)
    assert done.returncode == 3
    assert done.stdout.splitlines() == [f"argv ['exit', '3'] cwd {probe_dir} var seen"]
    assert done.stderr == "to stderr\n"
    fresh = subprocess.run([sys.executable, "-m", "probe_mod", "exit", "3"], cwd=probe_dir, env=env,
                           capture_output=True, text=True, timeout=60)
    assert (fresh.returncode, fresh.stdout, fresh.stderr) == (done.returncode, done.stdout, done.stderr)


def test_a_handled_signal_an_uncaught_error_and_a_kill_end_as_in_a_fresh_process(warm, probe_dir):
    assert warm.run("probe_mod", ["term"], cwd=probe_dir, timeout=60).returncode == 128 + signal.SIGTERM
    crashed = warm.run("probe_mod", ["raise"], cwd=probe_dir, timeout=60)
    assert crashed.returncode == 1 and crashed.stderr.rstrip().endswith("ValueError: boom")
    proc = warm.start("probe_mod", ["sleep"], cwd=probe_dir)
    end = time.monotonic() + 30
    while not (probe_dir / "started").exists() and time.monotonic() < end:
        time.sleep(0.01)
    assert proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    with pytest.raises(subprocess.TimeoutExpired):
        warm.start("probe_mod", ["sleep"], cwd=probe_dir).wait(timeout=0.2)


def test_a_variable_read_at_import_cannot_change_in_a_fork(warm, probe_dir):
    other = "3" if warm.env.get("OMP_NUM_THREADS") != "3" else "4"
    with pytest.raises(ValueError, match="OMP_NUM_THREADS: read at import"):
        warm.start("probe_mod", ["exit", "0"], cwd=probe_dir, env={**warm.env, "OMP_NUM_THREADS": other})
