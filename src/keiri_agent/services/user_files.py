"""Files a user names on a command line or uploads: their text, and spec files.

``read_text_file`` decodes UTF-8 (with or without BOM), else CP932 (Shift_JIS files
saved by Excel); a missing file, a folder, an unreadable file or undecodable bytes
raise the caller's error class naming the path — never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keiri_agent.errors import SpecError, UserInputError

TEXT_ENCODINGS = ("utf-8-sig", "cp932")


def read_text_file(
    path: Path, what: str, *, error_class: type[UserInputError] = UserInputError
) -> str:
    """The text of the file ``path``; ``what`` names it in errors ("answers file")."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise error_class(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error_class(
            f"{what} {path} はフォルダです", hint="ファイルのパスを指定してください"
        ) from None
    except OSError as error:
        raise error_class(f"cannot read the {what} {path}: {error.strerror or error}") from None
    for encoding in TEXT_ENCODINGS:
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise error_class(
        f"{what} {path} の文字コードを読み取れません（UTF-8 でも CP932 でもありません）",
        hint="UTF-8 で保存してください",
    )


def read_specs(path: Path) -> list[dict[str, Any]]:
    """Analysis specs from a JSON file: one spec object or a non-empty list of them."""
    try:
        data = json.loads(read_text_file(path, "spec file", error_class=SpecError))
    except json.JSONDecodeError as error:
        raise SpecError(
            f"{path} is not valid JSON: {error.msg} at line {error.lineno}",
            hint="the file must hold one spec object or a list of spec objects",
        ) from None
    specs = data if isinstance(data, list) else [data]
    if not specs or not all(isinstance(item, dict) for item in specs):
        raise SpecError(
            f"{path} must hold a spec object or a non-empty list of spec objects",
            hint='e.g. {"type": "analysis", "op": "dataset_overview"}',
        )
    return specs
