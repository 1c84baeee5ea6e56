#!/usr/bin/env python3
"""Start and stop a real one-node Slurm cluster on this machine, for tests (tests/project/test_slurm.py).

    python slurm/local_cluster.py start /tmp/slurm   # prints the environment to use it
    python slurm/local_cluster.py stop /tmp/slurm

Needs Debian's `slurm-wlm` and `munge` (`apt-get install -y slurm-wlm munge`) and root: slurmd runs
jobs as their user and munged runs as the `munge` user. Everything Slurm writes (slurm.conf, state,
spool, logs) lies in the scratch folder; munged uses the system socket under /run/munge and is
reused if one already answers there. Without systemd the daemons are started here in the
foreground (`-D`/`-F`), so their PIDs are known and each is stopped by its PID, never by name.

There is no accounting (no slurmdbd): `slurm/bin/sacct`, put first on PATH by `env()`, answers
submitit's `sacct` polls from `scontrol show job`, so a job that dies is seen as FAILED.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SLURM_DIR = Path(__file__).resolve().parent
STANDIN_BIN = SLURM_DIR / "bin"           # holds the `sacct` stand-in
MUNGE_RUN = Path("/run/munge")
MUNGE_SOCKET = MUNGE_RUN / "munge.socket.2"
PARTITION = "debug"


def missing() -> str | None:
    """Why a local cluster cannot start here, or None when it can."""
    for tool in ("slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "munged"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            return f"{tool} not found (apt-get install -y slurm-wlm munge)"
    if os.geteuid() != 0:
        return "a local Slurm cluster needs root (slurmd, and munged as user munge)"
    return None


def _exe(tool: str) -> str:
    return shutil.which(tool) or str(Path("/usr/sbin", tool))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mem_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 * 9 // 10
    return 1024


def write_conf(scratch: Path, host: str, cpus: int) -> Path:
    """A minimal slurm.conf whose state, spool, log and pid files lie in `scratch`."""
    for sub in ("state", "spool", "log"):
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    conf = scratch / "slurm.conf"
    conf.write_text(f"""\
# Written by slurm/local_cluster.py: a one-node cluster for tests.
ClusterName=nliforge-local
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
# keep finished jobs in slurmctld for an hour: the sacct stand-in reads them from `scontrol show job`
MinJobAge=3600
StateSaveLocation={scratch / 'state'}
SlurmdSpoolDir={scratch / 'spool'}/slurmd-%n
SlurmctldPidFile={scratch / 'slurmctld.pid'}
SlurmdPidFile={scratch / 'slurmd.pid'}
SlurmctldLogFile={scratch / 'log' / 'slurmctld.log'}
SlurmdLogFile={scratch / 'log' / 'slurmd.log'}
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={_mem_mb()} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    return conf


def env(scratch: Path, base: dict | None = None) -> dict:
    """The environment that talks to the cluster in `scratch`: SLURM_CONF and the sacct stand-in."""
    e = dict(os.environ if base is None else base)
    e["SLURM_CONF"] = str(Path(scratch) / "slurm.conf")
    e["PATH"] = f"{STANDIN_BIN}{os.pathsep}{e.get('PATH', '')}"
    return e


def _munge_answers() -> bool:
    if not MUNGE_SOCKET.exists() or shutil.which("munge") is None:
        return False
    return subprocess.run(["munge", "-n"], capture_output=True).returncode == 0


def _start_munged(scratch: Path) -> int | None:
    """Start munged as user munge (foreground, so its PID is ours); None when one already answers."""
    if _munge_answers():
        return None
    import pwd
    pw = pwd.getpwnam("munge")
    MUNGE_RUN.mkdir(mode=0o755, exist_ok=True)
    os.chown(MUNGE_RUN, pw.pw_uid, pw.pw_gid)
    MUNGE_RUN.chmod(0o755)
    log = open(scratch / "log" / "munged.log", "ab")
    proc = subprocess.Popen([_exe("munged"), "-F"], user=pw.pw_uid, group=pw.pw_gid, extra_groups=[],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(100):
        if _munge_answers():
            return proc.pid
        if proc.poll() is not None:
            raise RuntimeError(f"munged exited with {proc.returncode}: {(scratch / 'log' / 'munged.log').read_text()}")
        time.sleep(0.1)
    raise RuntimeError("munged did not answer within 10 s")


def _node_state(e: dict) -> str:
    p = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, env=e)
    return p.stdout.strip()


def start(scratch: Path | str, cpus: int | None = None, timeout_s: float = 60) -> dict:
    """Start munged (if needed), slurmctld and slurmd; wait until the node is idle; return env()."""
    why = missing()
    if why:
        raise RuntimeError(why)
    scratch = Path(scratch).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = write_conf(scratch, host, cpus or os.cpu_count() or 1)
    e = env(scratch)
    pids: dict[str, int] = {}
    pid_file = scratch / "pids.json"
    try:
        munged = _start_munged(scratch)
        if munged is not None:
            pids["munged"] = munged
            pid_file.write_text(json.dumps(pids))
        for name, cmd in (("slurmctld", [_exe("slurmctld"), "-D", "-f", str(conf)]),
                          ("slurmd", [_exe("slurmd"), "-D", "-f", str(conf), "-N", host])):
            log = open(scratch / "log" / f"{name}.out", "ab")
            proc = subprocess.Popen(cmd, env=e, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            pids[name] = proc.pid
            pid_file.write_text(json.dumps(pids))
        deadline = time.time() + timeout_s
        state = ""
        while time.time() < deadline:
            state = _node_state(e)
            if state == "idle":
                return e
            for name, pid in pids.items():
                if not _alive(pid):
                    raise RuntimeError(f"{name} (pid {pid}) exited; see {scratch / 'log'}")
            time.sleep(0.3)
        raise RuntimeError(f"node not idle after {timeout_s} s (state {state!r}); see {scratch / 'log'}")
    except BaseException:
        stop(scratch)
        raise


def _alive(pid: int) -> bool:
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)   # reaps our own children
        if waited == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop(scratch: Path | str, timeout_s: float = 15) -> None:
    """Cancel every job, then stop the daemons started by `start` (by PID, slurmd first)."""
    scratch = Path(scratch).resolve()
    pid_file = scratch / "pids.json"
    if not pid_file.exists():
        return
    pids = json.loads(pid_file.read_text())
    if "slurmctld" in pids and _alive(pids["slurmctld"]):
        subprocess.run(["scancel", "--full", "--quiet", f"--partition={PARTITION}"],
                       env=env(scratch), capture_output=True, timeout=30)
    for name in ("slurmd", "slurmctld", "munged"):
        pid = pids.get(name)
        if pid is None or not _alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + timeout_s
        while _alive(pid) and time.time() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    pid_file.unlink()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "start":
        e = start(argv[1])
        print(f"export SLURM_CONF={e['SLURM_CONF']}\nexport PATH={STANDIN_BIN}:$PATH")
    else:
        stop(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
