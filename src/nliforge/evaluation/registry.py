"""Load the eval sets a suite config lists."""

from __future__ import annotations

import logging

from omegaconf import DictConfig, OmegaConf

from nliforge.errors import NLIDataError
from nliforge.data.registry import load_set
from nliforge.evaluation.suite import EvalSet

log = logging.getLogger(__name__)


def load_suite(cfg: DictConfig) -> list[EvalSet]:
    """Every set of `suite.sets`; with `suite.skip_missing` a set that cannot load is skipped with a warning."""
    sets = cfg.suite.get("sets") or {}
    world = OmegaConf.to_container(cfg.world, resolve=True) if "world" in cfg else None
    out = []
    for key, spec in sets.items():
        spec = OmegaConf.to_container(spec, resolve=True)
        spec.setdefault("name", key)
        try:
            out.append(EvalSet(spec["name"], spec, load_set(spec, f"suite.sets.{key}", world, cfg.data.cache_dir)))
        except NLIDataError as err:
            if not cfg.suite.get("skip_missing", False):
                raise
            log.warning("skipping eval set %s: %s", key, err)
    return out


def pick_val_sets(cfg: DictConfig, eval_sets: list[EvalSet]) -> dict:
    """The suite members named in `data.val_sets`, validated after each epoch."""
    by_name = {es.name: es for es in eval_sets}
    chosen = {}
    for name in cfg.data.get("val_sets") or []:
        if name not in by_name:
            raise NLIDataError(f"data.val_sets: {name!r} is not in suite {cfg.suite.get('name')!r}; "
                               f"suite sets: {', '.join(by_name)}")
        if int(by_name[name].spec.get("num_classes", 3)) != 3:
            raise NLIDataError(f"data.val_sets: {name!r} is a 2-class set; validation needs a 3-class set")
        chosen[name] = by_name[name].records
    return chosen
