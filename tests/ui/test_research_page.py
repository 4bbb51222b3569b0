"""The リサーチ page via AppTest (offline): register the sample corpus → ask → report → notes.

A question is a research run of the run service: the page keeps its id and follows its
events, so a rerun while it is researched keeps following the same run."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest
from tests.ui.settle import let_finish

from keiri_agent.config import Settings
from keiri_agent.search.knowledge_base import KnowledgeBase
from keiri_agent.services.container import Services
from keiri_agent.services.research import (
    EXAMPLE_QUESTION,
    SAMPLE_KB,
    SAMPLE_SOURCE_NAME,
    ResearchService,
    sample_corpus,
)
from keiri_agent.ui.session import SERVICES

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
SAMPLE_DOCUMENTS = {path.name for path in sample_corpus().iterdir() if path.is_file()}


@pytest.fixture
def services() -> Iterator[Services]:
    """Services a test gives the session (closed after the test)."""
    given = Services(Settings())
    yield given
    given.close()


def _open(services: Services | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if services is not None:
        at.session_state[SERVICES] = services
    at.run()
    at.switch_page("research_page.py").run()
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


def _notes(at: AppTest) -> list[str]:
    return [e.label for e in at.expander if e.label.startswith("ステップ ")]


def test_sample_question_report_sources_notes_and_delete() -> None:
    at = _open()
    assert "ナレッジベースがまだありません" in _texts(at)
    assert "オフラインモード" in _texts(at)
    assert at.text_area(key="research.question").value == EXAMPLE_QUESTION

    _click(at, "サンプル資料を読み込む")
    assert any(f"追加 {len(SAMPLE_DOCUMENTS)}、" in s.value for s in at.success), _texts(at)
    assert "ナレッジベースがまだありません" not in _texts(at)
    assert at.multiselect(key="research.kbs").options == [SAMPLE_SOURCE_NAME]
    assert at.multiselect(key="research.kbs").value == [SAMPLE_KB]  # asked for: chosen
    assert "サンプル資料だけを検索します" in _texts(at)

    _click(at, "調査する")
    (status,) = at.status
    assert status.label == "完了"
    progress = "\n".join(m.value for m in at.markdown)
    assert "計画（オフライン）" in progress and "検索中" in progress
    assert at.subheader[0].value == "レポート"
    report = next(m.value for m in at.markdown if "[1]" in m.value and "オフライン" in m.value)
    sources = [e.label for e in at.expander if e.label.startswith("[")]
    assert sources and sources[0].startswith("[1] ")
    assert any(document in sources[0] for document in SAMPLE_DOCUMENTS)
    cited = {int(label[1 : label.index("]")]) for label in sources}
    assert cited == set(range(1, len(sources) + 1))
    assert "インボイス" in report
    assert not any(m.allow_html for m in at.markdown)  # the report's Markdown cannot inject HTML

    service = ResearchService(Settings())
    ((session_id, count, _),) = service.sessions()
    assert count >= 1
    assert len(_notes(at)) == count
    assert f"セッション {session_id}: ノート {count} 件" in _texts(at)

    at.run()  # the next run selects the session the run used and replays the report
    assert not at.exception, at.exception
    assert at.selectbox(key="research.session").value == session_id
    assert at.status[0].label == "調査の過程"
    assert len(_notes(at)) == count

    at.text_area(key="research.question").input("請求書の登録番号の記載方法は?")
    _click(at, "調査する")  # a later question continues the selected session
    ((continued, total, _),) = service.sessions()
    assert continued == session_id and total > count
    count = total
    assert len(_notes(at)) == count

    assert at.button(key="research.delete").disabled  # needs the confirmation first
    at.checkbox(key="research.confirm_delete").check().run()
    _click(at, "削除")
    assert service.sessions() == []
    assert service.notes(session_id) == []
    assert f"ノート {count} 件を削除しました" in _texts(at)
    assert _notes(at) == []
    assert at.selectbox(key="research.session").value == "（新しいセッション）"


def test_a_step_without_a_summary_is_closed_and_the_queries_are_counted() -> None:
    ResearchService(Settings()).index_sample()
    at = _open()
    at.multiselect(key="research.kbs").set_value([SAMPLE_KB]).run()
    # three parts; the sample has passages for each, but not on all of them (offline)
    at.text_area(key="research.question").input(
        "請求書の登録番号と、出張旅費の精算期限と、宇宙旅行の規程を調べて"
    )
    _click(at, "調査する")

    assert at.status[0].label == "完了"
    lines = [m.value for m in at.markdown if m.value.startswith("- ")]
    found = {line.split("]")[0] for line in lines if "件見つかりました" in line}
    closed = {
        line.split("]")[0] for line in lines if "要約しました" in line or "省きました" in line
    }
    assert found and found <= closed, lines
    assert any("要約せずに省きました" in line for line in lines), lines
    assert lines[-1].startswith("- 完了: 調べたクエリ 計 3 件"), lines  # 3 planned, none added


def test_the_sample_is_searched_only_when_chosen(tmp_path: Path) -> None:
    settings = Settings()
    ResearchService(settings).index_sample()
    own = tmp_path / "own"
    own.mkdir()
    (own / "請求書の規程.md").write_text(
        "# 請求書の規程\n\nインボイス制度に合わせて請求書に登録番号を記載します。\n",
        encoding="utf-8",
    )
    KnowledgeBase.for_workspace(settings, "kitei").index_files([own], "manual")
    at = _open()
    assert at.multiselect(key="research.kbs").options == ["kitei", SAMPLE_SOURCE_NAME]
    assert at.multiselect(key="research.kbs").value == []
    _click(at, "調査する")

    assert at.status[0].label == "完了"
    progress = "\n".join(m.value for m in at.markdown if m.value.startswith("- "))
    found = re.findall(r"\] (\d+) 件見つかりました", progress)
    assert found and set(found) == {"1"}, progress  # the one own passage, no sample passage
    sources = [e.label for e in at.expander if e.label.startswith("[")]
    assert all("請求書の規程" in label for label in sources), sources


def test_an_empty_question_is_refused_in_japanese() -> None:
    ResearchService(Settings()).index_sample()
    at = _open()
    at.text_area(key="research.question").input("   ")
    _click(at, "調査する")

    assert any("質問が空です" in e.value for e in at.error)
    assert not at.status
    assert ResearchService(Settings()).sessions() == []


def test_a_failing_run_shows_a_message_and_hint_not_a_traceback(services: Services) -> None:
    services.research.index_sample()

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("socket closed")

    services.research.agent = broken  # type: ignore[method-assign,assignment]
    at = _open(services)
    at.multiselect(key="research.kbs").set_value([SAMPLE_KB]).run()
    _click(at, "調査する")

    assert at.status[0].label == "エラー"
    assert any("予期しないエラー" in e.value for e in at.error)
    assert any(c.value.startswith("ヒント:") for c in at.caption)
    assert "socket closed" not in _texts(at)


def test_a_rerun_while_researching_keeps_following_the_same_run(services: Services) -> None:
    """The page is interrupted while the run searches (AppTest stops a run that takes
    too long, as a click does in a browser); the next run of the page follows the same
    run and shows its report; no second run is started."""
    research = services.research
    research.index_sample()
    gate = threading.Event()
    agent = research.agent

    def gated_agent(kb_names: Any = None) -> Any:
        built = agent(kb_names)
        search = built.aresearch

        async def aresearch(*args: Any, **kwargs: Any) -> Any:
            on_event = kwargs["on_event"]
            asked = 0

            def held(event: Any) -> None:
                nonlocal asked
                on_event(event)
                asked += 1
                if asked == 2:  # the plan is shown; the search waits for the test
                    assert gate.wait(60), "the test never let the research go on"

            return await search(*args, **{**kwargs, "on_event": held})

        built.aresearch = aresearch
        return built

    research.agent = gated_agent  # type: ignore[method-assign]
    at = _open(services)
    at.multiselect(key="research.kbs").set_value([SAMPLE_KB]).run()
    ask = next(b for b in at.button if b.label == "調査する")
    with pytest.raises(RuntimeError, match="timed out"):
        ask.click().run(timeout=4)
    run_id = at.session_state["research.running"]["run_id"]
    assert not services.runs.require(run_id).settled

    let_finish(gate, services, run_id)
    at.run()
    assert not at.exception, at.exception
    assert at.status[0].label == "完了"
    assert at.subheader[0].value == "レポート"
    assert any(e.label.startswith("[1] ") for e in at.expander)
    assert at.session_state["research.last"]["run_id"] == run_id
    assert [run.run_id for run in services.runs.store.find(kind="research")] == [run_id]
