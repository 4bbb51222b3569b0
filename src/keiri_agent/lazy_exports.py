"""Package ``__init__`` modules that export names without importing them up front.

A package's public names often live in heavy modules (pandas, LangChain, LangGraph).
Importing the package for one light submodule — ``keiri_agent.agents.analysis.report``
from the CLI, say — must not import all of them::

    __getattr__, __dir__ = lazy_exports(__name__, {"AnalysisAgent": ".agent", ...})

A name is imported from its module on first access and then kept in the package's
namespace. Type checkers see the names through an ``if TYPE_CHECKING:`` import block
next to the call.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``; ``exports`` maps name → module.

    Module names starting with ``.`` are relative to ``package``.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
