"""Files a user names on a command line or uploads: their text, and spec files.

``read_text_file`` decodes with ``textcodec`` (BOM, UTF-16, UTF-8, else CP932 for
Shift_JIS files saved by Excel; binary data refused); a missing file, a folder, an
unreadable file or undecodable bytes raise the caller's error class naming the path —
never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from keiri_agent.errors import SpecError, UserInputError
from keiri_agent.textcodec import TextDecodeError, decode_text


def read_text_file(
    path: Path, what: str, *, error_class: type[UserInputError] = UserInputError
) -> str:
    """The text of the file ``path``; ``what`` names it in errors (「回答ファイル」)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise error_class(
            f"{what} {path} が見つかりません", hint="ファイルの場所と名前を確かめてください"
        ) from None
    except IsADirectoryError:
        raise error_class(
            f"{what} {path} はフォルダです", hint="ファイルのパスを指定してください"
        ) from None
    except OSError as error:
        raise error_class(
            f"{what} {path} を読めません（{error.strerror or type(error).__name__}）",
            hint="ファイルの読み取り権限と、ほかのアプリで開いたままでないかを確かめてください",
        ) from None
    try:
        return decode_text(raw).text
    except TextDecodeError:
        raise error_class(
            f"{what} {path} の文字コードを読み取れません（UTF-8 でも CP932 でもありません）",
            hint="UTF-8 で保存してください",
        ) from None


def read_specs(path: Path) -> list[dict[str, Any]]:
    """Analysis specs from a JSON file: one spec object or a non-empty list of them."""
    try:
        data = json.loads(read_text_file(path, "分析指定ファイル", error_class=SpecError))
    except json.JSONDecodeError as error:
        raise SpecError(
            f"{path} は JSON として読めません（{error.lineno} 行目: {error.msg}）",
            hint="分析の指定 1 つ、またはその一覧を JSON で書いてください",
        ) from None
    specs = data if isinstance(data, list) else [data]
    if not specs or not all(isinstance(item, dict) for item in specs):
        raise SpecError(
            f"{path} には分析の指定 1 つ、または 1 つ以上の指定の一覧を書いてください",
            hint='例: {"type": "analysis", "op": "dataset_overview"}',
        )
    return specs
