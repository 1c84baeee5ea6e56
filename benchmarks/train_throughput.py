"""Training throughput: nliforge (Lightning) vs. the Hugging Face Trainer, plus the cost of
recording training dynamics.

Contenders, all in one process, same model config and initial weights, same tokenizer, same
synthetic data, same batch size, same optimiser (torch AdamW, lr 1e-4, weight decay 0.01 off
biases/LayerNorm, linear decay, no warmup, no gradient clipping unless --max-grad-norm):

* ``nliforge``        NLIClassifier + NLIDataModule (pads each batch to its longest item)
                      + lightning.Trainer (logger=False, no checkpointing, no progress bar).
* ``nliforge+dyn``    the same with TrainingDynamicsCallback(mode="in_training").
* ``hf_A_maxlen``     transformers.Trainer as run_glue-style seed repositories ran it: every
                      pair padded to max_length=128, default_data_collator.
* ``hf_B_dynamic``    transformers.Trainer at its best: DataCollatorWithPadding and
                      train_sampling_strategy="group_by_length" (the old group_by_length=True).
* ``hf_dyn_random``   diagnostic only: B without length grouping, i.e. the same batching as
                      nliforge (random batches padded to their longest item).

Timing: a clock starts when optimizer step ``--warmup`` has finished and stops when training
ends (after the last of ``--steps`` further steps and any end-of-epoch/end-of-training hook,
e.g. the dynamics parquet write).  examples/s = steps * batch_size / that wall time.  Tokenisation,
model construction and Trainer construction are outside the clock for every contender.
Each contender runs once per round, the order rotating between rounds; the median is reported.

    python benchmarks/train_throughput.py --model tiny
    python benchmarks/train_throughput.py --model minilm --steps 20 --warmup 3 --n-examples 2048
"""

from __future__ import annotations

import argparse
import copy
import gc
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

from common import Clock, _cpu_snapshot, _timed, quiet, synthetic_records, wait_until_idle, write_summary  # noqa: E402

# --------------------------------------------------------------------------- models
class Backbone:
    """One tokenizer + config + initial state; `fresh()` gives an identical new model each run."""

    def __init__(self, kind: str, records, seed: int):
        from nliforge.models.backbone import build_backbone

        torch.manual_seed(seed)
        texts = [r.premise for r in records] + [r.hypothesis for r in records]
        model, self.tokenizer, perm = build_backbone({"kind": kind}, texts if kind == "tiny" else ())
        assert perm is None, "benchmark assumes no label permutation"
        self.config = model.config
        self.init_state = copy.deepcopy(model.state_dict())
        self.n_params = sum(p.numel() for p in model.parameters())
        self.seed = seed
        del model

    def fresh(self):
        from transformers import AutoModelForSequenceClassification

        torch.manual_seed(self.seed)
        model = AutoModelForSequenceClassification.from_config(self.config)
        model.load_state_dict(self.init_state, strict=True)
        return model


def run_nliforge(bb: Backbone, dm, args, dynamics: bool, opt_kwargs: dict | None = None) -> dict:
    import lightning as L
    from lightning.pytorch import Callback

    from nliforge.models.classifier import NLIClassifier

    clock = Clock(args.warmup, args.device, getattr(args, "profile_steps", 0))

    class LightningClock(Callback):
        def on_train_start(self, trainer, pl_module):
            clock.train_start()

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            clock.widths.append(int(batch["input_ids"].shape[1]))
            clock.step_done(trainer.global_step)
            if clock.t0 is not None and isinstance(outputs, dict) and "loss" in outputs:
                clock.losses.append(outputs["loss"].detach())

        def on_train_end(self, trainer, pl_module):
            clock.train_done()

    tmp = Path(tempfile.mkdtemp(prefix="nlf_bench_"))
    callbacks = [LightningClock()]
    if dynamics:
        from nliforge.cartography import TrainingDynamicsCallback

        # Its epoch-end parquet write happens before on_train_end, i.e. inside the timed window.
        dyn = TrainingDynamicsCallback(tmp / "dynamics", mode="in_training")
        # Also measure the callback's own hook time directly: a low-noise estimate of its cost.
        for hook in ("on_train_batch_end", "on_train_epoch_end"):
            setattr(dyn, hook, _timed(getattr(dyn, hook), clock))
        callbacks.insert(0, dyn)
    module = NLIClassifier(bb.fresh(), optimizer=partial(torch.optim.AdamW, lr=args.lr, **(opt_kwargs or {})),
                           weight_decay=args.weight_decay, warmup_ratio=0.0)
    module.full_batches_only = bool(getattr(bb, "full_batches_only", False))   # compile.full_batches_only
    trainer = L.Trainer(
        accelerator="gpu" if args.device == "cuda" else "cpu", devices=1,
        precision="bf16-mixed" if args.bf16 else "32-true",
        max_steps=args.warmup + args.steps, max_epochs=-1,
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0, log_every_n_steps=20, deterministic=False,
        gradient_clip_val=args.max_grad_norm or None, default_root_dir=str(tmp), callbacks=callbacks,
    )
    try:
        trainer.fit(module, datamodule=dm)
        res = clock.result(args.batch_size)
        if dynamics:
            files = sorted(p.name for p in (tmp / "dynamics").glob("epoch_*.parquet"))
            assert files, "dynamics callback wrote no epoch file"
            res["dynamics_files"] = files
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_hf(bb: Backbone, dataset, collator, args, group_by_length: bool, extra_args: dict | None = None) -> dict:
    from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

    clock = Clock(args.warmup, args.device, getattr(args, "profile_steps", 0))

    class HFClock(TrainerCallback):
        def on_train_begin(self, targs, state, control, **kw):
            clock.train_start()

        def on_step_end(self, targs, state, control, **kw):
            clock.step_done(state.global_step)

        def on_train_end(self, targs, state, control, **kw):
            clock.train_done()

    def collate(features):
        batch = collator(features)
        clock.widths.append(int(batch["input_ids"].shape[1]))
        return batch

    tmp = tempfile.mkdtemp(prefix="hf_bench_")
    settings = dict(
        output_dir=tmp, max_steps=args.warmup + args.steps, per_device_train_batch_size=args.batch_size,
        learning_rate=args.lr, weight_decay=args.weight_decay, lr_scheduler_type="linear", warmup_steps=0,
        optim="adamw_torch", max_grad_norm=args.max_grad_norm, seed=args.seed,
        eval_strategy="no", save_strategy="no", logging_strategy="no", report_to=[],
        disable_tqdm=True, dataloader_num_workers=0, dataloader_pin_memory=args.device == "cuda",
        use_cpu=args.device == "cpu", bf16=args.bf16,
        train_sampling_strategy="group_by_length" if group_by_length else "random",
    )
    targs = TrainingArguments(**{**settings, **(extra_args or {})})  # extra_args: e.g. a fused optimiser, torch_compile
    trainer = Trainer(model=bb.fresh(), args=targs, train_dataset=dataset, data_collator=collate,
                      callbacks=[HFClock()])
    trainer.remove_callback(PrinterCallback)  # only prints the final metrics dict
    try:
        trainer.train()
        return clock.result(args.batch_size)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- main
def hf_dataset(tokenizer, records, max_length: int, pad_to_max: bool):
    import datasets

    from nliforge.data.labels import LABEL2ID

    enc = tokenizer([r.premise for r in records], [r.hypothesis for r in records], truncation=True,
                    max_length=max_length, padding="max_length" if pad_to_max else False)
    cols = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    cols["labels"] = [LABEL2ID[r.label] for r in records]
    return datasets.Dataset.from_dict(cols)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=("tiny", "minilm"), default="tiny")
    p.add_argument("--n-examples", type=int, default=8192)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--steps", type=int, default=200, help="timed optimizer steps per run")
    p.add_argument("--warmup", type=int, default=10, help="untimed optimizer steps before the clock starts")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=0.0, help="0 = no clipping (nliforge's default)")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads for all runs (default: all cores)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--bf16", action="store_true", help="bf16-mixed (Lightning) / bf16=True (HF); GPU only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-wait", type=float, default=900,
                   help="before each CPU run wait up to this many seconds for other processes to go idle (0: never)")
    p.add_argument("--only", nargs="*", default=None, help="subset of contenders (debugging)")
    p.add_argument("--out", default="benchmarks/out/train_throughput.json")
    args = p.parse_args(argv)
    if args.bf16 and args.device != "cuda":
        p.error("--bf16 is for --device cuda")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda but torch.cuda.is_available() is False")
    args.n_examples -= args.n_examples % args.batch_size  # every batch full
    return args


CONTENDERS = ("nliforge", "nliforge+dyn", "hf_A_maxlen", "hf_B_dynamic", "hf_dyn_random")


def main(argv=None) -> dict:
    args = parse_args(argv)
    import lightning.pytorch  # noqa: F401  (imported before quiet() so its loggers stay quiet)
    import transformers  # noqa: F401
    quiet()
    threads = args.threads or os.cpu_count() or 1
    torch.set_num_threads(threads)
    from transformers import DataCollatorWithPadding, default_data_collator

    from nliforge.data.datamodule import NLIDataModule

    t = time.perf_counter()
    records = synthetic_records(args.n_examples, args.seed)
    bb = Backbone(args.model, records, args.seed)
    dm = NLIDataModule(records, bb.tokenizer, batch_size=args.batch_size, max_length=args.max_length, seed=args.seed)
    data_a = hf_dataset(bb.tokenizer, records, args.max_length, pad_to_max=True)
    data_b = hf_dataset(bb.tokenizer, records, args.max_length, pad_to_max=False)
    lengths = np.array([len(x) for x in dm.train_set.encodings["input_ids"]])
    print(f"setup {time.perf_counter() - t:.1f}s: model={args.model} ({bb.n_params / 1e6:.2f}M params), "
          f"{len(records)} pairs, tokens/pair mean {lengths.mean():.1f} median {np.median(lengths):.0f} "
          f"p95 {np.percentile(lengths, 95):.0f} max {lengths.max()}, truncated@{args.max_length}: "
          f"{(lengths >= args.max_length).mean():.2%}; threads={torch.get_num_threads()}, device={args.device}"
          f"{' bf16' if args.bf16 else ' fp32'}", flush=True)

    runners = {
        "nliforge": lambda: run_nliforge(bb, dm, args, dynamics=False),
        "nliforge+dyn": lambda: run_nliforge(bb, dm, args, dynamics=True),
        "hf_A_maxlen": lambda: run_hf(bb, data_a, default_data_collator, args, group_by_length=False),
        "hf_B_dynamic": lambda: run_hf(bb, data_b, DataCollatorWithPadding(bb.tokenizer), args, group_by_length=True),
        # Diagnostic, not a target: B without length grouping = the same batching as nliforge
        # (random batches padded to their longest item), so the gap to it is framework overhead.
        "hf_dyn_random": lambda: run_hf(bb, data_b, DataCollatorWithPadding(bb.tokenizer), args, group_by_length=False),
    }
    names = [c for c in CONTENDERS if args.only is None or c in args.only]
    runs: dict[str, list[dict]] = {c: [] for c in names}
    t_all = time.perf_counter()
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            if args.device == "cpu" and args.max_wait > 0:
                wait_until_idle(args.max_wait)
            torch.set_num_threads(threads)
            gc.collect()
            (busy0, self0), w0 = _cpu_snapshot(), time.perf_counter()
            res = runners[name]()
            (busy1, self1), w1 = _cpu_snapshot(), time.perf_counter()
            res["foreign_cpu_frac"] = ((busy1 - busy0) - (self1 - self0)) / ((w1 - w0) * (os.cpu_count() or 1))
            runs[name].append(res)
            print(f"  round {r + 1}/{args.rounds} {name:<13} {res['examples_per_s']:8.1f} ex/s "
                  f"({res['steps']} steps in {res['wall_s']:.2f}s, mean width {res['mean_batch_width']:.1f}, "
                  f"threads {res['threads_in_loop']}, other processes {max(res['foreign_cpu_frac'], 0):.0%} CPU)", flush=True)

    med = {c: statistics.median(x["examples_per_s"] for x in runs[c]) for c in names}
    summary = {"contenders": {}}
    lines = [f"{'contender':<14}{'examples/s':>12}{'vs A':>8}{'vs B':>8}{'mean width':>12}"]
    for c in names:
        vs_a = med[c] / med["hf_A_maxlen"] if "hf_A_maxlen" in med else math.nan
        vs_b = med[c] / med["hf_B_dynamic"] if "hf_B_dynamic" in med else math.nan
        width = statistics.median(x["mean_batch_width"] for x in runs[c])
        summary["contenders"][c] = {"examples_per_s_median": med[c], "ratio_vs_A": vs_a, "ratio_vs_B": vs_b,
                                    "runs": runs[c]}
        lines.append(f"{c:<14}{med[c]:>12.1f}{vs_a:>7.2f}x{vs_b:>7.2f}x{width:>12.1f}")
    if "nliforge" in med and "nliforge+dyn" in med:
        overhead = (med["nliforge"] / med["nliforge+dyn"] - 1) * 100
        direct = statistics.median(100 * x["dynamics_hook_s"] / (x["wall_s"] - x["dynamics_hook_s"])
                                   for x in runs["nliforge+dyn"])
        summary["dynamics_overhead_pct"] = overhead
        summary["dynamics_hook_overhead_pct"] = direct
        lines.append(f"dynamics overhead (in_training): {overhead:+.2f}% from the medians above, "
                     f"{direct:.2f}% time inside the callback's hooks (target <= 3%)")
    if "nliforge" in med and "hf_A_maxlen" in med and "hf_B_dynamic" in med:
        a, b = med["nliforge"] / med["hf_A_maxlen"], med["nliforge"] / med["hf_B_dynamic"]
        lines.append(f"targets: nliforge/A = {a:.2f}x (>= 1.3: {'met' if a >= 1.3 else 'MISSED'}), "
                     f"nliforge/B = {b:.2f}x (>= 1.0: {'met' if b >= 1.0 else 'MISSED'})")
    contended = [(c, i + 1) for c in names for i, x in enumerate(runs[c]) if x["foreign_cpu_frac"] > 0.05]
    if contended:
        lines.append(f"WARNING: other processes used > 5% of the CPU during {len(contended)} run(s): "
                     + ", ".join(f"{c} round {i}" for c, i in contended))
    table = "\n".join(lines)
    print(f"\nmedian of {args.rounds} rounds, {args.steps} timed steps x batch {args.batch_size} "
          f"(after {args.warmup} warm-up steps); benchmark wall {time.perf_counter() - t_all:.0f}s\n{table}")

    import lightning
    import transformers

    summary.update({
        "args": vars(args), "table": table, "n_params": bb.n_params,
        "tokens_per_pair": {"mean": float(lengths.mean()), "median": float(np.median(lengths)),
                            "p95": float(np.percentile(lengths, 95)), "max": int(lengths.max())},
        "env": {"python": sys.version.split()[0], "torch": torch.__version__, "lightning": lightning.__version__,
                "transformers": transformers.__version__, "platform": platform.platform(),
                "cpu_count": os.cpu_count(), "threads": threads,
                "cuda": torch.cuda.get_device_name(0) if args.device == "cuda" else None},
    })
    print(f"wrote {write_summary(summary, args.out)}")
    return summary


if __name__ == "__main__":
    main()
