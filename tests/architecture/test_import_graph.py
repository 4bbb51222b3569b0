"""The package's import graph: no cycles, and layers that import only downwards.

The graph is read from the source with ``ast``: every ``import`` of a ``keiri_agent``
module is an edge, including imports inside functions and under ``if TYPE_CHECKING:``
(a lazy or type-only import that merely hides a cycle is still a cycle: the two
modules cannot be understood, tested or moved apart).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "keiri_agent"
SOURCE = Path(__file__).resolve().parents[2] / "src" / PACKAGE


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in SOURCE.rglob("*.py")}


def _imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _resolve(module: str, name: str, level: int, is_package: bool) -> str:
    if level == 0:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def import_graph() -> dict[str, set[str]]:
    """module → the project modules it imports when it is imported."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = _resolve(module, node.module or "", node.level, is_package)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for target in targets:
                if target.startswith(PACKAGE) and target in modules and target != module:
                    graph[module].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_in_the_package() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("keiri_agent.blocks.base", ("keiri_agent.plans",)),
        ("keiri_agent.services", ("keiri_agent.cli", "keiri_agent.ui")),
        # the CLI starts without the heavy libraries a command may never need
        ("keiri_agent.cli.app", ("pandas", "langchain", "langgraph", "openai", "matplotlib")),
        ("keiri_agent.events", ("keiri_agent.",)),
    ],
)
def test_importing_a_layer_does_not_pull_in_the_layers_above(
    module: str, forbidden: tuple[str, ...]
) -> None:
    code = (
        "import sys, importlib; importlib.import_module(sys.argv[1]); "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code, module], capture_output=True, text=True, check=True
    ).stdout.split()
    # the package's __init__ installs deferred_packages before anything else
    allowed = {
        "keiri_agent.blocks.base",
        "keiri_agent.blocks",
        "keiri_agent.deferred_packages",
        module,
    }
    leaked = [
        name
        for name in loaded
        if name not in allowed and any(name.startswith(prefix) for prefix in forbidden)
    ]
    heavy_roots = sorted(
        {name.split(".")[0] for name in leaked}
        | {name for name in leaked if name.startswith("keiri_agent.")}
    )
    assert leaked == [], f"import {module} loads {heavy_roots[:20]}"


LAYERS: dict[str, int] = {
    # foundations: import nothing above them
    **dict.fromkeys(
        (
            "events",
            "errors",
            "config",
            "masking",
            "pii",
            "limits",
            "stopping",
            "textcodec",
            "logs",
            "workspace",
            "private",
            "lazy_exports",
            "deferred_packages",
            "shown_time",
        ),
        0,
    ),
    # infrastructure shared by every part, and domain logic the blocks build on
    **dict.fromkeys(("files", "documents", "search", "storage", "llm", "accounting", "people"), 1),
    "blocks": 2,
    # the products' cores: siblings that never import each other
    **dict.fromkeys(("plans", "agents"), 3),
    # the services and the run service that executes their long tasks
    **dict.fromkeys(("services", "runs"), 4),
    # surfaces
    **dict.fromkeys(("cli", "ui", "demo", "api"), 5),
}
SIBLINGS_APART = {frozenset(("plans", "agents"))}


def _part(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_part_of_the_package_has_a_layer() -> None:
    data_packages = {"", "samples", "block_specs", "design_templates"}
    parts = {_part(module) for module in import_graph()} - data_packages
    assert parts <= set(LAYERS), f"give these a layer in LAYERS: {sorted(parts - set(LAYERS))}"


def test_layers_import_only_downwards() -> None:
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if (source := _part(module)) in LAYERS
        and (used := _part(target)) in LAYERS
        and (LAYERS[used] > LAYERS[source] or frozenset((source, used)) in SIBLINGS_APART)
    )
    assert upward == []
