"""Local generation: generated tokens/s of SmolLM2-135M-Instruct, the same prompts and sampling, three ways.

Contenders, in one run (same WANLI Fig. 2 prompts built from the synthetic world: 4 same-label examples
+ the opening of item 5; n=1 per request, max_tokens, temperature 1.0, top_p 0.5, stop "\\n\\n"):

* ``hf_local``     nliforge's `hf_local` backend (batched: `--batch-size` requests per forward batch,
                   left padding, KV cache, finished rows pruned) through the exactly-once runner.
* ``sequential``   plain `transformers` `model.generate`, one prompt at a time (do_sample, top_p, the
                   same stop string): what a user writes first.
* ``vllm``         a real vLLM server (CPU build, bf16, `nliforge-vllm`), through nliforge's runner
                   (`openai_completions`, `--concurrency` requests in flight).

tokens/s = completion tokens (as each contender counts them: the tokenizer's ids or vLLM's usage) /
wall time of the generation call (model loading and the server's start are outside the clock; the
vLLM run's cache is fresh). Target: hf_local >= 0.5 x vLLM.

    NLIFORGE_VLLM_VENV=... python benchmarks/local_generation.py --prompts 48 --max-tokens 48
    python benchmarks/local_generation.py --quick --skip vllm      # smoke
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import torch

from nliforge.generation.backends.hf_local import HFLocal
from nliforge.generation.backends.openai_api import OpenAICompletions
from nliforge.generation.cache import ResponseCache
from nliforge.pipelines.wanli.prompts import wanli_prompt
from nliforge.generation.runner import RunnerSettings, run_requests
from nliforge.generation.types import GenerationRequest, Response, Sampling
from nliforge.generation.packaged import packaged_folder
from nliforge.world import WorldConfig, generate_split

MODEL = "smollm2-135m-instruct"


def make_requests(n: int, max_tokens: int, seed: int = 0) -> list[GenerationRequest]:
    """n WANLI prompts (4 same-label world pairs each), one sample per request, distinct seeds."""
    records = generate_split(WorldConfig(n_train=2000, seed=seed), "train")
    rng = random.Random(seed)
    by_label: dict[str, list] = {}
    for r in records:
        by_label.setdefault(r.label, []).append((r.premise, r.hypothesis))
    labels = sorted(by_label)
    sampling = Sampling(max_tokens=max_tokens, temperature=1.0, top_p=0.5, stop=("\n\n",))
    out = []
    for i in range(n):
        label = labels[i % len(labels)]
        prompt = wanli_prompt(rng.sample(by_label[label], 4), label)
        out.append(GenerationRequest(f"p{i}", prompt, sampling, seed=1000 + i))
    return out


def run_hf_local(requests, batch_size: int) -> tuple[int, float]:
    backend = HFLocal(MODEL, batch_size=batch_size)
    with tempfile.TemporaryDirectory() as tmp, ResponseCache(Path(tmp) / "c.sqlite") as cache:
        start = time.perf_counter()
        answers = run_requests(backend, requests, cache, "bench", RunnerSettings(progress=False))
        wall = time.perf_counter() - start
    return sum(a.completion_tokens for a in answers.values() if isinstance(a, Response)), wall


def run_sequential(requests) -> tuple[int, float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = packaged_folder(MODEL)
    tok = AutoTokenizer.from_pretrained(folder)
    lm = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    tokens, start = 0, time.perf_counter()
    for req in requests:
        ids = tok(req.prompt, return_tensors="pt")
        torch.manual_seed(req.seed)
        with torch.inference_mode():
            out = lm.generate(**ids, do_sample=True, temperature=1.0, top_p=0.5, top_k=0,
                              max_new_tokens=req.sampling.max_tokens, stop_strings=list(req.sampling.stop),
                              tokenizer=tok, pad_token_id=tok.eos_token_id)
        tokens += out.shape[1] - ids["input_ids"].shape[1]
    return tokens, time.perf_counter() - start


def run_vllm(requests, concurrency: int, port: int) -> tuple[int, float]:
    from nliforge.serving.vllm import ServerSettings, VLLMServer

    with tempfile.TemporaryDirectory() as tmp:
        with VLLMServer(ServerSettings(port=port), Path(tmp) / "server.log") as server:
            backend = OpenAICompletions(MODEL, base_url=server.base_url, api_key_env=None, timeout_s=600)
            warm = [GenerationRequest("warm", requests[0].prompt, requests[0].sampling, seed=1)]
            with ResponseCache(Path(tmp) / "w.sqlite") as cache:  # first request pays one-off set-up
                run_requests(backend, warm, cache, "warm", RunnerSettings(progress=False, timeout_s=600))
            with ResponseCache(Path(tmp) / "c.sqlite") as cache:
                start = time.perf_counter()
                answers = run_requests(backend, requests, cache, "bench", RunnerSettings(
                    concurrency=concurrency, progress=False, timeout_s=600))
                wall = time.perf_counter() - start
    return sum(a.completion_tokens for a in answers.values() if isinstance(a, Response)), wall


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=48)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--batch-size", type=int, default=16, help="hf_local requests per forward batch")
    ap.add_argument("--concurrency", type=int, default=32, help="vLLM requests in flight")
    ap.add_argument("--sequential-prompts", type=int, default=12, help="sequential is slow: a subset, rate extrapolated")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--skip", nargs="*", default=[], choices=["hf_local", "sequential", "vllm"])
    ap.add_argument("--quick", action="store_true", help="4 prompts, 8 tokens: a smoke test")
    args = ap.parse_args(argv)
    if args.quick:
        args.prompts, args.max_tokens, args.sequential_prompts = 4, 8, 2
    requests = make_requests(args.prompts, args.max_tokens)
    runs = {"hf_local": lambda: run_hf_local(requests, args.batch_size),
            "sequential": lambda: run_sequential(requests[:args.sequential_prompts]),
            "vllm": lambda: run_vllm(requests, args.concurrency, args.port)}
    rates = {}
    print(f"torch threads {torch.get_num_threads()}, {args.prompts} prompts, max_tokens {args.max_tokens}", flush=True)
    for name, fn in runs.items():
        if name in args.skip:
            continue
        tokens, wall = fn()
        rates[name] = tokens / wall
        print(f"{name:<11} {tokens:>6} tokens in {wall:7.1f} s: {rates[name]:7.1f} tokens/s", flush=True)
    if "hf_local" in rates and "vllm" in rates:
        print(f"hf_local / vllm = {rates['hf_local'] / rates['vllm']:.2f}x (target >= 0.5x)")
    if "hf_local" in rates and "sequential" in rates:
        print(f"hf_local / sequential = {rates['hf_local'] / rates['sequential']:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
