"""The 実行 page via AppTest: plan → 実行 → form → 送信 → outputs; error → fix → 再実行.

Runs, resumes and re-runs go through the run service: the page keeps the run's id and
follows its events, so a rerun of the page or a reload while the Plan runs keeps
following the same run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.requirements import session_key
from keiri_agent.blocks.text import TemplateBlock
from keiri_agent.runs.records import Run
from keiri_agent.runs.service import RunService
from keiri_agent.services.container import Services
from keiri_agent.ui import run_follow, session
from keiri_agent.ui.session import SETTINGS

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
GREET = """\
apiVersion: v1
id: greet
version: 0.1.0
ui:
  layout: [collect, message]
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: "名前と金額を入力してください"
      requirements:
        - {id: name, type: text, label: "名前", required: true}
        - {id: amount, type: number, label: "金額", required: true}
    out:
      collected_data: collected
  - id: message
    block: text.template
    in:
      template: "{name} 様 ご請求額: {amount:,} 円"
      values: ${collect.collected}
    out:
      text: text
"""
STRICT = """\
apiVersion: v1
id: strict
version: 0.1.0
ui:
  layout: [collect, message]
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      message: "テンプレートを入力してください"
      requirements:
        - {id: name, type: text, label: "名前", required: true}
        - {id: template, type: text, label: "テンプレート", required: true}
    out:
      collected_data: collected
  - id: message
    block: text.template
    in:
      template: ${collect.collected.template}
      values: ${collect.collected}
    out:
      text: text
"""
VARS = """\
apiVersion: v1
id: vars_demo
version: 0.1.0
vars: {greeting: "こんにちは", count: 2, tags: [a, b]}
graph:
  - id: message
    block: text.template
    in:
      template: "{greeting} ×{count} {tags}"
      values: {greeting: "${vars.greeting}", count: "${vars.count}", tags: "${vars.tags}"}
    out:
      text: text
"""
GREET_KEY = session_key("greet", "collect", "1.0.0")
STRICT_KEY = session_key("strict", "collect", "1.0.0")


@pytest.fixture
def page(keiri_home: Path) -> AppTest:
    designs = keiri_home / "designs"
    designs.mkdir()
    (designs / "greet.yaml").write_text(GREET, encoding="utf-8")
    (designs / "strict.yaml").write_text(STRICT, encoding="utf-8")
    (designs / "vars_demo.yaml").write_text(VARS, encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("run_page.py").run()
    assert not at.exception, at.exception
    return at


def _button(at: AppTest, label: str) -> None:
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception, at.exception


def _texts(at: AppTest) -> str:
    parts = [t.value for t in at.text] + [m.value for m in at.markdown]
    parts += [e.value for e in at.error] + [i.value for i in at.info]
    parts += [c.value for c in at.caption] + [s.value for s in at.subheader]
    return "\n".join(str(p) for p in parts)


def test_run_pause_answer_and_see_the_output(page: AppTest) -> None:
    assert page.selectbox(key="run.plan").value == "greet"
    assert "collect → message" in _texts(page)
    _button(page, "実行")
    assert "入力待ち" in _texts(page)
    assert page.session_state[GREET_KEY] == {"name": "", "amount": None}

    page.text_input(key=f"{GREET_KEY}::name").input("山田商事")
    page.number_input(key=f"{GREET_KEY}::amount").set_value(120000)
    _button(page, "送信")

    text = _texts(page)
    assert "完了" in text
    assert "山田商事 様 ご請求額: 120,000" in text
    assert page.session_state[GREET_KEY] == {"name": "山田商事", "amount": 120000}
    page.run()  # another rerun keeps the values
    assert not page.exception, page.exception
    assert page.session_state[GREET_KEY]["name"] == "山田商事"
    assert page.session_state[GREET_KEY]["amount"] == 120000


def test_reset_restores_the_initial_values(page: AppTest) -> None:
    _button(page, "実行")
    page.text_input(key=f"{GREET_KEY}::name").input("山田商事").run()
    assert page.session_state[GREET_KEY]["name"] == "山田商事"
    _button(page, "リセット")
    assert page.session_state[GREET_KEY] == {"name": "", "amount": None}
    assert page.text_input(key=f"{GREET_KEY}::name").value == ""


def test_error_then_fixed_input_and_rerun(page: AppTest) -> None:
    page.selectbox(key="run.plan").select("strict").run()
    _button(page, "実行")
    page.text_input(key=f"{STRICT_KEY}::name").input("山田")
    page.text_input(key=f"{STRICT_KEY}::template").input("{nam} 様")
    _button(page, "送信")

    assert any("{nam}" in e.value for e in page.error)
    assert any("{name}" in i.value for i in page.info)  # the hint
    assert any(x.label == "エラー詳細" for x in page.expander)
    assert page.text_input(key=f"{STRICT_KEY}::template").value == "{nam} 様"  # kept
    assert "再実行: message から（失敗したノード、入力はそのまま）" in _texts(page)

    page.text_input(key=f"{STRICT_KEY}::template").input("{name} 様").run()
    assert "再実行: collect から（入力が変更されたため）" in _texts(page)
    _button(page, "再実行")

    assert not page.error
    assert "山田 様" in _texts(page)
    assert "完了" in _texts(page)
    assert any(x.label == "実行ログ（JSONL）" for x in page.expander)
    assert "collect" in _started(page)  # the edited form ran again with its new values


def _started(at: AppTest) -> list[str]:
    """The nodes the last run (or rerun) started, in order."""
    events = at.session_state["run.state"]["events"]  # Event.to_dict() of the last run
    return [e["payload"]["node_id"] for e in events if e["kind"] == "node_start"]


def test_rerun_with_unchanged_values_starts_at_the_failed_node(page: AppTest) -> None:
    page.selectbox(key="run.plan").select("strict").run()
    _button(page, "実行")
    page.text_input(key=f"{STRICT_KEY}::name").input("山田")
    page.text_input(key=f"{STRICT_KEY}::template").input("{nam} 様")
    _button(page, "送信")
    assert any("{nam}" in e.value for e in page.error)

    _button(page, "再実行")

    assert _started(page) == ["message"]  # the form's answers were reused, not asked again
    assert any("{nam}" in e.value for e in page.error)  # same input, same error
    assert page.text_input(key=f"{STRICT_KEY}::template").value == "{nam} 様"


FORM = """\
apiVersion: v1
id: form_kinds
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: confirm
      message: "確認してください"
      requirements:
        - {id: evidence, type: file, label: "証跡", accept: ".csv", required: true}
        - {id: region, type: select, label: "地域", options: ["関東", "近畿"]}
    out:
      approved: approved
"""


def test_file_select_and_confirm_fields(page: AppTest, keiri_home: Path) -> None:
    (keiri_home / "designs" / "form_kinds.yaml").write_text(FORM, encoding="utf-8")
    page.run()
    page.selectbox(key="run.plan").select("form_kinds").run()
    _button(page, "実行")
    key = session_key("form_kinds", "ask", "1.0.0")
    assert page.session_state[key] == {"evidence": None, "region": "関東", "approved": False}

    page.file_uploader(key=f"{key}::evidence").upload("a.csv", b"x,y\n1,2\n", "text/csv")
    page.run()
    page.selectbox(key=f"{key}::region").select("近畿")
    page.checkbox(key=f"{key}::approved").check()
    _button(page, "送信")

    assert not page.error, [e.value for e in page.error]
    assert "完了" in _texts(page)
    assert page.session_state[key]["evidence"] == {"name": "a.csv", "data": b"x,y\n1,2\n"}
    assert page.session_state[key]["region"] == "近畿"


def test_plan_vars_are_shown_with_their_defaults_and_used_by_the_run(page: AppTest) -> None:
    page.selectbox(key="run.plan").select("vars_demo").run()
    assert page.text_input(key="run.vars.vars_demo.greeting").value == "こんにちは"
    assert page.number_input(key="run.vars.vars_demo.count").value == 2
    assert "- a" in page.text_area(key="run.vars.vars_demo.tags").value

    page.text_input(key="run.vars.vars_demo.greeting").input("おはよう")
    page.number_input(key="run.vars.vars_demo.count").set_value(3)
    page.text_area(key="run.vars.vars_demo.tags").input("[x]")
    _button(page, "実行")

    assert 'おはよう ×3 ["x"]' in _texts(page)
    assert page.text_input(key="run.vars.vars_demo.greeting").value == "おはよう"  # kept


def test_plan_vars_are_labelled_by_their_titles(page: AppTest, keiri_home: Path) -> None:
    titled = VARS.replace(
        "graph:",
        "ui:\n  vars:\n    greeting: {title: 挨拶の言葉, description: 文面の先頭に入ります}\n"
        "    count: {title: 回数}\ngraph:",
    )
    (keiri_home / "designs" / "vars_demo.yaml").write_text(titled, encoding="utf-8")
    page.selectbox(key="run.plan").select("vars_demo").run()
    greeting = page.text_input(key="run.vars.vars_demo.greeting")
    assert (greeting.label, greeting.help) == ("挨拶の言葉", "文面の先頭に入ります")
    assert page.number_input(key="run.vars.vars_demo.count").label == "回数"
    assert page.text_area(key="run.vars.vars_demo.tags").label == "tags"  # no title: its name


EDITED_GREET = GREET.replace(
    '        - {id: amount, type: number, label: "金額", required: true}',
    '        - {id: memo, type: text, label: "メモ", required: true}',
).replace("{name} 様 ご請求額: {amount:,} 円", "{name} 様 {memo}")


def test_edited_requirements_are_merged_with_a_warning(page: AppTest, keiri_home: Path) -> None:
    _button(page, "実行")
    page.text_input(key=f"{GREET_KEY}::name").input("山田商事")
    page.number_input(key=f"{GREET_KEY}::amount").set_value(120000).run()

    # the Plan is edited while the page is open: amount removed, memo added
    (keiri_home / "designs" / "greet.yaml").write_text(EDITED_GREET, encoding="utf-8")
    _button(page, "実行")

    assert page.session_state[GREET_KEY] == {"name": "山田商事", "memo": ""}  # name kept
    warnings = [w.value for w in page.warning]
    assert any("入力項目が変わりました" in w and "amount" in w for w in warnings)
    assert any("memo" in w for w in warnings)
    page.text_input(key=f"{GREET_KEY}::memo").input("いつもありがとうございます")
    _button(page, "送信")
    assert "山田商事 様 いつもありがとうございます" in _texts(page)
    assert not any("入力項目が変わりました" in w.value for w in page.warning)


VALIDATED = """\
apiVersion: v1
id: validated
version: 0.1.0
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: amount, type: number, label: "金額", required: true, validation: {min: 1}}
    out:
      collected_data: collected
"""


def test_refused_answers_show_each_fields_reason(page: AppTest, keiri_home: Path) -> None:
    (keiri_home / "designs" / "validated.yaml").write_text(VALIDATED, encoding="utf-8")
    page.run()
    page.selectbox(key="run.plan").select("validated").run()
    _button(page, "実行")
    key = session_key("validated", "collect", "1.0.0")
    page.number_input(key=f"{key}::amount").set_value(0)
    _button(page, "送信")
    assert any(w.value.startswith("金額: ") and "1" in w.value for w in page.warning), [
        w.value for w in page.warning
    ]


def test_a_field_whose_type_changed_gets_a_fresh_widget(page: AppTest, keiri_home: Path) -> None:
    _button(page, "実行")
    page.text_input(key=f"{GREET_KEY}::name").input("山田商事")
    page.number_input(key=f"{GREET_KEY}::amount").set_value(120000).run()

    retyped = GREET.replace("type: number", "type: text").replace("{amount:,}", "{amount}")
    (keiri_home / "designs" / "greet.yaml").write_text(retyped, encoding="utf-8")
    _button(page, "実行")

    assert page.session_state[GREET_KEY] == {"name": "山田商事", "amount": ""}
    assert page.text_input(key=f"{GREET_KEY}::amount").value == ""  # not the old number
    assert any("amount" in w.value and "text" in w.value for w in page.warning)


# --------------------------------------------------------------------------- issue 16 item 6


def _open(keiri_home: Path, plans: dict[str, str]) -> AppTest:
    designs = keiri_home / "designs"
    designs.mkdir(exist_ok=True)
    for name, text in plans.items():
        (designs / f"{name}.yaml").write_text(text, encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("run_page.py").run()
    assert not at.exception, at.exception
    return at


def _start_button(at: AppTest) -> Any:
    return next(b for b in at.button if b.label == "実行")


def test_a_new_workspace_offers_the_bundled_samples_and_says_where_plans_live(
    keiri_home: Path,
) -> None:
    at = _open(keiri_home, {})
    options = at.selectbox(key="run.plan").options
    assert "サンプル: 経費精算チェック" in options
    assert "サンプル: 請求と入金の照合" in options
    info = "\n".join(i.value for i in at.info)
    assert str(keiri_home / "designs") in info and "設計" in info

    at.selectbox(key="run.plan").select("sample:expense_check").run()
    assert not at.exception, at.exception
    assert "経費精算チェック" in [s.value for s in at.subheader]
    key = session_key("examples/expense_check", "collect", "1.0.0")
    assert at.number_input(key=f"{key}::limit").value == 30000  # the form, before 実行


def test_the_form_is_shown_before_the_run_and_the_run_starts_with_it(page: AppTest) -> None:
    page.text_input(key=f"{GREET_KEY}::name").input("山田商事")
    page.number_input(key=f"{GREET_KEY}::amount").set_value(120000)
    _button(page, "実行")

    text = _texts(page)
    assert "結果: 完了" in text  # no pause: the form's values were the answers
    assert "山田商事 様 ご請求額: 120,000" in text
    assert page.session_state[GREET_KEY] == {"name": "山田商事", "amount": 120000}


TITLED = """\
apiVersion: v1
id: titled
title: 精算チェック
version: 0.1.0
graph:
  - id: collect
    title: 担当者の入力
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: name, type: text, label: "担当者", required: true}
    out: {collected_data: collected}
  - id: rows
    title: 明細の整形
    block: text.template
    in:
      template: "{name}"
      values: ${collect.collected}
    out: {text: text}
  - id: write
    title: 結果ブックの作成
    block: excel.write
    in:
      workbook: null
      data: [{担当者: "${rows.text}", 金額: 1200}]
      output_config: {sheet: 結果, create_sheet: true}
    out: {workbook: workbook}
exports:
  - {from: write.workbook, as: workbook, title: 精算チェック結果, description: 要確認の行}
"""


def test_titles_final_outputs_first_and_a_named_download(keiri_home: Path) -> None:
    at = _open(keiri_home, {"titled": TITLED})
    assert "精算チェック" in [s.value for s in at.subheader]
    assert "手順: 担当者の入力 → 明細の整形 → 結果ブックの作成" in _texts(at)
    key = session_key("titled", "collect", "1.0.0")
    at.text_input(key=f"{key}::name").input("佐藤")
    _button(at, "実行")

    buttons = at.get("download_button")
    assert buttons[0].proto.label == "精算チェック結果.xlsx をダウンロード"
    assert buttons[0].proto.deferred_file_id and not buttons[0].proto.url  # made on click
    markdown = [m.value for m in at.markdown]
    assert "**精算チェック結果**" in markdown
    assert not any(m.startswith("**write.") or m.startswith("**rows.") for m in markdown)
    hidden = next(x for x in at.expander if x.label.startswith("途中の出力"))
    assert not hidden.proto.expanded  # intermediate outputs: hidden until opened
    assert "**明細の整形（text）**" in [m.value for m in hidden.markdown]
    progress = _texts(at)
    assert "担当者の入力: 開始" in progress and "結果ブックの作成: 完了" in progress
    assert "node_start" not in progress


CLASSIFY = """\
apiVersion: v1
id: classify_demo
version: 0.1.0
vars: {classify: true}
graph:
  - id: rows
    block: text.template
    in: {template: "x", values: {}}
    out: {text: text}
  - id: accounts
    title: 勘定科目の分類
    block: ai.classify
    when: {expr: "${vars.classify} == true"}
    in:
      records: [{摘要: "${rows.text}"}]
      labels: [旅費交通費, 会議費]
    out: {records: rows}
"""


def test_a_plan_that_needs_an_llm_says_so_before_the_run(keiri_home: Path) -> None:
    at = _open(keiri_home, {"classify_demo": CLASSIFY})
    assert _start_button(at).disabled
    assert any("勘定科目の分類" in e.value and "LLM" in e.value for e in at.error)

    at.checkbox(key="run.vars.classify_demo.classify").uncheck().run()  # no LLM step now
    assert not _start_button(at).disabled
    assert not any("LLM" in e.value for e in at.error)


ASKED_LLM = """\
apiVersion: v1
id: asked_llm
version: 0.1.0
graph:
  - id: collect
    block: ui.interactive_input
    in:
      mode: collect
      requirements:
        - {id: use_ai, type: boolean, label: "AI で分類する", required: false}
    out: {collected_data: collected}
  - id: accounts
    title: 勘定科目の分類
    block: ai.classify
    when: {expr: "${collect.collected.use_ai} == true"}
    in:
      records: [{摘要: タクシー}]
      labels: [旅費交通費, 会議費]
    out: {records: rows}
"""


def test_a_configuration_error_offers_no_rerun(keiri_home: Path) -> None:
    at = _open(keiri_home, {"asked_llm": ASKED_LLM})
    assert not _start_button(at).disabled  # it depends on the answer: a warning only
    assert any("勘定科目の分類" in w.value for w in at.warning)
    key = session_key("asked_llm", "collect", "1.0.0")
    at.checkbox(key=f"{key}::use_ai").check()
    _button(at, "実行")

    assert any("LLM" in e.value for e in at.error)
    assert not any(b.label == "再実行" for b in at.button)


def test_the_offline_banner_is_on_the_run_page(page: AppTest) -> None:
    assert any("オフラインモード" in w.value for w in page.sidebar.warning)


# --------------------------------------------------------------------------- issue 16 item 8

MIXED = """\
apiVersion: v1
id: mixed
version: 0.1.0
graph:
  - id: rows
    block: table.concat
    in:
      tables:
        - - {取引先: A社, 金額: 1200}
          - {取引先: B社, 金額: "不明"}
    out: {records: rows}
"""


def test_a_run_logs_no_traceback_in_the_server_log(keiri_home: Path) -> None:
    """A column of numbers and text (a 金額 that did not read) is shown without Streamlit
    logging an Arrow conversion traceback; no thread logs one either."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    names = ["", "keiri_agent", *(n for n in logging.root.manager.loggerDict if "streamlit" in n)]
    watched = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in watched]
    for logger in watched:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        at = _open(keiri_home, {"mixed": MIXED})
        _start_button(at).click().run()
        assert not at.exception, at.exception
        assert "結果: 完了" in _texts(at)
    finally:
        for logger, level in zip(watched, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
    tracebacks = [r.getMessage() for r in records if r.exc_info or r.levelno >= logging.ERROR]
    assert tracebacks == []
    no_context = [  # st.* called from the run's worker thread (AppTest's own is MainThread)
        r.threadName for r in records if "ScriptRunContext" in r.getMessage()
    ]
    assert set(no_context) <= {"MainThread"}


def _reload_run_page(at: AppTest) -> AppTest:
    """A new browser session on the 実行 page with the URL of ``at`` (what F5 does)."""
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.run()  # AppTest opens the first page first
    fresh.query_params.clear()
    for name, value in at.query_params.items():
        fresh.query_params[name] = value
    fresh.switch_page("run_page.py").run()
    assert not fresh.exception, fresh.exception
    return fresh


def test_the_current_run_is_in_the_url_and_restored_after_a_reload(keiri_home: Path) -> None:
    at = _open(keiri_home, {"titled": TITLED})
    key = session_key("titled", "collect", "1.0.0")
    at.text_input(key=f"{key}::name").input("佐藤")
    _button(at, "実行")
    run_id = at.session_state["run.state"]["result"].run_id
    params = {k: v[0] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert params == {"plan": "titled", "run": run_id}

    again = _reload_run_page(at)
    assert any(run_id in s.value and "完了" in s.value for s in again.subheader)
    labels = [button.proto.label for button in again.get("download_button")]
    assert labels[0] == "精算チェック結果.xlsx をダウンロード"
    assert "結果ブックの作成: 完了" in _texts(again), "the progress comes from the run log"
    # the side panel lists the run and reopens it
    listed = [b.label for b in again.sidebar.button if b.label.startswith("titled: 完了")]
    assert listed, [b.label for b in again.sidebar.button]


def test_a_paused_run_is_restored_with_its_form(page: AppTest) -> None:
    _button(page, "実行")
    assert "入力待ち" in _texts(page)
    again = _reload_run_page(page)
    assert "入力待ち" in _texts(again)
    again.text_input(key=f"{GREET_KEY}::name").input("山田商事")
    again.number_input(key=f"{GREET_KEY}::amount").set_value(120000)
    _button(again, "送信")
    assert "山田商事 様 ご請求額: 120,000" in _texts(again)


def test_an_unknown_run_in_the_url_is_said_in_japanese(keiri_home: Path) -> None:
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.run()
    fresh.query_params.clear()
    fresh.query_params["plan"] = "greet"
    fresh.query_params["run"] = "run_doesnotexist"
    fresh.switch_page("run_page.py").run()
    assert not fresh.exception, fresh.exception
    assert fresh.error, "a run that cannot be found is an error on the page"


# --------------------------------------------------------------------------- the run service


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """``text.template`` waits until the test sets the returned event."""
    gate = threading.Event()
    run = TemplateBlock.run

    def waiting(self: TemplateBlock, inputs: Mapping[str, Any], ctx: BlockContext) -> Any:
        assert gate.wait(60), "the test never let the block finish"
        return run(self, inputs, ctx)

    monkeypatch.setattr(TemplateBlock, "run", waiting)
    yield gate
    gate.set()


def _services(at: AppTest) -> Services:
    return session._services(at.session_state[SETTINGS])


def _interrupted_start(page: AppTest) -> str:
    """Click 実行 on the vars_demo Plan and let AppTest stop the page while the run
    waits in ``text.template`` (as a click does in a browser); the run's id."""
    page.selectbox(key="run.plan").select("vars_demo").run()
    with pytest.raises(RuntimeError, match="timed out"):
        _start_button(page).click().run(timeout=4)
    run_id: str = page.session_state["run.state"]["job"]["run_id"]
    assert not _services(page).runs.require(run_id).settled
    return run_id


def test_a_rerun_while_the_plan_runs_keeps_following_the_same_run(
    page: AppTest, held: threading.Event
) -> None:
    run_id = _interrupted_start(page)

    held.set()
    page.run()  # (AppTest sends the click of 実行 again: no second run starts)
    assert not page.exception, page.exception
    assert f"結果: 完了（{run_id}）" in _texts(page)
    assert 'こんにちは ×2 ["a", "b"]' in _texts(page)
    assert page.session_state["run.state"]["result"].run_id == run_id
    assert [run.run_id for run in _services(page).runs.store.find(kind="plan")] == [run_id]


def test_a_reload_while_the_plan_runs_follows_it(
    page: AppTest, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _interrupted_start(page)
    followed: list[str] = []
    follow = run_follow.follow_run

    def following(runs: RunService, run_id: str, **options: Any) -> Run:
        followed.append(run_id)
        held.set()  # the run goes on once the new session follows it
        return follow(runs, run_id, **options)

    monkeypatch.setattr(run_follow, "follow_run", following)
    again = AppTest.from_file(APP, default_timeout=60)  # F5 with the run in the URL
    again.run()
    again.query_params.clear()
    again.query_params.update(plan="vars_demo", run=run_id)
    again.switch_page("run_page.py").run()
    assert not again.exception, again.exception
    assert f"結果: 完了（{run_id}）" in _texts(again)
    assert 'こんにちは ×2 ["a", "b"]' in _texts(again)
    assert "message: 完了" in _texts(again)  # its progress, from the run's events
    assert followed == [run_id]
    assert [run.run_id for run in _services(again).runs.store.find(kind="plan")] == [run_id]


APPROVAL = """\
apiVersion: v1
id: approval
version: 0.1.0
graph:
  - id: approve
    block: ui.interactive_input
    in:
      mode: confirm
      message: 支払一覧を承認してください
      approval: {roles: [approver], not_starter: true}
    out: {approved: approved}
"""
APPROVAL_KEY = session_key("approval", "approve", "1.0.0")


def test_a_registered_os_user_is_checked_like_at_the_command_line(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from keiri_agent.config import Settings
    from keiri_agent.people.accounts import Accounts

    designs = keiri_home / "designs"
    designs.mkdir()
    (designs / "approval.yaml").write_text(APPROVAL, encoding="utf-8")
    accounts = Accounts.from_settings(Settings())
    accounts.add("keiri", ["admin"])
    accounts.add("yamada", ["operator", "approver"], display_name="山田")
    accounts.add("suzuki", ["viewer"], display_name="鈴木")
    accounts.engine.dispose()

    monkeypatch.setattr("keiri_agent.people.operator.os_login", lambda: "suzuki")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("run_page.py").run()
    _button(at, "実行")
    assert "鈴木 さんには「Plan を実行し、エージェントを使う」権限がありません" in _texts(at)

    monkeypatch.setattr("keiri_agent.people.operator.os_login", lambda: "yamada")
    _button(at, "実行")
    assert "入力待ち" in _texts(at)
    at.checkbox(key=f"{APPROVAL_KEY}::approved").check()
    _button(at, "送信")
    assert "実行を始めた人のため、承認できません（職務分掌）" in _texts(at)
