"""Same results before and after a redesign: run the offline demos (and chosen experiment steps) with the code
of two commits and compare what they wrote, byte for byte, timestamps and paths aside.

    python scripts/before_after.py --before 32f8184 --out /tmp/before_after          # all five demos
    python scripts/before_after.py --before 32f8184 --demos longtext_demo --out /tmp/ba
    /tmp/venv_after/bin/python scripts/before_after.py --before 71eea88 --before-python python3 --out /tmp/ba

The "before" code is a `git worktree` of that commit run with `PYTHONPATH=<worktree>/src` (`python -m
nliforge.train` / `nliforge.generate`: its configs are found from its own checkout); "after" is the
installed package. Each side runs in its own process, one thread, offline, into <out>/<side>/<demo>; then
every data file both sides wrote (JSONL, CSV; parquet as rows) is compared with run-specific values
(absolute paths, times, seconds, dates) blanked. Prints one line per demo and writes <out>/report.md.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATE = ["-m", "nliforge.generate", "experiment=demo"]
DEMOS = {
    "train_demo": ["-m", "nliforge.train", "experiment=demo"],
    "wanli_demo": GENERATE + ["pipeline=wanli"],
    "disco_demo": GENERATE + ["pipeline=disco"],
    "longtext_demo": GENERATE + ["pipeline=longtext"],
    "zaug_demo": GENERATE + ["pipeline=zaug"],
}
COMPARED = ("*.jsonl", "*.csv", "*.parquet")
SKIPPED = ("csv_logs", "logs", ".hydra", "wandb")
# values that differ between two runs of the same code: times, dates, absolute paths, durations
VOLATILE = [re.compile(p) for p in (r"\d{4}-\d\d-\d\dT?[ _]?\d\d[:-]\d\d[:-]\d\d(\.\d+)?",
                                    r'"(seconds|elapsed|finished|started|created_at|wall_s)": ?[-0-9.e]+',
                                    r"/tmp/[^\s\"',]+", r"/work/[^\s\"',]+")]


def normalised(path: Path) -> str:
    if path.suffix == ".parquet":
        import pandas as pd

        text = pd.read_parquet(path).to_csv(index=False)
    else:
        text = path.read_text(encoding="utf-8", errors="replace")
    for pattern in VOLATILE:
        text = pattern.sub("<v>", text)
    return text


def data_files(run: Path) -> dict[str, Path]:
    found = {}
    for pattern in COMPARED:
        for path in run.rglob(pattern):
            rel = path.relative_to(run)
            if not any(part in SKIPPED for part in rel.parts):
                found[str(rel)] = path
    return found


def compare(before: Path, after: Path) -> tuple[list[str], list[str], list[str]]:
    """(identical, differing, only one side) relative paths of the data files of two run folders."""
    a, b = data_files(before), data_files(after)
    same, diff = [], []
    for rel in sorted(set(a) & set(b)):
        (same if normalised(a[rel]) == normalised(b[rel]) else diff).append(rel)
    return same, diff, sorted(set(a) ^ set(b))


def run_side(side: str, demo: str, out: Path, pythonpath: str | None, python: str = sys.executable) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    folder = out / side / demo
    cmd = [python, *DEMOS[demo], f"hydra.run.dir={folder}", "trainer.enable_progress_bar=false"]
    start = time.monotonic()
    with open(out / side / f"{demo}.log", "w") as log:
        subprocess.run(cmd, env=env, cwd=out / side, stdout=log, stderr=subprocess.STDOUT, check=True)
    return time.monotonic() - start


def worktree(commit: str, out: Path) -> Path:
    tree = out / f"tree_{commit}"
    if not tree.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit], check=True,
                       stdout=subprocess.DEVNULL)
    return tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="the commit whose code is 'before'")
    ap.add_argument("--demos", default=",".join(DEMOS), help=f"comma-separated, of {', '.join(DEMOS)}")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--before-python", default=sys.executable,
                    help="the Python that runs the 'before' side: one whose installed nliforge metadata (entry points) "
                         "matches that commit's modules, when the redesign moved them")
    args = ap.parse_args()
    demos = [d for d in args.demos.split(",") if d]
    unknown = [d for d in demos if d not in DEMOS]
    if unknown:
        sys.exit(f"error: --demos {','.join(unknown)}: expected some of {', '.join(DEMOS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for side in ("before", "after"):
        (args.out / side).mkdir(exist_ok=True)
    old_src = str(worktree(args.before, args.out) / "src")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"# Before ({args.before}) and after ({head}): the offline demos", "",
             "| demo | files compared | identical | differing | one side only | s before / after |", "|---|---|---|---|---|---|"]
    for demo in demos:
        with ThreadPoolExecutor(2) as pool:   # the two sides at once, one thread each
            t_before = pool.submit(run_side, "before", demo, args.out, old_src, args.before_python)
            t_after = pool.submit(run_side, "after", demo, args.out, None)
            seconds = (t_before.result(), t_after.result())
        same, diff, lone = compare(args.out / "before" / demo, args.out / "after" / demo)
        lines.append(f"| {demo} | {len(same) + len(diff)} | {len(same)} | {', '.join(diff) or '-'} | "
                     f"{', '.join(lone) or '-'} | {seconds[0]:.0f} / {seconds[1]:.0f} |")
        print(lines[-1], flush=True)
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out / 'report.md'}")


if __name__ == "__main__":
    main()
