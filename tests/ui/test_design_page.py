"""The 設計 page via AppTest (offline): instruction → 自動生成 → chat → 反映 → 検証 → 登録 →
the 実行 page runs the registered Plan; an uncovered instruction; an invalid Plan.

自動生成 is a run of kind ``design``: the page keeps its id and follows its events, so
a rerun while it generates keeps following the same run."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import BaseMessage
from streamlit.testing.v1 import AppTest
from tests.ui.settle import let_finish

from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel, ScriptedReply
from keiri_agent.services.container import Services
from keiri_agent.services.plan_drafts import DraftChanges, PlanDrafts
from keiri_agent.ui.session import SERVICES
from keiri_agent.workspace import Workspace

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
UNCOVERED = "社員の誕生日を祝うメッセージを送る"
CHAT_FORM = "design.chat.form.s1_column_1-s1_column_2-response"
# A scripted LLM design (as in tests/plans/design/test_llm_designer.py): the wiring stage
# answers with an unknown block and an unknown input key, the repair fixes both.
INSTRUCTION_LLM = "売上の Excel から金額 1,000 円以上の行を抜き出す"
REQUIREMENTS: dict[str, Any] = {
    "inputs": [{"id": "in1", "format": "excel", "holds": "売上", "sheet": "売上"}],
    "steps": [
        {
            "id": "s1",
            "kind": "filter",
            "conditions": [{"column": "金額", "op": ">=", "value": 1000}],
        }
    ],
}
"""Stage 0: the requirement model of INSTRUCTION (a filter on the sales workbook)."""
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
    assert "テンプレートの機械的な組み合わせ" in _texts(page)  # the sidebar's offline note
    assert page.checkbox(key="design.fallback").value is False
    assert page.radio(key="design.apply_mode").value == "hint"


def test_candidates_follow_the_instruction_and_pins(page: AppTest) -> None:
    page.text_area(key="design.instruction").input(INSTRUCTION).run()
    rows = _frame_with(page, "スコア")
    ids = [str(row["id"]) for row in rows]
    assert "table.filter" in ids and "csv.read" in ids
    assert set(rows[0]) == {"id", "カテゴリ", "入力", "出力", "説明", "スコア"}
    page.multiselect(key="design.pinned").select("text.normalize").run()
    ids = [str(row["id"]) for row in _frame_with(page, "スコア")]
    assert "text.normalize 📌" in ids


def test_template_filter_by_tag(page: AppTest) -> None:
    page.text_input(key="design.template_filter").input("突合").run()
    options = page.multiselect(key="design.templates").options
    assert options == ["請求書と入金の照合"]


def test_instruction_to_registered_plan_that_runs(page: AppTest, keiri_home: Path) -> None:
    (keiri_home / "designs").mkdir()
    (keiri_home / "designs" / "another.yaml").write_text(OTHER, encoding="utf-8")
    _generate(page, INSTRUCTION)
    text = _texts(page)
    assert "オフライン（指示の言葉から規則で組み立て）" in text
    assert "質問に答えると完成します" in text  # the verdict, as on the CLI and the API
    assert "？ 行の絞り込み: （列が未定）が「交際費」" in text  # the checklist with coverage
    editor = page.text_area(key="design.editor").value
    generated = yaml.safe_load(editor)
    blocks = [str(node["block"]).partition("@")[0] for node in generated["graph"]]
    assert blocks == ["ui.interactive_input", "csv.read", "table.filter", "excel.write"]
    assert generated["vars"] == {"s1_column_1": None, "s1_column_2": None}  # asked, not guessed
    assert any("table.filter" in str(row["id"]) for row in _frame_with(page, "スコア"))
    assert [row["対象"] for row in _frame_with(page, "必須")] == [
        "vars.s1_column_1",
        "vars.s1_column_2",
    ]
    assert "設計チャット" in text

    page.text_input(key=f"{CHAT_FORM}::s1_column_1").input("勘定科目")
    page.text_input(key=f"{CHAT_FORM}::s1_column_2").input("金額")
    _button(page, "回答する")
    assert "すべての項目が確定しました" in _texts(page)
    _button(page, "反映")
    applied = yaml.safe_load(page.text_area(key="design.editor").value)
    assert applied["vars"] == {"s1_column_1": "勘定科目", "s1_column_2": "金額"}

    _button(page, "検証/ドライラン")
    assert "検証・ドライランとも問題ありません。" in _texts(page)
    statuses = {row["ノード"]: row["状態"] for row in _frame_with(page, "状態")}
    assert len(statuses) == len(applied["graph"]) and set(statuses.values()) == {"ok"}

    _button(page, "登録")
    files = list((keiri_home / "designs").glob("generated_plan_*.yaml"))
    assert len(files) == 1
    saved = yaml.safe_load(files[0].read_text(encoding="utf-8"))
    assert saved["vars"] == applied["vars"]
    unpinned = [  # registration pins each block's major version (plans.pinning)
        {**node, "block": str(node["block"]).partition("@")[0]} for node in saved["graph"]
    ]
    assert unpinned == applied["graph"]
    assert all("@^" in str(node["block"]) for node in saved["graph"])
    file_id = files[0].stem
    assert f"登録しました: {file_id}" in _texts(page)

    metrics = {m.label: m.value for m in page.metric}
    assert metrics["件数"] == "1"

    _button(page, "実行ページで開く")  # st.switch_page to the 実行 page
    assert [t.value for t in page.title] == ["実行"]
    assert page.selectbox(key="run.plan").value == file_id
    # AppTest shows the page st.switch_page chose for that run only; its next run goes
    # back to the page AppTest was told, so point it at the 実行 page (same session).
    page.switch_page("run_page.py").run()
    assert page.selectbox(key="run.plan").value == file_id
    first = applied["graph"][0]
    assert first["block"] == "ui.interactive_input"
    assert first["in"]["message"] in _texts(page)  # the Plan's own upload form, before 実行
    assert not [e.value for e in page.error if "LLM" in e.value]  # no model step offline


def test_uncovered_instruction_gives_a_message_and_no_plan(page: AppTest) -> None:
    _generate(page, UNCOVERED)
    text = _texts(page)
    assert "Plan は作りませんでした" in text and "作れない部分" in text
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
    page.text_input(key=f"{CHAT_FORM}::s1_column_1").input("勘定科目").run()
    editor = page.text_area(key="design.editor").value
    page.switch_page("run_page.py").run()
    page.switch_page("design_page.py").run()
    assert not page.exception, page.exception
    assert page.text_area(key="design.instruction").value == INSTRUCTION
    assert page.text_area(key="design.editor").value == editor
    assert page.text_input(key=f"{CHAT_FORM}::s1_column_1").value == "勘定科目"
    assert "設計チャット" in _texts(page)


@pytest.fixture
def scripted(keiri_home: Path) -> Iterator[list[Services]]:
    """The services tests give their sessions (closed after the test)."""
    built: list[Services] = []
    yield built
    for services in built:
        services.close()


def _scripted(built: list[Services], home: Path, model: ScriptedChatModel) -> Services:
    settings = Settings(home=home, provider="offline")
    services = Services(settings, model_factory=lambda _settings: model)
    built.append(services)
    return services


def test_repair_attempts_show_their_per_node_diff(
    page: AppTest, keiri_home: Path, scripted: list[Services]
) -> None:
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, BAD, BAD_FENCED, GOOD])
    page.session_state[SERVICES] = _scripted(scripted, keiri_home, model)
    page.run()
    assert "テンプレートの機械的な組み合わせ" not in _texts(page)  # an LLM is used
    page.multiselect(key="design.pinned").select("excel.read_data").select("table.filter")
    _generate(page, INSTRUCTION_LLM)
    assert model.remaining == 0
    text = _texts(page)
    assert "**生成の方法**: LLM" in text
    assert (
        "**試行 1**: エラー REQUIREMENT_NOT_COVERED ×1, UNKNOWN_BLOCK ×1, UNKNOWN_INPUT ×1" in text
    )
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


def test_a_rerun_while_generating_keeps_following_the_same_run(
    page: AppTest, keiri_home: Path, scripted: list[Services]
) -> None:
    """The page is interrupted while the generation waits for the model (AppTest stops a
    run that takes too long, as a click does in a browser); the next run of the page
    follows the same run, and the generated Plan reaches the editor."""
    gate = threading.Event()
    script: list[ScriptedReply] = [REQUIREMENTS, SKELETON, BAD, BAD_FENCED, GOOD]
    calls: list[int] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        calls.append(len(calls))
        if len(calls) == 3:  # the wiring, after the first stages were shown
            assert gate.wait(60), "the test never let the model answer"
        return script[len(calls) - 1]

    services = _scripted(scripted, keiri_home, ScriptedChatModel(respond=respond))
    page.session_state[SERVICES] = services
    page.run()
    page.multiselect(key="design.pinned").select("excel.read_data").select("table.filter")
    page.text_area(key="design.instruction").input(INSTRUCTION_LLM).run()
    generate = next(b for b in page.button if b.label == "自動生成")
    with pytest.raises(RuntimeError, match="timed out"):
        generate.click().run(timeout=4)
    run_id = page.session_state["design.generation"]["run_id"]
    assert not services.runs.require(run_id).settled

    let_finish(gate, services, run_id)
    page.run()
    assert not page.exception, page.exception
    assert page.status[0].label == "自動生成: 完了", _texts(page)
    assert "**試行 2**: エラーなし" in _texts(page)
    assert yaml.safe_load(page.text_area(key="design.editor").value)["id"] == "big_sales"
    assert [run.run_id for run in services.runs.store.find(kind="design")] == [run_id]
    assert len(calls) == len(script)  # generated once
    assert not (keiri_home / ".keiri" / "uploads" / run_id).exists()


# --- the draft: a reload (a new session) finds the page's work again -------------------

DRAFTS = Path(".keiri") / "design_drafts"


def _reloaded(params: dict[str, str], services: Services | None = None) -> AppTest:
    """A new session (a browser reload) opening the 設計 page with ``params`` in its
    address. AppTest starts on the default page (データ分析, which writes its own
    address), so the address is set when the 設計 page is switched to."""
    at = AppTest.from_file(APP, default_timeout=120)
    if services is not None:
        at.session_state[SERVICES] = services
    at.run()
    at.switch_page("design_page.py")
    at.query_params = dict(params)
    at.run()
    assert not at.exception, at.exception
    return at


def _draft_file(home: Path, draft_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home / DRAFTS / f"{draft_id}.json").read_text("utf-8"))
    return data


def test_a_reload_restores_the_instruction_the_plan_and_the_answers(
    page: AppTest, keiri_home: Path
) -> None:
    page.text_area(key="design.instruction").input(INSTRUCTION).run()
    draft_id = page.query_params["draft"]  # made with the first instruction typed
    assert re.fullmatch(r"d-[0-9a-f]{20}", draft_id)
    assert _draft_file(keiri_home, draft_id)["instruction"] == INSTRUCTION
    _button(page, "自動生成")
    assert page.query_params == {"draft": draft_id}  # the same draft; no run left running
    editor = page.text_area(key="design.editor").value
    page.text_input(key=f"{CHAT_FORM}::s1_column_1").input("勘定科目")
    page.text_input(key=f"{CHAT_FORM}::s1_column_2").input("金額")
    _button(page, "回答する")
    saved = _draft_file(keiri_home, draft_id)
    assert saved["owner"] and saved["yaml"] == editor
    assert saved["answers"] == {"s1_column_1": "勘定科目", "s1_column_2": "金額"}
    assert saved["result"]["verdict"] == "needs_answers"

    again = _reloaded({"draft": draft_id})
    assert again.text_area(key="design.instruction").value == INSTRUCTION
    assert again.text_area(key="design.editor").value == editor
    text = _texts(again)
    assert "質問に答えると完成します" in text  # the last generation's verdict
    assert "すべての項目が確定しました" in text  # the chat with its answers
    _button(again, "反映")
    applied = yaml.safe_load(again.text_area(key="design.editor").value)
    assert applied["vars"] == {"s1_column_1": "勘定科目", "s1_column_2": "金額"}
    assert again.query_params == {"draft": draft_id}
    assert yaml.safe_load(_draft_file(keiri_home, draft_id)["yaml"]) == applied  # saved


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "この下書きのファイルが壊れているため開けません"),
        (None, "この下書きは見つかりません"),
    ],
    ids=["damaged", "unknown"],
)
def test_a_damaged_or_unknown_draft_is_reported_and_the_page_starts_fresh(
    keiri_home: Path, content: str | None, message: str
) -> None:
    draft_id = "d-0123456789abcdef0123"
    if content is not None:
        (keiri_home / DRAFTS).mkdir(parents=True)
        (keiri_home / DRAFTS / f"{draft_id}.json").write_text(content, encoding="utf-8")
    at = _reloaded({"draft": draft_id})
    assert message in _texts(at)
    assert "新しい下書きとして作り直してください" in "\n".join(i.value for i in at.info)
    assert at.text_area(key="design.instruction").value == ""
    assert "draft" not in at.query_params
    at.text_area(key="design.instruction").input(INSTRUCTION).run()
    assert not at.exception, at.exception
    assert at.query_params["draft"] != draft_id  # a new draft
    if content is not None:  # never overwritten
        assert (keiri_home / DRAFTS / f"{draft_id}.json").read_text("utf-8") == content


def test_a_draft_id_that_is_not_one_is_reported(keiri_home: Path) -> None:
    at = _reloaded({"draft": "../../etc"})
    assert "下書きの番号が正しくありません" in _texts(at)
    assert "draft" not in at.query_params


def test_another_persons_draft_is_not_shown(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.people.accounts import Accounts

    accounts = Accounts.from_settings(Settings())
    accounts.add("keiri", ["admin"])
    accounts.add("yamada", ["designer"], display_name="山田")
    accounts.add("suzuki", ["designer"], display_name="鈴木")
    accounts.engine.dispose()
    drafts = PlanDrafts(Workspace.from_settings(Settings()))
    drafts.save("d-00000000000000000001", "suzuki", DraftChanges(instruction="鈴木の指示"))

    monkeypatch.setattr("keiri_agent.people.operator.os_login", lambda: "yamada")
    at = _reloaded({"draft": "d-00000000000000000001"})
    assert "このPlan の設計は別の人のものです" in _texts(at)
    assert at.text_area(key="design.instruction").value == ""
    assert "draft" not in at.query_params

    monkeypatch.setattr("keiri_agent.people.operator.os_login", lambda: "suzuki")
    at = _reloaded({"draft": "d-00000000000000000001"})
    assert at.text_area(key="design.instruction").value == "鈴木の指示"  # the owner's own


def test_a_reload_while_generating_follows_the_same_run(
    page: AppTest, keiri_home: Path, scripted: list[Services]
) -> None:
    """The page is left while the generation waits for the model (AppTest stops the
    run, as a reload does); a new session opened with the same address follows the
    same run, and its result reaches the editor and the draft."""
    gate = threading.Event()
    script: list[ScriptedReply] = [REQUIREMENTS, SKELETON, BAD, BAD_FENCED, GOOD]
    calls: list[int] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        calls.append(len(calls))
        if len(calls) == 3:
            assert gate.wait(60), "the test never let the model answer"
        return script[len(calls) - 1]

    services = _scripted(scripted, keiri_home, ScriptedChatModel(respond=respond))
    page.session_state[SERVICES] = services
    page.run()
    page.multiselect(key="design.pinned").select("excel.read_data").select("table.filter")
    page.text_area(key="design.instruction").input(INSTRUCTION_LLM).run()
    generate = next(b for b in page.button if b.label == "自動生成")
    with pytest.raises(RuntimeError, match="timed out"):
        generate.click().run(timeout=4)
    run_id = page.session_state["design.generation"]["run_id"]
    draft_id = page.session_state["design.draft"]["id"]
    assert not services.runs.require(run_id).settled
    assert _draft_file(keiri_home, draft_id)["instruction"] == INSTRUCTION_LLM
    earlier = {"id": "earlier", "type": "text", "label": "前の生成の質問", "target": "vars.x"}
    PlanDrafts(Workspace.from_settings(services.settings)).save(  # a generation before
        draft_id, "", DraftChanges(answers={"earlier": "前の回答"}, questions=[earlier])
    )

    let_finish(gate, services, run_id)
    again = _reloaded({"draft": draft_id, "design_run": run_id}, services)
    assert again.status[0].label == "自動生成: 完了", _texts(again)
    assert yaml.safe_load(again.text_area(key="design.editor").value)["id"] == "big_sales"
    assert again.query_params == {"draft": draft_id}  # the run has ended
    assert len(calls) == len(script)  # generated once
    saved = _draft_file(keiri_home, draft_id)
    assert yaml.safe_load(saved["yaml"])["id"] == "big_sales"
    assert saved["result"]["plan_id"] == "big_sales"
    assert saved["generated_instruction"] == INSTRUCTION_LLM
    chat = again.session_state["design.chat"]  # the chat over the new Plan, saved with it
    assert chat["requirements"] and saved["questions"] == chat["requirements"]
    assert saved["answers"] == {}  # the earlier generation's answers went with it
