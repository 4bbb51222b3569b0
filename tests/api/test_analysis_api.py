"""Data analysis over HTTP: uvicorn on loopback, a real HTTP client, the offline
reasoner; the bundled sample CSV uploaded, a turn asked (a run of kind ``analysis``,
answered as JSON or streamed), its figure and report fetched — also across two servers
(and two ``keiri-agent serve`` processes) sharing one workspace, with no sticky
sessions."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx
import pandas as pd
import pytest
from api_support import LiveServer, ServeProcess, read_sse

from keiri_agent.config import Settings
from keiri_agent.demo import sample_data_path

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
QUESTION = "地域別の売上の合計を棒グラフで見せて"


@pytest.fixture
def offline(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, provider="offline")


def _upload(client: httpx.Client, name: str = "data/sales.csv") -> dict:
    response = client.post(
        "/api/analysis/datasets",
        files={"file": (name, sample_data_path().read_bytes(), "text/csv")},
    )
    assert response.status_code == 201, response.text
    return response.json()


def test_a_group_by_turn_gives_a_figure_url_and_a_report_as_markdown_and_zip(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset = _upload(client)
        summary = client.get(f"/api/analysis/datasets/{dataset['dataset_id']}").json()
        response = client.post(
            "/api/analysis/turns", json={"dataset_id": dataset["dataset_id"], "question": QUESTION}
        )
        assert response.status_code == 200, response.text
        turn = response.json()
        figures = [a for a in turn["artifacts"] if a["kind"] == "figure"]
        assert figures, turn["artifacts"]
        png = client.get(figures[0]["url"])
        markdown = client.get(turn["report_url"])
        archive = client.get(turn["report_zip_url"])

    assert dataset["summary"]["name"] == "sales.csv" and dataset["summary"]["rows"] == 3000
    assert summary == dataset
    assert turn["dataset_id"] == dataset["dataset_id"] and turn["thread_id"]
    assert figures[0]["url"] == (
        f"/api/analysis/artifacts/{turn['turn_id']}/{figures[0]['artifact_id']}.png"
    )
    assert "base64" not in figures[0] and figures[0]["bytes"] > 0
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(PNG_SIGNATURE) and len(png.content) == figures[0]["bytes"]
    assert markdown.status_code == 200 and markdown.headers["content-type"].startswith(
        "text/markdown"
    )
    assert markdown.text == turn["report_md"] and "地域" in markdown.text
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(archive.content)) as opened:
        names = opened.namelist()
        assert opened.read("report.md").decode("utf-8") == turn["report_md"]
        figure_files = [name for name in names if name.startswith("figures/")]
        assert figure_files and opened.read(figure_files[0]).startswith(PNG_SIGNATURE)


def test_a_thread_continues_and_a_turn_without_report_has_no_report_url(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)["dataset_id"]
        first = client.post(
            "/api/analysis/turns",
            json={"dataset_id": dataset_id, "question": "集計して", "thread_id": "thread-1"},
        ).json()
        missing = client.get(f"/api/analysis/turns/{first['turn_id']}/report")

    assert first["thread_id"] == "thread-1" and first["next_action"] == "ask"
    assert first["questions"] and first["report_url"] is None
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "REPORT_NOT_FOUND"


def test_unknown_datasets_turns_and_figures_are_404_in_the_one_error_shape(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        responses = {
            "dataset": client.get("/api/analysis/datasets/ds_nope"),
            "turn": client.post(
                "/api/analysis/turns", json={"dataset_id": "ds_nope", "question": QUESTION}
            ),
            "figure": client.get("/api/analysis/artifacts/turn_nope/a1.png"),
            "report": client.get("/api/analysis/turns/turn_nope/report"),
        }

    for what, response in responses.items():
        assert response.status_code == 404, (what, response.text)
        assert set(response.json()["error"]) == {"code", "message", "hint", "details"}, what
    assert responses["turn"].json()["error"]["code"] == "UNKNOWN_DATASET"


def test_a_dataset_upload_over_the_limit_or_without_a_name_is_refused(
    tmp_path: Path, serve: Callable[..., LiveServer]
) -> None:
    settings = Settings(home=tmp_path, provider="offline", max_upload_mb=1)
    big = b"a,b\n" + b"1,2\n" * (2**18 + 1)
    with httpx.Client(base_url=serve(settings).url, timeout=120) as client:
        too_large = client.post(
            "/api/analysis/datasets", files={"file": ("big.csv", big, "text/csv")}
        )
        nameless = client.post(
            "/api/analysis/datasets", files={"file": ("..", b"a,b\n1,2\n", "text/csv")}
        )

    assert too_large.status_code == 413
    assert too_large.json()["error"]["code"] == "BODY_TOO_LARGE"
    assert nameless.status_code == 400
    assert nameless.json()["error"]["code"] == "UPLOAD_NAME_INVALID"


INVENTORY = (
    "倉庫,品目,在庫数,金額\n東,ねじ,100,2000\n東,ボルト,50,2500\n西,ねじ,70,1400\n合計,,220,5900\n"
).encode()


def test_total_rows_are_excluded_unless_the_upload_keeps_them(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        files = {"file": ("在庫.csv", INVENTORY, "text/csv")}
        excluded = client.post("/api/analysis/datasets", files=files)
        kept = client.post("/api/analysis/datasets", files=files, data={"keep_total_rows": "true"})
        refused = client.post(
            "/api/analysis/datasets", files=files, data={"keep_total_rows": "たぶん"}
        )
    assert excluded.status_code == 201 and kept.status_code == 201, kept.text
    assert excluded.json()["summary"]["rows"] == 3
    assert any("合計行を 1 行除外しました" in n for n in excluded.json()["summary"]["notes"])
    assert kept.json()["summary"]["rows"] == 4
    assert any("指定により残しています" in n for n in kept.json()["summary"]["notes"])
    assert refused.status_code == 422


def test_follow_ups_on_a_thread_over_http(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    frame = pd.read_csv(sample_data_path())
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)["dataset_id"]

        def ask(question: str) -> dict:
            response = client.post(
                "/api/analysis/turns",
                json={"dataset_id": dataset_id, "question": question, "thread_id": "t-follow"},
            )
            assert response.status_code == 200, response.text
            return response.json()

        total = ask("売上の合計は？")
        kanto = ask("それを関東だけで")
        by_store = ask("店舗別に")
        english = ask("now only for 法人")

    def table(turn: dict) -> list[dict]:
        return next(a for a in turn["artifacts"] if a["kind"] == "table")["records"]

    assert table(total)[0]["売上_sum"] == frame["売上"].sum()
    in_kanto = frame[frame["地域"] == "関東"]
    assert table(kanto)[0]["売上_sum"] == in_kanto["売上"].sum()
    stores = {row["店舗"]: row["売上_sum"] for row in table(by_store)}
    assert stores == in_kanto.groupby("店舗")["売上"].sum().to_dict()
    corporate = in_kanto[in_kanto["顧客区分"] == "法人"]
    rows = {row["店舗"]: row["売上_sum"] for row in table(english)}
    assert rows == corporate.groupby("店舗")["売上"].sum().to_dict()


def test_upload_on_one_server_ask_on_another_fetch_from_the_first(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    """Two servers (each with its own services: agent, dataset registry, run executor)
    over one workspace, no sticky sessions: the dataset uploaded through A, the turn
    asked through B, its figure and report fetched through A, the thread continued
    through A."""
    a, b = serve(offline), serve(offline)
    with (
        httpx.Client(base_url=a.url, timeout=120) as on_a,
        httpx.Client(base_url=b.url, timeout=120) as on_b,
    ):
        dataset = _upload(on_a)
        summary_on_b = on_b.get(f"/api/analysis/datasets/{dataset['dataset_id']}")
        asked = on_b.post(
            "/api/analysis/turns",
            json={"dataset_id": dataset["dataset_id"], "question": QUESTION, "thread_id": "t-ab"},
        )
        assert asked.status_code == 200, asked.text
        turn = asked.json()
        figure = next(a for a in turn["artifacts"] if a["kind"] == "figure")
        png = on_a.get(figure["url"])
        markdown = on_a.get(turn["report_url"])
        archive = on_a.get(turn["report_zip_url"])
        follow_up = on_a.post(
            "/api/analysis/turns",
            json={
                "dataset_id": dataset["dataset_id"],
                "question": "関東だけで",
                "thread_id": "t-ab",
            },
        )

    assert summary_on_b.status_code == 200 and summary_on_b.json() == dataset
    assert dataset["summary"]["dataset_id"] == dataset["dataset_id"], "no process-local id"
    assert turn["dataset_id"] == dataset["dataset_id"] and turn["thread_id"] == "t-ab"
    assert png.status_code == 200 and png.content.startswith(PNG_SIGNATURE)
    assert len(png.content) == figure["bytes"]
    assert markdown.status_code == 200 and markdown.text == turn["report_md"]
    assert archive.status_code == 200
    with zipfile.ZipFile(io.BytesIO(archive.content)) as opened:
        assert opened.read("report.md").decode("utf-8") == turn["report_md"]
    assert follow_up.status_code == 200, follow_up.text
    edited = follow_up.json()
    assert edited["thread_id"] == "t-ab"
    table = next(a for a in edited["artifacts"] if a["kind"] == "table")
    assert [row["地域"] for row in table["records"]] == ["関東"], "the thread continued on A"


def test_a_turn_streams_its_steps_then_the_result(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)["dataset_id"]
        with client.stream(
            "POST",
            "/api/analysis/turns",
            json={"dataset_id": dataset_id, "question": QUESTION},
            headers={"Accept": "text/event-stream"},
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            events = list(read_sse(response.iter_lines()))
        result = events[-1].data
        assert result is not None
        figure = next(a for a in result["payload"]["artifacts"] if a["kind"] == "figure")
        png = client.get(figure["url"])
        run = client.get(f"/api/runs/{result['run_id']}").json()

    kinds = [event.event for event in events]
    assert kinds[-1] == "result" and "reason" in kinds and "act" in kinds
    assert [event.id for event in events] == list(range(1, len(events) + 1))
    assert result["payload"]["dataset_id"] == dataset_id
    assert png.status_code == 200
    assert run["kind"] == "analysis" and run["status"] == "success"


def test_a_kept_turn_whose_files_are_gone_is_404(
    offline: Settings, serve: Callable[..., LiveServer]
) -> None:
    with httpx.Client(base_url=serve(offline).url, timeout=120) as client:
        dataset_id = _upload(client)["dataset_id"]
        turn = client.post(
            "/api/analysis/turns", json={"dataset_id": dataset_id, "question": QUESTION}
        ).json()
        figure = next(a for a in turn["artifacts"] if a["kind"] == "figure")
        folder = offline.storage.home / ".keiri" / "analysis" / "turns" / turn["turn_id"]
        for png in folder.glob("*.png"):
            png.unlink()
        gone_figure = client.get(figure["url"])
        gone_zip = client.get(turn["report_zip_url"])
        still_md = client.get(turn["report_url"])
        (folder / "turn.json").write_text("{damaged", encoding="utf-8")
        damaged = client.get(turn["report_url"])
        for path in (offline.storage.home / ".keiri" / "datasets" / dataset_id).iterdir():
            if path.is_file():  # the data and its description; who uploaded it stays
                path.unlink()
        dataset_gone = client.get(f"/api/analysis/datasets/{dataset_id}")
        turn_gone = client.post(
            "/api/analysis/turns", json={"dataset_id": dataset_id, "question": QUESTION}
        )

    for response in (gone_figure, gone_zip, damaged, dataset_gone, turn_gone):
        assert response.status_code == 404, response.text
        assert not response.json()["error"]["message"].isascii()
    assert still_md.status_code == 200
    assert dataset_gone.json()["error"]["code"] == "UNKNOWN_DATASET"


def test_two_serve_processes_share_datasets_turns_and_reports(tmp_path: Path) -> None:
    """The same through two ``keiri-agent serve`` processes (separate interpreters)
    on one workspace and its embedded database."""
    env = {"KEIRI_AGENT_PROVIDER": "offline"}
    a, b = ServeProcess(tmp_path, env), ServeProcess(tmp_path, env)
    try:
        a.wait_ready(), b.wait_ready()
        with (
            httpx.Client(base_url=a.url, timeout=120) as on_a,
            httpx.Client(base_url=b.url, timeout=120) as on_b,
        ):
            dataset_id = _upload(on_a)["dataset_id"]
            asked = on_b.post(
                "/api/analysis/turns", json={"dataset_id": dataset_id, "question": QUESTION}
            )
            assert asked.status_code == 200, asked.text
            turn = asked.json()
            figure = next(a for a in turn["artifacts"] if a["kind"] == "figure")
            png = on_a.get(figure["url"])
            archive = on_a.get(turn["report_zip_url"])
    finally:
        a.stop()
        b.stop()
    assert a.process.pid != b.process.pid
    assert png.status_code == 200 and png.content.startswith(PNG_SIGNATURE)
    assert archive.status_code == 200 and archive.headers["content-type"] == "application/zip"
