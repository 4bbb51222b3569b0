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
        f"the file is damaged or is not a valid {kind.upper()} file",
        hint=f"open it in its application and save it again as .{kind}, then upload it again",
        details=details,
    )
