"""The stand-in as a generator: a generator node `{kind: stand_in, responder: <name>}` is answered by the local
OpenAI-compatible server (server.py) with that responder, started in this process on a free port and
stopped afterwards; no second shell, no port to write down.

`answer_requests` (generation/answer.py) sends every node through `serving`, so any pipeline's generator
slot can hold such a node (`generator=stand_in generator.responder=my_pipeline`, or a demo's `stand_in:`
block). Inside `stand_in_servers()` (nliforge-generate wraps the whole run in it) one server per responder
is started at its first use and stopped when the run ends; outside it, each call gets its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from nliforge.errors import NLIDataError

STAND_IN = "stand_in"
_POOLS: list[dict[str, Any]] = []   # the open `stand_in_servers()` blocks, innermost last: responder -> server


def is_served(node: Mapping[str, Any]) -> bool:
    """Whether a generator node is the stand-in with a responder (answered by the in-process server)."""
    return str(node.get("kind")) == STAND_IN and bool(node.get("responder"))


def check_responder(name: str, key: str) -> None:
    """A one-line error naming `key` and the responders there are, unless `name` is one of them."""
    from nliforge.generation.stand_in.responders import responders

    known = responders()
    if name not in known:
        raise NLIDataError(f"{key}.responder={name!r}: no such stand-in responder; known: {', '.join(sorted(known))} "
                           "(a package declares one under the entry-point group nliforge.stand_in_responders)")


def pointed_node(node: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    """The node as an OpenAI-compatible generator at `base_url`: chat or completions as `chat` says."""
    out = {k: v for k, v in node.items() if k != "responder"}
    out.update(kind="openai_chat" if node.get("chat") else "openai_completions", base_url=base_url,
               api_key_env=None, model=str(node.get("model") or f"stand-in-{node['responder']}"))
    return out


def _server(responder: str):
    from nliforge.generation.stand_in.responders import responders
    from nliforge.generation.stand_in.server import LocalOpenAIServer

    return LocalOpenAIServer(port=0, latency_s=0.0, responder=responders()[responder])


@contextlib.contextmanager
def stand_in_servers() -> Iterator[None]:
    """One in-process server per responder for the duration of the block (started when first used)."""
    pool: dict[str, Any] = {}
    _POOLS.append(pool)
    try:
        yield
    finally:
        _POOLS.remove(pool)
        for server in pool.values():
            server.stop()


@contextlib.contextmanager
def serving(node: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The node to build a backend from: unchanged, or (a served stand-in) pointed at a running server."""
    node = dict(node)
    if not is_served(node):
        yield node
        return
    responder = str(node["responder"])
    check_responder(responder, "generator")
    if _POOLS:
        pool = _POOLS[-1]
        if responder not in pool:
            pool[responder] = _server(responder).start()
        yield pointed_node(node, pool[responder].base_url)
        return
    with _server(responder) as server:
        yield pointed_node(node, server.base_url)
