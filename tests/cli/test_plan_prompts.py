"""``plan run|resume --prompt``: waiting input nodes asked on the terminal (``cli.prompts``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app
from keiri_agent.plans.run.run_state import load_state

runner = CliRunner()

FORM_PLAN = """
apiVersion: v1
id: form
version: 0.1.0
graph:
  - id: form
    block: ui.interactive_input
    in:
      mode: collect
      message: 月次の入力
      requirements:
        - {id: name, type: text, label: 担当者}
        - {id: amount, type: number, label: 金額}
        - {id: ok, type: boolean, label: 確定}
        - {id: region, type: select, label: 地域, options: [関東, 近畿, 九州]}
        - {id: memo, type: text, label: メモ, required: false}
    out: {collected_data: collected}
"""

FILE_PLAN = """
apiVersion: v1
id: upload
version: 0.1.0
graph:
  - id: upload
    block: ui.interactive_input
    in:
      requirements:
        - {id: doc, type: file, label: 証跡, accept: .txt}
        - {id: extra, type: files, label: 追加, required: false}
        - {id: where, type: folder, label: 保存先, required: false}
    out: {collected_data: collected}
"""

TWO_NODES_PLAN = """
apiVersion: v1
id: two
version: 0.1.0
graph:
  - id: first
    block: ui.interactive_input
    in:
      requirements: [{id: who, type: text, label: 名前}]
    out: {collected_data: collected}
  - id: second
    block: ui.interactive_input
    in: {mode: confirm, message: "${first.collected.who} で確定しますか？"}
    out: {approved: approved}
"""

RUN_ID = re.compile(r"plan resume (\S+) --inputs")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _run_json(args: list[str]) -> dict[str, Any]:
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _resume_json(run_id: str, answers: Path) -> dict[str, Any]:
    return _run_json(["plan", "resume", run_id, "--inputs", str(answers), "--no-prompt"])


def _run_id(output: str) -> str:
    found = RUN_ID.search(output)
    assert found, output
    return found.group(1)


def _succeeded(output: str) -> str:
    """The run id of a run the output reports as finished with success."""
    found = re.search(r"成功 実行 (\S+)（", output)
    assert found, output
    return found.group(1)


def _collected(keiri_home: Path, run_id: str, node_id: str) -> dict[str, Any]:
    """What the node's block collected, from the run's saved state (bytes decoded)."""
    outputs = load_state(keiri_home / "runs", run_id).graph.nodes[node_id].outputs
    assert outputs is not None
    collected: dict[str, Any] = outputs["collected"]
    return collected


def test_a_collect_form_is_answered_by_prompts_and_the_run_finishes(
    tmp_path: Path, keiri_home: Path
) -> None:
    plan = _write(tmp_path, "form.yaml", FORM_PLAN)
    # name, amount, ok, region (by number), memo (optional: empty = no answer)
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--prompt"], input="山田\n1200.5\ny\n2\n\n"
    )
    assert result.exit_code == 0, result.output
    assert "入力待ち: form" in result.output
    assert "月次の入力" in result.output
    assert "2) 近畿" in result.output  # select options are numbered
    assert "成功 実行 " in result.output
    assert "plan resume" not in result.output
    assert _collected(keiri_home, _succeeded(result.output), "form") == {
        "name": "山田",
        "amount": 1200.5,
        "ok": True,
        "region": "近畿",
        "memo": None,
    }


def test_a_bad_number_and_a_bad_choice_are_asked_again(tmp_path: Path, keiri_home: Path) -> None:
    plan = _write(tmp_path, "form.yaml", FORM_PLAN)
    answers = "佐藤\nabc\n42\nmaybe\nn\n7\n九州\nメモ\n"
    result = runner.invoke(app, ["plan", "run", str(plan), "--prompt"], input=answers)
    assert result.exit_code == 0, result.output
    assert "数値ではありません: 'abc'" in result.output
    assert "y か n で答えてください" in result.output
    assert "1〜3 の番号" in result.output
    assert _collected(keiri_home, _succeeded(result.output), "form") == {
        "name": "佐藤",
        "amount": 42,
        "ok": False,
        "region": "九州",
        "memo": "メモ",
    }


def test_file_fields_read_real_files_from_paths(tmp_path: Path, keiri_home: Path) -> None:
    plan = _write(tmp_path, "upload.yaml", FILE_PLAN)
    evidence = _write(tmp_path, "evidence.txt", "証跡の中身")
    _write(tmp_path, "wrong.csv", "a,b\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    _write(docs, "a.md", "A")
    _write(docs, "b.md", "B")
    lines = [
        str(tmp_path / "missing.txt"),  # not there: asked again
        str(tmp_path / "wrong.csv"),  # not an accepted type: asked again
        str(evidence),
        f"{docs / '*.md'}, {evidence}",  # files: a glob and a path on one line …
        "",  # … an empty line ends the list
        str(docs),  # folder
    ]
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--prompt"], input="\n".join(lines) + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "ファイルが見つかりません" in result.output
    assert "wrong.csv は受け付けない形式です（.txt）" in result.output
    collected = _collected(keiri_home, _succeeded(result.output), "upload")
    # the file's bytes reached the block
    assert collected["doc"] == {"name": "evidence.txt", "data": "証跡の中身".encode()}
    assert [(item["name"], item["data"]) for item in collected["extra"]] == [
        ("a.md", b"A"),
        ("b.md", b"B"),
        ("evidence.txt", "証跡の中身".encode()),
    ]
    assert collected["where"] == str(docs.resolve())


def test_a_file_over_the_upload_limit_is_asked_again(
    tmp_path: Path, keiri_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_AGENT_MAX_UPLOAD_MB", "1")
    plan = _write(tmp_path, "upload.yaml", FILE_PLAN)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (2**20 + 1))
    small = _write(tmp_path, "small.txt", "小さい")
    lines = [str(big), str(small), "", ""]
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--prompt"], input="\n".join(lines) + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "上限（1.0 MB）を超えています" in result.output
    collected = _collected(keiri_home, _succeeded(result.output), "upload")
    assert collected["doc"] == {"name": "small.txt", "data": "小さい".encode()}


def test_eof_mid_prompt_keeps_the_run_paused_and_prints_the_resume_hint(
    tmp_path: Path,
) -> None:
    plan = _write(tmp_path, "form.yaml", FORM_PLAN)
    result = runner.invoke(app, ["plan", "run", str(plan), "--prompt"], input="山田\n")
    assert result.exit_code == 0, result.output
    assert "入力を中断しました" in result.output
    assert "入力待ち 実行 run_" in result.output
    run_id = _run_id(result.output)
    answers = _write(
        tmp_path,
        "answers.yaml",
        "form: {name: 山田, amount: 10, ok: true, region: 関東}\n",
    )
    done = _resume_json(run_id, answers)
    assert done["status"] == "success"
    assert done["outputs"]["form"]["collected"]["amount"] == 10


def test_no_prompt_keeps_the_paused_run_and_its_hint(tmp_path: Path) -> None:
    plan = _write(tmp_path, "form.yaml", FORM_PLAN)
    result = runner.invoke(app, ["plan", "run", str(plan), "--no-prompt"], input="山田\n")
    assert result.exit_code == 0, result.output
    assert "入力待ち: form" not in result.output  # nothing was asked
    assert "入力待ち form (ui.interactive_input): 月次の入力" in result.output
    # the request in words, not its JSON; the progress in words, not event names
    assert "  - amount: 金額（数値、必須）" in result.output
    assert "  - memo: メモ（文字、任意）" in result.output
    assert '{"mode"' not in result.output
    assert "· 開始" in result.output and "· 一時停止（入力待ち）" in result.output
    assert "plan_start" not in result.output and "node_waiting" not in result.output
    _run_id(result.output)
    # without a terminal the default is not to prompt either
    default = runner.invoke(app, ["plan", "run", str(plan)], input="山田\n")
    assert "入力待ち: form" not in default.output
    assert "入力待ち 実行 run_" in default.output


def test_inputs_answers_go_first_then_only_the_remaining_node_is_asked(
    tmp_path: Path,
) -> None:
    plan = _write(tmp_path, "two.yaml", TWO_NODES_PLAN)
    answers = _write(tmp_path, "answers.yaml", "first: {who: 田中}\n")
    result = runner.invoke(
        app, ["plan", "run", str(plan), "--inputs", str(answers), "--prompt"], input="y\n"
    )
    assert result.exit_code == 0, result.output
    assert "入力待ち: first" not in result.output
    assert "入力待ち: second" in result.output
    assert "田中 で確定しますか？" in result.output
    assert "成功 実行 " in result.output


def test_resume_prompts_and_an_invalid_answer_is_asked_again_alone(
    tmp_path: Path, keiri_home: Path
) -> None:
    plan = _write(tmp_path, "form.yaml", FORM_PLAN)
    first = _run_json(["plan", "run", str(plan), "--no-prompt"])
    assert first["status"] == "paused"
    answers = _write(
        tmp_path,
        "answers.yaml",
        "form: {name: 山田, amount: たくさん, ok: true, region: 関東}\n",
    )
    # only amount is asked: the other --inputs answers are kept
    result = runner.invoke(
        app,
        ["plan", "resume", first["run_id"], "--inputs", str(answers), "--prompt"],
        input="300\n",
    )
    assert result.exit_code == 0, result.output
    assert "✗ amount" in result.output  # the re-request's error is shown
    assert "担当者 (text" not in result.output  # not asked again
    assert "メモ (text" not in result.output
    collected = _collected(keiri_home, _succeeded(result.output), "form")
    assert (collected["name"], collected["amount"]) == ("山田", 300)


def test_field_notes_say_the_kind_and_default_in_words() -> None:
    from keiri_agent.cli.prompts import field_notes

    assert (
        field_notes({"id": "r", "type": "select", "default": "関東"})
        == "選択、必須、既定: 「関東」"
    )
    assert field_notes({"id": "n", "type": "number", "default": 30000, "required": False}) == (
        "数値、任意、既定: 30000"
    )
