"""Train the Z-Aug generator and save it as a Hugging Face folder that the sampling backend loads.

`train_generator(records, out_dir, cfg)` builds the model from the `model` config node
(`conf/model/tiny_generator.yaml`: a GPT-2 from config with a byte-level tokenizer trained on the
records; `conf/model/gpt2_large_generator.yaml`: `gpt2-large` from the Hub, Table 7), or loads a
trained generator folder (`init`) to fine-tune further (§4.1's G → G*). It is idempotent like
`causal_lm.train_prompt_lm`: a folder holding a finished model trained with the same settings,
records and code version is returned as is, and everything is written to a temporary sibling
folder renamed into place at the end, so an interrupted run leaves nothing half-written.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

from nliforge.data.records import Record
from nliforge.generation.zaug_format import LABEL_TOKENS
from nliforge.models.causal_lm import META_NAME, is_finished
from nliforge.generation.backends.hf_local import load_causal_lm
from nliforge.models.nli_generator import (GeneratorExample, NLIGenerator, add_label_tokens, collate,
                                           encode_examples)
from nliforge.models.tiny_tokenizer import train_causal_tokenizer
from nliforge.utils.atomic import build_folder, share_tree
from nliforge.utils.instantiate import instantiate

GENERATOR_VERSION = 2  # bump when training changes, so folders trained by older code are not reused
BIASED_META_KEY = "biased_features"  # a Z⁻ record's features in B(its label) when it was rejected


def _plain(cfg: Mapping[str, Any] | DictConfig) -> dict[str, Any]:
    return OmegaConf.to_container(cfg, resolve=True) if isinstance(cfg, DictConfig) else dict(cfg)


def to_examples(records: Sequence[Record], rejected: Sequence[Record] = ()) -> list[GeneratorExample]:
    """Regular examples from `records`, unlikelihood (Z⁻) examples from `rejected`.

    A rejected record's biased features are read from `meta["biased_features"]` (names as the
    z-filter writes them, e.g. `not@hypothesis`); none listed means the whole hypothesis.
    """
    out = []
    for mode, recs in (("mle", records), ("unlikelihood", rejected)):
        for rec in recs:
            if rec.label is None:
                raise ValueError(f"train_generator: record {rec.uid} has no label; the generator needs labeled pairs")
            biased = tuple(rec.meta.get(BIASED_META_KEY, ())) if mode == "unlikelihood" else ()
            out.append(GeneratorExample(rec.premise, rec.label, rec.hypothesis, mode, biased))
    return out


def generator_digest(examples: Sequence[GeneratorExample], cfg: Mapping[str, Any]) -> str:
    """sha256 of the settings, the examples and GENERATOR_VERSION: equal digest <=> same model."""
    h = hashlib.sha256(json.dumps({"v": GENERATOR_VERSION, **cfg}, sort_keys=True, default=str).encode())
    for ex in examples:
        row = [ex.premise, ex.label, ex.hypothesis, ex.mode, ex.biased]
        h.update(hashlib.sha256(json.dumps(row).encode()).digest())
    return h.hexdigest()


def build_model_and_tokenizer(cfg: Mapping[str, Any], examples: Sequence[GeneratorExample]):
    """(model, tokenizer) with the label tokens: from `init` (a trained generator to fine-tune further),
    `init_from` (any pretrained causal LM: §2's GPT-2, SmolLM2, ...), a tiny config or a pretrained name."""
    torch.manual_seed(int(cfg.get("seed", 0)))
    backbone = dict(cfg.get("backbone") or {})
    if cfg.get("init"):
        source = str(cfg["init"])
        tokenizer, model = AutoTokenizer.from_pretrained(source), AutoModelForCausalLM.from_pretrained(source)
    elif cfg.get("init_from") or backbone.get("kind") == "pretrained":
        key = "init_from" if cfg.get("init_from") else "model.backbone.name_or_path"
        model, tokenizer = load_causal_lm(str(cfg.get("init_from") or backbone["name_or_path"]), key=key)
    elif backbone.get("kind") == "tiny":
        texts = [t for ex in examples for t in (ex.premise, ex.hypothesis)]
        tokenizer = train_causal_tokenizer(texts, vocab_size=int(backbone.get("vocab_size", 2000)))
        model = None
    else:
        raise ValueError(f"model.backbone.kind={backbone.get('kind')!r}; valid: tiny, pretrained (or set model.init, "
                         f"or init_from: a causal LM folder, Hub id or packaged name)")
    add_label_tokens(tokenizer)
    if model is None:
        model = GPT2LMHeadModel(GPT2Config(
            vocab_size=len(tokenizer), n_positions=int(cfg["max_length"]), n_embd=int(backbone["n_embd"]),
            n_layer=int(backbone["n_layer"]), n_head=int(backbone["n_head"]), resid_pdrop=0.0, embd_pdrop=0.0,
            attn_pdrop=0.0, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id))
    elif model.get_input_embeddings().num_embeddings < len(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
        init_label_embeddings(model, tokenizer)
    return model, tokenizer


@torch.no_grad()
def init_label_embeddings(model, tokenizer) -> None:
    """Start each added label token of a pretrained LM at the mean embedding of its label's word
    (" entailment" ...), input and output side, instead of transformers' mean-of-all-rows resize: a
    pretrained model then reads and can emit the label from the first step. (SmolLM2 fine-tuned 40
    steps with mean-resized label tokens never sampled one: 0 of 400 whole instances parsed.)"""
    tables = [model.get_input_embeddings().weight]
    out = model.get_output_embeddings()
    if out is not None and out.weight.data_ptr() != tables[0].data_ptr():
        tables.append(out.weight)
    for label, token in LABEL_TOKENS.items():
        new_id = tokenizer.convert_tokens_to_ids(token)
        word_ids = tokenizer(" " + label, add_special_tokens=False)["input_ids"]
        for table in tables:
            table[new_id] = table[word_ids].mean(0)


def _fit(model, tokenizer, examples: Sequence[GeneratorExample], cfg: Mapping[str, Any],
         progress: bool) -> NLIGenerator:
    """Run the Lightning Trainer over the encoded examples; returns the trained module."""
    seed = int(cfg.get("seed", 0))
    L.seed_everything(seed, workers=True, verbose=False)
    rows = encode_examples(tokenizer, examples, seed, int(cfg["max_length"]))
    loader = DataLoader(rows, batch_size=int(cfg["batch_size"]), shuffle=True,
                        generator=torch.Generator().manual_seed(seed),
                        collate_fn=lambda batch: collate(batch, tokenizer.pad_token_id))
    module = NLIGenerator(model, instantiate(cfg["optimizer"], "model.optimizer"),
                          lam=float(cfg.get("lam", 0.5)), alpha=float(cfg.get("alpha", 1.0)),
                          clamp=float(cfg.get("clamp", 1e-5)), weight_decay=float(cfg.get("weight_decay", 0.0)),
                          warmup_steps=int(cfg.get("warmup_steps", 0)))
    trainer = L.Trainer(accelerator=str(cfg.get("accelerator", "cpu")), devices=1,
                        precision=cfg.get("precision", "32-true"), max_epochs=int(cfg["max_epochs"]),
                        max_steps=int(cfg.get("max_steps") or -1), gradient_clip_val=cfg.get("gradient_clip_val"),
                        logger=False, enable_checkpointing=False, enable_model_summary=False,
                        enable_progress_bar=progress, num_sanity_val_steps=0)
    module.model.train()  # from_pretrained loads in eval mode: dropout on, as in any fine-tuning
    trainer.fit(module, loader)
    module.model.eval()
    return module


def train_generator(records: Sequence[Record], out_dir: str | os.PathLike, cfg: Mapping[str, Any] | DictConfig,
                    *, rejected: Sequence[Record] = (), progress: bool = False) -> Path:
    """Train the generator on `records` (+ `rejected` Z⁻ records for §4.1) and save it to `out_dir`.

    `cfg` is a `model` node of the generator kind (see conf/model/tiny_generator.yaml): backbone,
    optimizer, batch_size, max_length, max_epochs (max_steps caps them), lam, alpha, seed, init.
    """
    cfg = _plain(cfg)
    missing = [k for k in ("optimizer", "batch_size", "max_length", "max_epochs") if k not in cfg]
    if missing:
        raise ValueError(f"train_generator: the model config lacks {missing} (see conf/model/tiny_generator.yaml)")
    examples = to_examples(records, rejected)
    if not examples:
        raise ValueError("train_generator needs at least one record")
    out_dir = Path(out_dir)
    digest = generator_digest(examples, cfg)
    if is_finished(out_dir, digest):
        return out_dir
    def build(tmp: Path) -> None:
        start = time.perf_counter()
        model, tokenizer = build_model_and_tokenizer(cfg, examples)
        module = _fit(model, tokenizer, examples, cfg, progress)
        _save(module, tokenizer, tmp, {"digest": digest, "settings": cfg, "n_examples": len(examples),
                                       "n_rejected": len(rejected), "train_seconds": time.perf_counter() - start})

    return build_folder(out_dir, build)


def _save(module: NLIGenerator, tokenizer, folder: Path, meta: dict) -> None:
    """Model, tokenizer and generation config, then the meta file last (it marks the folder done)."""
    model, losses = module.model, module.step_losses
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    w = max(1, len(losses) // 10)
    meta.update(steps=len(losses), initial_loss=sum(losses[:w]) / w if losses else None,
                final_loss=sum(losses[-w:]) / w if losses else None, losses=[round(x, 4) for x in losses])
    (folder / META_NAME).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    share_tree(folder)   # save_pretrained writes model.safetensors 0600; the umask decides
