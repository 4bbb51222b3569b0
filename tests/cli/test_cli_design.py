"""``keiri-agent plan generate | register | templates`` offline, through CliRunner."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.design.templates import TemplateLibrary

runner = CliRunner()
README_INSTRUCTION = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"
NEEDS_LLM = "請求書ZIPと入金明細Excelを照合して差異をExcelに出力"
UNCOVERED = "社員の誕生日にお祝いメールを送る"


def test_offline_generate_of_the_readme_example_prints_summary_then_yaml(
    keiri_home: Path,
) -> None:
    result = runner.invoke(app, ["plan", "generate", "--instruction", README_INSTRUCTION])
    assert result.exit_code == 0, result.output
    summary, _, text = result.stdout.partition("YAML:（以下）\n")
    assert "作り方: offline-rules" in summary
    assert "✓ 照合: 「請求番号」で突き合わせ" in summary
    assert "候補ブロック" in summary and "ドライラン: OK" in summary
    plan = yaml.safe_load(text)
    blocks = {node["block"] for node in plan["graph"]}
    assert {"excel.read_data", "csv.read", "table.reconcile", "excel.write"} <= blocks
    assert not blocks & {"file.parse_zip_2tier", "ai.process_llm"}
    (keiri_home / "p.yaml").write_text(text, encoding="utf-8")
    assert runner.invoke(app, ["plan", "validate", "p.yaml"]).exit_code == 0


def test_generate_json_with_out_writes_the_yaml(keiri_home: Path) -> None:
    out = keiri_home / "out" / "recon.yaml"
    result = runner.invoke(
        app,
        ["plan", "generate", "--instruction", README_INSTRUCTION, "--out", str(out), "--json"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is True and data["offline"] is True and data["verdict"] == "ok"
    assert data["reasoning"].startswith("offline-rules")
    assert data["coverage"]["ok"] is True and data["gaps"] == []
    assert data["path"] == str(out) and out.read_text(encoding="utf-8") == data["yaml"]
    assert data["validation"]["error_count"] == 0 and data["dry_run"]["ok"] is True
    assert any(c["block"] == "table.reconcile" for c in data["candidates"])


def test_generate_compose_with_templates_and_a_reference_document(keiri_home: Path) -> None:
    (keiri_home / "手順書.md").write_text("# 手順\n入金明細を読む。", encoding="utf-8")
    result = runner.invoke(
        app,
        [
            "plan", "generate", "--instruction", "入金明細を読む",
            "--templates", "upload_payments_workbook,payments_read",
            "--apply-mode", "compose", "--docs", "手順書.md", "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reasoning"] == "compose" and data["apply_mode"] == "compose"
    assert data["templates"] == ["upload_payments_workbook", "payments_read"]


def test_needs_llm_offline_exits_4_naming_the_part(keiri_home: Path) -> None:
    result = runner.invoke(app, ["plan", "generate", "--instruction", NEEDS_LLM])
    assert result.exit_code == 4, result.output
    text = result.stdout.replace("\n", "")
    assert "作れない部分" in text and "LLM の設定が必要です" in text
    assert "Plan は作りませんでした" in text


def test_uncovered_instruction_exits_4_with_the_message_and_candidates(keiri_home: Path) -> None:
    result = runner.invoke(app, ["plan", "generate", "--instruction", UNCOVERED])
    assert result.exit_code == 4
    text = result.stdout.replace("\n", "")
    assert "お祝いメールを送る" in text
    assert "Plan は作りませんでした" in text and "候補ブロック" in text
    data = json.loads(
        runner.invoke(app, ["plan", "generate", "--instruction", UNCOVERED, "--json"]).stdout
    )
    assert data["ok"] is False and data["yaml"] == "" and data["candidates"]


def test_generate_usage_errors_exit_2(keiri_home: Path) -> None:
    missing = runner.invoke(app, ["plan", "generate", "--instruction", "x", "--docs", "無い.pdf"])
    assert missing.exit_code == 2 and "無い.pdf" in missing.output
    assert "見つかりません" in missing.output
    mode = runner.invoke(app, ["plan", "generate", "--instruction", "x", "--apply-mode", "all"])
    assert mode.exit_code == 2 and "llm-only" in mode.output and "--apply-mode" in mode.output
    flag = runner.invoke(app, ["plan", "generate", "--instruction", "x", "--fallback", "yes"])
    assert flag.exit_code == 2
    assert runner.invoke(app, ["plan", "generate"]).exit_code == 2


def test_generate_reported_errors_exit_1_in_japanese(keiri_home: Path) -> None:
    empty = runner.invoke(app, ["plan", "generate", "--instruction", "  ", "--json"])
    assert empty.exit_code == 1
    assert json.loads(empty.stdout)["error"]["code"] == "DESIGN_EMPTY_INSTRUCTION"
    unknown = runner.invoke(
        app,
        ["plan", "generate", "--instruction", "入金", "--templates", "nope", "--apply-mode",
         "compose"],
    )  # fmt: skip
    assert unknown.exit_code == 1 and "nope" in unknown.output
    assert "Traceback" not in unknown.output


def test_generate_says_when_the_candidates_come_from_keywords_alone(
    keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_PROVIDER", "openai-compatible")
    monkeypatch.setenv("KEIRI_AGENT_EMBEDDING_BASE_URL", "http://127.0.0.1:9/v1")  # refused
    monkeypatch.setenv("KEIRI_AGENT_MAX_RETRIES", "0")
    result = runner.invoke(app, ["plan", "generate", "--instruction", README_INSTRUCTION])
    assert result.exit_code == 0, result.output
    summary = "".join(result.stdout.partition("YAML:（以下）\n")[0].split())  # unwrapped
    assert (
        "注意:埋め込み検索に失敗したため、キーワード検索だけで候補ブロックを探しました" in summary
    )
    as_json = runner.invoke(
        app, ["plan", "generate", "--instruction", README_INSTRUCTION, "--json"]
    )
    warnings = json.loads(as_json.stdout)["warnings"]
    assert any(warning.startswith("埋め込み検索に失敗したため") for warning in warnings)


def test_register_writes_the_design_and_prints_the_run_command(keiri_home: Path) -> None:
    out = keiri_home / "recon.yaml"
    runner.invoke(app, ["plan", "generate", "--instruction", README_INSTRUCTION, "--out", str(out)])
    result = runner.invoke(app, ["plan", "register", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert re.fullmatch(r"generated_plan_\d{12}", data["file_id"])
    assert Path(data["path"]) == keiri_home / "designs" / f"{data['file_id']}.yaml"
    assert data["run_command"] == f"keiri-agent plan run {data['file_id']}"
    again = runner.invoke(app, ["plan", "register", str(out)])
    assert again.exit_code == 0 and "keiri-agent plan run generated_plan_" in again.stdout
    assert runner.invoke(app, ["plan", "validate", data["file_id"]]).exit_code == 0


def test_register_refuses_an_invalid_plan(keiri_home: Path) -> None:
    bad = keiri_home / "bad.yaml"
    bad.write_text("id: broken\ngraph:\n  - id: a\n    block: no.such_block\n", encoding="utf-8")
    result = runner.invoke(app, ["plan", "register", str(bad)])
    assert result.exit_code == 1 and "登録できません" in result.output
    assert not (keiri_home / "designs").exists() or not list(
        (keiri_home / "designs").glob("*.yaml")
    )
    as_json = runner.invoke(app, ["plan", "register", str(bad), "--json"])
    assert json.loads(as_json.stdout)["error"]["code"] == "DESIGN_NOT_VALID"
    missing = runner.invoke(app, ["plan", "register", "nowhere.yaml"])
    assert missing.exit_code == 2 and "nowhere.yaml" in missing.output


def test_templates_lists_the_library(keiri_home: Path) -> None:
    result = runner.invoke(app, ["plan", "templates", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = {template.id for template in TemplateLibrary.load().all()}
    assert {item["id"] for item in data["templates"]} == expected and len(expected) >= 8
    reconcile = next(i for i in data["templates"] if i["id"] == "invoice_payment_reconcile")
    assert "table.reconcile" in reconcile["blocks"] and reconcile["tags"]
    assert data["problems"] == []
    table = runner.invoke(app, ["plan", "templates"])
    assert table.exit_code == 0 and f"テンプレート {len(expected)} 件" in table.stdout


def test_templates_reports_a_broken_workspace_template(keiri_home: Path) -> None:
    folder = keiri_home / "designs" / "templates" / "mine"
    folder.mkdir(parents=True)
    (folder / "broken.yaml").write_text("id: Broken Id\ntitle: x\n", encoding="utf-8")
    data = json.loads(runner.invoke(app, ["plan", "templates", "--json"]).stdout)
    assert data["problems"] and all("broken.yaml" in p for p in data["problems"])
    assert any("graph_snippet" in problem for problem in data["problems"])
