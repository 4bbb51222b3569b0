"""One thread, two files: the switch is reported and the report keeps the files apart.

Each turn uses a fresh offline ``AnalysisAgent`` on the same SQLite checkpointer, as
``keiri-agent analyze FILE "..." --thread ID`` does (so dataset ids differ per turn).
The データ分析 page starts a new thread when a different file is uploaded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from keiri_agent.agents.analysis import AnalysisAgent, TurnResult
from keiri_agent.config import Settings

SALES = "地域,売上\n関東,100\n近畿,250\n関東,300\n九州,80\n近畿,50\n"
ACC = "部門,金額\n営業部,1000\n管理部,400\n営業部,700\n開発部,900\n"
APP = str(Path(__file__).resolve().parents[2] / "src" / "keiri_agent" / "ui" / "app.py")


def _files(tmp_path: Path) -> dict[str, Path]:
    paths = {"sales.csv": tmp_path / "sales.csv", "acc.csv": tmp_path / "acc.csv"}
    paths["sales.csv"].write_text(SALES, encoding="utf-8")
    paths["acc.csv"].write_text(ACC, encoding="utf-8")
    return paths


def _turn(tmp_path: Path, file: Path, question: str) -> TurnResult:
    with AnalysisAgent(Settings(home=tmp_path)) as agent:
        assert agent.offline
        return agent.ask(question, dataset_id=agent.load_file(file), thread_id="t1")


def _tables(turn: TurnResult) -> list[dict[str, Any]]:
    return [a["payload"] for a in turn.artifacts if a["kind"] == "table"]  # type: ignore[misc]


def _conversation(tmp_path: Path) -> tuple[dict[str, Path], list[TurnResult]]:
    files = _files(tmp_path)
    turns = [
        _turn(tmp_path, files["sales.csv"], "地域別の売上合計"),
        _turn(tmp_path, files["acc.csv"], "部門別の金額合計"),
        _turn(tmp_path, files["acc.csv"], "ここまでをレポートにまとめて"),
    ]
    return files, turns


def test_switching_files_on_a_thread_is_reported(tmp_path: Path) -> None:
    _, (first, second, third) = _conversation(tmp_path)
    switch = "データが sales.csv から acc.csv に変わりました"
    assert first.notice is None and switch not in first.reply
    assert second.notice is not None and switch in second.notice
    assert second.reply.startswith(second.notice)
    assert third.notice is None  # same file as the turn before
    # Each action records the file it ran on.
    assert [a["run_log"]["dataset"] for a in first.actions if a["ok"]] == ["sales.csv"]
    assert [a["run_log"]["dataset"] for a in second.actions if a["ok"]] == ["acc.csv"]


def _reproduce_blocks(report: str) -> dict[str, str]:
    section = report.split("## 再現要約", 1)[1].split("\n## ", 1)[0]
    blocks = re.split(r"^### (.+)$", section, flags=re.MULTILINE)[1:]
    return dict(zip(blocks[0::2], blocks[1::2], strict=True))


def test_report_groups_evidence_and_reproduction_by_file(tmp_path: Path) -> None:
    files, (first, second, third) = _conversation(tmp_path)
    report = third.report_md or ""
    assert "sales.csv" in report and "acc.csv" in report
    evidence = report.split("## 根拠", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^### (.+)$", evidence, flags=re.MULTILINE) == ["sales.csv", "acc.csv"]

    blocks = _reproduce_blocks(report)
    assert list(blocks) == ["sales.csv", "acc.csv"]
    for name, earlier in (("sales.csv", first), ("acc.csv", second)):
        block = blocks[name]
        assert block.count("keiri-agent analyze") == 1
        assert f"keiri-agent analyze {name} --spec SPECS.json" in block
        specs = [json.loads(s) for s in re.findall(r"^\d+\. `(.+)`$", block, flags=re.MULTILINE)]
        assert specs
        # The block's specs, re-run on its file, give the numbers the conversation showed.
        with AnalysisAgent(Settings(home=tmp_path)) as agent:
            results = agent.run_specs(specs, agent.load_file(files[name]))
        rerun = [a["payload"] for r in results for a in r.artifacts if a["kind"] == "table"]
        assert rerun == _tables(earlier)


def _page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_uploading_a_different_file_starts_a_new_thread() -> None:
    at = _page()
    at.file_uploader[0].upload("sales.csv", SALES.encode(), "text/csv")
    at.run()
    at.chat_input[0].set_value("地域別の売上合計").run()
    assert not at.exception, at.exception
    thread = at.session_state["analysis.thread_id"]
    assert len(at.session_state["analysis.turns"]) == 1

    # The same file again (same name and content): the conversation goes on.
    at.file_uploader[0].upload("sales.csv", SALES.encode(), "text/csv")
    at.run()
    assert at.session_state["analysis.thread_id"] == thread
    assert len(at.session_state["analysis.turns"]) == 1

    # Same name, other content: a new thread, and the page says so.
    at.file_uploader[0].upload("sales.csv", ACC.encode(), "text/csv")
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["analysis.thread_id"] != thread
    assert at.session_state["analysis.turns"] == []
    assert any("新しい会話を始めました" in str(info.value) for info in at.info)

    # Another name: again a new thread.
    second = at.session_state["analysis.thread_id"]
    at.file_uploader[0].upload("acc.csv", ACC.encode(), "text/csv")
    at.run()
    assert at.session_state["analysis.thread_id"] != second
