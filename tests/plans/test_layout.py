"""The shape of ``plans/``: a cheap package import, blocks apart (cycles: tests/architecture)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).parents[2] / "src"
PLANS = SRC / "keiri_agent" / "plans"
BLOCKS = SRC / "keiri_agent" / "blocks"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """Modules of ``known`` that ``path`` imports at module level (TYPE_CHECKING too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    nodes = [node for node in tree.body if not isinstance(node, ast.FunctionDef)]
    for node in nodes:
        for child in ast.walk(node):
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.add(child.module)
                found.update(f"{child.module}.{alias.name}" for alias in child.names)
    return found & known


def test_importing_plans_loads_no_block_implementation_and_no_surface() -> None:
    code = (
        "import sys, keiri_agent.plans as p\n"
        "p.PlanEngine, p.PlanRunner, p.PlanValidator, p.BlockCatalog\n"
        "print('\\n'.join(sorted(sys.modules)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()

    blocks = {m for m in loaded if m.startswith("keiri_agent.blocks.")}
    assert blocks <= {"keiri_agent.blocks.base"}, blocks
    assert not [m for m in loaded if m.startswith(("keiri_agent.cli", "keiri_agent.ui"))]


def test_blocks_never_import_plans() -> None:
    for path in BLOCKS.rglob("*.py"):
        imported = _imports(path, {"keiri_agent.plans"}) | {
            module for module in _imports(path, {_module_name(p) for p in PLANS.rglob("*.py")})
        }
        assert not imported, (path, imported)
