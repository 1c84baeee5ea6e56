"""Entry points run in forks of one warm interpreter: the imports a test pays once instead of per run.

`python -m nliforge.train ...` spends ~8 CPU-seconds importing torch, Lightning and torchmetrics before
its first step; a test that stops and resumes runs many times pays that each time. `WarmInterpreter`
starts one Python process that imports those modules and nothing else (no thread, no torch operation),
then forks it once per run. The child sets the run's argument list, environment, working folder and
output files and runs the module as `python -m` does (`runpy`, `__main__`), and its exit status is the
run's: a signal's stop, a SIGKILL and a crash look as they do for a fresh process.

What a fork cannot change: the libraries were imported under the interpreter's environment, so a
variable they read at import (IMPORT_TIME: thread counts, kernel paths, offline flags, the hash seed) is
fixed when it starts; a run that asks for another value of one is refused. Every fork also shares the
interpreter's hash seed, where fresh processes draw one each: keep a fresh process in a comparison (the
reference run) so that set-order differences between processes still show.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

IMPORT_TIME = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "MKL_CBWR", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA",
               "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "PYTHONHASHSEED")
# what an entry point imports before its first step (not the entry point itself: runpy runs it afresh)
PRELOAD = ("lightning.pytorch", "transformers", "torchmetrics", "hydra", "omegaconf")


class WarmProcess:
    """One forked run, with the parts of `subprocess.Popen` the tests use."""

    def __init__(self, pid: int, status: Path, out: Path, err: Path, args: list[str]):
        self.pid, self.args, self.returncode = pid, args, None
        self._status, self._out, self._err = status, out, err

    def poll(self) -> int | None:
        if self.returncode is None and self._status.exists():
            self.returncode = int(self._status.read_text())
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() > end:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(0.01)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        try:
            self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.wait()
            raise
        return (self._out.read_text(errors="replace"), self._err.read_text(errors="replace"))


class WarmInterpreter:
    """A Python process with `preload` imported under `env`; `start`/`run` fork it to run an entry point.
    Use as a context manager (the interpreter and any run still going end with it)."""

    def __init__(self, env: dict[str, str] | None = None, preload: tuple[str, ...] = PRELOAD):
        self.env = dict(os.environ if env is None else env)
        self._dir = Path(tempfile.mkdtemp(prefix="nliforge_warm_"))
        self._count = 0
        self._proc = subprocess.Popen([sys.executable, "-m", "nliforge.testing.warm", str(self._dir), *preload],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self.env)
        ready = self._proc.stdout.readline()
        if json.loads(ready or "{}").get("ready") is not True:
            self._proc.kill()
            raise RuntimeError(f"the warm interpreter did not start (it said {ready!r})")

    def start(self, module: str, args: list[str], *, cwd: str | Path, env: dict[str, str] | None = None) -> WarmProcess:
        """Run `python -m module *args` in a fork, with `env` (default: the interpreter's) and `cwd`."""
        env = dict(self.env if env is None else env)
        changed = [k for k in IMPORT_TIME if env.get(k) != self.env.get(k)]
        if changed:
            raise ValueError(f"{', '.join(changed)}: read at import, fixed when the warm interpreter started "
                             f"({', '.join(f'{k}={self.env.get(k)!r}' for k in changed)}); start one with that environment")
        self._count += 1
        out, err = self._dir / f"{self._count}.out", self._dir / f"{self._count}.err"
        request = {"module": module, "args": list(map(str, args)), "cwd": str(cwd), "env": env,
                   "out": str(out), "err": str(err)}
        self._proc.stdin.write((json.dumps(request) + "\n").encode())
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline() or "{}")
        if "pid" not in reply:
            raise RuntimeError(f"the warm interpreter could not fork: {reply}")
        return WarmProcess(reply["pid"], self._dir / f"{reply['pid']}.rc", out, err, [module, *request["args"]])

    def run(self, module: str, args: list[str], *, cwd: str | Path, env: dict[str, str] | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess:
        """As `subprocess.run(..., capture_output=True, text=True)` of `python -m module *args`."""
        proc = self.start(module, args, cwd=cwd, env=env)
        out, err = proc.communicate(timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()   # end of requests: it kills what still runs, reaps, exits
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()

    def __enter__(self) -> WarmInterpreter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- the interpreter's side -------------------------------------------------------------------------------------

def _child(request: dict) -> None:
    """In the fork: become `python -m module *args` and exit with its status (never returns)."""
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                (2, request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            os.dup2(os.open(path, flags, 0o644), fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.path[0] = os.getcwd()                   # as `python -m` puts the working folder first
        sys.argv = [request["module"], *request["args"]]
        code = _run_module(request["module"])
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream: nothing left to write
                pass
        os._exit(code)


def _run_module(module: str) -> int:
    import runpy
    import traceback

    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if stop.code is not None and not isinstance(stop.code, int):
            print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as the interpreter: a traceback and exit 1
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()   # what a normal interpreter exit runs (log handlers, W&B ...)
    return code


def _reap(folder: Path, children: set[int]) -> None:
    """Write each finished child's exit status (negative: the signal that ended it) to <folder>/<pid>.rc."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        tmp = folder / f"{pid}.rc.tmp"
        tmp.write_text(str(code))
        tmp.replace(folder / f"{pid}.rc")


def serve(folder: Path, preload: list[str]) -> None:
    """Import `preload`, say ready, then fork one child per request line on stdin until it closes."""
    for name in preload:
        importlib.import_module(name)
    if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
        os.write(1, (json.dumps({"ready": False, "why": "threads started at import: forking would be unsafe"}) + "\n").encode())
        return
    os.write(1, b'{"ready": true}\n')
    children: set[int] = set()
    stdin = sys.stdin.buffer
    while True:
        readable, _, _ = select.select([stdin], [], [], 0.02)
        if readable:
            line = stdin.readline()
            if not line:
                break
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(request)
            children.add(pid)
            os.write(1, (json.dumps({"pid": pid}) + "\n").encode())
        _reap(folder, children)
    for pid in list(children):   # the tests are over: nothing outlives them
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for _ in range(1000):   # SIGKILL ends them at once; 10 s at most
        _reap(folder, children)
        if not children:
            break
        time.sleep(0.01)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.argv[2:])
