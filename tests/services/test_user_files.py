"""services.user_files: text in UTF-8 / BOM / CP932, and analysis spec files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keiri_agent.errors import SpecError, UserInputError
from keiri_agent.services.user_files import read_specs, read_text_file

TEXT = "締め日: 毎月25日\n"


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp932"])
def test_text_in_the_usual_encodings(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "a.txt"
    path.write_text(TEXT, encoding=encoding)
    assert read_text_file(path, "回答ファイル") == TEXT


def test_unreadable_files_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"回答ファイル .*missing\.yaml が見つかりません"):
        read_text_file(tmp_path / "missing.yaml", "回答ファイル")
    with pytest.raises(UserInputError, match="フォルダです"):
        read_text_file(tmp_path, "回答ファイル")
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81\xff")
    with pytest.raises(SpecError, match="文字コード") as caught:
        read_text_file(binary, "分析指定ファイル", error_class=SpecError)
    assert caught.value.hint == "UTF-8 で保存してください"


def test_spec_files(tmp_path: Path) -> None:
    path = tmp_path / "specs.json"
    one = {"type": "analysis", "op": "dataset_overview"}
    path.write_text(json.dumps(one), encoding="utf-8")
    assert read_specs(path) == [one]
    path.write_text(json.dumps([one, one]), encoding="utf-8")
    assert read_specs(path) == [one, one]
    for bad, message in (
        ("[]", "1 つ以上の指定の一覧"),
        ("[1]", "分析の指定 1 つ"),
        ("{", "JSON として読めません"),
    ):
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(SpecError, match=message):
            read_specs(path)
