"""No import circles inside `nliforge`, checked by reading the source with `ast`
(nothing is imported, so the test takes well under a second).

The graph has one node per module of src/nliforge (a package is its `__init__`) and an edge A -> B
when A imports B. Two graphs are checked:

* module level: the imports Python runs when A is imported (the module body, including `if`/`try`
  blocks and class bodies, but not function bodies nor `if TYPE_CHECKING:` blocks). A circle here is
  a real import-time hazard: whichever module is imported first sees the other half-initialised.
* every import, inside functions too. A deferred import only hides a circle (the two modules still
  need each other), so the layering stays one-way: put what both need in a third module.

`from P import n` is an edge to the submodule P.n when there is one, otherwise to P; `import P.Q`
and `from P.Q import n` also run each enclosing package's `__init__`, except a package that encloses
A itself (Python has started that one before A, so reaching it closes no circle unless a name is
taken from it).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "nliforge"


def module_files() -> dict[str, tuple[Path, bool]]:
    """module name -> (file, is a package's __init__)."""
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_nodes(tree: ast.Module, module_level: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module: those its body runs at import time, or all of them."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif module_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif module_level and _is_type_checking(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return found


def _absolute(node: ast.ImportFrom, name: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if is_package else name.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def edges(name: str, is_package: bool, tree: ast.Module, modules, module_level: bool) -> set[str]:
    """The nliforge modules that `name` imports (see the module docstring for the rules)."""
    enclosing = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)} | {name}
    out = set()
    for node in import_nodes(tree, module_level):
        if isinstance(node, ast.Import):
            targets, taken = [a.name for a in node.names], set()
        else:
            base = _absolute(node, name, is_package)
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            takes_names = len(subs) < len(node.names)
            targets, taken = subs + [base], ({base} if takes_names else set())
        for target in targets:
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                module = ".".join(parts[:i])
                if module in modules and (module not in enclosing or module in taken) and module != name:
                    out.add(module)
    return out


def import_graph(module_level: bool) -> dict[str, set[str]]:
    modules = module_files()
    return {name: edges(name, is_package, ast.parse(path.read_text(), str(path)), modules, module_level)
            for name, (path, is_package) in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(found: list[list[str]], graph: dict[str, set[str]]) -> str:
    return "\n".join(" ".join(m for m in comp) + "\n  edges: " +
                     ", ".join(f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp)
                     for comp in found)


def test_no_import_cycle_at_module_level():
    graph = import_graph(module_level=True)
    assert len(graph) > 100 and "nliforge.engine.execute" in graph
    found = cycles(graph)
    assert not found, "import circles at module level:\n" + _describe(found, graph)


def test_no_import_cycle_even_through_imports_inside_functions():
    graph = import_graph(module_level=False)
    found = cycles(graph)
    assert not found, "import circles (counting imports inside functions):\n" + _describe(found, graph)


def test_the_checker_finds_a_circle_and_ignores_what_it_should(tmp_path):
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    modules = {"p": None, "p.x": None, "p.y": None}
    tree = ast.parse("from p import y\nimport typing\nif typing.TYPE_CHECKING:\n    import p.z\n"
                     "def f():\n    from p import x\n")
    assert edges("p.x", False, tree, modules, module_level=True) == {"p.y"}   # p encloses p.x: no edge
    assert edges("p.y", False, tree, modules, module_level=False) == {"p.x"}
    assert edges("p.y", False, ast.parse("from p import thing"), modules, module_level=True) == {"p"}
    assert edges("q", False, ast.parse("from .p.x import f"), {"q": None, **modules}, module_level=True) == {"p", "p.x"}
