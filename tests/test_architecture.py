"""The rooms of the code stay apart: no import cycles, pure stages stay pure, the platform knows no feature.

The import graph is read from the source with :mod:`ast`: module-level and
function-level imports both count (a cycle hidden in a function is still a cycle);
imports under ``if TYPE_CHECKING:`` do not (they never run).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "bot"

#: Stages of the one-way data flow that must run without a network library or the app.
PURE = ("bot.engine",)
#: Imports a pure stage may not make (module prefixes).
IMPURE = ("aiohttp", "gidgethub", "bot.app")
#: The platform: knows how to receive, queue, run and publish, never what a feature does.
PLATFORM = "bot.app"
#: The features the app composes (see bot/features/__init__.py).
FEATURES = ("bot.features", "bot.commands", "bot.feature_support")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names), outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            # ``from bot.x import y`` may import the submodule ``bot.x.y``.
            for alias in node.names:
                found.add(f"{module}.{alias.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@functools.cache
def _package_imports() -> dict[str, set[str]]:
    """``imports_of`` every module of the package, read once per test run (the tests only read it)."""
    return {module_name(p): imports_of(p) for p in PACKAGE.rglob("*.py")}


def import_graph() -> dict[str, set[str]]:
    """``module -> modules of bot it imports`` for every module of the ``bot`` package."""
    modules = _package_imports()
    graph: dict[str, set[str]] = {}
    for name, imports in modules.items():
        imported = {m for m in imports if m in modules}
        # Importing ``bot.a.b`` runs ``bot/a/__init__.py`` first: an edge like any other.
        imported |= {parent for m in imported for parent in _parents(m) if parent in modules}
        graph[name] = {m for m in imported if m != name and m not in _parents(name)}
    return graph


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def external_imports() -> dict[str, set[str]]:
    """``module -> every module name it imports`` (including third-party ones)."""
    return {name: set(imports) for name, imports in _package_imports().items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one cycle path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_path(graph, set(c)) for c in components]


def _cycle_path(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """One concrete cycle through the component's first module: ``[a, b, ..., a]``."""
    start = min(members)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                return paths[node] + [start]
            if nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    return sorted(members)  # pragma: no cover - a component always has a cycle


def _within(module: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_the_graph_sees_function_level_imports_and_skips_type_checking(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import bot.engine.build\n"
        "if TYPE_CHECKING:\n    import bot.app.server\n"
        "def f():\n    from bot.engine.render import guide\n"
    )
    path = PACKAGE / "_probe_for_test.py"
    path.write_text(source, encoding="utf-8")
    try:
        found = imports_of(path)
    finally:
        path.unlink()
    assert "bot.engine.build" in found and "bot.engine.render.guide" in found
    assert "bot.app.server" not in found


def test_find_cycles_reports_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles() -> None:
    cycles = find_cycles(import_graph())
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("stage", PURE)
def test_pure_stages_import_no_network_library_and_not_the_app(stage: str) -> None:
    offending = sorted(
        f"{module} imports {imported}"
        for module, imported_set in external_imports().items()
        if _within(module, stage)
        for imported in imported_set
        if _within(imported, IMPURE)
    )
    assert offending == []


def test_the_platform_imports_no_feature() -> None:
    graph = import_graph()
    offending = sorted(
        f"{module} imports {imported}"
        for module, imported_set in graph.items()
        if _within(module, PLATFORM)
        for imported in imported_set
        if _within(imported, FEATURES)
    )
    assert offending == []


def test_features_are_composed_in_one_place() -> None:
    from bot.features import FEATURES as composed

    events = {route.event for routes in composed for route in routes}
    assert {"pull_request", "issue_comment"} <= events


def test_the_narrator_imports_neither_a_network_library_of_the_app_nor_the_app_nor_a_feature() -> None:
    # bot/narrator talks to the model server through the openai client only; the CLI and
    # the app's narrator feature both use it.
    offending = sorted(
        f"{module} imports {imported}"
        for module, imported_set in external_imports().items()
        if _within(module, "bot.narrator")
        for imported in imported_set
        if _within(imported, (*IMPURE, *FEATURES))
    )
    assert offending == []
