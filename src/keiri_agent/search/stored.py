"""The knowledge base's files on disk, validated when they are read.

A collection keeps two JSON files: ``manifest.json`` (``ManifestFile``: document name →
``ManifestEntry``) and ``keyword/index.json`` (``KeywordIndexFile``: the chunks with
their term counts). ``read_stored`` is the one place they are read: a file that is not
JSON, is truncated, or has an entry missing a field or holding a value of the wrong
type is a ``KnowledgeBaseCorruptError`` (code ``KNOWLEDGE_BASE_CORRUPT``) naming the
file and the folder to delete before indexing again — never a ``KeyError`` later, in
``status``, ``ask`` or ``index``. Nothing is deleted automatically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from keiri_agent.errors import UserInputError


class KnowledgeBaseCorruptError(UserInputError):
    """A knowledge-base file on disk is damaged: delete its folder and index again."""

    code = "KNOWLEDGE_BASE_CORRUPT"


class _Stored(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StoredSource(_Stored):
    document: str
    page: int | None = None
    heading: str | None = None
    row: int | None = None


class StoredChunk(_Stored):
    """A chunk as ``index.json`` keeps it (``Chunk.to_dict()`` plus its term counts)."""

    id: str
    text: str
    source: StoredSource
    metadata: dict[str, Any] | None = None
    terms: dict[str, int]


class KeywordIndexFile(_Stored):
    """``keyword/index.json``: the format is checked by ``KeywordIndex.open``."""

    format: int
    tokenizer: str
    index_headings: bool = True
    chunks: list[StoredChunk]


class ManifestEntry(_Stored):
    """What the manifest records about one indexed document."""

    model_config = ConfigDict(extra="allow")

    sha256: str
    size: int
    chunks: int
    kind: str
    indexed_at: str
    vector: bool = False
    path: str | None = None
    chunking: int | None = None
    """``chunking.CHUNKING_VERSION`` when indexed (None: before versions were recorded)."""


class ManifestFile(_Stored):
    format: int = 1
    documents: dict[str, ManifestEntry]


Model = TypeVar("Model", bound=BaseModel)


def read_stored(model: type[Model], file: Path, folder: Path) -> Model:
    """``file`` parsed as ``model``; ``KnowledgeBaseCorruptError`` (naming ``folder``,
    what to delete) when it cannot be read, is not JSON or is not of that shape."""
    try:
        return model.model_validate_json(file.read_bytes())
    except ValidationError as exc:
        raise corrupt(file, folder, _first_problem(exc)) from None
    except OSError as exc:
        raise corrupt(file, folder, f"{type(exc).__name__}: {exc}") from None


def corrupt(file: Path, folder: Path, problem: str) -> KnowledgeBaseCorruptError:
    """The error for a damaged knowledge-base ``file`` (``folder``: what to delete)."""
    return KnowledgeBaseCorruptError(
        f"ナレッジベースのファイル {file} が壊れているため読めません（{problem}）",
        hint=(
            f"フォルダー {folder} を削除するか別の場所へ移動してから、"
            "keiri-agent helpdesk index で文書をもう一度登録してください"
            "（壊れたファイルは自動では削除しません）"
        ),
        details={"path": str(file), "folder": str(folder), "problem": problem},
    )


def _first_problem(error: ValidationError) -> str:
    """``chunks.3.terms: Field required`` (and how many more), or the JSON error."""
    problems: list[Any] = error.errors(include_url=False, include_input=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"])
    text = f"{where}: {first['msg']}" if where else str(first["msg"])
    if len(problems) > 1:
        text += f" ほか {len(problems) - 1} 件"
    return text


__all__ = [
    "KeywordIndexFile",
    "KnowledgeBaseCorruptError",
    "ManifestEntry",
    "ManifestFile",
    "StoredChunk",
    "corrupt",
    "read_stored",
]
