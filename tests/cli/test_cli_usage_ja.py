"""The CLI's help and usage errors are Japanese (cli/usage.py), exit code 2, no traceback."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from keiri_agent.cli.app import app

runner = CliRunner()
SUB_APPS = ["blocks", "plan", "helpdesk", "research", "research notes"]
COMMANDS = [
    "analyze", "demo", "serve", "ui", "blocks list", "blocks show", "plan validate",
    "plan dry-run", "plan run", "plan resume", "plan rerun", "plan migrate", "plan generate",
    "plan register", "plan templates", "helpdesk index", "helpdesk remove", "helpdesk status",
    "helpdesk ask", "research ask", "research notes list", "research notes show",
    "research notes delete",
]  # fmt: skip
# English prose words that Click/Typer or an untranslated description would print
ENGLISH = re.compile(
    r"\b(Usage|Options|Arguments|Commands|Show this message|default|required|the|and|of|"
    r"to|or|with|from|for|Error|Missing|Try|Invalid|No such)\b"
)


def _help(words: str) -> str:
    result = runner.invoke(app, [*words.split(), "--help"] if words else ["--help"])
    assert result.exit_code == 0, result.output
    return result.output


def _descriptions(text: str) -> str:
    """The help without option names, metavars, code-like tokens (kept in ASCII)."""
    kept = []
    for line in text.splitlines():
        line = re.sub(r"--?[\w-]+|<[^>]*>|\{[^}]*\}|\S*[./_@$|]\S*|[A-Z_]{2,}", " ", line)
        kept.append(line)
    return "\n".join(kept)


@pytest.mark.parametrize("words", ["", *SUB_APPS, *COMMANDS])
def test_help_is_japanese(words: str) -> None:
    text = _help(words)
    assert text.startswith("使い方: keiri-agent")
    assert "オプション:" in text
    assert "この説明を表示して終了します。" in text
    assert ENGLISH.findall(_descriptions(text)) == [], text


@pytest.mark.parametrize("words", COMMANDS)
def test_value_types_in_help_are_japanese_words(words: str) -> None:
    text = _help(words)
    assert re.findall(r"<(?:str|path|int|float|list\[\w+\])>", text) == [], text


def test_group_help_lists_commands_under_a_japanese_heading() -> None:
    assert "コマンド:" in _help("") and "コマンド:" in _help("plan")
    text = _help("analyze")
    assert "引数:" in text and "[必須]" in text
    assert "[既定値: no-keep-total-rows]" in text


def _usage_error(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "エラー: " in result.output and "Error" not in result.output
    assert "--help で使い方を確認できます" in result.output
    return result.output


def test_missing_argument_names_it_with_an_example() -> None:
    text = _usage_error("analyze")
    assert "引数 FILE がありません。分析するファイル（CSV・TSV・XLSX）を指定してください" in text
    assert '例: keiri-agent analyze sales.csv "地域別の売上合計"' in text


def test_missing_option() -> None:
    assert "オプション --instruction がありません" in _usage_error("plan", "generate")


def test_unknown_option_with_close_matches() -> None:
    text = _usage_error("analyze", "a.csv", "--jsn")
    assert "オプション --jsn はありません。もしかして: --json" in text


def test_unknown_command_lists_the_commands() -> None:
    text = _usage_error("plan", "nosuch")
    assert "コマンド nosuch はありません。" in text and "validate, dry-run, run" in text
    assert "もしかして: plan" in _usage_error("plna")


def test_bad_value_for_a_typed_option() -> None:
    text = _usage_error("serve", "--port", "abc")
    assert "オプション --port の値が正しくありません。整数を指定してください（入力: abc）" in text
    assert "32 以下を指定してください" in _usage_error("serve", "--workers", "99")


def test_missing_option_value() -> None:
    text = _usage_error("analyze", "a.csv", "--thread")
    assert "オプション --thread に値がありません。--thread の後に値を指定してください" in text


def test_extra_arguments() -> None:
    assert "余分な引数があります: c。" in _usage_error("analyze", "a", "b", "c")


def test_missing_command() -> None:
    assert "コマンドがありません。次のどれかを指定してください: analyze" in _usage_error("-v")


def test_a_commands_own_usage_error_keeps_its_japanese_message() -> None:
    text = _usage_error("analyze", "a.csv")
    assert "質問（QUESTION）か --spec SPECS.json のどちらか一方を指定してください" in text


def test_usage_error_through_the_console_script() -> None:
    script = Path(sys.executable).with_name("keiri-agent")
    result = subprocess.run(
        [str(script), "analyze", "--bogus", "x"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "オプション --bogus はありません。" in result.stderr
    assert "Traceback" not in result.stderr and "No such option" not in result.stderr


def test_wrapping_counts_wide_characters_and_keeps_markers_whole() -> None:
    from keiri_agent.cli.usage import display_width, wrap

    lines = wrap(
        "表の合計行（合計・小計 …）を残します。既定では除外します。  [既定値: no-keep]", 24
    )
    # closing punctuation hangs past the width rather than start a line
    assert all(display_width(line.rstrip("。、）")) <= 24 for line in lines), lines
    assert "[既定値: no-keep]" in lines
    assert not any(line.startswith(("。", "、", "）")) for line in lines), lines
    assert not any(line.endswith("（") for line in lines), lines


def test_a_long_vowel_mark_or_small_kana_never_starts_a_line() -> None:
    from keiri_agent.cli.usage import wrap

    for width in range(8, 30):
        for line in wrap("報告書と図の保存先フォルダーとキャッシュ（なければ作成）。", width):
            assert not line.startswith(("ー", "ッ", "ュ")), (width, line)
