"""CPU seconds (user + system) of every console script's `--help`, this tree against a baseline tree.

Each measurement is a fresh interpreter that imports the script's `main` and runs it with `--help`, as the
console script does; its CPU time comes from the kernel's accounting of the finished child
(resource.getrusage(RUSAGE_CHILDREN)), so other processes on the machine do not count in it (they still slow
the caches: read the numbers of an idle machine). One unmeasured round first writes the bytecode caches; then
`--rounds` rounds, the trees alternating, and the median per script and tree.

`--plugin` also puts the copyable pipeline template (templates/pipeline/) on the path as an installed
package (its module, YAML and a .dist-info with its entry points, as `pip install` leaves them), so the
numbers are those of a machine where an outside pipeline is installed.

    python benchmarks/startup.py --baseline /tmp/baseline/src --plugin --rounds 5 --out results/startup.json

The baseline is any other tree's `src/` folder (e.g. `git archive <commit> src | tar -x -C /tmp/baseline`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = """
import sys
sys.argv = [{name!r}, "--help"]
from {module} import {attr} as main
try:
    main()
except SystemExit:
    pass
"""


def scripts() -> dict[str, str]:
    """Console script name -> `module:function`, from pyproject.toml."""
    return dict(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])


def plugin_site(folder: Path) -> Path:
    """The template as an installed package: its module folder and a .dist-info with its entry points."""
    template = ROOT / "templates" / "pipeline"
    project = tomllib.loads((template / "pyproject.toml").read_text())["project"]
    shutil.copytree(template / "my_pipeline", folder / "my_pipeline")
    dist = folder / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (dist / "entry_points.txt").write_text("\n".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in items.items())
        for group, items in project["entry-points"].items()))
    return folder


def cpu_seconds(name: str, target: str, path: list[str], home: Path) -> float:
    """user + system CPU seconds of one `<name> --help` in a fresh interpreter."""
    module, attr = target.split(":")
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]   # kept after the tree
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, *given]), "NLIFORGE_HOME": str(home),
           "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-c", CODE.format(name=name, module=module, attr=attr)],
                          capture_output=True, text=True, env=env, cwd=home, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"{name} --help failed ({done.returncode}): {done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(trees: dict[str, Path], rounds: int, plugin: bool) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        extra = [str(plugin_site(Path(tmp) / "site"))] if plugin else []
        home = Path(tmp) / "home"
        home.mkdir()
        samples: dict[str, dict[str, list[float]]] = {t: {s: [] for s in scripts()} for t in trees}
        for r in range(rounds + 1):
            for tree, src in trees.items():
                for name, target in scripts().items():
                    seconds = cpu_seconds(name, target, [*extra, str(src)], home)
                    if r:   # round 0 writes the bytecode caches
                        samples[tree][name].append(seconds)
        return {t: {s: statistics.median(v) for s, v in per.items()} for t, per in samples.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="another tree's src/ folder to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--plugin", action="store_true", help="with the pipeline template installed")
    ap.add_argument("--out", type=Path, help="write the medians as JSON here")
    args = ap.parse_args(argv)
    trees = {"this": ROOT / "src", **({"baseline": args.baseline} if args.baseline else {})}
    medians = measure(trees, args.rounds, args.plugin)
    print(f"CPU seconds (user+sys) of `--help`, median of {args.rounds}, plugin installed: {args.plugin}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'script':20} {'this':>6} " + (f"{'baseline':>9} {'ratio':>6}" if args.baseline else ""))
    for name in scripts():
        this = medians["this"][name]
        row = f"{name:20} {this:6.2f} "
        if args.baseline:
            base = medians["baseline"][name]
            row += f"{base:9.2f} {base / this:5.2f}x"
        print(row)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rounds": args.rounds, "plugin": args.plugin, "medians": medians,
                                        "cpu_count": os.cpu_count(), "load": os.getloadavg()}, indent=2))


if __name__ == "__main__":
    main()
