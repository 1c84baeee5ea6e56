"""The one place nliforge calls hydra's instantiate, with an allow-list of target modules."""

from __future__ import annotations

from typing import Any

from hydra.utils import instantiate as _hydra_instantiate
from omegaconf import DictConfig, OmegaConf

ALLOWED_PREFIXES = ("lightning.", "torch.", "transformers.", "nliforge.", "hydra_plugins.")


def _check_targets(node: Any, key: str) -> None:
    if isinstance(node, dict):
        target = node.get("_target_")
        if target is not None and not str(target).startswith(ALLOWED_PREFIXES):
            raise ValueError(f"{key}._target_={target!r} is outside the allowed modules {ALLOWED_PREFIXES}")
        for k, v in node.items():
            _check_targets(v, f"{key}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _check_targets(v, f"{key}[{i}]")


def instantiate(node: DictConfig | dict, key: str = "config", **kwargs: Any) -> Any:
    """Build the object a `_target_` node describes; `key` names the node in errors."""
    plain = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node
    _check_targets(plain, key)
    return _hydra_instantiate(plain, **kwargs)
