"""Design drafts over HTTP (the web 設計 page's memory): a draft keeps the instruction,
the answers, the questions, the Plan's name and its YAML, and shows the Plan's steps in
words; it is its maker's (another designer neither reads nor changes it, 管理者 does);
limits, unknown and damaged drafts answer in Japanese. uvicorn on loopback, a real
HTTP client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from api_support import LiveServer

from keiri_agent.config import Settings
from keiri_agent.people.accounts import Accounts
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.services.plan_drafts import (
    BLOCK_WORDS,
    MAX_DRAFTS_PER_PERSON,
    PlanDrafts,
    titled,
)
from keiri_agent.storage.engine import create_engine
from keiri_agent.storage.migrate import upgrade
from keiri_agent.workspace import Workspace

PEOPLE = {"keiri": ["admin"], "yamada": ["designer"], "tanaka": ["designer"], "sato": ["viewer"]}
INSTRUCTION = "経費精算.csv から交際費が5,000円を超える明細を抽出してExcelに出力"
DRAFT = "d-0123456789abcdef"


@pytest.fixture
def team(tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path / "home", provider="offline")
    engine = create_engine(settings)
    upgrade(engine)
    engine.dispose()
    return settings


@pytest.fixture
def clients(team: Settings, serve: Callable[..., LiveServer]) -> Iterator[dict[str, httpx.Client]]:
    engine = create_engine(team)
    accounts = Accounts(engine)
    for login, roles in PEOPLE.items():
        accounts.add(login, roles)
    tokens = {login: accounts.issue_token(login) for login in PEOPLE}
    engine.dispose()
    server = serve(team)
    opened = {
        login: httpx.Client(
            base_url=server.url, timeout=60, headers={"Authorization": f"Bearer {token}"}
        )
        for login, token in tokens.items()
    }
    yield opened
    for client in opened.values():
        client.close()


def _generated(client: httpx.Client) -> dict[str, object]:
    answer = client.post(
        "/api/plans/generate", json={"instruction": INSTRUCTION, "plan_id": f"design_{DRAFT}"}
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_a_draft_keeps_what_was_typed_and_generated_and_lists_the_steps_in_words(
    clients: dict[str, httpx.Client],
) -> None:
    yamada = clients["yamada"]
    generated = _generated(yamada)
    saved = yamada.put(
        f"/api/plans/drafts/{DRAFT}",
        json={
            "instruction": INSTRUCTION,
            "generated_instruction": INSTRUCTION,
            "questions": generated["requirements"],
            "answers": {"s1_column_1": "勘定科目"},
            "yaml": generated["yaml"],
            "result": generated,
        },
    )
    assert saved.status_code == 200, saved.text
    renamed = yamada.put(f"/api/plans/drafts/{DRAFT}", json={"title": "交際費の抽出"})
    shown = yamada.get(f"/api/plans/drafts/{DRAFT}").json()
    listed = yamada.get("/api/plans/drafts").json()["drafts"]

    assert renamed.status_code == 200, renamed.text
    assert shown["instruction"] == INSTRUCTION  # fields left out keep their value
    assert shown["answers"] == {"s1_column_1": "勘定科目"}
    assert [q["id"] for q in shown["questions"]] == ["s1_column_1", "s1_column_2"]
    assert shown["owner"] == "yamada" and shown["title"] == "交際費の抽出"
    plan = yaml.safe_load(shown["yaml"])
    assert plan["title"] == "交際費の抽出" and plan["id"] == f"design_{DRAFT}"
    assert shown["yaml"].replace('title: "交際費の抽出"\n', "") == generated["yaml"]
    assert "candidates" not in shown["result"] and "attempts" not in shown["result"]
    assert shown["result"]["verdict"] == "needs_answers"
    assert shown["result"]["requirements"] == generated["requirements"]
    assert shown["result"]["diagram"] == generated["diagram"]  # for the Plan diagram

    steps = shown["outline"]["steps"]
    assert [step["title"] for step in steps] == [
        "ファイルのアップロード",
        "経費精算の読込",
        "行の絞り込み: （列が未定）が「交際費」、かつ （列が未定）が次を超える:5,000",
        "Excel に出力（結果）",
    ]
    assert steps[0]["does"] == "実行する人にファイルや値を入力してもらいます（経費精算（CSV））"
    assert steps[1]["does"] == "CSV ファイルを表として読み込みます" and steps[1]["from"] == [
        "upload_files"
    ]
    assert steps[2]["from"] == ["read_1"] and steps[2]["vars"] == ["s1_column_1", "s1_column_2"]
    assert steps[3]["does"] == "表を Excel ブックのシート「結果」に書き込みます"
    assert shown["outline"]["outputs"] == [{"name": "結果", "title": None}]
    assert [(d["draft_id"], d["title"], d["verdict"]) for d in listed] == [
        (DRAFT, "交際費の抽出", "needs_answers")
    ]


def test_a_draft_is_its_makers_only_an_administrator_reads_and_changes_another(
    clients: dict[str, httpx.Client],
) -> None:
    made = clients["yamada"].put(f"/api/plans/drafts/{DRAFT}", json={"instruction": "下書き"})
    read_by_other = clients["tanaka"].get(f"/api/plans/drafts/{DRAFT}")
    changed_by_other = clients["tanaka"].put(f"/api/plans/drafts/{DRAFT}", json={"title": "x"})
    by_viewer = clients["sato"].put("/api/plans/drafts/d-viewer-0001", json={"instruction": "y"})
    read_by_admin = clients["keiri"].get(f"/api/plans/drafts/{DRAFT}")
    changed_by_admin = clients["keiri"].put(f"/api/plans/drafts/{DRAFT}", json={"title": "管理"})

    assert made.status_code == 200, made.text
    for refused in (read_by_other, changed_by_other, by_viewer):
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "PERMISSION_DENIED"
    assert "別の人" in read_by_other.json()["error"]["message"]
    assert read_by_admin.status_code == 200 and read_by_admin.json()["instruction"] == "下書き"
    assert changed_by_admin.status_code == 200
    assert changed_by_admin.json()["owner"] == "yamada"  # still the maker's
    assert clients["tanaka"].get("/api/plans/drafts").json()["drafts"] == []
    assert [d["draft_id"] for d in clients["yamada"].get("/api/plans/drafts").json()["drafts"]] == [
        DRAFT
    ]


def test_unknown_damaged_and_oversized_drafts_are_refused_in_japanese(
    clients: dict[str, httpx.Client], team: Settings
) -> None:
    yamada = clients["yamada"]
    unknown = yamada.get("/api/plans/drafts/d-nothing-here")
    bad_id = yamada.get("/api/plans/drafts/short")
    bad_put = yamada.put("/api/plans/drafts/a.b", json={"instruction": "x"})
    folder = Workspace.from_settings(team).state / "design_drafts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "d-damaged-0001.json").write_bytes(b'{"draft_id": "d-damaged-0001", "ow')
    damaged = yamada.get("/api/plans/drafts/d-damaged-0001")
    overwritten = yamada.put("/api/plans/drafts/d-damaged-0001", json={"instruction": "x"})
    too_long = yamada.put(f"/api/plans/drafts/{DRAFT}", json={"instruction": "あ" * 4001})
    huge_yaml = yamada.put(f"/api/plans/drafts/{DRAFT}", json={"yaml": "#" * 2_000_001})

    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "DESIGN_DRAFT_NOT_FOUND"
    assert unknown.json()["error"]["message"].startswith("この下書きは見つかりません")
    for refused in (bad_id, bad_put):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "DESIGN_DRAFT_ID"
    for refused in (damaged, overwritten):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "DESIGN_DRAFT_DAMAGED"
        message = refused.json()["error"]["message"]
        assert message == "この下書きのファイルが壊れているため開けません"
    assert (folder / "d-damaged-0001.json").read_bytes().endswith(b'"ow')  # never overwritten
    assert yamada.get("/api/plans/drafts").json()["drafts"] == []  # the damaged one skipped
    assert too_long.status_code == 422
    assert huge_yaml.status_code in (400, 413), huge_yaml.text
    assert huge_yaml.json()["error"]["code"] in ("DESIGN_DRAFT_TOO_LARGE", "BODY_TOO_LARGE")
    assert not (folder / f"{DRAFT}.json").exists()


def test_a_person_keeps_at_most_the_newest_drafts(team: Settings) -> None:
    drafts = PlanDrafts(Workspace.from_settings(team))
    from keiri_agent.services.plan_drafts import DraftChanges

    for number in range(MAX_DRAFTS_PER_PERSON + 2):
        drafts.save(f"d-{number:012d}", "yamada", DraftChanges(instruction=str(number)))
    drafts.save("d-other-000001", "tanaka", DraftChanges(instruction="他の人"))

    kept = drafts.of("yamada")
    assert len(kept) == MAX_DRAFTS_PER_PERSON
    assert kept[0].instruction == str(MAX_DRAFTS_PER_PERSON + 1)
    assert "0" not in {draft.instruction for draft in kept}  # the oldest went
    assert [draft.instruction for draft in drafts.of("tanaka")] == ["他の人"]


def test_titled_sets_the_plan_title_and_keeps_the_rest_of_the_text() -> None:
    text = "apiVersion: v1\nid: p\nversion: 0.1.0  # 版\ngraph: []\n"
    named = titled(text, '月次: 締め "A"')
    renamed = titled(
        "apiVersion: v1\nid: p\ntitle: >-\n  古い\n  名前\nversion: 0.1.0\ngraph: []\n", "新しい"
    )

    assert yaml.safe_load(named)["title"] == '月次: 締め "A"'
    assert named.startswith("apiVersion: v1\nid: p\ntitle: ") and "# 版" in named
    assert renamed == 'apiVersion: v1\nid: p\ntitle: "新しい"\nversion: 0.1.0\ngraph: []\n'
    assert titled("not: [yaml", "x") == "not: [yaml"


def test_every_block_has_words_for_the_steps_list(team: Settings) -> None:
    blocks = {block_id.split("@")[0] for block_id in PlanEngine(team).catalog.ids()}
    assert blocks - set(BLOCK_WORDS) == set(), "say in BLOCK_WORDS what these blocks do"


def test_a_draft_with_odd_yaml_or_an_odd_id_never_breaks(
    clients: dict[str, httpx.Client], team: Settings
) -> None:
    yamada = clients["yamada"]
    odd = """\
apiVersion: v1
id: odd
version: 0.1.0
graph:
  - id: ask
    block: ui.interactive_input
    in: {mode: collect, requirements: 5}
    out: {collected_data: files}
"""
    saved = yamada.put(f"/api/plans/drafts/{DRAFT}", json={"instruction": "x", "yaml": odd})
    shown = yamada.get(f"/api/plans/drafts/{DRAFT}")
    newline = yamada.put("/api/plans/drafts/abcdefgh%0A", json={"instruction": "x"})

    assert saved.status_code == 200, saved.text
    assert shown.status_code == 200 and shown.json()["yaml"] == odd  # kept, still opens
    assert newline.status_code == 400 and newline.json()["error"]["code"] == "DESIGN_DRAFT_ID"
    folder = Workspace.from_settings(team).state / "design_drafts"
    assert sorted(path.name for path in folder.glob("*.json")) == [f"{DRAFT}.json"]
