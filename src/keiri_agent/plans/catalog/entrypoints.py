"""Importing a block class from a spec's entrypoint (lazily; called by ``BlockCatalog.load``).

``package.module:Class`` is imported normally; ``path/to/file.py:Class`` is loaded
from a file inside the spec's folder, once, as a uniquely named module.
Problems are raised as ``EntrypointProblem``; ``plans.catalog`` names the block.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import threading
from pathlib import Path
from types import ModuleType

from keiri_agent.blocks.base import Block
from keiri_agent.plans.catalog.spec_file import SpecProblem, entrypoint_file, is_file_entrypoint

_IMPORT_LOCK = threading.RLock()


class EntrypointProblem(ValueError):
    """Why an entrypoint cannot give a block class (with a hint)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


def import_block_class(entrypoint: str, folder: Path | None, kind: str) -> type[Block]:
    """The Block subclass named by ``entrypoint`` (file paths relative to ``folder``).

    Thread-safe: parallel loop iterations may load the same block at once.
    """
    with _IMPORT_LOCK:
        return _import_block_class(entrypoint, folder, kind)


def _import_block_class(entrypoint: str, folder: Path | None, kind: str) -> type[Block]:
    target, _, class_name = entrypoint.rpartition(":")
    try:
        if is_file_entrypoint(entrypoint):
            if folder is None:
                raise EntrypointProblem("is a file path but the spec has no folder")
            module = import_file(entrypoint_file(entrypoint, folder))
        else:
            module = importlib.import_module(target)
    except EntrypointProblem:
        raise
    except SpecProblem as problem:
        raise EntrypointProblem(problem.message, problem.hint) from None
    except Exception as error:
        raise EntrypointProblem(
            f"cannot be imported ({type(error).__name__}: {error})",
            hint="fix the module, or the entrypoint (package.module:Class or file.py:Class)",
        ) from error
    block_class = getattr(module, class_name, None)
    if block_class is None:
        raise EntrypointProblem(f"{target} has no {class_name!r}")
    if not isinstance(block_class, type) or not issubclass(block_class, Block):
        raise EntrypointProblem(
            f"{class_name} is not a Block subclass",
            hint="subclass keiri_agent.blocks.base.ProcessingBlock or UIBlock",
        )
    if block_class.kind != kind:
        raise EntrypointProblem(
            f"the spec says kind {kind!r} but {class_name} is a {block_class.kind!r} block",
            hint="ProcessingBlock is kind 'processing', UIBlock is kind 'ui'",
        )
    return block_class


def import_file(path: Path) -> ModuleType:
    """Import a user block file once (as a uniquely named module)."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_keiri_user_block_{stem}_{digest}"
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    if not path.is_file():
        raise EntrypointProblem(f"no block file {path}")
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise EntrypointProblem(f"{path} cannot be imported as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
