"""Plans over HTTP: list, show, validate, dry-run, generate (offline) and register,
with uvicorn on loopback and a real HTTP client; ids that leave designs/ read nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from api_support import LiveServer

from keiri_agent.config import Settings
from keiri_agent.demo import sample_plan_path
from keiri_agent.workspace import Workspace

README_INSTRUCTION = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"
INVALID = """\
apiVersion: v1
id: broken
version: 0.1.0
graph:
  - id: a
    block: no.such_block
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path / "home", provider="offline")
    designs = Workspace.from_settings(settings).designs
    (designs / "examples").mkdir(parents=True)
    text = sample_plan_path("expense_check").read_text(encoding="utf-8")
    (designs / "examples" / "expense_check.yaml").write_text(text, encoding="utf-8")
    (designs / "broken.yaml").write_text(INVALID, encoding="utf-8")
    (tmp_path / "secret.yaml").write_text(INVALID.replace("broken", "secret_plan"), "utf-8")
    return settings


@pytest.fixture
def client(workspace: Settings, serve: Callable[..., LiveServer]) -> httpx.Client:
    server = serve(workspace)
    return httpx.Client(base_url=server.url, timeout=60)


def test_list_and_show_give_ids_versions_yaml_and_the_inputs_a_run_asks(
    client: httpx.Client,
) -> None:
    listed = client.get("/api/plans").json()["plans"]
    shown = client.get("/api/plans/examples/expense_check").json()

    by_id = {item["plan_id"]: item for item in listed}
    assert set(by_id) == {"examples/expense_check", "broken"}
    assert by_id["examples/expense_check"]["version"] == "0.1.0"
    assert by_id["examples/expense_check"]["description"].startswith("経費明細")
    assert by_id["broken"]["error"] is None  # it loads; the validator finds its problem
    assert shown["yaml"].startswith("# yaml-language-server")
    assert shown["summary"]["id"] == "examples/expense_check"
    assert shown["summary"]["nodes"][0] == {
        "id": "collect", "title": "経費明細と上限金額", "type": "block",
        "block": "ui.interactive_input",
    }  # fmt: skip
    assert {v["name"]: v["kind"] for v in shown["inputs"]["vars"]} == {
        "classify": "boolean", "accounts": "yaml"
    }  # fmt: skip
    (asked,) = shown["inputs"]["interactive"]
    assert asked["node_id"] == "collect"
    assert asked["title"] == "経費明細と上限金額"  # what people call the form
    assert [r["id"] for r in asked["requirements"]] == ["workbook", "limit"]


def test_validate_and_dry_run_list_issues_and_refuse_only_unreadable_input(
    client: httpx.Client,
) -> None:
    good = client.post("/api/plans/validate", json={"plan_id": "examples/expense_check"})
    bad = client.post("/api/plans/validate", json={"plan_id": "broken"})
    text = client.post("/api/plans/validate", json={"yaml": "graph: [unclosed"})
    dry = client.post(
        "/api/plans/dry-run", json={"plan_id": "examples/expense_check", "vars": {"classify": True}}
    )
    dry_bad = client.post("/api/plans/dry-run", json={"yaml": INVALID})
    unreadable = client.post("/api/plans/dry-run", json={"yaml": "graph: [unclosed"})
    both = client.post("/api/plans/validate", json={"plan_id": "broken", "yaml": INVALID})

    assert good.status_code == 200 and good.json()["ok"] is True
    assert bad.status_code == 200 and bad.json()["ok"] is False
    assert "UNKNOWN_BLOCK" in {issue["code"] for issue in bad.json()["issues"]}
    assert text.status_code == 200 and text.json()["ok"] is False
    assert text.json()["issues"] and text.json()["issues"][0]["line"]
    assert dry.status_code == 200 and dry.json()["ok"] is True
    assert dry.json()["nodes"][0]["node_id"] == "collect"
    assert dry_bad.status_code == 200 and dry_bad.json()["ok"] is False
    assert unreadable.status_code == 400
    assert unreadable.json()["error"]["details"]["issues"]
    assert both.status_code == 400
    assert both.json()["error"]["code"] == "PLAN_SOURCE_REQUIRED"


@pytest.mark.parametrize(
    "plan_id",
    ["../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "../secret", "%2Fetc%2Fpasswd", "secret.yaml",
     "examples/expense_check.yaml", "etc/passwd", "<secret>"],
)  # fmt: skip
def test_ids_leaving_designs_are_refused_and_read_nothing(
    workspace: Settings, client: httpx.Client, plan_id: str
) -> None:
    secret = workspace.storage.home.parent / "secret.yaml"  # outside the workspace
    plan_id = plan_id.replace("<secret>", str(secret))
    shown = client.get(f"/api/plans/{plan_id}")
    validated = client.post("/api/plans/validate", json={"plan_id": plan_id.replace("%2F", "/")})
    dry_run = client.post("/api/plans/dry-run", json={"plan_id": plan_id.replace("%2F", "/")})
    started = client.post(f"/api/plans/{plan_id}/runs", json={})
    for response in (shown, validated, dry_run, started):
        assert response.status_code in (400, 404), response.text
        assert "root:" not in response.text and "secret_plan" not in response.text
        assert response.json()["error"]["code"] in {"PLAN_PATH", "PLAN_NOT_FOUND", "NOT_FOUND"}


def test_generate_offline_then_register_and_the_list_shows_it(client: httpx.Client) -> None:
    generated = client.post("/api/plans/generate", json={"instruction": README_INSTRUCTION})
    assert generated.status_code == 200, generated.text
    result = generated.json()
    registered = client.post("/api/plans/register", json={"yaml": result["yaml"]})
    refused = client.post("/api/plans/register", json={"yaml": INVALID})
    listed = client.get("/api/plans").json()["plans"]

    assert result["ok"] is True and result["offline"] is True and result["verdict"] == "ok"
    assert result["validation"]["ok"] is True and result["dry_run"]["ok"] is True
    blocks = {node["block"] for node in yaml.safe_load(result["yaml"])["graph"]}
    assert {"table.reconcile", "excel.write"} <= blocks
    graph = yaml.safe_load(result["yaml"])["graph"]
    assert [step["id"] for step in result["diagram"]["steps"]] == [node["id"] for node in graph]
    assert result["diagram"]["edges"]  # the steps hand their results on
    assert isinstance(result["requirements"], list)
    assert registered.status_code == 200, registered.text
    body = registered.json()
    assert body["plan_id"] == result["plan_id"]
    assert body["file_id"].startswith(f"{result['plan_id']}_")
    entry = next(item for item in listed if item["plan_id"] == body["plan_id"])
    assert [f["file_id"] for f in entry["files"]] == [body["file_id"]]
    assert entry["files"][0]["registered_at"]
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "DESIGN_NOT_VALID"


def test_design_chat_over_the_api_answers_then_judges_again(client: httpx.Client) -> None:
    instruction = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
    asked = client.post("/api/plans/generate", json={"instruction": instruction}).json()
    assert asked["verdict"] == "needs_answers" and asked["ok"] is False
    ids = [item["id"] for item in asked["requirements"]]
    assert ids == ["s1_column_1", "s1_column_2"]
    answers = {"s1_column_1": "勘定科目", "s1_column_2": "金額"}
    done = client.post("/api/plans/generate", json={"instruction": instruction, "answers": answers})
    assert done.status_code == 200, done.text
    result = done.json()
    assert result["verdict"] == "ok" and result["coverage"]["ok"] is True
    assert yaml.safe_load(result["yaml"])["vars"] == answers
    titles = yaml.safe_load(result["yaml"])["ui"]["vars"]  # what a run's form calls them
    assert titles["s1_column_1"]["title"] == "絞り込みの条件 1（「交際費」と比べる）に使う列"
    assert titles["s1_column_2"]["title"] == "絞り込みの条件 2（5,000と比べる）に使う列"
    assert result["verdict_message"].startswith("指示のすべての項目を満たし")


def test_a_generated_plan_runs_through_the_api_with_a_csv_upload(client: httpx.Client) -> None:
    import base64
    import time

    instruction = "経費.csv の金額が5,000円以上の行を部門別に金額を合計してCSVで出力"
    generated = client.post("/api/plans/generate", json={"instruction": instruction}).json()
    assert generated["verdict"] == "ok", generated["gaps"]
    registered = client.post("/api/plans/register", json={"yaml": generated["yaml"]}).json()
    rows = '部門,金額\n営業部,"12,000"\n総務部,3000\n営業部,"￥8,000"\n開発部,5000\n'
    upload = {"name": "経費.csv", "base64": base64.b64encode(rows.encode("cp932")).decode()}
    started = client.post(
        f"/api/plans/{registered['plan_id']}/runs",
        json={"answers": {"upload_files": {"file_1": upload}}},
    )
    assert started.status_code == 202, started.text
    deadline = time.monotonic() + 30
    while (run := client.get(started.json()["run_url"]).json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert run["status"] == "success", run["errors"]
    written = run["outputs"]["write_csv"]["file"]
    text = base64.b64decode(written["base64"]).decode("utf-8-sig")
    totals = {line.split(",")[0]: line.split(",")[1] for line in text.splitlines()[1:]}
    assert totals == {"営業部": "20000", "開発部": "5000"}


def test_a_sample_file_turns_a_column_question_into_a_choice_of_its_columns(
    client: httpx.Client,
) -> None:
    import base64

    instruction = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
    sample = "日付,部署,勘定科目,金額\r\n2026/04/01,営業部,交際費,8000\r\n".encode("cp932")
    samples = [{"name": "経費精算.csv", "base64": base64.b64encode(sample).decode()}]
    asked = client.post(
        "/api/plans/generate", json={"instruction": instruction, "samples": samples}
    )
    broken = client.post(
        "/api/plans/generate",
        json={"instruction": instruction, "samples": [{"name": "x.csv", "base64": "%%%"}]},
    )

    assert asked.status_code == 200, asked.text
    questions = {item["id"]: item for item in asked.json()["requirements"]}
    column = questions["s1_column_1"]
    assert column["type"] == "select"
    assert column["options"] == ["日付", "部署", "勘定科目", "金額"]
    assert broken.status_code == 400
    error = broken.json()["error"]
    assert error["code"] == "DESIGN_SAMPLE_INVALID" and "x.csv" in error["message"]
