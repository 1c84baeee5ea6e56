"""The `world` set loader (entry point `nliforge.set_loaders`): a set YAML with `loader: world` names a split
of the synthetic world, which is built on demand under `<cache_dir>/world` from the run's `world` node."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nliforge.data.jsonl import read_jsonl
from nliforge.data.records import Record
from nliforge.errors import NLIDataError
from nliforge.world.build import ensure_world
from nliforge.world.config import SPLITS, WorldConfig


class WorldLoader:
    splits = SPLITS

    @staticmethod
    def load(spec: Mapping[str, Any], where: str, world: Mapping[str, Any] | None, cache_dir) -> list[Record]:
        if world is None:
            raise NLIDataError(f"{where}: loader 'world' needs the `world` config node")
        split = spec.get("split")
        if split not in SPLITS:
            raise NLIDataError(f"{where}.split={split!r}; world splits: {', '.join(SPLITS)}")
        cfg = WorldConfig.from_dict(dict(world))
        if split == "train_biased_extra" and cfg.n_extra == 0:
            raise NLIDataError(f"{where}: the world split train_biased_extra is empty (world.n_extra=0); set "
                               "world.n_extra=N for N more pairs of train_biased's distribution (nliforge.world.arms)")
        folder = ensure_world(cfg, Path(cache_dir) / "world")
        return read_jsonl(folder / f"{split}.jsonl")


LOADER = WorldLoader()
