"""Write the README's demo numbers from real runs, or check them against fresh runs.

    python scripts/readme_numbers.py --write            # run every demo, rewrite the README's blocks
    python scripts/readme_numbers.py --check            # run every demo, exit 1 where the README differs
    python scripts/readme_numbers.py --check --runs R   # reuse run folders R/<demo> made earlier
    python scripts/readme_numbers.py --demos train_demo,wanli_demo --write

The demos are deterministic: `experiment=demo` pins `num_threads: 1`, so float reduction order does not
depend on the machine's cores (a different thread count can move a number), and every demo runs with the
CPU kernel paths of torch, oneDNN and MKL pinned (nliforge.utils.environment.KERNEL_PIN), so the numbers do
not depend on the machine's instruction sets (docs/reproducibility.md); the real-text demo (a fine-tuned
pretrained model, whose table did not move with the kernel path) runs unpinned (UNPINNED).
Blocks are `<!-- numbers:NAME -->` in README.md (the training demos) and docs/demos.md (the generation
demos' stage counts), each name on one page (nliforge.utils.readme_blocks); wall times go to `measured.*`
blocks, which are written and never checked."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from nliforge.evaluation.run_table import results_from_csv, run_table
from nliforge.engine.execute import format_drops
from nliforge.utils.atomic import atomic_write_text
from nliforge.utils.readme_blocks import check_blocks, read_blocks, replace_blocks
from nliforge.utils.environment import kernel_pin

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", ROOT / "docs" / "demos.md")   # the pages that hold the generated blocks
GENERATE = [sys.executable, "-m", "nliforge.generate", "experiment=demo"]
DEMOS = {   # name -> the command (the README says the same command)
    "train_demo": [sys.executable, "-m", "nliforge.train", "experiment=demo"],
    "wanli_demo": GENERATE + ["pipeline=wanli"],
    "disco_demo": GENERATE + ["pipeline=disco"],
    "longtext_demo": GENERATE + ["pipeline=longtext"],
    "zaug_demo": GENERATE + ["pipeline=zaug"],
    # needs the real files: `nliforge-data fetch all`, or NLIFORGE_DATA_DIR (a folder laid out like the download)
    "real_demo": [sys.executable, "-m", "nliforge.train", "experiment=real_text_demo"],
}
# Demos run without the kernel pin: the fine-tuned pretrained MiniLM printed the same real-text table with MKL's
# AUTO and COMPATIBLE branches (docs/reproducibility.md), and the pin made it about 3.5x as slow
UNPINNED = {"real_demo"}
# rough single-thread cost of each demo (s, pinned, measured on 2 cores): with --jobs > 1 the longest start first,
# so that no long demo runs alone at the end (in CI, 2026-11-27, the real-text demo, costed 300, started last
# and ran alone for its last ~8 minutes: it costs ~450 s when the cores are shared)
COST_S = {"wanli_demo": 590, "train_demo": 250, "zaug_demo": 300, "disco_demo": 350, "real_demo": 450,
          "longtext_demo": 60}
REAL_METRICS = (("acc", "accuracy"), ("acc_cf", "both of a pair right"), ("delta_s", "δs (counterfactual sensitivity)"))


def stage_table(manifest: dict) -> str:
    """Every stage's counts and drop reasons as a Markdown table (manifest.json of a generation run)."""
    lines = ["| stage | in | out | drops |", "|---|---|---|---|"]
    for name, entry in manifest.get("stages", {}).items():
        drops = format_drops(entry.get("drops", {})).replace("|", "/")
        lines.append(f"| {name} | {entry.get('count_in', 0)} | {entry.get('count_out', 0)} | {drops} |")
    return "\n".join(lines)


def challenge_gaps(results: dict, test: str = "synthetic_test", prefix: str = "synthetic_challenge_") -> str:
    """One sentence: how many accuracy points each challenge split loses against the in-distribution test."""
    base = 100 * results[test]["acc"]
    gaps = [f"{base - 100 * m['acc']:.1f} points on {name[len(prefix):]}" for name, m in results.items()
            if name.startswith(prefix) and "acc" in m]
    return f"Against its in-distribution test ({base:.1f}%), its challenge splits lose " + ", ".join(gaps) + "."


def markdown_tables(path: Path) -> str:
    """The Markdown table lines of a report file (its title and notes left out)."""
    return "\n".join(line for line in path.read_text().splitlines() if line.startswith("|"))


def real_table(results: dict) -> str:
    """One row per real eval set: accuracy (%), and for the counterfactual pair sets the share of pairs with
    both right (%) and δs (mean change in the model's probabilities between original and revision)."""
    lines = ["| eval set | " + " | ".join(title for _, title in REAL_METRICS) + " |", "|---|" + "---|" * len(REAL_METRICS)]
    for set_name, m in results.items():
        cells = [("-" if key not in m else f"{m[key]:.3f}" if key == "delta_s" else f"{100 * m[key]:.1f}")
                 for key, _ in REAL_METRICS]
        lines.append(f"| {set_name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render(name: str, run: Path) -> dict[str, str]:
    """The README blocks a finished demo run gives."""
    if name == "real_demo":
        return {"real_demo.table": real_table(results_from_csv(run / "metrics.csv"))}
    if name == "train_demo":
        results = results_from_csv(run / "metrics.csv")
        return {"train_demo.table": run_table(results), "train_demo.gaps": challenge_gaps(results)}
    blocks = {f"{name}.stages": stage_table(json.loads((run / "manifest.json").read_text()))}
    if name == "disco_demo":
        blocks["disco_demo.report"] = markdown_tables(run / "disco_report.md")
    return blocks


def run_demo(name: str, run: Path) -> float:
    """Run one demo into `run` (a fresh folder); its wall time in seconds. A failed demo stops everything."""
    pin = {} if name in UNPINNED else kernel_pin()   # an unpinned demo also drops a pin set in the environment
    env = {**{k: v for k, v in os.environ.items() if pin or k not in kernel_pin()},
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false",
           # a data home of the runs' own: the sets a demo registers (DISCO's augment) go there, and an earlier
           # run's registration of the same name elsewhere neither blocks nor receives them
           "NLIFORGE_HOME": str(run.parent / "home"),
           # the CPU kernel paths the README's numbers were made with (docs/reproducibility.md)
           **pin}
    log = run.parent / f"{name}.log"
    start = time.perf_counter()
    with open(log, "w") as out:
        done = subprocess.run(DEMOS[name] + [f"hydra.run.dir={run}"], env=env, stdout=out, stderr=subprocess.STDOUT,
                              cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"error: demo {name} failed (exit {done.returncode}); its output: {log}")
    return time.perf_counter() - start


def run_demos(names: list[str], out: Path, jobs: int) -> dict[str, float]:
    """Run the demos into fresh folders under `out`, `jobs` at a time (each pins one thread); wall seconds."""
    clash = [str(out / n) for n in names if (out / n).exists()]
    if clash:
        sys.exit(f"error: {clash[0]} exists; remove it or pass --runs {out} to reuse it")
    out.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> float:
        print(f"running {name}: {command(name)} ...", flush=True)
        wall = run_demo(name, out / name)
        print(f"  {name}: {wall:.0f} s", flush=True)
        return wall

    longest_first = sorted(names, key=lambda n: -COST_S.get(n, 0))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        walls = dict(zip(longest_first, pool.map(one, longest_first)))
    return {n: walls[n] for n in names}


def command(name: str) -> str:
    """The console-script form of a demo's command, as a user types it."""
    module, *args = DEMOS[name][2:]
    return " ".join([module.replace(".", "-"), *args])


def times_block(seconds: dict[str, float], jobs: int = 1) -> str:
    day = datetime.date.today().isoformat()
    rows = [f"| `{command(n)}` | {s:.0f} s |" for n, s in seconds.items()]
    return "\n".join([f"Measured {day} by `scripts/readme_numbers.py` (1 thread, as the demos pin it; "
                      f"{jobs} demo(s) at a time on {os.cpu_count()} cores, other jobs may have shared them):", "",
                      "| demo | wall |", "|---|---|", *rows])


def placed(blocks: dict[str, str], pages: list[Path]) -> tuple[dict[Path, dict[str, str]], list[str]]:
    """Each block under the page that holds a block of its name, and the names no page holds. A name on
    two pages is an error (which one would be true?)."""
    where: dict[str, Path] = {}
    for page in pages:
        for name in read_blocks(page.read_text()):
            if name in where:
                sys.exit(f"error: block numbers:{name} is in {where[name]} and in {page}; keep it on one page")
            where[name] = page
    by_page: dict[Path, dict[str, str]] = {page: {} for page in pages}
    for name, body in blocks.items():
        if name in where:
            by_page[where[name]][name] = body
    return by_page, sorted(set(blocks) - set(where))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the README's blocks from the runs")
    mode.add_argument("--check", action="store_true", help="exit 1 where the README and the runs differ")
    ap.add_argument("--demos", default=",".join(DEMOS), help="comma-separated subset of " + ", ".join(DEMOS))
    ap.add_argument("--runs", type=Path, default=None, help="folder of earlier runs (<runs>/<demo>) to reuse")
    ap.add_argument("--out", type=Path, default=Path("outputs/readme_numbers"), help="where fresh runs go")
    ap.add_argument("--pages", type=Path, nargs="+", default=list(PAGES), help="the pages holding the blocks")
    ap.add_argument("--jobs", type=int, default=1, help="demos run at a time (each pins one thread; 2 on 2 cores)")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.demos.split(",") if n.strip()]
    unknown = sorted(set(names) - set(DEMOS))
    if unknown:
        ap.error(f"--demos: unknown {unknown}; expected some of {list(DEMOS)}")
    if "real_demo" in names and args.runs is None and not os.environ.get("NLIFORGE_DATA_DIR"):
        ap.error("real_demo needs the real data files: set NLIFORGE_DATA_DIR (a folder laid out like the download; "
                 "`nliforge-data fetch all` makes one), or leave it out with --demos")
    seconds = {} if args.runs is not None else run_demos(names, args.out, args.jobs)
    blocks = {}
    for name in names:
        blocks.update(render(name, (args.runs or args.out) / name))
    if seconds and set(names) == set(DEMOS):
        blocks["measured.demo_times"] = times_block(seconds, args.jobs)
    by_page, homeless = placed(blocks, args.pages)
    if args.write:
        if homeless:
            sys.exit(f"error: no page has a block for {homeless}; add `<!-- numbers:NAME -->` / "
                     f"`<!-- /numbers:NAME -->` to one of {[str(p) for p in args.pages]}")
        for page, bodies in by_page.items():
            if bodies:
                atomic_write_text(page, [replace_blocks(page.read_text(), bodies)])
                print(f"wrote {len(bodies)} blocks into {page}")
        return 0
    problems = {f"{page}: block {name}": lines for page, bodies in by_page.items()
                for name, lines in check_blocks(page.read_text(), bodies).items()}
    problems.update({f"block {name}": ["no page has such a block"] for name in homeless})
    for where, lines in problems.items():
        print(f"{where} differs from a fresh run:\n  " + "\n  ".join(lines))
    print("README numbers agree with the runs" if not problems else f"{len(problems)} blocks differ")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
