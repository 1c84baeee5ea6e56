"""Imports run down the floors of the package (docs/code-layout.md): the error type on the ground floor,
then the shared utilities, data, the synthetic world, the generation runtime, models, cartography, generic
filters, evaluation and analysis, tracking, training (train.py: nliforge-train, whose train(cfg) the
pipelines' classifier stages call), the pipelines' shared core (engine), the papers' pipelines, review,
publishing and serving, and the other entry points on top. Checked by reading the source with `ast`
(nothing is imported), at the level of the package's folders and top-level modules.

Two rules: no two folders import each other, and at most 4 imports run from a lower floor to a higher
one, each listed in UPWARD with why it is there. Lower floors reach higher ones only through entry points
(the set loaders, the pipelines, the stand-in responders), which `ast` does not see as imports.

Within the pipelines' floor, each pipeline is a leaf: no `pipelines/<a>` imports `pipelines/<b>`, so a
built-in pipeline uses exactly what a pipeline of another package can (the engine, the filters, the
runtime), and shared helpers live on a lower floor."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "nliforge"
FLOORS = ["errors", "utils", "data", "world", "generation", "models", "cartography", "filtering", "evaluation",
          "analysis", "tracking", "train_checks", "train", "engine", "pipelines", "review", "testing", "publishing", "serving",
          "evaluate", "generate_checks", "generate", "report", "analyze", "publish", "study", "nliforge"]
# (file, floor it imports) -> why; none today: the four there were (the world loader, the splice's text rule,
# the review's run folder, the rubric judge) went with the per-paper layout.
UPWARD: dict[tuple[str, str], str] = {}


def floor_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "nliforge"


def imports() -> dict[tuple[str, str], list[str]]:
    """(importing file relative to src/nliforge, imported floor) -> ['file:line', ...], across floors."""
    out = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        me = floor_of(".".join(("nliforge", *rel.with_suffix("").parts)))
        if rel.name == "__init__.py" and len(rel.parts) == 1:
            me = "nliforge"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "nliforge":
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "nliforge"]
            else:
                continue
            for target in targets:
                if floor_of(target) != me:
                    out[(str(rel), floor_of(target))].append(f"{rel}:{node.lineno}")
    return out


def test_every_folder_and_module_has_a_floor():
    found = {p.name if p.is_dir() else p.stem for p in SRC.iterdir()
             if (p.is_dir() and (p / "__init__.py").is_file()) or (p.suffix == ".py" and p.stem != "__init__")}
    assert found <= set(FLOORS), sorted(found - set(FLOORS))


def test_no_two_folders_import_each_other():
    pairs = {(floor_of("nliforge." + str(Path(f).with_suffix("")).replace("/", ".")), t) for f, t in imports()}
    mutual = {(a, b) for a, b in pairs if (b, a) in pairs and a < b}
    assert mutual == set(), sorted(mutual)


def test_at_most_four_imports_run_upward_each_justified():
    up = {}
    for (file, target), where in imports().items():
        me = floor_of("nliforge." + str(Path(file).with_suffix("")).replace("/", "."))
        if file == "__init__.py":
            me = "nliforge"
        if FLOORS.index(target) > FLOORS.index(me):
            up[(file, target)] = where
    assert set(up) <= set(UPWARD), {k: v for k, v in up.items() if k not in UPWARD}
    assert len(UPWARD) <= 4


def cross_pipeline_imports(pipelines_dir: Path) -> list[str]:
    """'file:line imports pipelines.<b>' for every import in pipelines/<a>/ of another pipeline's code."""
    found = []
    for path in sorted(pipelines_dir.rglob("*.py")):
        rel = path.relative_to(pipelines_dir)
        if len(rel.parts) < 2:
            continue
        own = rel.parts[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets = [node.module] if node.module != "nliforge.pipelines" else \
                    [f"nliforge.pipelines.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                if parts[:2] == ["nliforge", "pipelines"] and len(parts) > 2 and parts[2] != own:
                    found.append(f"pipelines/{rel}:{node.lineno} imports pipelines.{parts[2]}")
    return found


def test_no_pipeline_imports_another_pipeline():
    assert cross_pipeline_imports(SRC / "pipelines") == []


def test_a_pipeline_importing_another_is_caught(tmp_path):
    """The check above sees all three spellings of such an import, and allows a pipeline its own modules."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "stages.py").write_text(
        "from nliforge.pipelines.a.parse import x\n"
        "from nliforge.pipelines.b.prompts import prompt_hash\n"
        "import nliforge.pipelines.c.pipeline\n"
        "def f():\n    from nliforge.pipelines import d\n", encoding="utf-8")
    assert cross_pipeline_imports(tmp_path) == ["pipelines/a/stages.py:2 imports pipelines.b",
                                                "pipelines/a/stages.py:3 imports pipelines.c",
                                                "pipelines/a/stages.py:5 imports pipelines.d"]


def test_product_code_never_imports_the_test_helpers():
    """`nliforge.testing` (fake hubs, kill helpers, host-sync probes) is for tests; the demos' offline
    stand-in endpoint lives in `nliforge.generation.stand_in`."""
    users = sorted(w for (file, target), where in imports().items() if target == "testing"
                   and not file.startswith("testing/") for w in where)
    assert users == []
