"""Per-file document errors: which file, what is wrong, how to fix it."""

from __future__ import annotations

from typing import Any

from keiri_agent.errors import UserInputError


class DocumentErrorCode:
    """Stable codes of ``DocumentError``."""

    DOCUMENT_EMPTY = "DOCUMENT_EMPTY"
    DOCUMENT_TOO_LARGE = "DOCUMENT_TOO_LARGE"
    DOCUMENT_UNSUPPORTED = "DOCUMENT_UNSUPPORTED"
    DOCUMENT_ENCRYPTED = "DOCUMENT_ENCRYPTED"
    DOCUMENT_CORRUPT = "DOCUMENT_CORRUPT"
    DOCUMENT_NO_TEXT = "DOCUMENT_NO_TEXT"
    DOCUMENT_ENCODING = "DOCUMENT_ENCODING"


class DocumentError(UserInputError):
    """A file whose text cannot be extracted; ``details['file']`` names it."""

    code = "DOCUMENT_ERROR"

    def __init__(
        self,
        code: str,
        name: str,
        problem: str,
        *,
        hint: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(
            f"{name}: {problem}", hint=hint, details={"file": name, **(details or {})}, code=code
        )
        self.file = name


def corrupt(name: str, kind: str, exc: BaseException | None = None) -> DocumentError:
    """The file is not a readable ``kind`` file (library error summarised, not re-raised)."""
    details = {"kind": kind}
    if exc is not None:
        details["cause"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return DocumentError(
        DocumentErrorCode.DOCUMENT_CORRUPT,
        name,
        f"ファイルが壊れているか、正しい {kind.upper()} ファイルではありません",
        hint=f"作成したアプリで開いて .{kind} 形式で保存し直し、もう一度アップロードしてください。",
        details=details,
    )
