"""The 設計 page via AppTest (offline): instruction → 自動生成 → chat → 反映 → 検証 → 登録 →
the 実行 page runs the registered Plan; an uncovered instruction; an invalid Plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel
from keiri_agent.services.design import DesignService

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
INSTRUCTION = "請求書ZIPと入金明細Excelを照合して差異をExcelに出力"
UNCOVERED = "社員の誕生日を祝うメッセージを送る"
CHAT_FORM = "design.chat.form.payments_sheet-response"
# A scripted LLM design (as in tests/plans/design/test_llm_designer.py): the wiring stage
# answers with an unknown block and an unknown input key, the repair fixes both.
INSTRUCTION_LLM = "売上の Excel から金額 1,000 円以上の行を抜き出す"
SKELETON: dict[str, Any] = {
    "steps": [
        {"block": "excel.read_data", "purpose": "売上の Excel を読む", "ui": False},
        {"block": "table.filter", "purpose": "1,000 円以上の行を残す"},
    ],
}
READ = {
    "id": "read",
    "block": "excel.read_data",
    "in": {"workbook": "${vars.book}", "sheet": "売上"},
    "out": {"records": "rows"},
}
FILTER = {
    "id": "big",
    "block": "table.filter",
    "in": {"records": "${read.rows}", "conditions": [{"col": "金額", "op": ">=", "value": 1000}]},
    "out": {"records": "rows"},
}
GOOD: dict[str, Any] = {"id": "big_sales", "graph": [READ, FILTER]}
BAD: dict[str, Any] = {
    "id": "big_sales",
    "graph": [
        {**READ, "block": "excel.read"},
        {**FILTER, "in": {**FILTER["in"], "rows": "${read.rows}"}},
    ],
}
BAD_FENCED = "こちらです。\n```json\n" + json.dumps(BAD, ensure_ascii=False) + "\n```"
OTHER = """\
apiVersion: v1
id: another
version: 0.1.0
graph:
  - id: message
    block: text.template
    in: {template: "hello", values: {}}
    out: {text: text}
"""
INVALID = """\
apiVersion: v1
id: broken
version: 0.1.0
graph:
  - id: read
    block: no.such_block
    in: {}
    out: {}
"""


@pytest.fixture
def page(keiri_home: Path) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("design_page.py").run()
    assert not at.exception, at.exception
    return at


def _button(at: AppTest, label: str) -> None:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [e.value for e in at.error] + [i.value for i in at.info]
    parts += [w.value for w in at.warning] + [s.value for s in at.success]
    parts += [s.value for s in at.subheader] + [t.value for t in at.title]
    return "\n".join(str(p) for p in parts)


def _frame_with(at: AppTest, column: str) -> list[dict[str, object]]:
    frame = next(d.value for d in at.dataframe if column in d.value.columns)
    records: list[dict[str, object]] = frame.to_dict("records")
    return records


def _generate(at: AppTest, instruction: str) -> None:
    at.text_area(key="design.instruction").input(instruction).run()
    assert not at.exception, at.exception
    _button(at, "自動生成")


def test_offline_page_says_templates_are_composed_mechanically(page: AppTest) -> None:
    assert "テンプレートの機械的な組み合わせ" in _texts(page)
    assert page.checkbox(key="design.fallback").value is False
    assert page.radio(key="design.apply_mode").value == "hint"


def test_candidates_follow_the_instruction_and_pins(page: AppTest) -> None:
    page.text_area(key="design.instruction").input(INSTRUCTION).run()
    rows = _frame_with(page, "スコア")
    ids = [str(row["id"]) for row in rows]
    assert "table.reconcile" in ids and "excel.read_data" in ids
    assert set(rows[0]) == {"id", "カテゴリ", "入力", "出力", "説明", "スコア"}
    page.multiselect(key="design.pinned").select("text.normalize").run()
    ids = [str(row["id"]) for row in _frame_with(page, "スコア")]
    assert "text.normalize 📌" in ids


def test_template_filter_by_tag(page: AppTest) -> None:
    page.text_input(key="design.template_filter").input("消込").run()
    options = page.multiselect(key="design.templates").options
    assert options == ["請求書と入金の照合"]


def test_instruction_to_registered_plan_that_runs(page: AppTest, keiri_home: Path) -> None:
    (keiri_home / "designs").mkdir()
    (keiri_home / "designs" / "another.yaml").write_text(OTHER, encoding="utf-8")
    _generate(page, INSTRUCTION)
    text = _texts(page)
    assert "オフライン（テンプレートの機械的な組み合わせ）" in text
    editor = page.text_area(key="design.editor").value
    generated = yaml.safe_load(editor)
    blocks = {str(node["block"]).partition("@")[0] for node in generated["graph"]}
    assert {"table.reconcile", "excel.read_data", "excel.write"} <= blocks
    assert generated["vars"]["payments_sheet"] is None  # the open item
    assert any("table.reconcile" in str(row["id"]) for row in _frame_with(page, "スコア"))
    assert [row["対象"] for row in _frame_with(page, "必須")] == ["vars.payments_sheet"]
    assert "設計チャット" in text

    # the sheet is optional (the block reads the first sheet without it); answer it
    page.text_input(key=f"{CHAT_FORM}::payments_sheet").input("入金明細")
    _button(page, "回答する")
    assert "すべての項目が確定しました" in _texts(page)
    _button(page, "反映")
    applied = yaml.safe_load(page.text_area(key="design.editor").value)
    assert applied["vars"]["payments_sheet"] == "入金明細"

    _button(page, "検証/ドライラン")
    assert "検証・ドライランとも問題ありません。" in _texts(page)
    statuses = {row["ノード"]: row["状態"] for row in _frame_with(page, "状態")}
    assert len(statuses) == len(applied["graph"]) and set(statuses.values()) == {"ok"}

    _button(page, "登録")
    files = list((keiri_home / "designs").glob("generated_plan_*.yaml"))
    assert len(files) == 1
    saved = yaml.safe_load(files[0].read_text(encoding="utf-8"))
    assert saved["graph"] == applied["graph"] and saved["vars"] == applied["vars"]
    file_id = files[0].stem
    assert f"登録しました: {file_id}" in _texts(page)

    metrics = {m.label: m.value for m in page.metric}
    assert metrics["件数"] == "1" and metrics["エラー率"] == "0%"

    _button(page, "実行ページで開く")  # st.switch_page to the 実行 page
    assert [t.value for t in page.title] == ["実行"]
    assert page.selectbox(key="run.plan").value == file_id
    # AppTest shows the page st.switch_page chose for that run only; its next run goes
    # back to the page AppTest was told, so point it at the 実行 page (same session).
    page.switch_page("run_page.py").run()
    assert page.selectbox(key="run.plan").value == file_id
    text = _texts(page)
    first = applied["graph"][0]
    assert first["block"] == "ui.interactive_input"
    assert applied["vars"]["workbook_message"] in text  # the Plan's own form, before 実行
    # offline, the generated Plan's LLM step would fail after the upload: said up front
    assert any("ai.process_llm" in e.value and "LLM" in e.value for e in page.error)
    assert next(b for b in page.button if b.label == "実行").disabled


def test_uncovered_instruction_gives_a_message_and_no_plan(page: AppTest) -> None:
    _generate(page, UNCOVERED)
    text = _texts(page)
    assert "この指示に合うテンプレートが見つかりませんでした" in text
    assert "検討した候補ブロック" in text
    assert len([d for d in page.dataframe if "スコア" in d.value.columns]) == 2
    assert page.text_area(key="design.editor").value == ""
    assert "設計チャット" not in text


def test_invalid_plan_is_not_registered(page: AppTest, keiri_home: Path) -> None:
    page.text_area(key="design.editor").input(INVALID).run()
    _button(page, "登録")
    text = _texts(page)
    assert "エラーがあるため登録できません" in text
    assert "「検証/ドライラン」でエラーを確認して直してから登録してください" in text
    codes = [row["コード"] for row in _frame_with(page, "コード")]
    assert "UNKNOWN_BLOCK" in codes
    assert not list((keiri_home / "designs").glob("*.yaml"))
    assert "登録しました" not in text


def test_inputs_survive_a_visit_to_another_page(page: AppTest) -> None:
    _generate(page, INSTRUCTION)
    page.text_input(key=f"{CHAT_FORM}::payments_sheet").input("入金明細").run()
    editor = page.text_area(key="design.editor").value
    page.switch_page("run_page.py").run()
    page.switch_page("design_page.py").run()
    assert not page.exception, page.exception
    assert page.text_area(key="design.instruction").value == INSTRUCTION
    assert page.text_area(key="design.editor").value == editor
    assert page.text_input(key=f"{CHAT_FORM}::payments_sheet").value == "入金明細"
    assert "設計チャット" in _texts(page)


def test_repair_attempts_show_their_per_node_diff(page: AppTest, keiri_home: Path) -> None:
    model = ScriptedChatModel([SKELETON, BAD, BAD_FENCED, GOOD])
    settings = Settings(home=keiri_home, provider="offline")
    page.session_state["design.service"] = DesignService(
        settings, model_factory=lambda _settings: model
    )
    page.run()
    assert "テンプレートの機械的な組み合わせ" not in _texts(page)  # an LLM is used
    page.multiselect(key="design.pinned").select("excel.read_data").select("table.filter")
    _generate(page, INSTRUCTION_LLM)
    assert model.remaining == 0
    text = _texts(page)
    assert "**生成の方法**: LLM" in text
    assert "**試行 1**: エラー UNKNOWN_BLOCK ×1, UNKNOWN_INPUT ×1" in text
    assert "**試行 2**: エラーなし" in text
    changes = [(row["ノード"], row["変更"], row["項目"]) for row in _frame_with(page, "変更")]
    assert changes == [("read", "変更", "block"), ("big", "変更", "in")]
    assert yaml.safe_load(page.text_area(key="design.editor").value)["id"] == "big_sales"


def test_generation_error_is_shown_with_its_hint(page: AppTest) -> None:
    page.radio(key="design.apply_mode").set_value("compose").run()
    _generate(page, INSTRUCTION)
    text = _texts(page)
    assert "compose にはテンプレートを 1 つ以上選んでください" in text
    assert "テンプレートを選ぶか、適用モードを hint / llm-only にしてください" in text
    assert page.text_area(key="design.editor").value == ""


def test_a_document_that_cannot_be_read_is_reported(page: AppTest) -> None:
    page.session_state["design.documents"] = [("社内規程.pdf", b"not a pdf")]
    _generate(page, INSTRUCTION)
    assert "保持中のファイル: 社内規程.pdf" in _texts(page)
    assert any("社内規程.pdf" in w.value for w in page.warning)
