"""One call for "answer these requests with the generator this config node describes": build the
backend, run the exactly-once runner against a cache file, return the answers and the ledger.

A stand-in node with a `responder` (generation/stand_in/served.py) is answered by the local server, started
in this process. Pipelines with several generators (long-text: one per LLM) and the LLM judge use it, each under
its own cache stage name, so the ledger keeps their requests and costs apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from nliforge.generation.types import GenerationRequest, Sampling


def plain(node: Mapping | DictConfig | None) -> dict[str, Any]:
    """A config node as a plain dict (resolved), {} for None."""
    if node is None:
        return {}
    return OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)


def sampling_from(node: Mapping | DictConfig | None) -> Sampling:
    """Sampling settings from a config node; keys left out take Sampling's defaults."""
    return Sampling.from_dict(plain(node))


def answer_requests(generator: Mapping | DictConfig, requests: Sequence[GenerationRequest],
                    cache_path: str | Path, stage: str) -> tuple[dict, dict, dict[str, str]]:
    """(answers by request uid, the stage's ledger, {"backend", "model"}) for `requests`."""
    from nliforge.generation.backends import build_backend
    from nliforge.generation.cache import ResponseCache
    from nliforge.generation.runner import RunnerSettings, run_requests
    from nliforge.generation.stand_in.served import serving

    with serving(plain(generator)) as gen:   # a stand-in with a responder: the in-process server answers
        backend = build_backend(gen)
        settings = RunnerSettings.from_dict(gen.get("runner") or {})
        cache = ResponseCache(cache_path)
        try:
            results = run_requests(backend, list(requests), cache, stage, settings)
            ledger = cache.ledger(stage)
        finally:
            cache.close()
    return results, ledger, {"backend": backend.name, "model": backend.model}
