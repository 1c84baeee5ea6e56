"""A local transformers causal LM as a batch backend (`generator=hf_local`).

Every sample is drawn with its own torch.Generator, seeded from (request seed, sample index),
in a manual decoding loop (left padding, attention mask, position ids, a reused KV cache). So the
answer to a request does not depend on which other requests share its batch or in which order:
a resumed run re-batches the pending requests and reproduces the uninterrupted run's texts.
Rows finish at EOS, at a stop string (the text is cut before it) or at max_tokens, and are then
dropped from the batch so they cost nothing more. A prompt that cannot fit the model's context
together with max_tokens becomes a Failure("context_length"), not a crash.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from nliforge.generation.types import Failure, GenerationError, GenerationRequest, Response
from nliforge.utils.model_folder import looks_like_folder
from nliforge.generation.packaged import PACKAGED, is_packaged, packaged_folder

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")  # CPUs whose bfloat16 matmuls are native, not emulated


def resolve_dtype(dtype: str, device: str = "cpu", cpuinfo: str | None = None) -> str:
    """`auto`: bfloat16 on a GPU or on a CPU with native bfloat16 (avx512_bf16 / amx_bf16: 2.1x float32's
    tokens/s for SmolLM2 here, benchmarks/profile_hf_local.py), else float32; any other value as given."""
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        return "bfloat16"
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            cpuinfo = ""
    flags = set(cpuinfo.split())
    return "bfloat16" if any(f in flags for f in BF16_CPU_FLAGS) else "float32"
NUCLEUS_K = 64  # candidate tokens tried for the nucleus before a full sort
_CONTEXT_KEYS = ("n_positions", "max_position_embeddings", "n_ctx", "seq_length")


def load_causal_lm(model: str, device: str = "cpu", dtype: str = "float32", key: str = "generator.model"):
    """(model, tokenizer) from a local folder, a Hub id or a packaged name; a clear GenerationError
    naming the config `key` when none loads."""
    dtype = resolve_dtype(dtype, device)
    if dtype not in DTYPES:
        raise GenerationError(f"generator.dtype={dtype!r} is not supported; expected one of {sorted(DTYPES) + ['auto']}")
    if is_packaged(model):  # a model shipped inside a PyPI package (converted once, then a folder)
        model = str(packaged_folder(model))
    path = Path(model).expanduser()
    if looks_like_folder(model) and not path.is_dir():
        raise GenerationError(f"{key}={model!r}: no such folder ({path.resolve()} does not exist); give a folder "
                              f"holding config.json, the weights and the tokenizer, a Hub id, or a packaged "
                              f"model name ({', '.join(sorted(PACKAGED))})")
    source = str(path) if path.is_dir() else model
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        lm = AutoModelForCausalLM.from_pretrained(source, dtype=DTYPES[dtype])
    except (OSError, ValueError) as err:
        offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0", "false", "False")
        hub = "not in the local Hub cache (HF_HUB_OFFLINE is set)" if offline else "not loadable from the Hub"
        raise GenerationError(
            f"{key}={model!r} could not be loaded as a causal LM: tried the folder "
            f"{path.resolve()} ({'exists' if path.is_dir() else 'does not exist'}) and the Hub id "
            f"{model!r} ({hub}). Set {key} to a folder holding config.json, the weights "
            f"and the tokenizer (e.g. one written by nliforge.models.causal_lm.train_prompt_lm). "
            f"Cause: {type(err).__name__}: {str(err)[:300]}") from err
    return lm.to(device).eval(), tokenizer


def cache_argument(lm) -> str:
    """The forward() keyword of the KV cache: `cache` since transformers 5.2x, `past_key_values` before."""
    return "cache" if "cache" in inspect.signature(lm.forward).parameters else "past_key_values"


def _cache_of(out):
    """The KV cache a forward pass returned, under either name."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def context_limit(config) -> int | None:
    """The model's context length from its config (n_positions, max_position_embeddings ...)."""
    for key in _CONTEXT_KEYS:
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def sample_seed(request: GenerationRequest, sample_index: int) -> int:
    """A 63-bit seed for one sample: from (request.seed or a hash of the prompt, sample index)."""
    base = request.seed if request.seed is not None else hashlib.sha256(request.prompt.encode()).hexdigest()
    digest = hashlib.sha256(f"{base}:{sample_index}".encode()).hexdigest()
    return int(digest[:16], 16) & (2**63 - 1)


@dataclass
class _Row:
    """One sample being decoded: its own generator (None for greedy), settings and tokens so far."""

    request: int
    generator: torch.Generator | None
    temperature: float
    top_p: float
    stop: tuple[str, ...]
    max_new: int
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    finish: str | None = None


class HFLocal:
    """BatchBackend over a local causal LM; `batch_size` = requests per forward batch (rows = Σ n)."""

    name = "hf_local"

    def __init__(self, model: str, batch_size: int = 16, device: str = "cpu", dtype: str = "float32",
                 max_context: int | None = None):
        if batch_size < 1:
            raise GenerationError(f"generator.batch_size must be >= 1, got {batch_size}")
        self.model = str(model)
        self.batch_size = int(batch_size)
        self.device = device
        self._lm, self._tok = load_causal_lm(self.model, device, dtype)
        self._cache_arg = cache_argument(self._lm)
        self.max_context = max_context or context_limit(self._lm.config)
        self._eos = _eos_ids(self._lm, self._tok)
        self._pad = next(i for i in (self._tok.pad_token_id, self._tok.eos_token_id, 0) if i is not None)
        self._start = next(i for i in (self._tok.bos_token_id, self._tok.eos_token_id, 0) if i is not None)

    def generate_batch(self, requests: Sequence[GenerationRequest]) -> list[Response | Failure]:
        """One Response (or Failure) per request, in order; large inputs are split into batches."""
        if any(req.suffix is not None for req in requests):
            raise GenerationError(f"{self.name} has no insertion mode (a request carries a suffix); "
                                  "render the prompt as fill-in-the-blank instead")
        results: list[Response | Failure | None] = [None] * len(requests)
        encoded = []
        for i, req in enumerate(requests):
            ids = self._encode(req)
            need = len(ids) + req.sampling.max_tokens
            if self.max_context is not None and need > self.max_context:
                results[i] = Failure("context_length", f"request {req.uid}: prompt of {len(ids)} tokens + "
                                     f"max_tokens {req.sampling.max_tokens} = {need} tokens > limit "
                                     f"{self.max_context} of model {self.model}")
            else:
                encoded.append((i, ids))
        encoded.sort(key=lambda item: len(item[1]))  # less padding; answers do not depend on it
        for start in range(0, len(encoded), self.batch_size):
            chunk = encoded[start:start + self.batch_size]
            answers = self._generate_chunk([requests[i] for i, _ in chunk], [ids for _, ids in chunk])
            for (i, _), answer in zip(chunk, answers):
                results[i] = answer
        return results  # type: ignore[return-value]

    def _encode(self, req: GenerationRequest) -> list[int]:
        """Prompt token ids: the chat template over `messages` when the request has them (and the
        tokenizer a template), else the plain prompt; an empty prompt starts from BOS."""
        if req.messages is not None and getattr(self._tok, "chat_template", None):
            text = self._tok.apply_chat_template([dict(m) for m in req.messages], tokenize=False,
                                                 add_generation_prompt=True)
            return self._tok(text, add_special_tokens=False)["input_ids"]
        return self._tok(req.prompt)["input_ids"] or [self._start]

    group = 1   # cache rows per sample: the prompt variants `_variants` gives (one here; a subclass may give more)

    def _variants(self, req: GenerationRequest, ids: list[int]) -> list[list[int]]:
        """The prompts a sample is decoded from side by side (here the prompt alone)."""
        return [ids]

    def _scores(self, logits: torch.Tensor, n_rows: int) -> torch.Tensor:
        """One row of sampling scores per sample from its `group` cache rows' logits (here the logits)."""
        return logits

    @torch.inference_mode()
    def _generate_chunk(self, requests: list[GenerationRequest], prompts: list[list[int]]) -> list[Response]:
        """Prefill each prompt's variants once, fan out to its n rows, decode until every row is finished."""
        k = self.group
        rows = [self._row(r, req, req.first_sample + s) for r, req in enumerate(requests) for s in range(req.n)]
        logits, cache, mask = self._prefill([v for req, ids in zip(requests, prompts) for v in self._variants(req, ids)])
        fan_out = torch.tensor([row.request * k + j for row in rows for j in range(k)], device=self.device)
        cache.batch_select_indices(fan_out)
        self._decode(rows, logits[fan_out], cache, mask[fan_out])
        return [self._response(requests[r], prompts[r], [row for row in rows if row.request == r])
                for r in range(len(requests))]

    def _decode(self, rows: list[_Row], logits, cache, mask) -> None:
        """Sample every row to its end. Each row owns `group` consecutive cache rows, all fed its token, and is
        sampled from `_scores` of their logits. Finished rows are pruned from the cache in bulk."""
        group = self.group
        positions = mask.sum(-1, keepdim=True)
        present = list(range(len(rows)))  # rows in the batch, finished ones until pruned
        while True:
            s = self._scores(logits, len(present))
            live = [k for k, i in enumerate(present) if rows[i].finish is None]
            for k, token in zip(live, _sample([rows[present[k]] for k in live], s[live])):
                self._advance(rows[present[k]], token)
            live = [k for k, i in enumerate(present) if rows[i].finish is None]
            if not live:
                return
            if 4 * (len(present) - len(live)) >= len(present):  # prune finished rows in bulk
                index = torch.tensor([k * group + g for k in live for g in range(group)], device=self.device)
                cache.batch_select_indices(index)
                mask, positions = mask[index], positions[index]
                present = [present[k] for k in live]
            tokens = [rows[i].tokens[-1] if rows[i].finish is None else self._pad for i in present for _ in range(group)]
            logits, cache, mask, positions = self._step(tokens, mask, positions, cache)

    def _step(self, tokens: list[int], mask, positions, cache):
        """One decoding step, a token per cache row in: (last-position logits, cache, mask, positions) out."""
        mask = torch.cat([mask, mask.new_ones((mask.size(0), 1))], dim=-1)
        step = torch.tensor([[token] for token in tokens], device=self.device)
        out = self._lm(input_ids=step, attention_mask=mask, position_ids=positions, use_cache=True,
                       **{self._cache_arg: cache})
        return out.logits[:, -1, :], _cache_of(out), mask, positions + 1

    def _row(self, r: int, req: GenerationRequest, sample_index: int) -> _Row:
        s = req.sampling
        gen = None
        if s.temperature > 0:
            gen = torch.Generator(device=self.device).manual_seed(sample_seed(req, sample_index))
        return _Row(r, gen, float(s.temperature), float(s.top_p), tuple(s.stop), int(s.max_tokens))

    def _prefill(self, prompts: list[list[int]]):
        """Left-padded forward pass over the prompts: last-position logits, the KV cache, the mask."""
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for k, p in enumerate(prompts):
            ids[k, width - len(p):] = torch.tensor(p, dtype=torch.long)
            mask[k, width - len(p):] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        out = self._lm(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                       logits_to_keep=1)
        return out.logits[:, -1, :], _cache_of(out), mask

    def _advance(self, row: _Row, token: int) -> None:
        """Append a token; mark the row finished at EOS, a stop string or max_tokens."""
        if token in self._eos:
            row.finish = "stop"
            return
        row.tokens.append(token)
        row.text = self._tok.decode(row.tokens, skip_special_tokens=True)
        cut = _first_stop(row.text, row.stop)
        if cut is not None:
            row.text, row.finish = row.text[:cut], "stop"
        elif len(row.tokens) >= row.max_new:
            row.finish = "length"

    def _response(self, req: GenerationRequest, prompt: list[int], rows: list[_Row]) -> Response:
        return Response(texts=[row.text for row in rows], finish_reasons=[row.finish or "length" for row in rows],
                        prompt_tokens=len(prompt), completion_tokens=sum(len(row.tokens) for row in rows))


def _eos_ids(lm, tokenizer) -> frozenset[int]:
    """EOS ids from the tokenizer and the model's generation config (which may list several)."""
    ids = {tokenizer.eos_token_id}
    gen_eos = getattr(getattr(lm, "generation_config", None), "eos_token_id", None)
    ids.update(gen_eos if isinstance(gen_eos, (list, tuple)) else [gen_eos])
    return frozenset(i for i in ids if i is not None)


def _first_stop(text: str, stops: tuple[str, ...]) -> int | None:
    """Index of the earliest stop string in text, or None."""
    hits = [pos for pos in (text.find(s) for s in stops if s) if pos >= 0]
    return min(hits) if hits else None


def _sample(rows: list[_Row], logits: torch.Tensor) -> list[int]:
    """One token per row: argmax when greedy, else temperature + nucleus (top_p) with the row's generator.

    Every step is row-wise (a row's token never depends on the other rows). The nucleus is taken
    from the row's top NUCLEUS_K tokens when they hold top_p of the mass (almost always; a full sort
    of the vocabulary otherwise), which is much cheaper than sorting every row on a CPU.
    """
    logits = logits.float()
    temps = torch.tensor([max(r.temperature, 1e-5) for r in rows], device=logits.device)
    probs = torch.softmax(logits / temps[:, None], dim=-1)
    top, order = probs.topk(min(NUCLEUS_K, probs.size(-1)), dim=-1)
    covered = top.sum(-1).tolist()
    out = []
    for k, row in enumerate(rows):
        if row.generator is None:
            out.append(int(logits[k].argmax()))
            continue
        if row.top_p >= 1.0:
            p_row, o_row = probs[k], None
        elif covered[k] >= row.top_p:
            p_row, o_row = top[k], order[k]
        else:
            p_row, o_row = probs[k].sort(descending=True, stable=True)
        if o_row is not None:
            p_row = p_row.masked_fill((p_row.cumsum(-1) - p_row) >= row.top_p, 0.0)
        pick = int(torch.multinomial(p_row, 1, generator=row.generator))
        out.append(pick if o_row is None else int(o_row[pick]))
    return out
