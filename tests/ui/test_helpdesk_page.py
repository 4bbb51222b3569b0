"""The ヘルプデスク page via AppTest: index (sample, uploads) → ask → progress → cited answer.

An ask is a run of the run service: the page keeps its id and follows its events, so a
rerun while it is answered keeps following the same run."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from streamlit.testing.v1 import AppTest
from tests.ui.settle import let_finish

from keiri_agent.agents.helpdesk import ReflectionResult, SubtaskPlan
from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION, HelpDesk
from keiri_agent.config import Settings
from keiri_agent.llm.testing import ScriptedChatModel, ScriptedReply
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import RunService
from keiri_agent.services.container import Services
from keiri_agent.ui import run_follow
from keiri_agent.ui.session import SERVICES

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
MANUAL_MD = "# 経費精算\n\n## 締め日\n\n経費精算の締め日は毎月25日です。\n".encode()
FAQ_CSV = "質問,回答\n締め日はいつ?,毎月25日です。\n".encode()


@pytest.fixture
def scripted() -> Iterator[Callable[[ScriptedChatModel], Services]]:
    """``scripted(model)`` → the services a session is given: ``model`` answers."""
    built: list[Services] = []

    def build(model: ScriptedChatModel) -> Services:
        services = Services(Settings(), model_factory=lambda _settings: model)
        built.append(services)
        return services

    yield build
    for services in built:
        services.close()


def _open(services: Services | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if services is not None:
        at.session_state[SERVICES] = services
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
    at = _open()
    at.file_uploader(key="helpdesk.manuals").set_value(
        [("経費.md", MANUAL_MD, "text/markdown"), ("broken.pdf", b"not a pdf", "application/pdf")]
    )
    at.file_uploader(key="helpdesk.faqs").upload("faq.csv", FAQ_CSV, "text/csv")
    at.run()
    _click(at, "アップロードしたファイルを索引")

    assert set(_documents(at)) == {"経費.md", "faq.csv"}
    assert any("broken.pdf" in e.value for e in at.error)  # the failure, with its hint
    assert any("失敗 1" in w.value for w in at.warning)
    manifest = HelpDesk(Settings()).knowledge_base.documents("manual")
    assert not Path(manifest["経費.md"]["path"]).exists()  # the temporary folder is gone


PASSWORD_SCRIPT: list[ScriptedReply] = [
    SubtaskPlan(subtasks=["パスワードの条件"]),
    AIMessage(
        content="",
        tool_calls=[{"name": "search_xyz_manual", "args": {"query": "パスワード 条件"}, "id": "a"}],
    ),
    # [2] is the manual's 2.2 (p.4), which says it ([1] is the error list, p.12);
    # the answer cites only it, renumbered [1]
    "パスワードは条件をすべて満たす必要があります [2]。",
    ReflectionResult(advice="", is_completed=True),
    "パスワードの条件はマニュアルのとおりです [1]。",
]


def test_llm_path_with_an_injected_scripted_model(
    scripted: Callable[[ScriptedChatModel], Services],
) -> None:
    model = ScriptedChatModel(PASSWORD_SCRIPT)
    services = scripted(model)
    services.helpdesk().index_sample()
    at = _open(services)
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


def test_what_was_not_found_is_said_once(
    scripted: Callable[[ScriptedChatModel], Services],
) -> None:
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
    services = scripted(model)
    services.helpdesk().index_sample()
    at = _open(services)
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


def test_a_rerun_while_the_answer_is_made_keeps_following_the_same_run(
    scripted: Callable[[ScriptedChatModel], Services],
) -> None:
    """The page is interrupted while the run waits for the model (AppTest stops a run
    that takes too long, as a click does in a browser); the next run of the page follows
    the same run, shows its answer, and no second ask is started."""
    gate = threading.Event()
    calls: list[int] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        calls.append(len(calls))
        if len(calls) == 2:  # the search, after the plan was shown
            assert gate.wait(60), "the test never let the model answer"
        return PASSWORD_SCRIPT[len(calls) - 1]

    services = scripted(ScriptedChatModel(respond=respond))
    services.helpdesk().index_sample()
    at = _open(services)
    ask = next(b for b in at.button if b.label == "質問する")
    with pytest.raises(RuntimeError, match="timed out"):
        ask.click().run(timeout=4)
    run_id = at.session_state["helpdesk.running"]["run_id"]
    assert not services.runs.require(run_id).settled

    let_finish(gate, services, run_id)
    at.run()
    assert not at.exception, at.exception
    assert at.status[0].label == "完了"
    assert "**計画**: 質問を 1 つに分けました" in [m.value.split("\n")[0] for m in at.markdown]
    (answer,) = _subtask_answers(at)
    assert "パスワードは条件をすべて満たす必要があります [1]" in answer
    assert any("パスワードの条件はマニュアルのとおりです" in m.value for m in at.markdown)
    assert at.session_state["helpdesk.last"]["run_id"] == run_id
    assert [run.run_id for run in services.runs.store.find(kind="helpdesk")] == [run_id]
    assert len(calls) == len(PASSWORD_SCRIPT)  # asked once


def test_a_reload_while_the_answer_is_made_follows_the_same_run(
    scripted: Callable[[ScriptedChatModel], Services], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new session (F5) with the ask's run in the URL follows it to its answer; the
    answer is kept in the history once, also when the page is reloaded again."""
    gate = threading.Event()
    calls: list[int] = []

    def respond(messages: list[BaseMessage], tools: list[str]) -> ScriptedReply:
        calls.append(len(calls))
        if len(calls) == 2:
            assert gate.wait(60), "the test never let the model answer"
        return PASSWORD_SCRIPT[len(calls) - 1]

    services = scripted(ScriptedChatModel(respond=respond))
    services.helpdesk().index_sample()
    at = _open(services)
    ask = next(b for b in at.button if b.label == "質問する")
    with pytest.raises(RuntimeError, match="timed out"):
        ask.click().run(timeout=4)
    run_id = at.session_state["helpdesk.running"]["run_id"]

    def reload() -> AppTest:
        again = AppTest.from_file(APP, default_timeout=60)
        again.session_state[SERVICES] = services
        again.run()
        again.query_params["ask"] = run_id
        again.switch_page("helpdesk_page.py").run()
        assert not again.exception, again.exception
        return again

    follow = run_follow.follow_run
    followed: list[str] = []

    def following(runs: RunService, run_id: str, **options: Any) -> Run:
        followed.append(run_id)
        gate.set()  # answered once the new session follows the run
        return follow(runs, run_id, **options)

    monkeypatch.setattr(run_follow, "follow_run", following)
    again = reload()
    assert followed == [run_id]
    assert again.status[0].label == "完了"
    assert any("パスワードの条件はマニュアルのとおりです" in m.value for m in again.markdown)
    assert again.session_state["helpdesk.last"]["run_id"] == run_id
    once = reload()  # the ended ask again: shown, not kept twice
    assert any("パスワードの条件はマニュアルのとおりです" in m.value for m in once.markdown)
    assert not [x for x in once.expander if "パスワード" in x.label]  # not in the history twice
    assert len(calls) == len(PASSWORD_SCRIPT)


def test_an_unknown_ask_in_the_url_is_said_in_japanese() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.query_params["ask"] = "run_doesnotexist"
    at.switch_page("helpdesk_page.py").run()
    assert not at.exception, at.exception
    assert any("run_doesnotexist" in e.value and "見つかりません" in e.value for e in at.error)
