"""Which CPU kernel path a process takes, and what it does to the numbers and the time of a training step.

    python benchmarks/kernel_paths.py                      # this process's path: as the environment sets it
    MKL_CBWR=COMPATIBLE python benchmarks/kernel_paths.py  # one variable changed
    MKL_VERBOSE=1 ONEDNN_VERBOSE=1 python benchmarks/kernel_paths.py --steps 1 --timed 0   # which library runs what

The demo's model shape (a RoBERTa of 2 layers, hidden 128, vocabulary 2,000; `--model lm`: the WANLI demo's
prompt LM, a GPT-2 of 2 layers, width 128, vocabulary 2,000, batches of 16 x 384 tokens) trained `--steps` steps
on one fixed batch at one thread: prints torch's CPU capability, a sha256 of the parameters afterwards (equal
hashes: the same floats bit for bit) and the CPU seconds of `--timed` further steps (docs/reproducibility.md).
The variables (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, MKL_CBWR) must be set before Python starts."""

from __future__ import annotations

import argparse
import hashlib
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel, RobertaConfig, RobertaForSequenceClassification


def classifier_step():
    cfg = RobertaConfig(vocab_size=2000, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=256, max_position_embeddings=130, num_labels=3)
    model = RobertaForSequenceClassification(cfg)
    gen = torch.Generator().manual_seed(1)
    ids, labels = torch.randint(3, 2000, (32, 40), generator=gen), torch.randint(0, 3, (32,), generator=gen)
    return model, lambda: model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels).loss


def lm_step(width: int = 384, batch: int = 16):
    cfg = GPT2Config(vocab_size=2000, n_positions=width, n_embd=128, n_layer=2, n_head=4, resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(cfg)
    ids = torch.randint(3, 2000, (batch, width), generator=torch.Generator().manual_seed(1))
    return model, lambda: model(input_ids=ids, labels=ids).loss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=3, help="training steps before the hash")
    ap.add_argument("--timed", type=int, default=60, help="further steps timed (CPU seconds)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", choices=("classifier", "lm"), default="classifier")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model, loss = classifier_step() if args.model == "classifier" else lm_step()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step() -> None:
        loss().backward()
        opt.step()
        opt.zero_grad()

    for _ in range(args.steps):
        step()
    digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()[:16]
    start = time.process_time()
    for _ in range(args.timed):
        step()
    print(f"{args.model}: torch {torch.__version__}, capability {torch.backends.cpu.get_cpu_capability()}, "
          f"{args.threads} thread(s): parameters sha256 {digest}; {args.timed} steps {time.process_time() - start:.2f} CPU s")


if __name__ == "__main__":
    main()
