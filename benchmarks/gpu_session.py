"""The GPU measurements for one short device call: `gpu_throughput.py` runs of the training setups a
user gets, rounds as separate processes, inside a wall-clock budget, everything in one folder.

Parts (one per call; each fits the budget, default 450 s, i.e. under 8 minutes with start-up):

* ``headline`` everything with the dynamics recorder on: trainer=gpu (nliforge+dyn), the fused HF Trainer
              and preset=gpu_fast (nliforge+fast) in one process, 2 rounds; then per round preset=gpu_graphs
              (nliforge+graphs4) from an empty compile cache and, in a new process, from the cache it left;
              ends with the 5-epoch WANLI headline line (gpu_report.headline), from the cold runs.
* ``main``    `trainer=gpu` as it is now (nliforge+fused), the same with the dynamics recorder on
              (nliforge+dyn, what a default nliforge-train run does) and the HF Trainer at its best
              (hf_B_best, fused AdamW); then `preset=gpu_fast` (nliforge+compile) with more warm-up
              steps for the compilation, compared with the hf_B_best runs of the same call.
* ``graphs``  the CUDA-graphs variant with widths rounded to 32 (nliforge+graphs32) beside hf_B_best.
* ``diag``    old plain trainer=gpu and the two halves of its defaults (nliforge, +pad8, +fusedonly,
              +fused), with a torch.profiler table of each.

Each round of each step is one `gpu_throughput.py --rounds 1` process (the contender order rotates
between rounds), so a round cut off by the budget loses only itself: rounds are interleaved across
steps, and a process is given at most the time left. At the end the rounds of every step are merged
into medians (`gpu_report.summarise`), and every nliforge contender is set against the median of
all hf_B_best runs of the call; written to `session.json` and `session.txt` in the folder.

    bash benchmarks/gpu_session.sh headline                 # on the device (wheel set-up, then this)
    SMOKE=1 bash benchmarks/gpu_session.sh headline         # CPU smoke: tiny model, 3 steps, eager backend
    python benchmarks/gpu_session.py --device cpu --model tiny --parts main graphs   # CPU smoke
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Step:
    name: str
    contenders: tuple[str, ...]
    warmup: int
    steps: int
    extra: tuple[str, ...] = ()
    inner: int = 1             # > 1: all rounds in one process, in the session's first round (no compile: saves
                               # a process start, ~25 s of a device call)
    late: bool = False         # run after every round of the other steps (a budget cut then falls on it)
    need_s: float = 30         # skipped when less of the budget is left (a run cut off midway measures nothing)
    cache: str | None = None   # compile cache: "cold" (an empty folder each round), "warm:<step>" (the folder
                               # <step> filled earlier in the same round), "shared" (one folder: round 1 cold)


PARTS = {
    "main": (Step("default", ("nliforge+fused", "nliforge+dyn", "hf_B_best"), 30, 100),
             Step("preset", ("nliforge+compile",), 60, 200)),   # vs hf_B: the call-wide line
    "graphs": (Step("graphs", ("hf_B_best", "nliforge+graphs32"), 60, 100),),  # hf_B first: graphs may use the rest
    # one call, everything with the dynamics recorder on: trainer=gpu, preset=gpu_fast (compiled from an empty
    # cache in its first round, already compiled in its second: one process) and the HF Trainer; then
    # preset=gpu_graphs compiled from an empty cache and again from the cache that run left, twice
    "headline": (Step("default", ("nliforge+dyn", "hf_B_best", "nliforge+fast"), 30, 80, inner=2, cache="cold"),
                 Step("graphs_cold", ("nliforge+graphs4",), 80, 150, cache="cold", need_s=80),
                 Step("graphs_warm", ("nliforge+graphs4",), 80, 150, cache="warm:graphs_cold", need_s=55)),
    "diag": (Step("diag", ("nliforge", "nliforge+pad8", "nliforge+fusedonly", "nliforge+fused"), 30, 100,
                  ("--profile-steps", "5")),),
}
SMOKE = {"warmup": 2, "steps": 3, "n_examples": 256}   # --device cpu: sizes that only check the code path
FALLBACK = {"nliforge+graphs4": "nliforge+compiled4"}   # a contender whose first round failed: its stand-in


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", nargs="+", choices=tuple(PARTS), default=["main"])
    p.add_argument("--model", default="roberta-large", choices=("tiny", "roberta-base", "roberta-large"))
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--budget-s", type=float, default=450, help="wall-clock budget of the rounds (the device call "
                   "adds ~20 s: the wheels' install, nvidia-smi, the summary)")
    p.add_argument("--merge-only", action="store_true",
                   help="run nothing: merge the rounds that record.json in --out-dir lists (e.g. after a cut-off call)")
    p.add_argument("--only-steps", nargs="+", default=None, help="run only these steps of the parts (by name)")
    p.add_argument("--cache-root", default="/tmp/nlf_compile_cache",
                   help="the compile caches of the steps that name one (emptied at the start)")
    p.add_argument("--smoke-backend", default="eager",
                   help="--device cpu: the compiled contenders' torch.compile backend (eager: the code path only; "
                        "inductor: real CPU compilation, minutes)")
    p.add_argument("--out-dir", default=os.environ.get("OUT") or "benchmarks/out/gpu_session",
                   help="the one output folder (default: $OUT when set)")
    args = p.parse_args(argv)
    if args.rounds < 1 or args.budget_s <= 0:
        p.error("--rounds must be >= 1 and --budget-s > 0")
    return args


def command(step: Step, rnd: int, args, out: Path) -> list[str]:
    """The gpu_throughput.py command of one round of one step (contender order rotated by the round)."""
    names = list(step.contenders)
    names = names[rnd % len(names):] + names[:rnd % len(names)]
    cpu = args.device == "cpu"
    warmup, steps = (SMOKE["warmup"], SMOKE["steps"]) if cpu else (step.warmup, step.steps)
    cmd = [sys.executable, str(HERE / "gpu_throughput.py"), "--model", args.model, "--device", args.device,
           "--rounds", str(step.inner), "--warmup", str(warmup), "--steps", str(steps), "--max-wait", "0",
           "--contenders", *names, "--out", str(out), *step.extra]
    if cpu:   # the compiled contenders take the eager backend: a smoke run checks the path, not inductor
        cmd += ["--n-examples", str(SMOKE["n_examples"]), "--threads", "1"]
        if args.smoke_backend != "inductor":
            cmd += ["--compile-backend", args.smoke_backend]
    return cmd


def cache_dir(step: Step, rnd: int, args) -> tuple[Path | None, str | None]:
    """The compile cache folder of one round of a step, and whether it starts "cold" or "warm"."""
    if step.cache is None:
        return None, None
    root = Path(args.cache_root)
    if step.cache.startswith("warm:"):
        return root / f"{step.cache[5:]}_r{rnd + 1}", "warm"
    folder = root / (step.name if step.cache == "shared" else f"{step.name}_r{rnd + 1}")
    return folder, "warm" if folder.exists() else "cold"


def files_in(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def run_one(cmd: list[str], log: Path, timeout: float) -> dict:
    """Run one round with its output in `log`; returns how it ended."""
    t = time.perf_counter()
    with open(log, "w") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=HERE.parent)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = None
    wall = time.perf_counter() - t
    status = "ok" if rc == 0 else (f"timed out after {wall:.0f} s" if rc is None else f"exit {rc}")
    return {"status": status, "wall_s": round(wall, 1), "log": log.name}


def run_round(step: Step, rnd: int, args, out_dir: Path, left: float, swap: dict, done: set) -> dict:
    """One round of one step: its command (with its compile cache, if any) run inside the time left.
    `done`: the (step, round) pairs that finished, as a warm start needs its cold run's cache."""
    entry = {"step": step.name, "round": rnd + 1, "json": f"{step.name}_r{rnd + 1}.json"}
    folder, state = cache_dir(step, rnd, args)
    if step.cache and step.cache.startswith("warm:") and (step.cache[5:], rnd + 1) not in done:
        return {**entry, "status": f"skipped: {step.cache[5:]} round {rnd + 1} did not finish to start warm from"}
    step = replace(step, contenders=tuple(swap.get(c, c) for c in step.contenders))
    cmd = command(step, rnd, args, out_dir / entry["json"])
    if folder is not None:
        cmd += ["--compile-cache-dir", str(folder)]
        entry.update(cache=state, cache_files_before=files_in(folder))
    entry.update(run_one(cmd, out_dir / f"{step.name}_r{rnd + 1}.log", left - 10), contenders=list(step.contenders))
    if folder is not None:
        entry["cache_files_after"] = files_in(folder)
    return entry


def failed_contenders(entry: dict, out_dir: Path) -> set[str]:
    """The contenders of a finished round that did not finish (the whole round, or as FAILED in its JSON)."""
    path = out_dir / entry["json"]
    if entry.get("status") != "ok" or not path.exists():
        return set(entry.get("contenders", ()))
    return set(json.loads(path.read_text()).get("failed") or {})


def run_session(args, out_dir: Path) -> list[dict]:
    """Every round of every step of the chosen parts, rounds interleaved, inside the budget. A contender
    whose first round fails is replaced by its FALLBACK in later rounds (e.g. no CUDA graphs)."""
    import shutil

    shutil.rmtree(args.cache_root, ignore_errors=True)
    t0, record, swap, done = time.perf_counter(), [], {}, set()
    steps = [s for part in args.parts for s in PARTS[part] if args.only_steps is None or s.name in args.only_steps]
    plan = [(rnd, s) for late in (False, True) for rnd in range(args.rounds) for s in steps
            if s.late == late and (s.inner == 1 or rnd == 0)]
    for rnd, step in plan:
        left = args.budget_s - (time.perf_counter() - t0)
        if left < (step.need_s if args.device == "cuda" else 30):
            entry = {"step": step.name, "round": rnd + 1, "json": f"{step.name}_r{rnd + 1}.json",
                     "status": f"skipped: {max(left, 0):.0f} s of the budget left"}
        else:
            entry = run_round(step, rnd, args, out_dir, left, swap, done)
            if entry["status"] == "ok":
                done.add((step.name, rnd + 1))
            for c in failed_contenders(entry, out_dir) if "wall_s" in entry else ():
                if c in FALLBACK and c not in swap.values():
                    swap[c] = FALLBACK[c]
                    print(f"{c} failed: later rounds run {FALLBACK[c]} instead", flush=True)
        print(f"{step.name} round {rnd + 1}: {entry['status']}"
              + (f" ({entry['wall_s']} s)" if "wall_s" in entry else "")
              + (f", {entry['cache']} compile cache ({entry['cache_files_before']} -> "
                 f"{entry.get('cache_files_after')} files)" if "cache" in entry else ""), flush=True)
        record.append(entry)
        (out_dir / "record.json").write_text(json.dumps(record, indent=2))   # kept as it grows: --merge-only
    return record


def merge_step(name: str, record: list[dict], out_dir: Path) -> tuple[dict | None, str]:
    """The medians over the finished rounds of one step, and its table."""
    from gpu_report import summarise

    rounds = []
    for e in record:
        if e["step"] == name and e["status"] == "ok" and (out_dir / e["json"]).exists():
            rounds.append(json.loads((out_dir / e["json"]).read_text()))
            for res in rounds[-1]["contenders"].values():
                for run in res["runs"]:
                    run["cache"], run["round"] = e.get("cache"), e["round"]
    if not rounds:
        return None, f"== {name}: no finished round"
    runs: dict[str, list[dict]] = {}
    failed = {}
    for r in rounds:
        failed.update(r.get("failed") or {})
        for c, res in r["contenders"].items():
            runs.setdefault(c, []).extend(res["runs"])
    first = rounds[0]
    a = first["args"]
    args = SimpleNamespace(batch_size=a["batch_size"], warmup=a["warmup"], device=a["device"])
    shape = SimpleNamespace(**first["model_shape"])
    from gpu_throughput import NLF_VARIANTS

    summary, lines = summarise(runs, NLF_VARIANTS, first["n_params"], shape, first["env"].get("peak_flops"), args)
    n_runs = max(len(v) for v in runs.values())
    summary.update({"failed": failed, "rounds": n_runs, "processes": len(rounds), "env": first["env"], "args": a})
    head = (f"== {name}: {a['model']} on {a['device']} ({first['env'].get('device_name', '?')}), median of "
            f"{n_runs} round(s) in {len(rounds)} process(es), {a['steps']} timed steps x batch {a['batch_size']} after {a['warmup']} warm-up")
    if failed:
        lines.append("FAILED: " + ", ".join(sorted(failed)))
    return summary, "\n".join([head, *lines])


def call_wide(merged: dict) -> tuple[float | None, list[str]]:
    """Every nliforge contender of the call against the median of all its hf_B_best runs (rounds of
    different steps are separate processes on the same machine, in the same call)."""
    import statistics

    hf_b = [r["examples_per_s"] for m in merged.values() if m for c, v in m["contenders"].items()
            if c == "hf_B_best" for r in v["runs"]]
    if not hf_b:
        return None, ["== call-wide: no hf_B_best run finished"]
    pooled = statistics.median(hf_b)
    lines = [f"== call-wide: against hf_B_best's median over the call's {len(hf_b)} run(s), {pooled:.1f} ex/s"]
    for name, m in merged.items():
        for c, v in (m or {}).get("contenders", {}).items():
            if c.startswith("nliforge"):
                lines.append(f"{c:<17} ({name}) {v['examples_per_s']:8.1f} ex/s  {v['examples_per_s'] / pooled:5.2f}x")
    return pooled, lines


def main(argv=None) -> dict:
    args = parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    if args.merge_only:
        record = json.loads((out_dir / "record.json").read_text())
    else:
        record = run_session(args, out_dir)
    sys.path.insert(0, str(HERE))
    merged, tables = {}, []
    for name in dict.fromkeys(s.name for part in args.parts for s in PARTS[part] if s.name in {e["step"] for e in record}):
        merged[name], table = merge_step(name, record, out_dir)
        tables.append(table)
    pooled, lines = call_wide(merged)
    tables.append("\n".join(lines))
    from gpu_report import headline

    head, lines = headline(merged, args.model)
    tables.append("\n".join(lines))
    session = {"args": vars(args), "hf_B_best_call_median": pooled, "headline": head,
               "wall_s": round(time.perf_counter() - t, 1), "rounds": record, "steps": merged}
    (out_dir / "session.json").write_text(json.dumps(session, indent=2, default=str))
    text = "\n\n".join(tables) + f"\n\nsession wall {session['wall_s']} s (budget {args.budget_s:.0f} s)\n"
    (out_dir / "session.txt").write_text(text)
    print("\n" + text + f"wrote {out_dir}/session.json and session.txt", flush=True)
    return session


if __name__ == "__main__":
    main()
