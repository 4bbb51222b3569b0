"""The ヘルプデスク page via AppTest: index (sample, uploads) → ask → progress → cited answer."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage
from streamlit.testing.v1 import AppTest

from keiri_agent.agents.helpdesk import ReflectionResult, SubtaskPlan
from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION, HelpDesk
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
MANUAL_MD = "# 経費精算\n\n## 締め日\n\n経費精算の締め日は毎月25日です。\n".encode()
FAQ_CSV = "質問,回答\n締め日はいつ?,毎月25日です。\n".encode()


def _open(desk: HelpDesk | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if desk is not None:
        at.session_state["helpdesk.desk"] = desk
    at.run()
    at.switch_page("helpdesk_page.py").run()
    assert not at.exception, at.exception
    return at


def _click(at: AppTest, label: str) -> None:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.error]
    parts += [i.value for i in at.info] + [c.value for c in at.caption]
    parts += [s.value for s in at.success] + [w.value for w in at.warning]
    return "\n".join(str(p) for p in parts)


def _documents(at: AppTest) -> list[str]:
    return [name for frame in at.dataframe for name in frame.value["文書"]]


def _subtask_answers(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**回答（")]


def test_empty_knowledge_base_then_index_the_sample() -> None:
    at = _open()
    text = _texts(at)
    assert "ナレッジベースは空です" in text
    assert "オフラインモード" in text
    assert at.text_area(key="helpdesk.question").value == EXAMPLE_QUESTION

    _click(at, "サンプル（XYZシステム）を索引")

    documents = _documents(at)
    assert {"xyz_manual.pdf", "xyz_notifications.md", "xyz_release_notes.docx"} <= set(documents)
    assert "xyz_faq.csv" in documents
    assert any("追加 3" in s.value for s in at.success)
    assert "ナレッジベースは空です" not in _texts(at)
    # offline, no embeddings endpoint: keyword search, and the page says why
    assert "マニュアルの検索方式: キーワード検索（埋め込みが未設定です" in _texts(at)


def test_asking_with_an_empty_knowledge_base_shows_the_error_and_hint() -> None:
    at = _open()
    at.text_area(key="helpdesk.question").input("請求書の再発行は?")
    _click(at, "質問する")

    assert any("EMPTY_KNOWLEDGE_BASE" in e.value for e in at.error)
    assert any(c.value.startswith("ヒント:") and "index" in c.value for c in at.caption)
    assert any("サンプル（XYZシステム）を索引" in i.value for i in at.info)
    assert at.text_area(key="helpdesk.question").value == "請求書の再発行は?"  # kept


def test_example_question_is_planned_searched_answered_and_kept_on_rerun() -> None:
    HelpDesk(Settings()).index_sample()
    at = _open()
    _click(at, "質問する")

    (status,) = at.status
    assert status.label == "完了"
    plan = next(m.value for m in at.markdown if m.value.startswith("**計画**"))
    assert "2 つ" in plan
    assert "1. パスワードの条件" in plan and "2. ロックされた時の解除方法" in plan
    answers = _subtask_answers(at)
    assert len(answers) == 2 and all("✅ 完了" in answer for answer in answers)
    assert any("search_xyz_manual" in m.value and "件" in m.value for m in at.markdown)
    assert any("評価: ✅ OK" in m.value for m in at.markdown)
    final = next(m.value for m in at.markdown if "### 出典" in m.value)
    assert "xyz_manual.pdf" in final
    assert at.subheader[0].value == "回答"

    at.run()  # a rerun (e.g. after expanding something) keeps everything
    assert not at.exception, at.exception
    assert at.status[0].label == "検索と評価の過程"
    assert len(_subtask_answers(at)) == 2
    assert any("### 出典" in m.value and "xyz_manual.pdf" in m.value for m in at.markdown)


def test_uploads_are_indexed_from_a_removed_temporary_folder() -> None:
    desk = HelpDesk(Settings())
    at = _open(desk)
    at.file_uploader(key="helpdesk.manuals").set_value(
        [("経費.md", MANUAL_MD, "text/markdown"), ("broken.pdf", b"not a pdf", "application/pdf")]
    )
    at.file_uploader(key="helpdesk.faqs").upload("faq.csv", FAQ_CSV, "text/csv")
    at.run()
    _click(at, "アップロードしたファイルを索引")

    assert set(_documents(at)) == {"経費.md", "faq.csv"}
    assert any("broken.pdf" in e.value for e in at.error)  # the failure, with its hint
    assert any("失敗 1" in w.value for w in at.warning)
    manifest = desk.knowledge_base.documents("manual")
    assert not Path(manifest["経費.md"]["path"]).exists()  # the temporary folder is gone


def test_llm_path_with_an_injected_scripted_model() -> None:
    model = ScriptedChatModel(
        [
            SubtaskPlan(subtasks=["パスワードの条件"]),
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "search_xyz_manual", "args": {"query": "パスワード 条件"}, "id": "a"}
                ],
            ),
            # [2] is the manual's 2.2 (p.4), which says it ([1] is the error list, p.12);
            # the answer cites only it, renumbered [1]
            "パスワードは条件をすべて満たす必要があります [2]。",
            ReflectionResult(advice="", is_completed=True),
            "パスワードの条件はマニュアルのとおりです [1]。",
        ]
    )
    desk = HelpDesk(Settings(), chat_model=model)
    desk.index_sample()
    at = _open(desk)
    assert "オフラインモード" not in _texts(at)
    _click(at, "質問する")

    assert model.remaining == 0
    assert at.status[0].label == "完了"
    (answer,) = _subtask_answers(at)
    assert "パスワードは条件をすべて満たす必要があります [1]" in answer
    final = next(m.value for m in at.markdown if "出典" in m.value and "[1]" in m.value)
    assert "パスワードの条件はマニュアルのとおりです" in final
    assert "xyz_manual.pdf" in final
    assert not at.warning  # nothing unanswered


def test_an_empty_question_is_refused() -> None:
    HelpDesk(Settings()).index_sample()
    at = _open()
    at.text_area(key="helpdesk.question").input("")
    _click(at, "質問する")
    assert any("質問が空です" in e.value for e in at.error)
    assert not at.subheader or at.subheader[0].value != "回答"


def test_what_was_not_found_is_said_once() -> None:
    """Issue 16 item 8: the answer's 見つからなかった点 section, not again in a warning."""
    replies: list[object] = [SubtaskPlan(subtasks=["請求書の再発行"])]
    for attempt in range(3):
        replies += [
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "search_xyz_qa", "args": {"query": f"再発行{attempt}"}, "id": "a"}
                ],
            ),
            "資料には見つかりませんでした。",
            ReflectionResult(advice=f"別の語で検索 {attempt}", is_completed=False),
        ]
    replies.append("請求書の再発行の手順は資料にありませんでした。")
    model = ScriptedChatModel(replies)
    desk = HelpDesk(Settings(), chat_model=model)
    desk.index_sample()
    at = _open(desk)
    _click(at, "質問する")

    assert model.remaining == 0
    text = _texts(at)
    assert text.count("見つからなかった点") == 1, text
    assert "「請求書の再発行」について、資料から十分な回答が見つかりませんでした" in text


def test_the_error_from_before_indexing_goes_away_after_indexing() -> None:
    at = _open()
    _click(at, "質問する")
    assert any("EMPTY_KNOWLEDGE_BASE" in e.value for e in at.error)
    _click(at, "サンプル（XYZシステム）を索引")
    assert not any("EMPTY_KNOWLEDGE_BASE" in e.value for e in at.error), "a stale error"


def test_index_times_are_local_time_not_utc_iso() -> None:
    HelpDesk(Settings()).index_sample()
    at = _open()
    shown = [str(value) for frame in at.dataframe for value in frame.value["索引日時"]]
    assert shown and all("T" not in value and "+00:00" not in value for value in shown), shown
    assert all(len(value) == 16 and value[4] == "/" for value in shown), shown
    assert "+00:00" not in _texts(at)


def test_each_answer_is_kept_in_a_history_across_sessions() -> None:
    HelpDesk(Settings()).index_sample()
    at = _open()
    _click(at, "質問する")
    assert at.subheader[0].value == "回答"
    again = _open()  # a new session (a reload) in the same workspace
    (kept,) = [x for x in again.expander if EXAMPLE_QUESTION in x.label]
    assert any("### 出典" in m.value for m in kept.markdown)
