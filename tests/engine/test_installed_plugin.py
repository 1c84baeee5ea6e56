"""The copyable template (templates/pipeline/) installed as an outside package by pip (a wheel built from a
copy of it, installed into a target folder put on PYTHONPATH, the way a site-packages holds it): then
`nliforge-generate --help` lists its pipeline and imports neither torch nor pandas nor the plugin's own
module (its config folder is found from the entry point without running its code), and the guide's demo
runs with one command, the stand-in server started and stopped inside it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SCRIPT = """
import json, sys
sys.argv = {argv!r}
from nliforge.generate import main
try:
    main()
except SystemExit as exit:
    code = exit.code
else:
    code = 0
print(json.dumps({{"exit": code, "loaded": sorted(m for m in sys.modules
                                                if m.split(".")[0] in ("torch", "pandas", "lightning", "my_pipeline"))}}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """`pip install --no-deps --target <site> <copy of templates/pipeline>`: built offline with the setuptools
    of this environment (no build isolation, no index), so nothing is downloaded and the source tree stays clean."""
    tmp = tmp_path_factory.mktemp("plugin")
    shutil.copytree(ROOT / "templates" / "pipeline", tmp / "src")
    site = tmp / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(site), str(tmp / "src")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (site / "my_pipeline" / "conf" / "pipeline" / "my_pipeline.yaml").is_file()
    assert any(p.name.startswith("my_pipeline-") for p in site.glob("*.dist-info"))
    return site


def run_generate(site: Path, argv: list[str], cwd: Path) -> tuple[dict, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC), os.environ.get("PYTHONPATH", "")]),
           "NLIFORGE_HOME": str(cwd / "home"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(argv=argv)], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=env)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done


@pytest.mark.slow
def test_help_lists_the_installed_pipeline_without_importing_it_torch_or_pandas(installed, tmp_path):
    result, done = run_generate(installed, ["nliforge-generate", "--help"], tmp_path)
    assert result == {"exit": 0, "loaded": []}, done.stderr[-3000:]
    assert "installed: my_pipeline (my-pipeline 0.1.0)" in done.stdout
    assert "built in: wanli, disco, zaug, zfilter, longtext" in done.stdout
    groups = [line for line in done.stdout.splitlines() if line.startswith("pipeline: ")]
    assert groups and "my_pipeline" in groups[0].split(", ")   # its config folder is on the search path


@pytest.mark.slow
def test_the_guides_demo_runs_with_one_command(installed, tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"uid": f"p{i}", "premise": f"Person {i} reads a book.", "hypothesis": "x.",
                                         "label": "neutral", "source": "hand", "meta": {}}) + "\n" for i in range(5)))
    run = tmp_path / "run"
    result, done = run_generate(installed, ["nliforge-generate", "pipeline=my_pipeline", f"input={pairs}",
                                            "input_limit=3", "experiment=demo", f"hydra.run.dir={run}"], tmp_path)
    assert result["exit"] == 0, done.stderr[-3000:]
    assert "my_pipeline" in result["loaded"]   # the run itself imports the plugin
    rows = [json.loads(line) for line in (run / "dataset.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and rows[0]["hypothesis"] == "It is not true that person 0 reads a book."
