"""The データ分析 page driven by Streamlit's AppTest: upload → question → artifacts → report."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.config import load_settings

APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")
CSV = (
    "日付,地域,売上,数量\n"
    "2025-01-05,関東,100,1\n2025-01-20,近畿,250,2\n2025-02-03,関東,300,3\n"
    "2025-02-14,九州,80,1\n2025-03-01,近畿,50,1\n2025-03-09,関東,120,2\n"
).encode("cp932")


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [w.value for w in at.warning]
    parts += [e.value for e in at.error] + [c.value for c in at.caption]
    parts += [s.value for s in at.success]
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_offline_banner_is_shown(page: AppTest) -> None:
    assert "オフラインモード" in _texts(page)


def test_upload_question_artifacts_and_report(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    assert not page.exception, page.exception
    assert "6 行 × 4 列" in _texts(page)

    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    assert not page.exception, page.exception
    text = _texts(page)
    assert "## 結論" in text and "## 再現要約" in text
    assert "groupby_agg" in text
    tables = [frame.value for frame in page.dataframe]
    # computed columns in Japanese (the machine name 売上_sum stays in --json / API JSON)
    assert not any("売上_sum" in table.columns for table in tables)
    grouped = next(table for table in tables if "売上（合計）" in table.columns)
    assert dict(zip(grouped["地域"], grouped["売上（合計）"], strict=True)) == {
        "関東": "520",
        "近畿": "300",
        "九州": "80",
    }
    assert "売上（平均）" in grouped.columns
    kinds = next(table for table in tables if "種類" in table.columns)
    assert dict(zip(kinds["列"], kinds["種類"], strict=True)) == {
        "日付": "日付",
        "地域": "カテゴリ",
        "売上": "数値",
        "数量": "数値",
    }
    buttons = page.get("download_button")
    labels = [button.proto.label for button in buttons]
    assert labels == ["レポート（Markdown）をダウンロード", "レポートと図（ZIP）をダウンロード"]
    # produced on click: a stored file would be fetched by the browser on every rerun
    # and hold one of its six connections to the app (the walk froze on that)
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)


def test_bad_upload_shows_a_clear_error(page: AppTest) -> None:
    page.file_uploader[0].upload("empty.csv", b"", "text/csv")
    page.run()
    assert not page.exception, page.exception
    assert page.sidebar.error, "an empty file must be refused with an error"


def test_plot_question_shows_the_figure_inline(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("売上の分布をヒストグラムで見せて").run()
    assert not page.exception, page.exception
    assert page.get("image"), "the histogram must be shown as an image"
    assert "## 根拠" in _texts(page)


def test_misconfigured_provider_is_shown_not_crashed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_PROVIDER", "openai-compatible")  # no base URL
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("KEIRI_AGENT_OPENAI_API_BASE" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("empty.csv", b"", "空のファイル"),
        ("broken.xlsx", b"PK\x03\x04 not really a workbook", "Excel ブック"),
        ("garbage.csv", bytes(range(256)) * 40, "文字として読めません"),
        ("scan.csv", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "PDF ファイルのようです"),
    ],
)
def test_a_failed_upload_clears_the_dataset(
    page: AppTest, name: str, data: bytes, expected: str
) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    assert "6 行 × 4 列" in _texts(page)
    page.file_uploader[0].upload(name, data, "application/octet-stream")
    page.run()
    assert not page.exception, page.exception
    assert any(expected in error.value for error in page.sidebar.error)
    assert any("ヒント" in caption.value for caption in page.sidebar.caption)
    assert not page.sidebar.success, "the previous file must no longer be shown as loaded"
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    assert not page.exception, page.exception
    text = _texts(page)
    assert "## 結論" not in text and not page.dataframe, "no answer about the previous file"
    assert "ファイルを読み込めなかったため" in text
    # the good file again: questions are answered again
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    assert "6 行 × 4 列" in _texts(page)
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    assert "## 結論" in _texts(page)


INVENTORY = (
    "倉庫,品目,在庫数,金額\n東,ねじ,100,2000\n東,ボルト,50,2500\n西,ねじ,70,1400\n合計,,220,5900\n"
).encode()


def test_total_rows_are_excluded_with_a_note_and_kept_on_request(page: AppTest) -> None:
    page.file_uploader[0].upload("在庫.csv", INVENTORY, "text/csv")
    page.run()
    assert not page.exception, page.exception
    assert "3 行 × 4 列" in _texts(page)
    notes = [info.value for info in page.sidebar.info]
    assert any("合計行を 1 行除外しました（5 行目）" in note for note in notes), notes
    page.checkbox(key="analysis.keep_totals").check().run()
    assert not page.exception, page.exception
    assert "4 行 × 4 列" in _texts(page)
    assert any("指定により残しています" in info.value for info in page.sidebar.info)
    assert any("合計行の扱いを変えて" in info.value for info in page.info)


def test_the_conversation_survives_an_out_of_scope_question(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計を見せて").run()
    assert "## 結論" in _texts(page)
    page.chat_input[0].set_value("来月の売上を予測して").run()
    assert not page.exception, page.exception
    assert "対応していません" in _texts(page)
    page.chat_input[0].set_value("地域別の数量の平均").run()
    assert not page.exception, page.exception
    tables = [frame.value for frame in page.dataframe]
    assert any("数量（平均）" in table.columns for table in tables)
    assert "来月の売上を予測して 地域別の数量の平均" not in _texts(page)
    page.chat_input[0].set_value("レポートにまとめて").run()
    assert not page.exception, page.exception
    text = _texts(page)
    assert "どの列ごとに集計しますか" not in text
    assert text.count("# 分析レポート") >= 3 and "**依頼**: レポートにまとめて" in text


def _reload(page: AppTest) -> AppTest:
    """A new browser session with the URL of ``page`` (what F5 does)."""
    fresh = AppTest.from_file(APP, default_timeout=60)
    for name, value in page.query_params.items():
        fresh.query_params[name] = value
    fresh.run()
    assert not fresh.exception, fresh.exception
    return fresh


def _params(page: AppTest) -> dict[str, str]:
    return {
        name: value[0] if isinstance(value, list) else value
        for name, value in page.query_params.items()
    }


def test_the_conversation_and_its_file_survive_a_reload(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    assert "## 結論" in _texts(page)
    params = _params(page)
    assert params.get("thread") == page.session_state["analysis.thread_id"]
    assert params.get("data")
    again = _reload(page)
    assert again.session_state["analysis.thread_id"] == params["thread"]
    text = _texts(again)
    assert "地域別の売上の合計と平均を見せて" in text, "the conversation is shown again"
    assert "## 結論" in text
    assert "6 行 × 4 列" in text, "the file is loaded again"
    again.chat_input[0].set_value("売上の分布をヒストグラムで見せて").run()
    assert not again.exception, again.exception
    assert again.get("image"), "a follow-up question is answered on the same file"


def test_a_file_that_is_gone_is_said_in_japanese_and_the_chat_stays(
    page: AppTest, keiri_home: Path
) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    for data in (keiri_home / ".keiri" / "datasets").glob("*/data"):
        data.unlink()
    again = _reload(page)
    text = _texts(again)
    assert "地域別の売上の合計と平均を見せて" in text
    assert "ファイルが見つからない" in text and "もう一度アップロード" in text
    assert not again.sidebar.success


def test_another_file_starts_a_conversation_listed_in_history(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    first = page.session_state["analysis.thread_id"]
    page.file_uploader[0].upload("在庫.csv", INVENTORY, "text/csv")
    page.run()
    assert not page.exception, page.exception
    assert any("最近の会話" in info.value for info in page.info)
    assert page.session_state["analysis.thread_id"] != first
    labels = [button.label for button in page.sidebar.button]
    assert any("地域別の売上の合計と平均を見せて" in label for label in labels), labels
    # reopening it brings back its conversation and its file
    again = AppTest.from_file(APP, default_timeout=60)
    again.query_params["thread"] = first
    again.run()
    assert "地域別の売上の合計と平均を見せて" in _texts(again)
    assert "6 行 × 4 列" in _texts(again)


def test_a_reopened_conversation_draws_its_tables_and_charts_again(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    page.chat_input[0].set_value("売上の分布をヒストグラムで見せて").run()
    assert not page.exception, page.exception
    again = _reload(page)
    tables = [frame.value for frame in again.dataframe]
    grouped = next((t for t in tables if "売上（合計）" in t.columns), None)
    assert grouped is not None, "the earlier turn's table is drawn again"
    assert dict(zip(grouped["地域"], grouped["売上（合計）"], strict=True))["関東"] == "520"
    assert again.get("image"), "the earlier turn's chart is drawn again"
    labels = [button.proto.label for button in again.get("download_button")]
    assert labels.count("レポートと図（ZIP）をダウンロード") == 2, labels
    # reopened from 最近の会話 (a new session, only the thread in the URL): the same
    reopened = AppTest.from_file(APP, default_timeout=60)
    reopened.query_params["thread"] = _params(page)["thread"]
    reopened.run()
    assert not reopened.exception, reopened.exception
    assert any("売上（合計）" in frame.value.columns for frame in reopened.dataframe)


def test_an_artifact_that_is_gone_is_said_in_japanese(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("地域別の売上の合計と平均を見せて").run()
    config = {"configurable": {"thread_id": page.session_state["analysis.thread_id"]}}
    with AnalysisAgent(load_settings()) as agent:  # the checkpointer every process reads
        agent.graph.update_state(config, {"artifacts": []})  # damaged / deleted
    again = _reload(page)
    text = _texts(again) + "\n".join(w.value for w in again.warning)
    assert "地域別の売上の合計と平均を見せて" in text
    assert "表示できません" in text, text
    assert not any("売上（合計）" in frame.value.columns for frame in again.dataframe)


def test_opening_the_page_prunes_old_copies_no_conversation_uses(keiri_home: Path) -> None:
    folder = keiri_home / ".keiri" / "datasets"
    first = AppTest.from_file(APP, default_timeout=60)
    first.run()
    first.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    first.run()
    first.chat_input[0].set_value("地域別の売上の合計を見せて").run()  # linked to its thread
    first.file_uploader[0].upload("在庫.csv", INVENTORY, "text/csv")
    first.run()  # saved, never asked about: linked to no conversation
    copies = sorted(p for p in folder.iterdir() if p.name != "threads")
    assert len(copies) == 2
    then = time.time() - 30 * 24 * 3600
    for path in [*copies, *(f for c in copies for f in c.iterdir())]:
        os.utime(path, (then, then))
    AppTest.from_file(APP, default_timeout=60).run()
    left = sorted(p.name for p in folder.iterdir() if p.name != "threads")
    assert len(left) == 1, "the copy no conversation uses is pruned"
    assert left[0] != first.session_state["analysis.data_ref"], "the linked copy is kept"


def test_follow_ups_edit_the_result_just_shown(page: AppTest) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("売上の合計は？").run()
    assert not page.exception, page.exception
    assert "売上の合計: ¥900（6 件）" in _texts(page)
    page.chat_input[0].set_value("それを関東だけで").run()
    assert not page.exception, page.exception
    assert "対象 3 件（地域が関東）。売上の合計: ¥520（3 件）" in _texts(page)
    page.chat_input[0].set_value("月別に").run()
    assert not page.exception, page.exception
    assert len(page.get("image")) == 1, "the monthly line of 関東's 売上 is drawn"
    assert "どの列ごとに集計しますか" not in _texts(page)


def _runs(home: Path) -> list[dict]:
    import sqlalchemy

    from keiri_agent.storage.schema import runs

    engine = sqlalchemy.create_engine(f"sqlite:///{home / '.keiri' / 'keiri.db'}")
    try:
        with engine.connect() as connection:
            rows = connection.execute(sqlalchemy.select(runs.c.kind, runs.c.status, runs.c.run_id))
            return [dict(row._mapping) for row in rows]
    finally:
        engine.dispose()


def test_a_turn_is_an_analysis_run_whose_figures_are_kept_in_the_workspace(
    page: AppTest, keiri_home: Path
) -> None:
    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    page.chat_input[0].set_value("売上の分布をヒストグラムで見せて").run()
    assert not page.exception, page.exception
    assert page.get("image")
    item = page.session_state["analysis.turns"][-1]
    assert [(r["kind"], r["status"], r["run_id"]) for r in _runs(keiri_home)] == [
        ("analysis", "success", item["run_id"])
    ]
    turn_id = item["result"]["turn_id"]
    folder = keiri_home / ".keiri" / "analysis" / "turns" / turn_id
    assert list(folder.glob("*.png")), "the figure is kept in the workspace"
    for png in folder.glob("*.png"):
        png.unlink()
    page.run()  # drawn again from the run's result: the figure is gone now
    assert not page.exception, page.exception
    assert not page.get("image")
    assert any("読み込めないため表示できません" in w.value for w in page.warning)


def test_the_page_follows_a_turn_run_executed_elsewhere(page: AppTest) -> None:
    """A turn started before a rerun (here: by another process's services, which
    execute it) is followed to its end and drawn from its result."""
    from keiri_agent.runs import analysis_kind
    from keiri_agent.services.container import Services

    page.file_uploader[0].upload("売上.csv", CSV, "text/csv")
    page.run()
    ref = page.session_state["analysis.data_ref"]
    elsewhere = Services(load_settings())
    try:
        elsewhere.process_runs.start()
        thread_id = page.session_state["analysis.thread_id"]
        question = "地域別の売上の合計と平均を見せて"
        inputs = analysis_kind.turn_inputs(elsewhere.settings, ref, question, thread_id)
        run = elsewhere.runs.start(analysis_kind.KIND, subject="s", title="t", inputs=inputs)
        page.session_state["analysis.running"] = {
            "question": inputs["question"],
            "run_id": run.run_id,
        }
        page.run()
    finally:
        elsewhere.close()
    assert not page.exception, page.exception
    assert "## 結論" in _texts(page)
    assert "analysis.running" not in page.session_state
    assert page.session_state["analysis.turns"][-1]["run_id"] == run.run_id
