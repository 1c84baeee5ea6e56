"""A tiny GPT-2 trained on the spot: the offline demo's stand-in for a pretrained generator.

The tokenizer (byte-level BPE) and the model are built from config and trained with a plain,
seeded torch loop on the given documents (e.g. WANLI prompt documents from
each pipeline's `stand_in.py`, e.g. `nliforge.pipelines.wanli.stand_in`), then saved as a Hugging Face folder (model + tokenizer) that
`HFLocal` — or any `AutoModelForCausalLM` user — loads. Training is idempotent: a folder that
already holds a finished model trained with the same settings and documents is reused.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from nliforge.models.tiny_tokenizer import train_causal_tokenizer
from nliforge.utils.atomic import build_folder, read_json_file, share_tree
from nliforge.utils.progress import progress as progress_bar

META_NAME = "nliforge_lm.json"
LM_VERSION = 1  # bump when training changes, so folders trained by older code are not reused


@dataclass(frozen=True)
class LMSettings:
    """Architecture and training settings; the defaults are the offline demo's LM.

    Measured on a shared 2-core CPU with torch on one thread: 600 steps take ~140 s, and the
    model continues 98-100% of fresh WANLI prompts in the `premise\nWord: hypothesis` format
    (200 steps: ~25%, 300 steps: 70-100% — fewer steps than ~500 are not worth the saving).
    """

    n_layer: int = 2
    n_embd: int = 128
    n_head: int = 4
    steps: int = 600
    batch_size: int = 16
    lr: float = 3e-3
    seq_len: int = 256
    seed: int = 0
    vocab_size: int = 2000

    def check(self) -> None:
        for key, value in asdict(self).items():
            if key != "seed" and not value > 0:
                raise ValueError(f"causal LM setting {key} must be > 0, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"causal LM n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")


def settings_digest(documents: Sequence[str], settings: LMSettings) -> str:
    """sha256 of the settings, the documents and LM_VERSION: equal digest <=> same trained model."""
    h = hashlib.sha256(json.dumps({"v": LM_VERSION, **asdict(settings)}, sort_keys=True).encode())
    for doc in documents:
        h.update(hashlib.sha256(doc.encode("utf-8")).digest())
    return h.hexdigest()


def read_lm_meta(folder: str | os.PathLike) -> dict | None:
    """The training record of a finished LM folder (settings, digest, losses), or None."""
    path = Path(folder) / META_NAME
    return read_json_file(path) if path.is_file() else None


def is_finished(folder: str | os.PathLike, digest: str) -> bool:
    """Whether `folder` holds a finished model trained from exactly these inputs (same digest)."""
    meta = read_lm_meta(folder)
    return meta is not None and meta.get("digest") == digest


def train_prompt_lm(documents: Sequence[str], out_dir: str | os.PathLike, *, n_layer: int = 2,
                    n_embd: int = 128, n_head: int = 4, steps: int = 600, batch_size: int = 16,
                    lr: float = 3e-3, seq_len: int = 256, seed: int = 0, vocab_size: int = 2000,
                    progress: bool = True) -> Path:
    """Train a tiny GPT-2 on `documents` (each followed by EOS) and save it to `out_dir`.

    Returns `out_dir` at once if it holds a finished model with the same settings digest.
    Everything is written into a temporary sibling folder renamed into place at the end, so a
    killed run leaves nothing half-written. `seq_len` is also the model's context (n_positions):
    windows are cut from the packed token stream at random offsets, so every position is trained.
    """
    settings = LMSettings(n_layer, n_embd, n_head, steps, batch_size, lr, seq_len, seed, vocab_size)
    settings.check()
    if not documents:
        raise ValueError("train_prompt_lm needs at least one document")
    out_dir = Path(out_dir)
    digest = settings_digest(documents, settings)
    if is_finished(out_dir, digest):
        return out_dir

    def build(tmp: Path) -> None:
        tokenizer = train_causal_tokenizer(documents, vocab_size=vocab_size)
        stream = _token_stream(documents, tokenizer)
        model = _build_model(settings, tokenizer)
        losses = _train(model, stream, settings, progress)
        _save(model, tokenizer, tmp, {"digest": digest, "settings": asdict(settings),
                                      "n_documents": len(documents), "n_tokens": int(stream.numel()),
                                      **_loss_summary(losses)})

    return build_folder(out_dir, build)


def _token_stream(documents: Sequence[str], tokenizer: PreTrainedTokenizerFast) -> torch.Tensor:
    """All documents tokenized, each followed by the EOS id, concatenated into one 1-D tensor."""
    eos = tokenizer.eos_token_id
    ids: list[int] = []
    for doc in documents:
        ids.extend(tokenizer(doc, add_special_tokens=False)["input_ids"])
        ids.append(eos)
    return torch.tensor(ids, dtype=torch.long)


def _build_model(settings: LMSettings, tokenizer: PreTrainedTokenizerFast) -> GPT2LMHeadModel:
    """A GPT-2 from config, seeded, without dropout (the corpus is large relative to the model)."""
    torch.manual_seed(settings.seed)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=settings.seq_len, n_embd=settings.n_embd,
        n_layer=settings.n_layer, n_head=settings.n_head, resid_pdrop=0.0, embd_pdrop=0.0,
        attn_pdrop=0.0, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config)


def _train(model: GPT2LMHeadModel, stream: torch.Tensor, s: LMSettings, progress: bool) -> list[float]:
    """AdamW with linear warmup and cosine decay on random windows of the stream; per-step losses."""
    width = s.seq_len
    if stream.numel() < width:
        stream = stream.repeat(math.ceil(width / stream.numel()))
    gen = torch.Generator().manual_seed(s.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=0.01, betas=(0.9, 0.95))
    warmup = max(1, s.steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warmup) * (
        0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, i / s.steps)))))
    offsets = torch.arange(width)
    model.train()
    losses = []
    bar = progress_bar(range(s.steps), desc="train LM", disable=not progress, mininterval=1.0)
    for _ in bar:
        starts = torch.randint(0, stream.numel() - width + 1, (s.batch_size, 1), generator=gen)
        window = stream[starts + offsets]
        loss = model(input_ids=window, labels=window).loss  # the model shifts labels itself
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        bar.set_postfix(loss=f"{losses[-1]:.3f}", refresh=False)
    model.eval()
    return losses


def _loss_summary(losses: list[float]) -> dict:
    """Mean loss of the first and last 10% of steps (at least one step each), and the curve."""
    w = max(1, len(losses) // 10)
    return {"initial_loss": sum(losses[:w]) / w, "final_loss": sum(losses[-w:]) / w,
            "losses": [round(x, 4) for x in losses]}


def _save(model: GPT2LMHeadModel, tokenizer: PreTrainedTokenizerFast, folder: Path, meta: dict) -> None:
    """Model, tokenizer and generation config, then the meta file last (it marks the folder done)."""
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / META_NAME).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    share_tree(folder)   # save_pretrained writes model.safetensors 0600; the umask decides
