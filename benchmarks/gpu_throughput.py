"""GPU training throughput: nliforge (Lightning) vs. the Hugging Face Trainer on RoBERTa shapes.

Same model (roberta-base / roberta-large architecture, random init from the published config
shapes; `tiny` for CPU smoke runs), same initial weights, same synthetic token ids, batch size,
optimiser (torch AdamW, lr 1e-4, weight decay 0.01 off biases/LayerNorm, linear decay, no warmup,
no clipping) and number of steps for every contender:

* ``nliforge``          NLIClassifier + NLIDataModule (nliforge's LengthGroupedBatchSampler and
                        PadCollator: length-grouped batches padded to their longest item)
                        + lightning.Trainer; bf16-mixed on GPU, fp32 on CPU (trainer=gpu).
* ``nliforge+fused``    + AdamW(fused=True) and widths rounded to 8 (trainer=gpu's defaults).
* ``nliforge+dyn``      nliforge+fused with the training-dynamics recorder on (in_training mode), as
                        every nliforge-train run records them (callbacks.dynamics).
* ``nliforge+pad8``, ``nliforge+fusedonly``  diagnostics that split nliforge+fused in two: widths
                        rounded to 8 alone, and the fused AdamW alone.
* ``nliforge+compile``  + the backbone compiled in place with dynamic shapes (preset=gpu_fast).
* ``nliforge+graphs``   + compile mode reduce-overhead (CUDA graphs).
* ``nliforge+graphs32`` the same with widths rounded to 32: at most 4 widths (32..128), so at most
                        4 CUDA graphs to record (graphs record one graph per width).
* ``nliforge+fast``     preset=gpu_fast with the dynamics recorder on.
* ``nliforge+graphs4``  preset=gpu_graphs with the recorder on: data.static_widths=4 (every batch padded to
                        one of 4 widths from the training lengths), each encoder layer compiled for fixed
                        shapes (regional) and replayed as CUDA graphs; ``nliforge+compiled4`` the same
                        without CUDA graphs, ``nliforge+static4`` the static widths alone (eager).
                        --compile-cache-dir: where the compiled artefacts are kept (compile.cache_dir).
* ``hf_A_maxlen``       transformers.Trainer as the seed repositories ran it: every pair padded to
                        128, default_data_collator, adamw_torch (bf16=True on GPU as well).
* ``hf_B_best``         transformers.Trainer at its best: DataCollatorWithPadding,
                        train_sampling_strategy="group_by_length", bf16=True on GPU, the Trainer's
                        default optimiser (adamw_torch_fused on torch >= 2.8; --hf-best-optim).
* ``hf_C_compiled``     diagnostic: hf_B + torch_compile=True, widths rounded to 8.

Tokens: no pretrained tokenizer is available offline, so token-id pairs are generated directly:
pair length (premise + hypothesis + RoBERTa's 4 special tokens) ~ lognormal(median 27, sigma 0.45)
rounded and clipped to [8, 128] -- mean ~30, p95 ~57, long tail to 128, an approximation of
WANLI's pair lengths under the RoBERTa tokenizer.  Both frameworks see the identical ids.

Reported per contender: examples/s, real (non-pad) tokens/s, padded tokens/s, MFU =
6 * n_params * real_tokens_per_s / peak (and with the attention FLOPs of the real tokens added,
12 * layers * hidden * sum(len^2)), the ratios to hf_A and hf_B, and the projected wall time of a
5-epoch WANLI run (5 * 103,000 pairs / examples_per_s).  Timing as in train_throughput.py: the
clock starts after optimizer step --warmup and stops at train end (torch.cuda.synchronize on
GPU); rounds with rotating order; medians.

    python benchmarks/gpu_throughput.py --model tiny --device cpu          # smoke
    python benchmarks/gpu_throughput.py --model roberta-base               # on a GPU
    python benchmarks/gpu_throughput.py --model roberta-large --compile    # on a GPU
"""

from __future__ import annotations

import time

T_PROCESS = time.perf_counter()

import argparse  # noqa: E402
import copy  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np
import torch

from common import _cpu_snapshot, quiet, wait_until_idle, write_summary  # noqa: E402
from gpu_report import environment, summarise, title  # noqa: E402
from train_throughput import run_hf, run_nliforge  # noqa: E402

T_IMPORTS = time.perf_counter() - T_PROCESS

# Published shapes (roberta-base / roberta-large config.json); random init, nothing downloaded.
ROBERTA_COMMON = dict(vocab_size=50265, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                      bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5, hidden_act="gelu",
                      hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
SHAPES = {
    "tiny": dict(ROBERTA_COMMON, vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=256),
    "roberta-base": dict(ROBERTA_COMMON, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                         intermediate_size=3072),
    "roberta-large": dict(ROBERTA_COMMON, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                          intermediate_size=4096),
}
N_SPECIAL = 4  # <s> premise </s></s> hypothesis </s>
BOS, PAD, EOS = 0, 1, 2
FIRST_ID = 4   # ids 0-3 are <s> <pad> </s> <unk>

# Dense bf16 tensor-core peak (no sparsity), by substring of torch.cuda.get_device_name(); first match wins.
PEAK_BF16 = (("H100 PCIe", 756e12), ("H100", 989e12), ("H200", 989e12), ("A100", 312e12),
             ("RTX 6000", 130e12))

# nliforge contenders: the same Lightning module and data path with GPU options switched on, each
# one a config override of nliforge-train (README "GPU"):
#   name: (compile.* settings or None, fused AdamW, data.pad_to_multiple_of[, data.static_widths])
GRAPHS = {"dynamic": False, "mode": "reduce-overhead", "regional": True, "full_batches_only": True,
          "recompile_limit": 16}   # preset=gpu_graphs's compile.* (conf/preset/gpu_graphs.yaml)
NLF_VARIANTS = {
    "nliforge": (None, False, None),                      # trainer=gpu before 2026-11-26: eager, foreach AdamW
    "nliforge+fused": (None, True, 8),                    # trainer=gpu now (fused AdamW, widths rounded to 8)
    "nliforge+dyn": (None, True, 8),                      # + the dynamics recorder: a default nliforge-train run
    "nliforge+pad8": (None, False, 8),                    # diagnostic: data.pad_to_multiple_of=8 alone
    "nliforge+fusedonly": (None, True, None),             # diagnostic: model.optimizer.fused=true alone
    "nliforge+compile": ({"dynamic": True}, True, 8),     # + compile.enabled=true compile.dynamic=true
    "nliforge+graphs": ({"dynamic": True, "mode": "reduce-overhead"}, True, 8),  # + compile.mode=reduce-overhead
    "nliforge+graphs32": ({"dynamic": True, "mode": "reduce-overhead"}, True, 32),  # + data.pad_to_multiple_of=32
    # with the dynamics recorder on, as nliforge-train runs them:
    "nliforge+fast": ({"dynamic": True}, True, 8),        # preset=gpu_fast
    "nliforge+static4": (None, True, 8, 4),               # trainer=gpu data.static_widths=4 (eager: the padding's cost)
    "nliforge+graphs4": (GRAPHS, True, 8, 4),             # preset=gpu_graphs (static widths, regional CUDA graphs)
    "nliforge+compiled4": ({**GRAPHS, "mode": None}, True, 8, 4),  # preset=gpu_graphs compile.mode=null (no CUDA graphs)
}
WITH_DYNAMICS = frozenset({"nliforge+dyn", "nliforge+fast", "nliforge+static4", "nliforge+graphs4",
                           "nliforge+compiled4"})   # TrainingDynamicsCallback(mode="in_training") on


def variant(name: str) -> tuple[dict | None, bool, int | None, int | None]:
    compile_settings, fused, multiple, *widths = NLF_VARIANTS[name]
    return compile_settings, fused, multiple, (widths[0] if widths else None)


HF_NAMES = ("hf_A_maxlen", "hf_B_best", "hf_C_compiled")
ALL_CONTENDERS = tuple(NLF_VARIANTS) + HF_NAMES
DEFAULT_CONTENDERS = {"cpu": ("nliforge", "hf_A_maxlen", "hf_B_best"),
                      "cuda": ("nliforge", "nliforge+fused", "nliforge+dyn", "nliforge+compile", "nliforge+graphs",
                               "hf_A_maxlen", "hf_B_best")}


def peak_flops(device_name: str | None, override_tflops: float | None) -> float | None:
    if override_tflops:
        return override_tflops * 1e12
    if not device_name:
        return None
    for key, value in PEAK_BF16:
        if key.lower() in device_name.lower():
            return value
    return None


# --------------------------------------------------------------------------- data
def synthetic_pairs(n: int, vocab_size: int, seed: int) -> list[list[int]]:
    """RoBERTa-format pair ids with a WANLI-like length distribution (see the module docstring)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(np.round(rng.lognormal(np.log(27), 0.45, n)), 8, 128).astype(int)
    out = []
    for total in lengths:
        content = total - N_SPECIAL
        hyp = max(1, int(round(content * rng.uniform(0.25, 0.45))))
        prem = content - hyp
        ids = rng.integers(FIRST_ID, vocab_size, size=content).tolist()
        out.append([BOS] + ids[:prem] + [EOS, EOS] + ids[prem:] + [EOS])
    return out


class PretokenizedTokenizer:
    """What NLIDataModule needs from a tokenizer: `pad_token_id`, and a call on (premises,
    hypotheses) lists. Premise texts are indices into the pre-made ids; hypotheses are ignored."""

    pad_token_id = PAD

    def __init__(self, pairs: list[list[int]]):
        self.pairs = pairs

    def __call__(self, premises, hypotheses=None, truncation=True, max_length=128, **kw):
        ids = [self.pairs[int(p)][:max_length] for p in premises]
        return {"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids]}


def hf_pad_tokenizer():
    """A real PreTrainedTokenizerFast (4 special tokens, pad id 1) for DataCollatorWithPadding's `pad`."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    vocab = {"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": 3}
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="<unk>")),
                                  bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    assert tok.pad_token_id == PAD
    return tok


def hf_dataset(pairs, labels, max_length: int, pad_to_max: bool):
    import datasets

    ids = [p[:max_length] for p in pairs]
    mask = [[1] * len(x) for x in ids]
    if pad_to_max:
        mask = [m + [0] * (max_length - len(m)) for m in mask]
        ids = [x + [PAD] * (max_length - len(x)) for x in ids]
    return datasets.Dataset.from_dict({"input_ids": ids, "attention_mask": mask, "labels": labels})


class TokenCounter:
    """Wraps a collator; records (padded width, real tokens, sum of squared real lengths) per batch in
    collation order. Batches are consumed in that order, so the timed ones are [warmup, warmup+steps)."""

    def __init__(self, collate):
        self.collate, self.batches = collate, []

    def __call__(self, items):
        batch = self.collate(items)
        lens = batch["attention_mask"].sum(1)
        self.batches.append((int(batch["input_ids"].numel()), int(lens.sum()), int((lens * lens).sum())))
        return batch

    def timed(self, warmup: int, steps: int) -> dict:
        sel = self.batches[warmup:warmup + steps]
        assert len(sel) == steps, f"counted {len(sel)} of {steps} timed batches"
        padded, real, sq = (sum(x[i] for x in sel) for i in range(3))
        return {"padded_tokens": padded, "real_tokens": real, "real_len_sq": sq}


# --------------------------------------------------------------------------- models
class ConfigBackbone:
    """One RobertaConfig + initial state; `fresh()` gives an identical new model each run."""

    def __init__(self, shape: dict, seed: int, compile_settings: dict | None = None, device: str = "cpu"):
        from transformers import AutoModelForSequenceClassification, RobertaConfig

        self.config = RobertaConfig(**shape, num_labels=3)
        self.seed, self.compile_settings, self.device = seed, compile_settings, device
        torch.manual_seed(seed)
        with torch.device(device):   # initialised where it trains: seconds less per process on a GPU
            model = AutoModelForSequenceClassification.from_config(self.config)
        self.init_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}  # off the GPU
        self.n_params = sum(p.numel() for p in model.parameters())
        self.n_embedding = sum(p.numel() for n, p in model.named_parameters() if ".embeddings." in n)
        del model

    @property
    def full_batches_only(self) -> bool:   # read by run_nliforge: NLIClassifier.full_batches_only
        return bool((self.compile_settings or {}).get("full_batches_only", False))

    def compiled(self, **settings) -> "ConfigBackbone":
        other = copy.copy(self)
        other.compile_settings = settings
        return other

    def fresh(self):
        from transformers import AutoModelForSequenceClassification

        from nliforge.models.graphs import compile_backbone_model

        torch.manual_seed(self.seed)
        with torch.device(self.device):
            model = AutoModelForSequenceClassification.from_config(self.config)
        model.load_state_dict(self.init_state, strict=True)   # a copy: init_state stays as it was
        if self.compile_settings is not None:  # in place, as nliforge-train's compile.* does
            compile_backbone_model(model, {"enabled": True, **self.compile_settings})
        return model


# --------------------------------------------------------------------------- main
def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=tuple(SHAPES), default="roberta-base")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--n-examples", type=int, default=8192)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=100, help="timed optimizer steps per run")
    p.add_argument("--warmup", type=int, default=10, help="untimed optimizer steps before the clock starts")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--profile-steps", type=int, default=0,
                   help="after the timed rounds, run each contender once more with torch.profiler over this many "
                        "steps after the warm-up; the op tables go to <out>.profile.txt (not timed)")
    p.add_argument("--hf-best-optim", default=None,
                   help="hf_B_best's optimiser; default: the Trainer's own default (adamw_torch_fused on torch >= 2.8). "
                        "The 2026-11-24 H100 table was measured with adamw_torch (no fusion), see benchmarks/README.md")
    p.add_argument("--contenders", nargs="+", choices=ALL_CONTENDERS, default=None,
                   help="default: nliforge, hf_A_maxlen, hf_B_best on CPU; every nliforge variant and hf_A, hf_B on "
                        "cuda. hf_C_compiled (HF Trainer with torch_compile and fused AdamW) is a diagnostic")
    p.add_argument("--compile-backend", default=None,
                   help="torch.compile backend of the compiled contenders (default: inductor); `eager` checks the code "
                        "path without compiling, as nliforge-train's compile.backend=eager (CPU smoke runs)")
    p.add_argument("--compile-cache-dir", default=None,
                   help="inductor's and Triton's on-disk caches for the compiled contenders (compile.cache_dir); "
                        "default: torch's own (/tmp/torchinductor_$USER or $TORCHINDUCTOR_CACHE_DIR)")
    p.add_argument("--peak-tflops", type=float, default=None, help="peak dense bf16 TFLOP/s for MFU (overrides the table)")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (CPU; default: all cores)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-wait", type=float, default=900,
                   help="CPU only: before each run wait up to this many seconds for other processes to go idle (0: never)")
    p.add_argument("--out", default="benchmarks/out/gpu_throughput.json")
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda but torch.cuda.is_available() is False")
    args.bf16 = args.device == "cuda"   # run_nliforge / run_hf read these
    args.max_grad_norm = 0.0
    args.n_examples -= args.n_examples % args.batch_size  # every batch full
    args.contenders = list(args.contenders or DEFAULT_CONTENDERS[args.device])
    if args.hf_best_optim is None:  # "at its best" = as the Trainer comes: its default optimiser
        from transformers import TrainingArguments

        args.hf_best_optim = str(TrainingArguments.default_optim)
    return args


def write_profiles(runners: dict, names: list[str], args) -> dict[str, dict[str, float]]:
    """One extra, untimed run per contender with torch.profiler on; the op tables in one text file.
    Returns each contender's tensor-to-host conversions per step, by calling function."""
    timed_steps, args.steps = args.steps, max(args.profile_steps, 1)
    parts, host_values = [], {}
    try:
        for name in names:
            res, _ = runners[name]()
            host = host_values[name] = res.get("host_values_per_step") or {}
            print(f"{name}: {sum(host.values()):.1f} tensor-to-host conversions per step "
                  f"(a sync where the tensor is on a GPU): {host}", flush=True)
            lines = [f"  {n:7.2f}  {key}" for key, n in host.items()] or ["  none"]
            parts.append(f"===== {name}: {args.profile_steps} steps after {args.warmup} warm-up steps\n"
                         "tensor-to-host conversions per step, by calling function:\n" + "\n".join(lines)
                         + f"\n\n{res.get('profile_table') or '(no table)'}")
    finally:
        args.steps = timed_steps
    path = Path(str(args.out) + ".profile.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(parts) + "\n")
    print(f"wrote {path}", flush=True)
    return host_values


def build_inputs(args) -> dict:
    """The shared inputs of every contender: one backbone's initial weights, the synthetic pairs as
    nliforge's data modules (one per width multiple) and as the Trainer's datasets, and the peak FLOP/s."""
    from nliforge.data.datamodule import NLIDataModule
    from nliforge.data.records import Record

    shape = SHAPES[args.model]
    pairs = synthetic_pairs(args.n_examples, shape["vocab_size"], args.seed)
    label_names = ("entailment", "neutral", "contradiction")
    labels = [i % 3 for i in range(args.n_examples)]
    np.random.default_rng(args.seed + 1).shuffle(labels)
    records = [Record(f"syn-{i:06d}", str(i), "-", label_names[labels[i]], "synthetic") for i in range(len(pairs))]
    # nliforge's real code path: EncodedNLI via the tokenizer call, LengthGroupedBatchSampler, PadCollator.
    dms = {}
    for key in {variant(c)[2:] for c in args.contenders if c in NLF_VARIANTS}:
        dm = NLIDataModule(records, PretokenizedTokenizer(pairs), batch_size=args.batch_size,
                           max_length=args.max_length, seed=args.seed, group_by_length=True,
                           pad_to_multiple_of=key[0], static_widths=key[1])
        if key[1] is not None:
            print(f"data.static_widths={key[1]}: batch widths {dm.pad_buckets}", flush=True)
        dm.collate = TokenCounter(dm.collate)
        dms[key] = dm
    lengths = np.array([len(p) for p in pairs])
    dist = {"mean": float(lengths.mean()), "p50": float(np.median(lengths)),
            "p95": float(np.percentile(lengths, 95)), "max": int(lengths.max())}
    device_name = torch.cuda.get_device_name(0) if args.device == "cuda" else platform.processor() or "cpu"
    hf = any(c in HF_NAMES for c in args.contenders)   # the Trainer's datasets only where it runs
    return {"shape": shape, "bb": ConfigBackbone(shape, args.seed, device=args.device), "dms": dms, "dist": dist,
            "data_a": hf_dataset(pairs, labels, args.max_length, pad_to_max=True) if hf else None,
            "data_b": hf_dataset(pairs, labels, args.max_length, pad_to_max=False) if hf else None,
            "device_name": device_name,
            "peak": peak_flops(device_name if args.device == "cuda" else None, args.peak_tflops)}


def make_runners(inputs: dict, args) -> dict:
    """Each contender as a function of no arguments that trains once and returns (result, token counts)."""
    from transformers import DataCollatorWithPadding, default_data_collator

    bb = inputs["bb"]

    def nlf(name):
        settings, fused, multiple, widths = variant(name)
        if settings is not None and args.compile_backend:   # a backend replaces the mode (torch takes one)
            settings = {**settings, "backend": args.compile_backend, "mode": None}
        backbone = bb if settings is None else bb.compiled(**settings)
        dm = inputs["dms"][(multiple, widths)]

        def go():
            dm.collate.batches.clear()
            res = run_nliforge(backbone, dm, args, dynamics=name in WITH_DYNAMICS,
                               opt_kwargs={"fused": True} if fused else None)
            return res, dm.collate.timed(args.warmup, args.steps)
        return go

    def hf(dataset, collate, group, extra=None):
        def go():
            counter = TokenCounter(collate)
            res = run_hf(bb, dataset, counter, args, group_by_length=group, extra_args=extra)
            return res, counter.timed(args.warmup, args.steps)
        return go

    data_a, data_b = inputs["data_a"], inputs["data_b"]
    hf_runners = {
        "hf_A_maxlen": lambda: hf(data_a, default_data_collator, False),
        "hf_B_best": lambda: hf(data_b, DataCollatorWithPadding(hf_pad_tokenizer()), True, {"optim": args.hf_best_optim}),
        # diagnostic: the Trainer's own speed switches (torch_compile, fused AdamW, widths rounded to 8)
        "hf_C_compiled": lambda: hf(data_b, DataCollatorWithPadding(hf_pad_tokenizer(), pad_to_multiple_of=8), True,
                                    {"optim": "adamw_torch_fused", "torch_compile": True}),
    }
    return {c: nlf(c) if c in NLF_VARIANTS else hf_runners[c]() for c in args.contenders}


def compile_counters() -> dict[str, int]:
    """torch.compile's counters of this process (`torch._dynamo.utils.counters`): graphs compiled,
    recompiles, graph breaks, and the FX graph / AOTAutograd cache hits and misses."""
    from torch._dynamo.utils import counters

    out = {f"graph_break/{k}"[:120]: v for k, v in counters["graph_break"].items()}
    out.update({f"recompiles/{k}"[:120]: v for k, v in counters["recompiles"].items()})
    for group, keys in (("stats", ("unique_graphs", "calls_captured")),
                        ("inductor", ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass")),
                        ("aot_autograd", ("autograd_cache_hit", "autograd_cache_miss", "total"))):
        out.update({f"{group}/{k}": counters[group][k] for k in keys if counters[group].get(k)})
    return out


def timed_run(runner, args, threads: int) -> dict:
    """One training run of one contender, with its rates and (on CPU) the share of the CPU that other
    processes took meanwhile."""
    if args.device == "cpu" and args.max_wait > 0:
        wait_until_idle(args.max_wait)
    torch.set_num_threads(threads)
    gc.collect()
    if args.device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    before = compile_counters()
    (busy0, self0), w0 = _cpu_snapshot(), time.perf_counter()
    res, tok = runner()
    (busy1, self1), w1 = _cpu_snapshot(), time.perf_counter()
    res.update(tok)
    after = compile_counters()
    res["compile_counters"] = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    res["foreign_cpu_frac"] = ((busy1 - busy0) - (self1 - self0)) / ((w1 - w0) * (os.cpu_count() or 1))
    res["real_tokens_per_s"] = tok["real_tokens"] / res["wall_s"]
    res["padded_tokens_per_s"] = tok["padded_tokens"] / res["wall_s"]
    res["real_len_sq_per_s"] = tok["real_len_sq"] / res["wall_s"]
    res["peak_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30 if args.device == "cuda" else None
    return res


def run_rounds(runners: dict, args, threads: int) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """args.rounds rounds over every contender, the order rotating each round; a contender that fails
    is reported and skipped, so the others' numbers are kept."""
    names = list(runners)
    runs: dict[str, list[dict]] = {c: [] for c in names}
    failed: dict[str, str] = {}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            try:
                res = timed_run(runners[name], args, threads)
            except Exception as exc:  # one failing contender must not lose the others' numbers
                print(f"  round {r + 1}/{args.rounds} {name:<16} FAILED: {type(exc).__name__}: {exc}"[:2000], flush=True)
                failed.setdefault(name, repr(exc)[:2000])
                continue
            runs[name].append(res)
            extra = (f"peak mem {res['peak_mem_gib']:.1f} GiB" if args.device == "cuda"
                     else f"other processes {max(res['foreign_cpu_frac'], 0):.0%} CPU")
            loss = "n/a" if res.get("mean_loss_timed") is None else f"{res['mean_loss_timed']:.3f}"
            if res["compile_counters"]:
                print(f"  compile counters: {res['compile_counters']}", flush=True)
            print(f"  round {r + 1}/{args.rounds} {name:<16} {res['examples_per_s']:8.1f} ex/s "
                  f"{res['real_tokens_per_s']:10.0f} tok/s ({res['steps']} steps in {res['wall_s']:.2f}s, "
                  f"start-up {res['startup_s']:.1f}s, step median {1e3 * res['median_step_s']:.1f} max "
                  f"{1e3 * res['max_step_s']:.1f} ms, loss {loss}, "
                  f"pad fill {res['real_tokens'] / res['padded_tokens']:.0%}, {extra})", flush=True)
    return runs, failed


def main(argv=None) -> dict:
    args = parse_args(argv)
    import lightning.pytorch  # noqa: F401  (imported before quiet() so its loggers stay quiet)
    import transformers  # noqa: F401
    quiet()
    threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    if args.compile_cache_dir:
        from nliforge.models.graphs import use_cache_dir

        print(f"compile cache {use_cache_dir(args.compile_cache_dir)}: "
              f"{sum(1 for p in Path(args.compile_cache_dir).rglob('*') if p.is_file())} files before this run", flush=True)
    t = time.perf_counter()
    inputs = build_inputs(args)
    bb, dist, peak = inputs["bb"], inputs["dist"], inputs["peak"]
    print(f"setup {time.perf_counter() - t:.1f}s: model={args.model} ({bb.n_params / 1e6:.1f}M params, "
          f"{bb.n_embedding / 1e6:.1f}M in embeddings), {args.n_examples} pairs, tokens/pair mean {dist['mean']:.1f} "
          f"p50 {dist['p50']:.0f} p95 {dist['p95']:.0f} max {dist['max']}; device={args.device} "
          f"({inputs['device_name']}){' bf16' if args.bf16 else ' fp32'}, "
          f"peak {'n/a' if peak is None else f'{peak / 1e12:.0f} TFLOP/s'}", flush=True)
    runners = make_runners(inputs, args)
    t_all = time.perf_counter()
    runs, failed = run_rounds(runners, args, threads)
    host_values = write_profiles(runners, list(runners), args) if args.profile_steps else None
    summary, lines = summarise(runs, NLF_VARIANTS, bb.n_params, bb.config, peak, args)
    summary.update({"failed": failed, "host_values_per_step": host_values})
    env = environment(args, inputs["device_name"], threads, peak)
    table = title(args, env, dist, time.perf_counter() - t_all) + "\n" + "\n".join(lines)
    print("\n" + table)
    summary.update({"args": vars(args), "table": table, "n_params": bb.n_params,
                    "n_embedding_params": bb.n_embedding, "model_shape": inputs["shape"],
                    "tokens_per_pair": dist, "env": env})
    print(f"wrote {write_summary(summary, args.out)}")
    print(f"process wall {time.perf_counter() - T_PROCESS:.1f} s ({T_IMPORTS:.1f} s of it imports)", flush=True)
    return summary


if __name__ == "__main__":
    summary = main()
    if summary["args"]["device"] == "cuda":   # everything is written: skip the CUDA and compile-worker tear-down
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
