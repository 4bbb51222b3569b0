"""The 実行 page via AppTest: plan → 実行 → form → 送信 → outputs; error → fix → 再実行."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.blocks.requirements import session_key

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
    events = at.session_state["run.state"]["events"]
    return [e["node_id"] for e in events if e["event"] == "node_start"]


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


def test_rerun_start_maps_forms_in_loops_to_their_top_level_node() -> None:
    from keiri_agent.plans.dsl.models import Plan
    from keiri_agent.ui.run_page import rerun_start

    plan = Plan.model_validate(
        {
            "apiVersion": "v1",
            "id": "p",
            "version": "1.0.0",
            "graph": [
                {"id": "per_client", "block": "text.join", "in": {"items": ["a"]}},
                {"id": "write_excel", "block": "text.join", "in": {"items": ["b"]}},
            ],
        }
    )
    forms = ["per_client[0]/ask", "per_client[1]/ask"]
    sent = {"per_client[0]/ask": {"x": 1}, "per_client[1]/ask": {"x": 2}}
    unchanged = dict(sent)
    edited = {**sent, "per_client[1]/ask": {"x": 3}}
    assert rerun_start(plan, forms, unchanged, sent, "write_excel") == "write_excel"
    assert rerun_start(plan, forms, edited, sent, "write_excel") == "per_client"
    assert rerun_start(plan, [], {}, {}, "") == "per_client"


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
