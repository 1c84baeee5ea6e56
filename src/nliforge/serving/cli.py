"""`nliforge-vllm`: install vLLM's CPU build in its own environment, start, stop and inspect a server.

    nliforge-vllm install                       # once: ~3 min, ~3.4 GB (its own virtual environment)
    nliforge-vllm start [--port 8000]           # SmolLM2 in the background; returns once it answers
    nliforge-generate pipeline=wanli experiment=demo generator=vllm
    nliforge-vllm stop [--port 8000]            # by the PID it recorded
    nliforge-vllm serve --model <folder|Hub id> # in the foreground (Ctrl-C stops it): e.g. in a Slurm job
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nliforge.generation.types import GenerationError
from nliforge.utils.home import cache_root
from nliforge.serving.vllm import (VLLM_SPEC, ServerSettings, VLLMServer, default_venv, install_venv,
                                   is_vllm_process, served_models, stop_process_group)
from nliforge.utils.system_errors import system_errors


def state_paths(port: int) -> tuple[Path, Path]:
    """(PID file, log file) of the background server on `port`."""
    folder = cache_root() / "vllm"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"port-{port}.pid", folder / f"port-{port}.log"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="nliforge-vllm", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = top.add_subparsers(dest="action", required=True, metavar="ACTION")
    inst = sub.add_parser("install", help="create the vLLM environment (once)")
    inst.add_argument("--venv", type=Path, default=None, help=f"where (default {default_venv()})")
    inst.add_argument("--spec", default=VLLM_SPEC, help="the pip requirement (default %(default)s)")
    for action, text in (("start", "start a server in the background and wait until it answers"),
                         ("serve", "run a server in the foreground until interrupted")):
        p = sub.add_parser(action, help=text)
        p.add_argument("--model", default="smollm2-135m-instruct",
                       help="packaged model name, model folder or Hub id (default %(default)s)")
        p.add_argument("--served-name", default=None, help="name clients ask for (default: --model)")
        p.add_argument("--port", type=int, default=8000)
        p.add_argument("--host", default="127.0.0.1", help="0.0.0.0 only on a trusted cluster network")
        p.add_argument("--max-model-len", type=int, default=2048)
        p.add_argument("--kv-cache-gib", type=int, default=2, help="CPU KV cache (VLLM_CPU_KVCACHE_SPACE)")
        p.add_argument("--compile", action="store_true", help="vLLM's compile warm-up (slower start)")
        p.add_argument("--venv", type=Path, default=None)
        p.add_argument("--wait", type=float, default=600.0, help="seconds to wait for the first answer")
        p.add_argument("extra", nargs="*", help="after --: passed to vLLM as they are")
    for action, text in (("stop", "stop the background server on --port"), ("status", "what answers on --port")):
        p = sub.add_parser(action, help=text)
        p.add_argument("--port", type=int, default=8000)
    return top


def settings_from(args) -> ServerSettings:
    return ServerSettings(model=args.model, served_name=args.served_name, host=args.host, port=args.port,
                          max_model_len=args.max_model_len, kv_cache_gib=args.kv_cache_gib,
                          enforce_eager=not args.compile, venv=args.venv, extra_args=list(args.extra))


def run(args) -> int:
    if args.action == "install":
        print(install_venv(args.venv, args.spec))
        return 0
    pid_path, log_path = state_paths(args.port)
    if args.action in ("start", "serve"):
        server = VLLMServer(settings_from(args), log_path, pid_path).start(args.wait)
        print(f"vLLM serves {server.s.name!r} at {server.base_url} (pid {server.proc.pid}, log {log_path})")
        print(f"  use it: generator=vllm generator.base_url={server.base_url} generator.model={server.s.name}")
        if args.action == "start":
            return 0
        try:
            server.proc.wait()
        except KeyboardInterrupt:
            server.stop()
        return 0
    if args.action == "stop":
        pid = int(pid_path.read_text()) if pid_path.is_file() else None
        if pid is None or not is_vllm_process(pid):
            pid_path.unlink(missing_ok=True)
            print(f"no vLLM server started by nliforge-vllm on port {args.port}")
            return 1
        stop_process_group(pid)
        pid_path.unlink(missing_ok=True)
        print(f"stopped the vLLM server on port {args.port} (pid {pid})")
        return 0
    models = served_models(f"http://127.0.0.1:{args.port}/v1")
    print(f"port {args.port}: " + ("nothing answers" if models is None else f"serves {models}"))
    return 0 if models is not None else 1


def main(argv: list[str] | None = None) -> None:
    """Console script `nliforge-vllm`."""
    args = parser().parse_args(argv)
    try:
        with system_errors():
            code = run(args)
        raise SystemExit(code)
    except GenerationError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
