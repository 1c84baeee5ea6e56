"""How many tokens a backbone can take: `model.max_length` is checked against the model's position
embeddings before a run folder exists (a longer setting failed at the first long batch, deep in training,
with a 161-line traceback)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nliforge.errors import NLIDataError

# architectures whose position ids start after the padding id (RoBERTa's `padding_idx + 1` offset)
OFFSET_BY_PAD = {"roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xlm-roberta-xl"}


def usable_positions(model_type: str, max_position_embeddings: int, pad_token_id: int | None) -> int:
    """Tokens per input the position table holds (RoBERTa-like models lose padding_idx + 1 of them)."""
    offset = (int(pad_token_id or 0) + 1) if model_type in OFFSET_BY_PAD else 0
    return int(max_position_embeddings) - offset


def backbone_positions(backbone: Mapping[str, Any]) -> tuple[int | None, str]:
    """(usable positions or None when unbounded or unknown here, where the number comes from)."""
    kind = backbone.get("kind")
    if kind == "tiny":   # the tiny tokenizer's pad id is 1 (<s>, <pad>, ...): RoBERTa's offset of 2
        arch = str(backbone.get("arch", "roberta"))
        n = int(backbone.get("max_position_embeddings", 130))
        return usable_positions(arch, n, 1), f"model.backbone.max_position_embeddings={n}"
    name = backbone.get("name_or_path")
    if kind == "minilm":
        from nliforge.models.backbone import minilm_path

        name = minilm_path()
    if not name:
        return None, ""
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(str(name))
    except (OSError, ValueError):   # not loadable here: build_backbone names the problem
        return None, ""
    n = getattr(config, "max_position_embeddings", None)
    if n is None or getattr(config, "position_biased_input", True) is False:   # relative positions (DeBERTa)
        return None, ""
    return usable_positions(config.model_type, n, getattr(config, "pad_token_id", None)), f"{name}'s config"


def check_max_length(backbone: Mapping[str, Any], max_length: int, key: str = "model.max_length") -> None:
    """An error naming `key` when inputs of `max_length` tokens do not fit the backbone's positions."""
    usable, source = backbone_positions(backbone)
    if usable is not None and int(max_length) > usable:
        raise NLIDataError(f"{key}={max_length}: the model has positions for {usable} tokens ({source}); use "
                           f"{key}={usable} or less")
