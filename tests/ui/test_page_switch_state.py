"""What the user typed or picked survives a visit to another page and back.

Streamlit deletes a page's widget state when the user navigates away; the pages keep
their values with ``components.persistent`` (the helpdesk question, the 実行 page's Plan
selector and vars) or in plain Session State (the input forms, the run).
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION
from keiri_agent.blocks.requirements import session_key

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
VARS = """\
apiVersion: v1
id: {id}
version: 0.1.0
vars: {{greeting: "こんにちは", count: 2, loud: false, tags: [a, b]}}
graph:
  - id: message
    block: text.template
    in:
      template: "{id}: {{greeting}} ×{{count}} {{loud}} {{tags}}"
      values:
        greeting: "${{vars.greeting}}"
        count: "${{vars.count}}"
        loud: "${{vars.loud}}"
        tags: "${{vars.tags}}"
    out:
      text: text
"""
GREET = """\
apiVersion: v1
id: b_greet
version: 0.1.0
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: "名前を入力してください"
      requirements:
        - {id: name, type: text, label: "名前", required: true}
    out:
      collected_data: collected
  - id: message
    block: text.template
    in:
      template: "{name} 様"
      values: ${collect.collected}
    out:
      text: text
"""
GREET_KEY = session_key("b_greet", "collect", "1.0.0")
ANALYSIS = "データ分析"  # the page title (a callable page, the default one)


def _workbook() -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer) as writer:
        first = pd.DataFrame({"地域": ["関東"], "売上": [100]})
        first.to_excel(writer, sheet_name="上期", index=False)
        second = pd.DataFrame({"地域": ["近畿", "九州"], "売上": [250, 80]})
        second.to_excel(writer, sheet_name="下期", index=False)
    return buffer.getvalue()


@pytest.fixture
def designs(keiri_home: Path) -> Path:
    folder = keiri_home / "designs"
    folder.mkdir()
    for plan_id in ("a_first", "b_second", "c_third"):
        (folder / f"{plan_id}.yaml").write_text(VARS.format(id=plan_id), encoding="utf-8")
    return folder


def _open(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return _go(at, page)


def _go(at: AppTest, page: str) -> AppTest:
    if page == ANALYSIS:  # a callable page: switch_page only finds file pages
        at._page_hash = next(
            h for h, info in at._registered_pages.items() if info.get("page_name") == page
        )
        at.run()
    else:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _trip(at: AppTest, page: str, away: str) -> AppTest:
    """Visit ``away``, then come back to ``page``."""
    _go(at, away)
    return _go(at, page)


def _click(at: AppTest, key: str) -> None:
    at.button(key=key).click().run()
    assert not at.exception, at.exception


def _texts(at: AppTest) -> str:
    parts = [t.value for t in at.text] + [m.value for m in at.markdown]
    parts += [s.value for s in at.subheader] + [e.value for e in at.error]
    return "\n".join(str(p) for p in parts)


def test_helpdesk_question_survives_a_page_switch() -> None:
    at = _open("helpdesk_page.py")
    assert at.text_area(key="helpdesk.question").value == EXAMPLE_QUESTION
    at.text_area(key="helpdesk.question").set_value("請求書の承認フローを教えて").run()

    _trip(at, "helpdesk_page.py", away="run_page.py")
    assert at.text_area(key="helpdesk.question").value == "請求書の承認フローを教えて"


def test_selected_plan_survives_a_page_switch(designs: Path) -> None:
    at = _open("run_page.py")
    assert at.selectbox(key="run.plan").value == "a_first"
    at.selectbox(key="run.plan").select("b_second").run()

    _trip(at, "run_page.py", away="helpdesk_page.py")
    assert at.selectbox(key="run.plan").value == "b_second"


def test_edited_vars_survive_a_page_switch_and_are_used(designs: Path) -> None:
    at = _open("run_page.py")
    at.selectbox(key="run.plan").select("b_second").run()
    at.text_input(key="run.vars.b_second.greeting").input("おはよう")
    at.number_input(key="run.vars.b_second.count").set_value(5)
    at.checkbox(key="run.vars.b_second.loud").check()
    at.text_area(key="run.vars.b_second.tags").input("[x]\n").run()

    _trip(at, "run_page.py", away="helpdesk_page.py")
    assert at.text_input(key="run.vars.b_second.greeting").value == "おはよう"
    assert at.number_input(key="run.vars.b_second.count").value == 5
    assert at.checkbox(key="run.vars.b_second.loud").value is True
    assert at.text_area(key="run.vars.b_second.tags").value == "[x]\n"
    _click(at, "run.start")
    assert 'b_second: おはよう ×5 true ["x"]' in _texts(at)  # an int stays an int


def test_finished_run_and_its_results_survive_a_page_switch(designs: Path) -> None:
    at = _open("run_page.py")
    at.selectbox(key="run.plan").select("b_second").run()
    _click(at, "run.start")
    run_id = at.session_state["run.state"]["result"].run_id
    assert f"結果: 完了（{run_id}）" in _texts(at)

    _trip(at, "run_page.py", away="helpdesk_page.py")
    assert at.selectbox(key="run.plan").value == "b_second"
    text = _texts(at)
    assert f"結果: 完了（{run_id}）" in text
    assert 'b_second: こんにちは ×2 false ["a", "b"]' in text


def test_paused_run_and_its_form_survive_a_page_switch(designs: Path) -> None:
    (designs / "b_greet.yaml").write_text(GREET, encoding="utf-8")
    at = _open("run_page.py")
    at.selectbox(key="run.plan").select("b_greet").run()
    _click(at, "run.start")
    assert "入力待ち" in _texts(at)
    at.text_input(key=f"{GREET_KEY}::name").input("山田商事").run()

    _trip(at, "run_page.py", away="helpdesk_page.py")
    assert at.selectbox(key="run.plan").value == "b_greet"
    assert "入力待ち" in _texts(at)
    assert at.text_input(key=f"{GREET_KEY}::name").value == "山田商事"
    _click(at, "run.submit")
    assert "山田商事 様" in _texts(at)


def test_coming_back_shows_the_plan_of_the_current_run(designs: Path) -> None:
    at = _open("run_page.py")
    at.selectbox(key="run.plan").select("b_second").run()
    _click(at, "run.start")
    at.selectbox(key="run.plan").select("c_third").run()  # looking at another Plan

    _trip(at, "run_page.py", away="helpdesk_page.py")
    assert at.selectbox(key="run.plan").value == "b_second"
    assert "b_second: こんにちは ×2" in _texts(at)


def test_a_kept_plan_removed_meanwhile_falls_back_to_the_first(designs: Path) -> None:
    at = _open("run_page.py")
    at.selectbox(key="run.plan").select("c_third").run()
    _go(at, "helpdesk_page.py")
    (designs / "c_third.yaml").unlink()

    _go(at, "run_page.py")
    assert at.selectbox(key="run.plan").value == "a_first"


def test_analysis_data_chat_and_sheet_survive_a_page_switch() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()  # the データ分析 page
    workbook = _workbook()
    at.file_uploader(key="analysis.upload").upload("売上.xlsx", workbook).run()
    at.selectbox(key="analysis.sheet").select("下期").run()
    at.chat_input(key="analysis.chat").set_value("行数は？").run()
    assert not at.exception, at.exception
    thread = at.session_state["analysis.thread_id"]
    assert len(at.session_state["analysis.turns"]) == 1

    _trip(at, ANALYSIS, away="helpdesk_page.py")
    assert any("売上.xlsx: 2 行" in s.value for s in at.sidebar.success)  # the data is kept
    assert len(at.session_state["analysis.turns"]) == 1  # and the chat
    # Streamlit cannot restore the upload; the same workbook again keeps its sheet
    at.file_uploader(key="analysis.upload").upload("売上.xlsx", workbook).run()
    assert at.selectbox(key="analysis.sheet").value == "下期"
    assert at.session_state["analysis.thread_id"] == thread  # no new conversation
    assert len(at.session_state["analysis.turns"]) == 1
