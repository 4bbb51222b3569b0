"""DesignChat: turns over the open requirements, Japanese errors, apply() passes check()."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from keiri_agent.config import Settings
from keiri_agent.plans.design.design_chat import DESIGN_INPUT_NODE, DesignChat
from keiri_agent.plans.design.requirements import build_requirements
from keiri_agent.plans.engine import PlanEngine

PLAN = """
apiVersion: v1
id: bank_check
version: 0.1.0
vars:
  amount_column: null
  limit: null
ui:
  layout: [confirm]
graph:
  - id: read_bank
    block: excel.read_data
    in: {header: auto}
    out: {records: rows}
  - id: pick
    block: table.filter
    in:
      records: ${read_bank.rows}
      conditions: [{col: "${vars.amount_column}", op: ">=", value: "${vars.limit}"}]
    out: {records: picked}
  - id: confirm
    block: ui.interactive_input
    in:
      mode: confirm
      message: "${vars.memo}"
      context: {rows: "${pick.picked}"}
"""
QUESTIONS = {"limit": {"question": "下限の金額は？", "type": "number"}}


def _chat() -> DesignChat:
    return DesignChat(PLAN, build_requirements(PLAN, var_questions=QUESTIONS), batch_size=2)


def test_turns_ask_a_few_at_a_time_in_inquire_mode() -> None:
    chat = _chat()
    request = chat.next_request()
    assert request is not None
    assert request["mode"] == "inquire"
    ids = [field["id"] for field in request["fields"]]
    # files are asked at run time; sheet/range are optional text; the note closes
    assert ids == ["read_bank_sheet", "read_bank_range", "response"]
    assert request["fields"][-1]["required"] is False
    assert "アップロード" in request["message"]


def test_wrong_answers_are_reported_in_japanese_and_right_ones_kept() -> None:
    chat = _chat()
    chat.answer({"read_bank_sheet": "入金明細", "read_bank_range": ""})
    request = chat.next_request()
    assert request is not None
    assert [field["id"] for field in request["fields"]][:2] == ["amount_column", "limit"]
    turn = chat.answer({"amount_column": "金額", "limit": "たくさん"})
    assert turn.accepted == {"amount_column": "金額"}
    assert set(turn.errors) == {"limit"}
    assert "数値" in turn.errors["limit"]
    assert turn.pending == ["limit", "memo"]
    assert not turn.done
    turn = chat.answer({"limit": "1,000"})
    assert turn.accepted == {"limit": 1000}
    assert chat.values["amount_column"] == "金額"  # nothing lost
    assert chat.vars_preview() == {"amount_column": "金額", "limit": 1000, "memo": None}


def test_unknown_answer_key_is_an_error() -> None:
    turn = _chat().answer({"nope": 1})
    assert "nope" in turn.errors
    assert "質問はありません" in turn.errors["nope"]


def test_state_round_trips_through_json() -> None:
    chat = _chat()
    chat.answer({"read_bank_sheet": "入金明細", "response": "月末締めです"})
    again = DesignChat.from_dict(json.loads(json.dumps(chat.to_dict())))
    assert again.values == chat.values
    assert again.notes == ["月末締めです"]
    assert again.requirements == chat.requirements
    assert again.next_request() == chat.next_request()


def test_applied_plan_passes_check_and_asks_the_file_at_run_time(tmp_path: Path) -> None:
    engine = PlanEngine(Settings(home=tmp_path))
    assert not engine.check(PLAN).ok
    chat = _chat()
    while (request := chat.next_request()) is not None:
        answers = {
            "read_bank_sheet": "入金明細",
            "read_bank_range": "",
            "amount_column": "金額",
            "limit": 500,
            "memo": "確認してください",
        }
        chat.answer({f["id"]: answers[f["id"]] for f in request["fields"] if f["id"] in answers})
    assert chat.done
    text = chat.apply()
    report = engine.check(text)
    assert report.ok, report.to_dict()
    plan = yaml.safe_load(text)
    first = plan["graph"][0]
    assert first["id"] == DESIGN_INPUT_NODE
    assert [f["id"] for f in first["in"]["requirements"]] == ["read_bank_workbook"]
    assert first["in"]["requirements"][0]["type"] == "file"
    read = plan["graph"][1]
    assert read["in"]["workbook"] == "${design_inputs.collected.read_bank_workbook}"
    assert read["in"]["sheet"] == "入金明細"
    assert "range" not in read["in"]
    assert plan["vars"] == {"amount_column": "金額", "limit": 500, "memo": "確認してください"}
    assert plan["ui"]["layout"] == [DESIGN_INPUT_NODE, "confirm"]
    assert build_requirements(text) == []


def test_apply_sets_the_chosen_output_schema() -> None:
    text = """
apiVersion: v1
id: extract
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in:
      mode: collect
      requirements: [{id: zip, type: file, label: 証跡ZIP, accept: .zip}]
    out: {collected_data: collected}
  - id: parse
    block: file.parse_zip_2tier
    in: {zip_bytes: "${ask.collected.zip}"}
    out: {evidence_data: evidence}
  - id: extract
    block: ai.process_llm
    in: {evidence_data: "${parse.evidence}", prompt: 項目を抽出}
"""
    chat = DesignChat(text, build_requirements(text))
    turn = chat.answer({"extract_output_schema": "領収書の項目"})
    assert turn.done
    node = yaml.safe_load(chat.apply())["graph"][2]
    assert node["in"]["output_schema"]["金額"] == "integer"
    assert set(node["in"]["output_schema"]) == {"発行者", "日付", "金額", "但し書き", "登録番号"}
