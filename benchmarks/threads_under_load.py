"""Tiny-model training speed beside a competing CPU load: nliforge's thread sizing vs the old behaviour.

Issue 24: on a machine where other processes compete for the cores, tiny-model training ran ~100x
slower than idle. `num_threads` (null: the cores in os.sched_getaffinity(0)) now sizes torch's and
the tokenizers' thread pools at the start of a run (nliforge.utils.threads). This script measures it.

`--load N` busy-loop processes (pure Python, unpinned) run for the whole measurement. Each contender
is a fresh subprocess that sets its CPU affinity, sizes the pools, builds the tiny classifier
(conf/model/tiny.yaml) and trains it with AdamW on fixed batches of synthetic pairs (batch 32,
padded to the batch's longest), without OMP_NUM_THREADS in its environment; after `--warmup` steps it counts optimizer steps for `--seconds`:

* ``affinity {0}, default``      the process may use core 0 only (a Slurm cgroup, taskset), and
                                 num_threads=null gives 1 thread.
* ``affinity {0}, all cores``    the same allowance with os.cpu_count() threads: what a torch or
                                 tokenizers build that counts the machine's cores does (oversubscribed).
* ``all cores, default``         no affinity limit: num_threads=null = every core.
* ``all cores, num_threads=1``   the same with one thread.

Contenders alternate over `--rounds`; the median steps/s is reported with the ratios.

    OMP_NUM_THREADS=1 python benchmarks/threads_under_load.py --load 2 --seconds 8 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTENDERS = {   # name: (affinity, num_threads); "cpu_count" = os.cpu_count(), None = nliforge's default
    "affinity {0}, default": ({0}, None),
    "affinity {0}, all cores": ({0}, "cpu_count"),
    "all cores, default": (None, None),
    "all cores, num_threads=1": (None, 1),
}


def busy_loop() -> None:
    """A competing process: spins until killed."""
    while True:
        pass


def worker(affinity: list[int] | None, threads, warmup: int, seconds: float) -> dict:
    """Train the tiny classifier in this process; return steps/s and the pool size used."""
    if affinity is not None:
        os.sched_setaffinity(0, affinity)
    import torch
    import torch.nn.functional as F
    from hydra import compose, initialize_config_dir

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from common import synthetic_records
    from nliforge.models.backbone import build_backbone
    from nliforge.utils.cli import CONF_DIR
    from nliforge.utils.threads import set_num_threads

    n = set_num_threads(os.cpu_count() if threads == "cpu_count" else threads)
    with initialize_config_dir(config_dir=CONF_DIR, version_base="1.3"):
        cfg = compose("train", overrides=["model=tiny"])
    records = synthetic_records(512, seed=0)
    model, tokenizer, _ = build_backbone(cfg.model.backbone, [t for r in records for t in (r.premise, r.hypothesis)])
    label = {"entailment": 0, "neutral": 1, "contradiction": 2}
    batches = []
    for i in range(0, len(records), 32):
        chunk = records[i:i + 32]
        enc = tokenizer([r.premise for r in chunk], [r.hypothesis for r in chunk], padding=True,
                        truncation=True, max_length=128, return_tensors="pt")
        batches.append((dict(enc), torch.tensor([label[r.label] for r in chunk])))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    steps, start = 0, None
    while start is None or time.perf_counter() - start < seconds:
        enc, y = batches[steps % len(batches)]
        loss = F.cross_entropy(model(**enc).logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
        if start is None and steps == warmup:
            start, steps = time.perf_counter(), 0
    return {"threads": n, "steps_per_s": steps / (time.perf_counter() - start)}


def run_contender(name: str, args) -> dict:
    affinity, threads = CONTENDERS[name]
    spec = json.dumps([sorted(affinity) if affinity else None, threads, args.warmup, args.seconds])
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "RAYON_NUM_THREADS")}
    out = subprocess.run([sys.executable, __file__, "--worker", spec], capture_output=True, text=True,
                         env={**env, "PYTHONPATH": str(ROOT / "src")}, check=True)  # no inherited thread count
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--load", type=int, default=2, help="busy-loop processes beside the training")
    p.add_argument("--seconds", type=float, default=8.0, help="timed seconds per contender")
    p.add_argument("--warmup", type=int, default=3, help="untimed optimizer steps first")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "threads_under_load.json"))
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        affinity, threads, warmup, seconds = json.loads(args.worker)
        print(json.dumps(worker(affinity, threads, warmup, seconds)))
        return
    import multiprocessing as mp

    load = [mp.Process(target=busy_loop, daemon=True) for _ in range(args.load)]
    for proc in load:
        proc.start()
    results: dict[str, list] = {name: [] for name in CONTENDERS}
    try:
        for r in range(args.rounds):
            order = list(CONTENDERS)[r % 2::] + list(CONTENDERS)[:r % 2]
            for name in order:
                results[name].append(run_contender(name, args))
                print(f"round {r}: {name:28s} {results[name][-1]}", flush=True)
    finally:
        for proc in load:
            proc.terminate()
    summary = {"cores": os.cpu_count(), "load_processes": args.load, "seconds": args.seconds,
               "rounds": args.rounds, "median_steps_per_s": {n: statistics.median(x["steps_per_s"] for x in v)
                                                             for n, v in results.items()},
               "threads": {n: v[0]["threads"] for n, v in results.items()}}
    med = summary["median_steps_per_s"]
    summary["ratio_affinity_default_vs_all_cores"] = med["affinity {0}, default"] / med["affinity {0}, all cores"]
    summary["ratio_one_thread_vs_all_cores"] = med["all cores, num_threads=1"] / med["all cores, default"]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
