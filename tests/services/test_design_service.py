"""DesignService: generation with metrics, the fallback switch, the stub-server path end
to end, register (refuses an invalid Plan, names the file) and the metrics summary."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from keiri_agent.config import Settings
from keiri_agent.errors import LLMError, UserInputError
from keiri_agent.llm.testing import ScriptedChatModel, StubOpenAIServer
from keiri_agent.plans.design.metrics import METRICS_FILE
from keiri_agent.services.design import DesignRequest, DesignService
from keiri_agent.services.jsonforms import design_check_json

README_INSTRUCTION = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"
SALES = "売上の Excel から金額 1,000 円以上の行を抜き出す"
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
        {"block": "excel.read_data", "purpose": "売上の Excel を読む"},
        {"block": "table.filter", "purpose": "1,000 円以上の行を残す"},
    ],
}
GOOD: dict[str, Any] = {
    "id": "big_sales",
    "graph": [
        {
            "id": "read",
            "block": "excel.read_data",
            "in": {"workbook": "${vars.book}", "sheet": "売上"},
            "out": {"records": "rows"},
        },
        {
            "id": "big",
            "block": "table.filter",
            "in": {
                "records": "${read.rows}",
                "conditions": [{"col": "金額", "op": ">=", "value": 1000}],
            },
            "out": {"records": "rows"},
        },
    ],
}
FAILING = ["JSON は書けません", "やはり書けません"]


def offline_service(tmp_path: Path) -> DesignService:
    return DesignService(Settings(home=tmp_path, provider="offline"))


def scripted_service(tmp_path: Path, replies: list[Any], **settings: Any) -> DesignService:
    model = ScriptedChatModel(replies)
    return DesignService(
        Settings(home=tmp_path, provider="offline", **settings), model_factory=lambda _: model
    )


def records(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "logs" / METRICS_FILE
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_offline_readme_example_is_valid_and_recorded(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    generation = service.generate(DesignRequest(instruction=README_INSTRUCTION))
    result = generation.result
    assert result.ok and result.offline and result.dry_run is not None and result.dry_run.ok
    assert service.check(result.yaml_text).ok
    assert generation.metrics_path == tmp_path / "logs" / METRICS_FILE
    (record,) = records(tmp_path)
    assert record["ok"] is True and record["mode"] == "offline-rules" and record["verdict"] == "ok"
    assert "table.reconcile" in record["blocks"]


def test_compose_of_two_templates_through_the_service(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    generation = service.generate(
        DesignRequest(
            instruction="入金明細を読む",
            templates=("upload_payments_workbook", "payments_read"),
            apply_mode="compose",
        )
    )
    assert generation.result.ok and generation.result.reasoning == "compose"


def test_fallback_on_returns_a_valid_plan(tmp_path: Path) -> None:
    service = scripted_service(tmp_path, FAILING)
    result = service.generate(DesignRequest(instruction=SALES, fallback=True)).result
    assert result.reasoning.startswith("fallback") and result.ok
    assert service.check(result.yaml_text).ok


def test_fallback_from_the_setting(tmp_path: Path) -> None:
    service = scripted_service(tmp_path, FAILING, llm_fallback=True)
    result = service.generate(DesignRequest(instruction=SALES)).result
    assert result.reasoning.startswith("fallback") and result.ok


def test_fallback_off_raises_and_records_the_error(tmp_path: Path) -> None:
    service = scripted_service(tmp_path, FAILING, llm_fallback=True)
    with pytest.raises(LLMError):
        service.generate(DesignRequest(instruction=SALES, fallback=False))
    (record,) = records(tmp_path)
    assert record["ok"] is False and record["mode"] == "error"


def test_stub_server_end_to_end(tmp_path: Path) -> None:
    with StubOpenAIServer([REQUIREMENTS, SKELETON, GOOD]) as server:
        settings = Settings(
            home=tmp_path,
            provider="openai-compatible",
            openai_api_base=server.base_url,
            openai_api_key="sk-test",
            model="stub-model",
        )
        service = DesignService(settings)
        assert not service.offline
        generation = service.generate(DesignRequest(instruction=SALES, apply_mode="llm-only"))
        chats = [r for r in server.requests if r.path.endswith("/chat/completions")]
    result = generation.result
    assert result.ok, result.report
    assert (
        result.reasoning
        == "structured: requirements: structured; skeleton: structured; wiring: structured"
    )
    assert len(chats) == 3
    assert chats[0].body["model"] == "stub-model"
    offered = chats[1].body["tools"][0]["function"]["parameters"]["properties"]["steps"]
    assert set(offered["items"]["properties"]["block"]["enum"]) == {
        c.block_id for c in result.candidates
    }
    (record,) = records(tmp_path)
    assert record["mode"] == "structured" and record["ok"] is True
    # the service's usage figures are summed over both calls (the stub reports them)
    assert result.tokens is not None and result.tokens["prompt"] > 0
    assert record["tokens"] == result.tokens


def test_when_the_embeddings_fail_candidates_come_from_keywords_and_say_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(
        home=tmp_path,
        provider="offline",
        embedding_provider="openai-compatible",
        embedding_base_url="http://127.0.0.1:9/v1",  # discard port: connection refused
        max_retries=0,
    )
    service = DesignService(settings)
    with caplog.at_level("WARNING", logger="keiri_agent.services.design"):
        search = service.candidates(SALES)
    assert search.keyword_fallback is not None
    assert search.warning is not None
    assert search.warning.startswith("埋め込み検索に失敗したため、キーワード検索だけで")
    assert search.candidates and all(c.embedding is None for c in search.candidates)
    assert "table.filter" in [c.block_id for c in search.candidates]
    [logged] = [r.getMessage() for r in caplog.records if r.name == "keiri_agent.services.design"]
    assert "embeddings failed" in logged and "keyword only" in logged

    result = service.generate(DesignRequest(instruction=SALES)).result
    assert search.warning in result.warnings


def test_with_working_embeddings_nothing_is_said(tmp_path: Path) -> None:
    with StubOpenAIServer() as server:
        settings = Settings(
            home=tmp_path,
            provider="offline",
            embedding_provider="openai-compatible",
            embedding_base_url=server.base_url,
        )
        search = DesignService(settings).candidates(SALES)
    assert search.keyword_fallback is None and search.warning is None
    assert search.candidates and search.candidates[0].embedding is not None


def test_register_refuses_an_invalid_plan_and_writes_nothing(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    invalid = "id: broken\ngraph:\n  - id: a\n    block: no.such_block\n"
    with pytest.raises(UserInputError) as raised:
        service.register(invalid)
    assert raised.value.code == "DESIGN_NOT_VALID"
    assert "登録できません" in raised.value.message
    assert raised.value.details is not None and raised.value.details["errors"]
    designs = tmp_path / "designs"
    assert not designs.exists() or not any(designs.glob("*.yaml"))


def test_register_writes_the_timestamped_design_file(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    result = service.generate(DesignRequest(instruction=README_INSTRUCTION, plan_id="recon")).result
    path = service.register(result.yaml_text).path
    assert path.parent == service.engine.store.designs_dir
    assert re.fullmatch(r"recon_\d{12}\.yaml", path.name), path.name
    file_id = service.file_id(path)
    assert file_id == path.stem
    assert service.engine.store.path_for(file_id) == path
    again = service.register(result.yaml_text).path
    assert again != path and again.exists() and path.exists()  # never overwritten


def test_metrics_summary_after_runs(tmp_path: Path) -> None:
    service = scripted_service(tmp_path, FAILING)
    with pytest.raises(LLMError):
        service.generate(DesignRequest(instruction=SALES, fallback=False))
    offline = offline_service(tmp_path)
    offline.generate(DesignRequest(instruction=README_INSTRUCTION))
    offline.generate(DesignRequest(instruction="社員の誕生日にお祝いメールを送る"))
    summary = offline.metrics()
    assert summary["count"] == 3
    assert summary["failed"] == 2  # the LLM error and the uncovered instruction
    assert summary["error_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["modes"] == {"error": 1, "offline-rules": 1, "offline": 1}
    assert summary["blocks"]["table.reconcile"] == 1


def test_empty_instruction_is_refused_in_japanese(tmp_path: Path) -> None:
    with pytest.raises(UserInputError) as raised:
        offline_service(tmp_path).generate(DesignRequest(instruction="   "))
    assert raised.value.message == "指示が空です"


def test_unknown_template_is_refused_in_japanese(tmp_path: Path) -> None:
    with pytest.raises(UserInputError) as raised:
        offline_service(tmp_path).generate(
            DesignRequest(instruction=SALES, templates=("nope",), apply_mode="compose")
        )
    assert "nope" in raised.value.message and raised.value.hint


def test_check_and_its_json_form(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    text = service.generate(DesignRequest(instruction=README_INSTRUCTION)).result.yaml_text
    good = design_check_json(service.check(text))
    assert good["ok"] is True and good["validation"]["error_count"] == 0
    assert good["dry_run"]["ok"] is True and good["dry_run_error"] is None
    bad = design_check_json(service.check(text.replace("table.reconcile", "table.reconcil")))
    assert bad["ok"] is False and bad["dry_run"] is None
    assert "UNKNOWN_BLOCK" in {issue["code"] for issue in bad["validation"]["issues"]}


def test_an_unknown_pinned_block_is_refused_and_still_recorded(tmp_path: Path) -> None:
    service = offline_service(tmp_path)
    with pytest.raises(UserInputError) as raised:
        service.generate(DesignRequest(instruction="入金明細を読む", pinned=("no.such",)))
    assert "no.such" in raised.value.message
    (record,) = records(tmp_path)
    assert record["ok"] is False and record["mode"] == "error"


def test_answers_go_back_to_the_model_with_the_instruction(tmp_path: Path) -> None:
    asks = {**GOOD, "questions": [{"var": "limit", "question": "しきい値は？", "type": "number"}]}
    asks["graph"] = [
        GOOD["graph"][0],
        {
            **GOOD["graph"][1],
            "in": {
                **GOOD["graph"][1]["in"],
                "conditions": [{"col": "金額", "op": ">=", "value": "${vars.limit}"}],
            },
        },
    ]
    model = ScriptedChatModel([REQUIREMENTS, SKELETON, asks, REQUIREMENTS, SKELETON, GOOD])
    service = DesignService(
        Settings(home=tmp_path, provider="offline"), model_factory=lambda _: model
    )
    request = DesignRequest(instruction=SALES)
    first = service.generate(request).result
    assert first.verdict == "needs_answers" and "limit" in [r.id for r in first.requirements]
    settled = service.settle(request, first, {"limit": 1000})
    assert model.remaining == 0 and settled.verdict == "ok"
    second_requirements_prompt = model.prompts[3]
    assert "## 確認済みの回答" in second_requirements_prompt
    assert "しきい値は？: 1000" in second_requirements_prompt
