"""services.exports: report folders and ZIPs, Plan binary outputs under safe names."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from keiri_agent.agents.analysis.artifacts import Artifact
from keiri_agent.errors import UserInputError
from keiri_agent.services.exports import (
    OutputWriter,
    check_out_folder,
    report_zip,
    safe_name,
    write_report,
)
from keiri_agent.services.jsonforms import json_value

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
FIGURE: Artifact = {
    "artifact_id": "fig_1",
    "kind": "figure",
    "title": "売上",
    "description": "",
    "payload": PNG,
}
TABLE: Artifact = {
    "artifact_id": "tbl_1",
    "kind": "table",
    "title": "表",
    "description": "",
    "payload": {"columns": ["a"], "records": [{"a": 1}], "total_rows": 1},
}
REPORT = "# レポート\n\n![売上](figures/fig_1.png)\n"


def test_the_folder_and_the_zip_hold_the_same_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report_path, files = write_report(out, REPORT, [TABLE, FIGURE])
    assert report_path == out / "report.md"
    assert report_path.read_text(encoding="utf-8") == REPORT
    assert files == {"fig_1": out / "figures" / "fig_1.png"}
    assert files["fig_1"].read_bytes() == PNG

    with zipfile.ZipFile(io.BytesIO(report_zip(REPORT, [TABLE, FIGURE]))) as archive:
        assert sorted(archive.namelist()) == ["figures/fig_1.png", "report.md"]
        assert archive.read("figures/fig_1.png") == PNG
        assert archive.read("report.md").decode("utf-8") == REPORT


def test_no_report_writes_only_the_figures(tmp_path: Path) -> None:
    report_path, files = write_report(tmp_path, None, [FIGURE])
    assert report_path is None
    assert not (tmp_path / "report.md").exists()
    assert list(files) == ["fig_1"]


def test_file_names_never_leave_the_out_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    writer = OutputWriter(out)
    value = {
        "a": {"name": "../../evil.txt", "data": b"1"},
        "b": {"name": "..", "data": b"2"},
        "c": {"name": "C:\\\\temp\\\\x.txt", "data": b"3"},
        "d": {"name": "evil.txt", "data": b"4"},
    }
    result = json_value({"node": value}, writer=writer)
    paths = [Path(result["node"][key]["path"]) for key in "abcd"]
    assert all(path.parent == out for path in paths), paths
    assert len(set(paths)) == 4
    assert [path.read_bytes() for path in paths] == [b"1", b"2", b"3", b"4"]
    assert not (tmp_path / "evil.txt").exists()
    assert [where for where, _ in writer.written] == ["node.a", "node.b", "node.c", "node.d"]


def test_unnamed_bytes_are_named_after_where_they_are(tmp_path: Path) -> None:
    writer = OutputWriter(tmp_path)
    form = json_value({"write_report": {"workbook": b"xlsx"}}, writer=writer)
    path = Path(form["write_report"]["workbook"]["path"])
    assert path.name == "write_report.workbook.bin"
    assert form["write_report"]["workbook"]["bytes"] == 4


def test_unnamed_office_files_get_the_extension_their_bytes_show(tmp_path: Path) -> None:
    import openpyxl

    buffer = io.BytesIO()
    openpyxl.Workbook().save(buffer)
    writer = OutputWriter(tmp_path)
    form = json_value({"write_excel": {"workbook": buffer.getvalue()}}, writer=writer)
    assert Path(form["write_excel"]["workbook"]["path"]).name == "write_excel.workbook.xlsx"


@pytest.mark.parametrize(("name", "safe"), [("a/b.txt", "b.txt"), ("..", ""), ("x?.md", "x_.md")])
def test_safe_name(name: str, safe: str) -> None:
    assert safe_name(name) == safe


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(UserInputError, match="フォルダではありません"):
        check_out_folder(file)
    check_out_folder(tmp_path / "new")  # not there yet: fine
    check_out_folder(None)
