"""Packages whose ``__init__`` runs on first use instead of on import.

Two of LangGraph's dependencies import far more in their package ``__init__`` than the
modules LangGraph reaches need:

* ``langsmith.types`` — about 180 generated pydantic models of the LangSmith REST API.
  ``langsmith.run_trees`` (loaded by every ``langchain_core`` runnable, through its tracers)
  only needs the ``Literal`` alias in ``langsmith.types.run_select_field``;
* ``langgraph_sdk`` — the LangGraph Platform HTTP client (httpx, websockets, its stream
  protocol). ``langgraph.runtime`` only needs the ``TypedDict``s in
  ``langgraph_sdk.auth.types``.

Building those models and clients costs a third of a second or more at every start of an
offline command that never uses them. :func:`install` puts a finder in front of
``sys.meta_path`` that loads these packages as a module with its real ``__path__`` (so a
submodule such as ``langsmith.types.run_select_field`` imports normally, alone) and runs
the package's own ``__init__`` the first time anything else is asked of it
(``from langsmith.types import Run``, ``langgraph_sdk.get_client``). Code that uses the
package gets what it always got, one attribute access later. If a new release imports one
of these packages' names directly, the ``__init__`` simply runs then: the deferral can cost
nothing but its saving.

Kept on measurement (issue 31 asked to remove import hooks unless start-up budgets need
them): ``benchmarks/cli_latency.py --repeats 5`` with the finder, ``analyze`` 0.89 s
(2.43× ``import pandas``); without it 0.99 s (3.04×, over the 3× budget); the libraries
alone import in 1.13 s as published and 0.87 s with the deferral.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
import types
from collections.abc import Iterable, Sequence
from typing import Any

DEFERRED_PACKAGES = ("langsmith.types", "langgraph_sdk")


class _RunInitOnFirstUse:
    """Wraps a package's loader: creates the module as usual, but leaves its ``__init__``
    to a module ``__getattr__`` that runs it when an attribute the module lacks is read.

    A plain class, like the finder: ``importlib.abc`` imports ``importlib.resources``."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader
        self._lock = threading.RLock()

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        namespace = module.__dict__
        state = {"init": "pending"}

        def run_init_then_get(name: str) -> Any:
            with self._lock:  # another thread waits here until the __init__ has run
                if state["init"] == "pending":
                    state["init"] = "running"  # the same thread, re-entering, just looks up
                    try:
                        self._loader.exec_module(module)
                    except BaseException:
                        # as a failed import does: the next import starts afresh
                        if sys.modules.get(module.__name__) is module:
                            del sys.modules[module.__name__]
                        raise
                    finally:
                        state["init"] = "done"
                        if namespace.get("__getattr__") is run_init_then_get:
                            del namespace["__getattr__"]
            if name in namespace:
                return namespace[name]
            own_getattr = namespace.get("__getattr__")
            if own_getattr is not None and own_getattr is not run_init_then_get:
                return own_getattr(name)
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

        namespace["__getattr__"] = run_init_then_get

    def __getattr__(self, name: str) -> Any:
        # resource readers and the like: whatever the real loader offers
        return getattr(self._loader, name)


class _DeferredPackageFinder:
    def __init__(self, names: Iterable[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return spec  # not found, or not a package: import it as usual
        spec.loader = _RunInitOnFirstUse(spec.loader)  # type: ignore[assignment]  # duck-typed
        return spec


def install(names: Iterable[str] = DEFERRED_PACKAGES) -> None:
    """Defer the ``__init__`` of ``names`` from now on (packages already imported stay as
    they are); one finder serves every call."""
    for finder in sys.meta_path:
        if isinstance(finder, _DeferredPackageFinder):
            finder.names |= frozenset(names)
            return
    sys.meta_path.insert(0, _DeferredPackageFinder(names))
