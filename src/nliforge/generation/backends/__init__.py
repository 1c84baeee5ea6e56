"""Generator backends: OpenAI-compatible APIs and local transformers models, built from the
`generator` config node so that `generator=...` on the command line swaps them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nliforge.errors import NLIDataError

KINDS = ("openai_completions", "openai_chat", "hf_local", "gpt2_unlikelihood")
# Backends that take a `suffix` (text after the insertion point, DISCO's insertion mode); for the
# others an insertion prompt is rendered as a fill-in-the-blank prompt instead.
SUFFIX_KINDS = frozenset({"openai_completions"})


def supports_suffix(cfg: Mapping[str, Any]) -> bool:
    """Whether the configured generator can be sent a prefix and a suffix (insertion mode);
    `suffix: false` in the node says an endpoint of such a kind has none (vLLM)."""
    return cfg.get("kind") in SUFFIX_KINDS and cfg.get("suffix", True) is not False


def no_generator_chosen(key: str = "generator") -> str:
    """The message for a generator node `key` still holding the `stand_in` placeholder."""
    return (f"no generator chosen ({key}=stand_in) and this run has no stand-in (only the demos have one): "
            "choose one, e.g. generator=smollm2 (SmolLM2 in process, offline), generator=vllm (a server from "
            "`nliforge-vllm start`) or generator=openai_completions; or the offline stand-in with a responder, "
            "generator.responder=<name> (its local server started inside the run)")


def build_backend(cfg: Mapping[str, Any]):
    """The backend a `generator` node describes (its `kind` picks the class)."""
    kind = cfg.get("kind")
    if kind == "stand_in":
        raise NLIDataError(no_generator_chosen())
    if kind not in KINDS:
        raise NLIDataError(f"generator.kind={kind!r}; valid: {', '.join(KINDS)}")
    if not cfg.get("model"):
        raise NLIDataError("generator.model: give a model name (API) or a folder / Hub id (hf_local)")
    if kind in ("hf_local", "gpt2_unlikelihood"):
        if kind == "hf_local":
            from nliforge.generation.backends.hf_local import HFLocal as cls
        else:
            from nliforge.generation.backends.nli_generator import NLIGeneratorBackend as cls

        extra = {"label_guidance": float(cfg.get("label_guidance") or 0.0)} if kind == "gpt2_unlikelihood" else {}
        return cls(str(cfg["model"]), batch_size=int(cfg.get("batch_size", 16)),
                   device=str(cfg.get("device", "cpu")), dtype=str(cfg.get("dtype", "float32")),
                   max_context=cfg.get("max_context"), **extra)
    from nliforge.generation.backends.endpoints import Endpoints, endpoint_specs
    from nliforge.generation.backends.openai_api import OpenAIChat, OpenAICompletions

    cls = OpenAIChat if kind == "openai_chat" else OpenAICompletions
    runner = cfg.get("runner") or {}
    key_env, timeout = cfg.get("api_key_env", "OPENAI_API_KEY"), float(runner.get("timeout_s", 60.0))
    specs = endpoint_specs(cfg, int(runner.get("concurrency", 16)))
    if specs is None:   # one server: the usual case
        return cls(str(cfg["model"]), base_url=cfg.get("base_url"), api_key_env=key_env, timeout_s=timeout,
                   connect_hint=connect_hint(cfg))
    backends = [cls(str(cfg["model"]), base_url=url, api_key_env=key_env, timeout_s=timeout,
                    connect_hint=connect_hint({**cfg, "base_url": url})) for url, _ in specs]
    return Endpoints(backends, [u for u, _ in specs], [s for _, s in specs])


def connect_hint(cfg: Mapping[str, Any]) -> str:
    """What to do when the endpoint of an OpenAI-compatible generator node cannot be reached, for the kind
    of generator it is: nliforge's vLLM server, another local server (or the stand-in), or a remote API."""
    from urllib.parse import urlsplit

    url = str(cfg.get("base_url") or "https://api.openai.com/v1")
    host = urlsplit(url).hostname or ""
    if "vllm" in str(cfg.get("name") or ""):
        return "start the vLLM server with `nliforge-vllm start` (docs/generators-and-serving.md), or set generator.base_url"
    if host in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
        return ("is the server there running? start it, or for the offline stand-in let nliforge-generate start it "
                "itself: generator=stand_in generator.responder=<name> (no base_url; the names: "
                "python -m nliforge.generation.stand_in.server --help)")
    return f"check generator.base_url and this machine's network ({host} is a remote API: nothing to start here)"
