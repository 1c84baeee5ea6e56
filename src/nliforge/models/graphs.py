"""Graph-ready training: a few static batch widths, and `torch.compile` of the backbone's repeated blocks.

A model compiled for fixed shapes (`compile.dynamic=false`) needs one graph per batch shape. With
`data.static_widths=N` every training batch is padded to one of at most N widths (`static_widths`), so a
run compiles at most N graphs (and, with `compile.mode=reduce-overhead`, records at most N CUDA graphs)
and never recompiles after it has seen each width once. `compile.regional=true` compiles each repeated
block (the encoder layers) instead of the whole backbone: the blocks share one compiled graph per width,
so compilation takes about one layer's time, not the whole stack's (PyTorch's "regional compilation"
recipe). The optimizer's step, the LR schedule, the loss and the embedding/classifier layers stay
outside the graphs, in eager PyTorch.

`compile.cache_dir` keeps inductor's and Triton's on-disk caches (FX graph cache, AOTAutograd cache,
compiled kernels) in one folder, so a second run with the same shapes loads them instead of compiling.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from nliforge.data.widths import MAX_STATIC_WIDTHS, static_widths  # noqa: F401 - the widths live with the data
from nliforge.errors import NLIDataError

log = logging.getLogger(__name__)


def repeated_blocks(model: torch.nn.Module) -> torch.nn.ModuleList | None:
    """The model's stack of identical blocks (a transformer's layers): its largest `ModuleList` whose
    children are all of one class; None when it has none of two or more."""
    best = None
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) >= 2 \
                and len({type(child) for child in module}) == 1 and (best is None or len(module) > len(best)):
            best = module
    return best


def use_cache_dir(path: str | os.PathLike) -> Path:
    """Point inductor's and Triton's on-disk caches at `path` (made if missing) for this process and the
    processes it starts."""
    folder = Path(path).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder)
    os.environ["TRITON_CACHE_DIR"] = str(folder / "triton")
    return folder


def compile_kwargs(settings: Mapping) -> dict:
    return {k: settings.get(k) for k in ("mode", "dynamic", "backend") if settings.get(k) is not None}


def check_compile_settings(settings: Mapping | None) -> None:
    """What this torch cannot do, refused with the key to change (before a run folder gets any file)."""
    if settings and settings.get("enabled", False) and settings.get("full_batches_only", False) \
            and not hasattr(torch.compiler, "set_stance"):
        raise NLIDataError(f"compile.full_batches_only=true needs torch >= 2.6 (torch.compiler.set_stance); this is "
                           f"torch {torch.__version__}: set compile.full_batches_only=false or upgrade torch")


def compile_backbone_model(model: torch.nn.Module, settings: Mapping | None) -> dict | None:
    """`compile.*`: compile `model` in place (`nn.Module.compile`, so state-dict names stay), the whole of
    it or (`compile.regional`) each of its repeated blocks. Returns what was done, None when disabled."""
    if settings is None or not settings.get("enabled", False):
        return None
    check_compile_settings(settings)
    kwargs = compile_kwargs(settings)
    cache = str(use_cache_dir(settings["cache_dir"])) if settings.get("cache_dir") else \
        os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    limit = settings.get("recompile_limit")
    if limit is not None:   # renamed from cache_size_limit in torch 2.6
        name = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"
        setattr(torch._dynamo.config, name, int(limit))
    if settings.get("regional", False):
        blocks = repeated_blocks(model)
        if blocks is None:
            raise NLIDataError("compile.regional=true: the backbone has no stack of repeated blocks to compile; "
                               "use compile.regional=false")
        for block in blocks:
            block.compile(**kwargs)
        done = {"compiled": f"{len(blocks)} x {type(blocks[0]).__name__}", **kwargs}
    else:
        model.compile(**kwargs)
        done = {"compiled": type(model).__name__, **kwargs}
    done["cache_dir"] = cache
    log.info("torch.compile %s", done)
    return done


def eager_stance(active: bool):
    """A context in which compiled code runs eagerly (`torch.compiler.set_stance("force_eager")`) when
    `active`: batches of a shape the graphs were not built for (the last, short batch of an epoch,
    evaluation) then neither compile a new graph nor record a CUDA graph."""
    return torch.compiler.set_stance("force_eager") if active else contextlib.nullcontext()
