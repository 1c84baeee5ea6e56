"""The summary of a gpu_throughput.py run: medians per contender, MFU, ratios to the Trainer, the
projected 5-epoch WANLI time, the printed table and the environment it was measured in."""

from __future__ import annotations

import math
import os
import platform
import statistics
import sys

import torch

WANLI_PAIRS = 103_000   # WANLI's training set
EPOCHS = 5
RATE_KEYS = ("examples_per_s", "real_tokens_per_s", "padded_tokens_per_s", "real_len_sq_per_s")


def fmt_time(s: float) -> str:
    return f"{s / 3600:.2f} h" if s >= 3600 else f"{s / 60:.1f} min"


def _pct(v: float | None) -> str:
    return f"{v:>7.1%}" if v is not None else f"{'n/a':>7}"


def contender_row(c: str, m: dict, runs: list[dict], med: dict, n_params: int, cfg, peak, args) -> tuple[dict, str]:
    """One contender's summary (from its medians `m` over `runs`) and its line of the table.

    The projected wall time of the 5-epoch run is the one-time start-up as measured (train start to
    the end of the warm-up steps: compilation, CUDA-graph recording) plus the remaining steps at the
    measured rate. Widths first seen after the warm-up add a recording each; at most a few."""
    flops = 6 * n_params * m["real_tokens_per_s"]
    attn = 12 * cfg.num_hidden_layers * cfg.hidden_size * m["real_len_sq_per_s"]
    mfu = flops / peak if peak else None
    mfu_attn = (flops + attn) / peak if peak else None
    vs_a = m["examples_per_s"] / med["hf_A_maxlen"]["examples_per_s"] if "hf_A_maxlen" in med else math.nan
    vs_b = m["examples_per_s"] / med["hf_B_best"]["examples_per_s"] if "hf_B_best" in med else math.nan
    startup = statistics.median(x["startup_s"] for x in runs)
    total_steps = math.ceil(WANLI_PAIRS / args.batch_size) * EPOCHS
    proj_loop = total_steps * args.batch_size / m["examples_per_s"]
    proj = startup + (total_steps - args.warmup) * args.batch_size / m["examples_per_s"]
    row = {"examples_per_s": m["examples_per_s"], "real_tokens_per_s": m["real_tokens_per_s"],
           "padded_tokens_per_s": m["padded_tokens_per_s"], "model_flops_per_s": flops,
           "model_flops_per_s_with_attention": flops + attn, "mfu": mfu, "mfu_with_attention": mfu_attn,
           "ratio_vs_hf_A": vs_a, "ratio_vs_hf_B": vs_b,
           "startup_s": startup, "projected_5ep_wanli_s": proj, "projected_5ep_wanli_h": proj / 3600,
           "projected_5ep_wanli_loop_only_s": proj_loop,
           "peak_mem_gib": max((x["peak_mem_gib"] or 0) for x in runs) if args.device == "cuda" else None,
           "runs": runs}
    line = (f"{c:<17}{m['examples_per_s']:>9.1f}{m['real_tokens_per_s']:>10.0f}"
            f"{m['padded_tokens_per_s']:>11.0f}{_pct(mfu)}{_pct(mfu_attn):>9}"
            f"{vs_a:>6.2f}x{vs_b:>6.2f}x{startup:>8.1f}s{fmt_time(proj):>11}")
    return row, line


def summarise(runs: dict[str, list[dict]], nlf_names, n_params: int, cfg, peak, args) -> tuple[dict, list[str]]:
    """Per-contender summaries and the table's lines, from the rounds of every contender that ran."""
    names = [c for c in runs if runs[c]]
    summary: dict = {"contenders": {}}
    lines = [f"{'contender':<17}{'ex/s':>9}{'tok/s':>10}{'pad tok/s':>11}{'MFU':>7}{'MFU+attn':>9}"
             f"{'vs A':>7}{'vs B':>7}{'startup':>9}{'5ep WANLI':>11}"]
    med = {c: {k: statistics.median(x[k] for x in runs[c]) for k in RATE_KEYS} for c in names}
    for c in names:
        summary["contenders"][c], line = contender_row(c, med[c], runs[c], med, n_params, cfg, peak, args)
        lines.append(line)
    e = {c: med[c]["examples_per_s"] for c in med}
    if "hf_A_maxlen" in e and "hf_B_best" in e:
        for c in (c for c in names if c in nlf_names):
            key = "" if c == "nliforge" else "_" + c.split("+", 1)[1]
            summary[f"nliforge{key}_vs_hf_A"] = e[c] / e["hf_A_maxlen"]
            summary[f"nliforge{key}_vs_hf_B"] = e[c] / e["hf_B_best"]
            lines.append(f"{c}/hf_A = {e[c] / e['hf_A_maxlen']:.2f}x, {c}/hf_B = {e[c] / e['hf_B_best']:.2f}x")
    if "nliforge+dyn" in e and "nliforge+fused" in e:   # the same run with and without the dynamics recorder
        hooks = statistics.median(x["dynamics_hook_s"] / x["wall_s"] for x in runs["nliforge+dyn"])
        summary["dynamics_overhead"] = e["nliforge+fused"] / e["nliforge+dyn"] - 1
        summary["dynamics_hook_share"] = hooks
        lines.append(f"dynamics recording: {summary['dynamics_overhead']:+.1%} time (nliforge+dyn vs nliforge+fused "
                     f"medians), {hooks:.2%} of the timed window inside the recorder's hooks")
    lines.append(f"5ep WANLI = projected wall time of {EPOCHS} epochs x {WANLI_PAIRS:,} pairs: start-up (train start to "
                 f"the end of {args.warmup} warm-up steps: compile, graphs) + the other steps at the measured ex/s; "
                 f"MFU = 6*N*real tok/s / peak, N = {n_params / 1e6:.1f}M; MFU+attn adds 12*L*d*sum(len^2)")
    if args.device == "cpu":
        contended = [(c, i + 1) for c in names for i, x in enumerate(runs[c]) if x["foreign_cpu_frac"] > 0.05]
        if contended:
            lines.append(f"WARNING: other processes used > 5% of the CPU during {len(contended)} run(s): "
                         + ", ".join(f"{c} round {i}" for c, i in contended))
    return summary, lines


def environment(args, device_name: str, threads: int, peak) -> dict:
    """The versions and the machine the numbers were measured on."""
    import lightning
    import transformers

    return {"python": sys.version.split()[0], "torch": torch.__version__, "lightning": lightning.__version__,
            "transformers": transformers.__version__, "platform": platform.platform(),
            "device": args.device, "device_name": device_name, "cpu_count": os.cpu_count(), "threads": threads,
            "cuda": torch.version.cuda, "peak_flops": peak}


def title(args, env: dict, dist: dict, wall_s: float) -> str:
    """The table's two-line heading: what was measured, how, and on what."""
    return (f"{args.model} on {args.device} ({env['device_name']}), {'bf16-mixed' if args.bf16 else 'fp32'}; "
            f"torch {env['torch']}, transformers {env['transformers']}, lightning {env['lightning']}\n"
            f"median of {args.rounds} rounds, {args.steps} timed steps x batch {args.batch_size} "
            f"(after {args.warmup} warm-up steps); tokens/pair mean {dist['mean']:.1f} p50 {dist['p50']:.0f} "
            f"p95 {dist['p95']:.0f} max {dist['max']}; benchmark wall {wall_s:.0f}s")


def projected_s(startup_s: float, examples_per_s: float, batch_size: int, warmup: int) -> float:
    """Wall time of 5 epochs of WANLI: the measured start-up (compilation, warm-up steps) plus the other
    steps at the measured rate."""
    total_steps = math.ceil(WANLI_PAIRS / batch_size) * EPOCHS
    return startup_s + (total_steps - warmup) * batch_size / examples_per_s


def short_gpu(device_name: str) -> str:
    return next((k for k in ("H200", "H100", "A100") if k in device_name), device_name)


def cache_state(run: dict) -> str | None:
    """How a run started, from its torch.compile counters: "cold" (FX graph cache misses: compiled from
    scratch), "warm" (hits only: loaded from the on-disk cache), "compiled" (graphs but no inductor cache:
    another backend), "again" (compiled nothing: an earlier run of the same process had), None (eager)."""
    counts = run.get("compile_counters") or {}
    if counts.get("inductor/fxgraph_cache_miss"):
        return "cold"
    if counts.get("inductor/fxgraph_cache_hit"):
        return "warm"
    return "compiled" if counts.get("stats/unique_graphs") else None


def projections(merged: dict) -> tuple[dict | None, list[dict]]:
    """The 5-epoch projection of the HF Trainer (all its runs of the call) and of every nliforge contender
    of every step, one row per way its runs started (cache_state): the start-up of those runs, the rate
    of all its runs of the step."""
    hf = [(r, m["args"]) for m in merged.values() if m for c, v in m["contenders"].items()
          if c == "hf_B_best" for r in v["runs"]]
    base = None
    if hf:
        rate = statistics.median(r["examples_per_s"] for r, _ in hf)
        a = hf[0][1]
        base = {"examples_per_s": rate, "startup_s": statistics.median(r["startup_s"] for r, _ in hf),
                "runs": len(hf)}
        base["projected_s"] = projected_s(base["startup_s"], rate, a["batch_size"], a["warmup"])
    rows = []
    for step, m in merged.items():
        for c, v in (m or {}).get("contenders", {}).items():
            if not c.startswith("nliforge"):
                continue
            states = [cache_state(r) for r in v["runs"]]
            compiled = any(states)
            for state in dict.fromkeys(states):
                if compiled and state is None:   # compiled by an earlier run of its process: no start-up to count
                    continue
                runs = [r for r, s in zip(v["runs"], states) if s == state]
                startup = statistics.median(r["startup_s"] for r in runs)
                proj = projected_s(startup, v["examples_per_s"], m["args"]["batch_size"], m["args"]["warmup"])
                rows.append({"contender": c, "step": step, "cache": state, "runs": len(runs),
                             "rate_runs": len(v["runs"]), "startup_s": startup,
                             "examples_per_s": v["examples_per_s"], "projected_s": proj,
                             "effective_examples_per_s": WANLI_PAIRS * EPOCHS / proj})
    return base, rows


def headline(merged: dict, model: str, prefer: tuple[str, ...] = ("nliforge+graphs4", "nliforge+compiled4")
             ) -> tuple[dict, list[str]]:
    """The headline line (5 epochs of WANLI, compilation and warm-up included, a first run: cold compile
    cache) and a line per nliforge contender and cache state, against the fused HF Trainer's projection."""
    base, rows = projections(merged)
    device = next((m["env"].get("device_name", "?") for m in merged.values() if m), "?")
    name = "RoBERTa-large" if model == "roberta-large" else model
    lines = ["== 5 epochs of WANLI (103,000 pairs), projected: start-up (compilation, warm-up) + the other steps "
             "at the median rate; ex/s here = 515,000 / that time. cold: compiled with an empty compile cache, "
             "warm: from the cache a cold run left; (a/b runs): a runs' start-up, the rate of b runs"]
    if base is not None:
        lines.append(f"hf_B_best (fused HF Trainer, {base['runs']} runs)  {fmt_time(base['projected_s']):>9}  "
                     f"{WANLI_PAIRS * EPOCHS / base['projected_s']:7.1f} ex/s  (steady {base['examples_per_s']:.1f})")
    for r in rows:
        r["ratio_vs_hf"] = base["projected_s"] / r["projected_s"] if base else math.nan
        r["steady_ratio_vs_hf"] = r["examples_per_s"] / base["examples_per_s"] if base else math.nan
        lines.append(f"{r['contender']:<18} {r['step']:<12} {str(r['cache'] or '-'):<8} ({r['runs']}/{r['rate_runs']} runs) "
                     f"{fmt_time(r['projected_s']):>9}  {r['effective_examples_per_s']:7.1f} ex/s  "
                     f"{r['ratio_vs_hf']:5.2f}x  (steady {r['examples_per_s']:.1f} ex/s, {r['steady_ratio_vs_hf']:.2f}x; "
                     f"start-up {r['startup_s']:.1f} s)")
    first_runs = [r for r in rows if r["cache"] in (None, "cold", "compiled")]
    pick = next((r for p in prefer for r in first_runs if r["contender"] == p), None) or \
        min(first_runs, key=lambda r: r["projected_s"], default=None)
    out = {"hf": base, "rows": rows, "headline": None}
    if pick is not None and base is not None:
        out["headline"] = (f"{name} x WANLI x {EPOCHS} epochs, one {short_gpu(device)}: "
                           f"{pick['projected_s'] / 60:.1f} min ({pick['effective_examples_per_s']:.0f} ex/s, "
                           f"{pick['ratio_vs_hf']:.2f}x fused HF Trainer)")
        lines += [f"headline from {pick['contender']} ({pick['step']}, {pick['cache'] or 'no'} compile cache), "
                  "compilation and warm-up included:", out["headline"]]
    else:
        lines.append("headline: no finished nliforge first run or no HF Trainer run")
    return out, lines
