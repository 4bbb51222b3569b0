"""What a run shows: titles, final outputs first, download names with extensions."""

from __future__ import annotations

import io
import zipfile

from keiri_agent.plans.dsl import load_plan_text
from keiri_agent.services.plan_outputs import download_name, node_titles, shown_outputs

PLAN = """\
apiVersion: v1
id: shown
version: 0.1.0
graph:
  - id: a
    title: 読み込み
    block: text.template
    in: {template: "x", values: {}}
    out: {text: text}
  - id: b
    block: text.template
    in: {template: "${a.text}", values: {}}
    out: {text: text}
"""


def _zip(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, "x")
    return buffer.getvalue()


def test_download_names_carry_the_extension_the_bytes_show() -> None:
    assert download_name("精算チェック結果", _zip("xl/workbook.xml"))[0] == "精算チェック結果.xlsx"
    assert download_name("報告書.docx", _zip("word/document.xml"))[0] == "報告書.docx"
    assert download_name("a/b:c", b"%PDF-1.7")[0] == "a_b_c.pdf"
    assert download_name("メモ", "テキスト".encode())[0] == "メモ.txt"
    assert download_name("生データ", b"\xff\xfe\x00\x81")[0] == "生データ.bin"
    shift_jis = "日付,摘要\r\n2026/11/10,振込 ｶ)ﾔﾏﾀﾞ\r\n".encode("cp932")
    assert download_name("仕訳（弥生）", shift_jis) == ("仕訳（弥生）.csv", "text/csv")
    fixed_width = "1210ｶ)ｹｲﾘ\r\n9   \r\n".encode("cp932")
    assert download_name("総合振込", fixed_width)[0] == "総合振込.txt"


def test_without_exports_the_nodes_nobody_reads_are_final_and_come_first() -> None:
    plan = load_plan_text(PLAN)
    assert node_titles(plan) == {"a": "読み込み", "b": "b"}
    shown = shown_outputs(plan, {"a": {"text": "x"}, "b": {"text": "y"}})
    assert [(o.node_id, o.final, o.title) for o in shown] == [
        ("b", True, "b"),
        ("a", False, "読み込み（text）"),
    ]
