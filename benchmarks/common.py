"""Shared pieces of the throughput benchmarks: synthetic NLI pairs with a realistic length
distribution, a step clock, and a guard against other processes sharing the CPU."""

from __future__ import annotations

import logging
import json
import math
import os
import time
import warnings
from pathlib import Path

import numpy as np
import torch


# A small English vocabulary (function words are drawn far more often than content words, as in
# real text) so that both the tiny BPE tokenizer and MiniLM's WordPiece see mostly whole words.
FUNCTION_WORDS = (
    "the a an of to in on at by with for from and or but not no is are was were be been has have "
    "had do does did will would can could should may might this that these those there it its he "
    "she they we you his her their our some all any every each one two three few many more most "
    "very too also just only still as than then while after before because if when where who which"
).split()
CONTENT_WORDS = (
    "man woman child boy girl dog cat horse bird people group crowd team player worker doctor "
    "teacher student family friend couple baby police officer driver singer dancer artist chef "
    "street road park beach river lake mountain forest field city town village market shop store "
    "restaurant kitchen house building room office school church station bridge car bus train bike "
    "boat plane ball hat shirt jacket dress shoe bag book phone camera guitar table chair bench "
    "window door wall floor water food bread coffee tea fruit apple flower tree grass snow rain sun "
    "night morning evening day week year game music song picture photo sign flag fire stage crowd "
    "walks runs sits stands jumps plays sings dances eats drinks reads writes watches looks holds "
    "carries throws catches rides drives climbs swims cooks cleans paints builds opens closes waits "
    "talks laughs smiles cries sleeps works buys sells wears pushes pulls kicks hits fixes "
    "walking running sitting standing jumping playing singing dancing eating drinking reading "
    "writing watching looking holding carrying riding driving climbing swimming cooking cleaning "
    "painting building waiting talking laughing smiling sleeping working wearing pushing pulling "
    "red blue green yellow black white brown small large big little old young tall short happy sad "
    "busy empty crowded quiet loud bright dark wet dry hot cold new long wooden outdoor indoor "
    "together alone outside inside near behind across around through under over down up away "
    "quickly slowly loudly carefully"
).split()


def synthetic_records(n: int, seed: int):
    """NLI pairs: premise 8-40 words (lognormal, median ~17, long tail to 80), hypothesis 4-15
    words (median ~8, tail to 30); labels balanced (exact thirds, shuffled)."""
    from nliforge.data.records import Record

    rng = np.random.default_rng(seed)
    vocab = FUNCTION_WORDS + CONTENT_WORDS
    # Zipf-like frequencies over a shuffled vocabulary, function words up front.
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 0.9
    weights /= weights.sum()
    prem_len = np.clip(np.round(rng.lognormal(np.log(17), 0.45, n)), 8, 80).astype(int)
    hyp_len = np.clip(np.round(rng.lognormal(np.log(8), 0.40, n)), 4, 30).astype(int)
    labels = np.array(["entailment", "neutral", "contradiction"])[np.arange(n) % 3]
    rng.shuffle(labels)
    words = rng.choice(len(vocab), size=int(prem_len.sum() + hyp_len.sum()), p=weights)
    out, pos = [], 0
    for i in range(n):
        p = " ".join(vocab[w] for w in words[pos:pos + prem_len[i]]); pos += prem_len[i]
        h = " ".join(vocab[w] for w in words[pos:pos + hyp_len[i]]); pos += hyp_len[i]
        out.append(Record(f"syn-{i:06d}", p.capitalize() + ".", h.capitalize() + ".", str(labels[i]), "synthetic"))
    return out


# --------------------------------------------------------------------------- timing
class Clock:
    """Start after optimizer step `warmup`, stop at train end; remembers batch widths."""

    def __init__(self, warmup: int, device: str, profile_steps: int = 0):
        self.warmup, self.device = warmup, device
        self.profile_steps, self.profiler, self.profile_table = profile_steps, None, None
        self.host_values: dict[str, float] | None = None  # per step, from the profiled run
        self.t0 = self.t_last = self.t1 = self.t_start = None
        self.step_times: list[float] = []  # host clock at each timed step's end (no sync)
        self.losses: list = []             # detached loss tensors of the timed steps, read once at the end
        self.step0 = self.step_last = None
        self.widths: list[int] = []
        self.threads: int | None = None
        self.hook_s = 0.0

    def _now(self) -> float:
        if self.device == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter()

    def train_start(self) -> None:
        """Training begins (after model and trainer construction): the one-time costs that follow
        (torch.compile, CUDA-graph recording, allocator warm-up) fall before `t0`."""
        self.t_start = self._now()

    def step_done(self, global_step: int) -> None:
        # Synchronise only where the clock starts: a sync after every step would stop the host
        # from queueing the next step while the GPU works, which is not how training runs.
        if global_step == self.warmup and self.t0 is None:
            self.t0, self.step0 = self._now(), global_step
            self.threads = torch.get_num_threads()
            if self.profile_steps:
                self._start_profile()
        if self.profiler is not None and global_step == self.warmup + self.profile_steps:
            self._stop_profile()
        self.t_last, self.step_last = time.perf_counter(), global_step
        if self.t0 is not None:
            self.step_times.append(self.t_last)

    def train_done(self) -> None:
        if self.profiler is not None:
            self._stop_profile()
        self.t1 = self._now()

    # A profiled run measures where a step's host and device time go; its wall time is not a result.
    def _start_profile(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        from nliforge.testing.host_sync import HostValueCounter

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.device == "cuda" else [])
        self.profiler = profile(activities=activities)
        self.profiler.__enter__()
        # where a GPU run would synchronise, by calling function; not the benchmark's own token counts
        self.counter = HostValueCounter(ignore={"TokenCounter.__call__"})
        self.counter.__enter__()

    def _stop_profile(self) -> None:
        prof, self.profiler = self.profiler, None
        self.counter.__exit__(None, None, None)
        self.host_values = self.counter.per_step(self.profile_steps)
        if self.device == "cuda":
            torch.cuda.synchronize()
        prof.__exit__(None, None, None)
        averages = prof.key_averages()
        sorts = ["self_cpu_time_total"] + (["self_device_time_total"] if self.device == "cuda" else [])
        self.profile_table = "\n\n".join(f"sorted by {key}:\n" + averages.table(sort_by=key, row_limit=25)
                                          for key in sorts)

    def result(self, batch_size: int) -> dict:
        steps = self.step_last - self.step0
        wall = self.t1 - self.t0
        startup = None if self.t_start is None else self.t0 - self.t_start
        gaps = np.diff(self.step_times) if len(self.step_times) > 1 else np.array([np.nan])
        loss = float(torch.stack(self.losses).float().mean()) if self.losses else None
        return {"steps": steps, "wall_s": wall, "examples_per_s": steps * batch_size / wall,
                "startup_s": startup,  # train start -> end of warm-up step (compile, graphs, warm-up steps)
                "max_step_s": float(np.max(gaps)), "median_step_s": float(np.median(gaps)),
                "mean_loss_timed": loss, "profile_table": self.profile_table,
                "host_values_per_step": self.host_values,
                "loop_only_examples_per_s": steps * batch_size / (self.t_last - self.t0),
                "mean_batch_width": float(np.mean(self.widths)) if self.widths else None,
                # widths first met in the timed window (compiled contenders compile / record a graph there)
                "widths_new_in_timed": sorted(set(self.widths[self.warmup:]) - set(self.widths[:self.warmup])),
                "threads_in_loop": self.threads, "dynamics_hook_s": self.hook_s}


def _timed(fn, clock):
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            if clock.t0 is not None:  # only hook time inside the timed window
                clock.hook_s += time.perf_counter() - t
    return wrapper


# --------------------------------------------------------------------------- CPU contention
# On a 2-core machine one other busy process (a test run, a training job) slows torch's
# 2-thread kernels several-fold, so each run checks the machine is idle first and records how
# much CPU other processes used while it ran.
def _cpu_snapshot() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, CPU seconds of this process)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return math.nan, math.nan
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    busy = (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    times = os.times()
    return busy, times.user + times.system


def wait_until_idle(max_wait_s: float, threshold: float = 0.2) -> float:
    """Sleep while other processes keep more than `threshold` of the machine busy; return the load seen."""
    deadline, ncpu = time.monotonic() + max_wait_s, os.cpu_count() or 1
    while True:
        b0, _ = _cpu_snapshot()
        time.sleep(1.0)
        b1, _ = _cpu_snapshot()
        load = (b1 - b0) / ncpu
        if not load > threshold or time.monotonic() > deadline:
            return load
        print(f"  machine busy ({load:.0%} of {ncpu} cores used by other processes); waiting", flush=True)
        time.sleep(20)


def quiet():
    warnings.filterwarnings("ignore")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    for name in ("lightning", "lightning.pytorch", "lightning.fabric", "transformers", "nliforge"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        import transformers
        transformers.logging.set_verbosity_error()
    except Exception:  # pragma: no cover
        pass


def write_summary(summary: dict, out) -> Path:
    """The run's numbers as JSON at `out` (folders created); what README numbers are copied from."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2, default=str))
    return out
