"""``keiri-agent blocks list`` / ``blocks show``: tables, JSON, user folders, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()

BUILTIN_IDS = {
    "text.template",
    "text.join",
    "table.filter",
    "table.sort",
    "table.select",
    "table.aggregate",
    "table.concat",
}


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "my_blocks"
    folder.mkdir()
    (folder / "stamp.py").write_text(
        "from keiri_agent.blocks.base import ProcessingBlock\n\n"
        "class Stamp(ProcessingBlock):\n"
        "    def run(self, inputs, ctx):\n"
        "        return {'ok': True}\n",
        encoding="utf-8",
    )
    (folder / "line.json").write_text(
        json.dumps({"type": "object", "properties": {"amount": {"type": "integer"}}}),
        encoding="utf-8",
    )
    for version in ("1.0.0", "1.1.0", "2.0.0"):
        spec = {
            "id": "user.stamp",
            "version": version,
            "entrypoint": "stamp.py:Stamp",
            "side_effects": True,
            "description": f"押印する v{version}\n二行目",
            "inputs": {"line": {"$ref": "jsonschema://line.json", "required": True}},
            "outputs": {"ok": {"type": "boolean"}},
        }
        (folder / f"stamp_{version}.yaml").write_text(
            yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8"
        )
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(folder)]))
    return folder


def test_list_shows_the_builtin_blocks() -> None:
    result = runner.invoke(app, ["blocks", "list"])
    assert result.exit_code == 0, result.output
    for block_id in BUILTIN_IDS:
        assert block_id in result.stdout
    assert "処理ブロック" in result.stdout and "なし" in result.stdout
    assert "processing" not in result.stdout


def test_list_json() -> None:
    result = runner.invoke(app, ["blocks", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_id = {item["id"]: item for item in data}
    assert set(by_id) >= BUILTIN_IDS
    sort = by_id["table.sort"]
    assert sort["version"] == "1.0.0" and sort["kind"] == "processing"
    assert sort["side_effects"] is False and sort["required_inputs"] == ["records", "by"]
    assert set(sort["inputs"]) == {"records", "by", "ascending", "limit"}


def test_list_includes_user_blocks_with_every_version(user_dir: Path) -> None:
    result = runner.invoke(app, ["blocks", "list", "--json"])
    assert result.exit_code == 0, result.output
    versions = [item["version"] for item in json.loads(result.stdout) if item["id"] == "user.stamp"]
    assert versions == ["1.0.0", "1.1.0", "2.0.0"]
    table = runner.invoke(app, ["blocks", "list"])
    assert "user.stamp" in table.stdout and "あり" in table.stdout


def test_show_prints_inputs_and_outputs() -> None:
    result = runner.invoke(app, ["blocks", "show", "table.aggregate"])
    assert result.exit_code == 0, result.output
    for text in ("table.aggregate", "1.0.0", "入力", "出力", "records", "group_by", "metrics"):
        assert text in result.stdout
    assert "array[object]" in result.stdout


def test_show_resolves_a_range_and_refs_in_json(user_dir: Path) -> None:
    result = runner.invoke(app, ["blocks", "show", "user.stamp@^1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["version"] == "1.1.0" and data["versions"] == ["1.0.0", "1.1.0", "2.0.0"]
    assert data["side_effects"] is True
    assert data["inputs"]["line"]["properties"] == {"amount": {"type": "integer"}}
    assert data["inputs"]["line"]["required"] is True
    assert data["source"] == str(user_dir / "stamp_1.1.0.yaml")
    plain = runner.invoke(app, ["blocks", "show", "user.stamp"])
    assert "2.0.0" in plain.stdout and "jsonschema://line.json" in plain.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["blocks", "show", "table.sortt"], "'table.sort' のことですか"),
        (["blocks", "show", "table.sort@^2"], "範囲 '^2' に合うバージョンがありません"),
        (["blocks", "show", "table.sort@^x.1"], "バージョンの範囲"),
        (["blocks", "show", "table.sort@^2", "--json"], "あるバージョン: 1.0.0"),
    ],
)
def test_show_errors_exit_1(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "CATALOG_ERROR" in result.stderr and message in result.stderr
    assert "ヒント" in result.stderr or "範囲" in message
    assert result.stdout == ""


def test_bad_user_spec_exits_1_naming_the_file(user_dir: Path) -> None:
    (user_dir / "broken.yaml").write_text(
        "id: user.broken\nversion: 1\nentrypoint: stamp.py:Stamp\n", encoding="utf-8"
    )
    result = runner.invoke(app, ["blocks", "list"])
    assert result.exit_code == 1
    assert str(user_dir / "broken.yaml") in result.stderr.replace("\n", "")
    assert "version: 1 is not SemVer" in result.stderr


def test_missing_user_folder_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_AGENT_BLOCK_SPEC_DIRS", json.dumps([str(tmp_path / "nope")]))
    result = runner.invoke(app, ["blocks", "show", "text.join"])
    assert result.exit_code == 1 and "がありません" in result.stderr


def test_blocks_without_a_command_prints_help() -> None:
    result = runner.invoke(app, ["blocks"])
    assert "list" in result.output and "show" in result.output


def test_list_in_an_80_column_terminal_shows_each_first_sentence_whole() -> None:
    """Issue 16 item 8: no description cut into fragments; the full text is in show."""
    from rich.cells import cell_len

    from keiri_agent.cli.blocks import first_sentence
    from keiri_agent.config import Settings
    from keiri_agent.plans.catalog.catalog import BlockCatalog

    result = runner.invoke(app, ["blocks", "list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(cell_len(line.rstrip()) <= 80 for line in lines)
    assert "…" not in result.stdout
    # the indented lines under a block, joined, are its description's first sentence
    blocks: dict[str, str] = {}
    current = ""
    for line in lines[1:]:
        if line.startswith("    "):
            blocks[current] += line.strip()
        else:
            current = line.split()[0]
            blocks[current] = ""
    specs = {spec.id: spec for spec in BlockCatalog.from_settings(Settings()).specs()}
    for block_id in BUILTIN_IDS:
        summary = first_sentence(specs[block_id].description)
        assert blocks[block_id].replace(" ", "") == summary.replace(" ", ""), block_id
        assert summary.endswith(("。", ".", "）")) and len(summary) > 10, summary
    assert first_sentence("一文目です。二文目\nの続き。") == "一文目です。"
    assert first_sentence("A line\nwrapped. Next one.") == "A line wrapped."
