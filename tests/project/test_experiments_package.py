"""experiments/ is one importable package: no file edits sys.path to reach a sibling, every folder that holds a
script is a package, and the shell scripts run the scripts as modules (`python -m experiments.<folder>.<module>`
from the checkout root), so a sibling import resolves the same way from run.sh, the tests and a shell."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXP = ROOT / "experiments"
SYS_PATH_EDIT = re.compile(r"sys\.path\.(insert|append)\b")
SCRIPT_BY_PATH = re.compile(r"python3?\s+\"?[^\s\"]*\.py\b")   # `python "$HERE/x.py"`, `python experiments/x.py`


def files(pattern: str) -> list[Path]:
    return sorted(p for p in EXP.rglob(pattern) if p.is_file())


def test_no_file_under_experiments_edits_sys_path():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in files("*.py") + files("*.sh") for n, line in
             enumerate(p.read_text(errors="replace").splitlines(), 1) if SYS_PATH_EDIT.search(line)]
    assert files("*.py") and not found, found


def test_the_pattern_catches_both_edits():
    assert SYS_PATH_EDIT.search("sys.path.insert(0, str(HERE))")
    assert SYS_PATH_EDIT.search("    sys.path.append(str(HERE.parent))")
    assert not SYS_PATH_EDIT.search("from experiments.real_text.common import load_named")


def test_every_folder_with_a_script_is_a_package():
    missing = sorted({str(p.parent.relative_to(ROOT)) for p in files("*.py") if not (p.parent / "__init__.py").is_file()})
    assert not missing, f"no __init__.py in {missing}"


def test_the_shell_scripts_run_python_scripts_as_modules():
    by_path = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in files("*.sh") for n, line in
               enumerate(p.read_text().splitlines(), 1) if SCRIPT_BY_PATH.search(line)]
    assert files("*.sh") and not by_path, by_path
    assert SCRIPT_BY_PATH.search('python "$HERE/../controls_table.py" --scratch "$R"')
    assert not SCRIPT_BY_PATH.search('python -m experiments.controls_table --scratch "$R"')


def test_a_script_with_sibling_imports_runs_as_a_module_from_the_root():
    """experiments.summary imports four siblings by their full names; --check compares the committed
    summary.csv and README blocks with what the results files give."""
    done = subprocess.run([sys.executable, "-m", "experiments.summary", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "up to date", done.stdout + done.stderr[-2000:]
