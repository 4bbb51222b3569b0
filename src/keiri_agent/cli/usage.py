"""Japanese help and usage errors for every Typer app of the CLI.

``KeiriTyper`` is ``typer.Typer`` with plain (non-Rich) help: Typer's Rich help imports
``rich.markdown`` and ``rich.traceback`` (~40 % of ``--help``), and its headings are
English. Its commands and groups (``JapaneseCommand``, ``JapaneseGroup``) write the help
with Japanese headings and markers (使い方 / 引数 / オプション / コマンド, [既定値: …],
[必須]), wrapped by display width (a kanji takes two columns), and turn every usage error
into a Japanese sentence chosen by the error's TYPE and attributes (never by its English
text); exit code 2 as before.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from difflib import get_close_matches
from typing import IO, Any

import typer
from typer import _click
from typer._click import exceptions as click_errors
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

HEADINGS = {"arguments": "引数", "options": "オプション", "commands": "コマンド"}
HELP_OPTION_TEXT = "この説明を表示して終了します。"
OPTIONS_METAVAR = "[オプション]"
SUBCOMMAND_METAVAR = "コマンド [引数]..."
EXAMPLE_PREFIX = "例: "
NO_LINE_START = frozenset(
    "。、）」』】〕，．・：；！？"  # closing punctuation
    "ーぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ々"  # long vowel mark, small kana
)
NO_LINE_END = frozenset("（「『")
TYPE_LABELS = {
    "str": "文字列",
    "path": "パス",
    "file": "ファイル",
    "dir": "フォルダー",
    "directory": "フォルダー",
    "int": "整数",
    "int range": "整数",
    "float": "数値",
    "float range": "数値",
    "bool": "true|false",
    "datetime": "日時",
    "list[str]": "文字列（複数可）",
    "list[Path]": "パス（複数可）",
    "list[int]": "整数（複数可）",
}
"""Japanese words for Typer's ``<type>`` labels in help (others are shown as Typer writes them)."""
TYPE_WORDS = {
    "int": "整数",
    "float": "数値",
    "bool": "true か false",
    "path": "存在するパス",
    "enum": "決められた値",
}


def display_width(text: str) -> int:
    """Terminal columns of ``text``: wide and full-width characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _tokens(text: str) -> Iterator[str]:
    """Break points for wrapping: ASCII words (with their following space) and a
    ``[…]`` marker stay whole, each other wide character is its own token."""
    word, marker = "", ""
    for ch in text:
        if marker or ch == "[":
            marker += ch
            if ch == "]":
                yield marker
                marker = ""
        elif display_width(ch) == 2:
            if word:
                yield word
                word = ""
            yield ch
        elif ch == " ":
            yield word + " "
            word = ""
        else:
            word += ch
    if word or marker:
        yield word + marker


def join_lines(text: str) -> str:
    """The lines of one paragraph as one line: no space where either side is wide."""
    joined = ""
    for line in (part.strip() for part in text.splitlines()):
        wide = joined and (display_width(joined[-1]) == 2 or display_width(line[:1]) == 2)
        joined = f"{joined}{line}" if wide or not joined else f"{joined} {line}"
    return joined


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` columns (a longer ASCII word stays whole;
    closing punctuation never starts a line)."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for token in _tokens(paragraph):
            if token in NO_LINE_START:
                line += token
            elif line and display_width(line + token.rstrip()) > width:
                carried = line[-1] if line[-1] in NO_LINE_END else ""
                lines.append(line.removesuffix(carried).rstrip())
                line = carried + token.lstrip()
            else:
                line += token
        lines.append(line.rstrip())
    return lines


class JapaneseHelpFormatter(_click.HelpFormatter):
    """Click's formatter with Japanese headings and display-width-aware wrapping."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        self.write(f"{' ' * self.current_indent}使い方: {prog} {args}".rstrip() + "\n")

    @contextmanager
    def section(self, name: str) -> Iterator[None]:
        self.write_paragraph()
        self.write_heading(HEADINGS.get(name.lower(), name))
        self.indent()
        try:
            yield
        finally:
            self.dedent()

    def write_heading(self, heading: str) -> None:
        self.write(f"{'':>{self.current_indent}}{heading}:\n")

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        width = max(self.width - self.current_indent, 20)
        paragraphs = [join_lines(part) for part in text.split("\n\n") if part.strip()]
        for number, paragraph in enumerate(paragraphs):
            if number:
                self.write("\n")
            for line in wrap(paragraph, width):
                self.write(f"{indent}{line}\n")

    def write_dl(
        self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        first = min(max((display_width(name) for name, _ in rows), default=0), col_max)
        indent = " " * self.current_indent
        text_width = max(self.width - self.current_indent - first - col_spacing, 20)
        for name, text in rows:
            lines = wrap(text, text_width) if text else []
            if display_width(name) > first:
                self.write(f"{indent}{name}\n")
                pad = " " * (self.current_indent + first + col_spacing)
                lines_out = [f"{pad}{line}" for line in lines]
            else:
                pad = " " * (self.current_indent + first + col_spacing)
                head = f"{indent}{name}{' ' * (first - display_width(name) + col_spacing)}"
                lines_out = [head + lines[0]] if lines else [f"{indent}{name}"]
                lines_out += [f"{pad}{line}" for line in lines[1:]]
            for line in lines_out:
                self.write(line.rstrip() + "\n")


class JapaneseContext(_click.Context):
    formatter_class = JapaneseHelpFormatter


def _markers(param: _click.Parameter, ctx: _click.Context) -> str:
    """The [既定値: …; 必須] suffix of a parameter's help line (Typer's own, in Japanese)."""
    extra: list[str] = []
    if isinstance(param, TyperArgument | TyperOption):
        default = param._extract_default_help_str(ctx=ctx)
        show_str = isinstance(param.show_default, str)
        if show_str or (default is not None and (param.show_default or ctx.show_default)):
            text = param._get_default_string(
                ctx=ctx, show_default_is_str=show_str, default_value=default
            )
            if text:
                extra.append(f"既定値: {text}")
        if isinstance(param, TyperOption):
            span = param._get_number_range_help_str()
            if span:
                extra.append(f"範囲: {span}")
    if param.required:
        extra.append("必須")
    return f"[{'; '.join(extra)}]" if extra else ""


def _help_record(param: _click.Parameter, ctx: _click.Context) -> tuple[str, str] | None:
    record = param.get_help_record(ctx)
    if record is None:
        return None
    text = getattr(param, "help", None) or ""
    markers = _markers(param, ctx)
    name = record[0]
    if isinstance(param, TyperArgument | TyperOption):
        shown = param.display_type(ctx)
        name = name.replace(shown, f"<{TYPE_LABELS.get(shown[1:-1], shown[1:-1])}>")
    return name, f"{text}  {markers}".strip()


def _examples(command: _click.Command | None) -> list[str]:
    epilog = (command.epilog or "") if command is not None else ""
    return [
        line.removeprefix(EXAMPLE_PREFIX)
        for line in epilog.splitlines()
        if line.startswith(EXAMPLE_PREFIX)
    ]


class UsageMistake(click_errors.UsageError):
    """A usage error in Japanese: the usage line, the message, the ``--help`` hint."""

    def show(self, file: IO[Any] | None = None) -> None:
        lines = []
        if self.ctx is not None:
            lines.append(self.ctx.get_usage())
            lines.append(f"ヒント: {self.ctx.command_path} --help で使い方を確認できます")
            lines.append("")
        lines.append(f"エラー: {self.message}")
        _click.echo("\n".join(lines), file=file, err=True)


def _param_label(param: _click.Parameter | None, hint: str | None = None) -> str:
    if param is None:
        return hint or "値"
    if param.param_type_name == "argument":
        return f"引数 {(param.name or '').upper()}"
    opts = getattr(param, "opts", None) or [param.name or ""]
    return f"オプション {max(opts, key=len)}"


def _type_advice(error: click_errors.BadParameter) -> str:
    """What to type instead, from the structured validation error behind ``error``
    (Typer validates values with pydantic: its error ``type`` and ``ctx``)."""
    cause = error.__cause__
    errors = getattr(cause, "errors", None)
    details: list[dict[str, Any]] = list(errors()) if callable(errors) else []
    if not details:
        return "正しい値を指定してください"
    detail = details[0]
    kind, limits = str(detail.get("type", "")), detail.get("ctx") or {}
    bounds = {"ge": "以上", "gt": "より大きい値", "le": "以下", "lt": "未満"}
    for key, word in bounds.items():
        if key in limits:
            return f"{limits[key]} {word}を指定してください（入力: {detail.get('input')}）"
    if "expected" in limits:
        return f"{limits['expected']} のいずれかを指定してください（入力: {detail.get('input')}）"
    word = next((w for prefix, w in TYPE_WORDS.items() if kind.startswith(prefix)), "")
    given = f"（入力: {detail.get('input')}）"
    return f"{word}を指定してください{given}" if word else f"正しい値を指定してください{given}"


def japanese(error: click_errors.UsageError, context: _click.Context | None = None) -> UsageMistake:
    """The Japanese form of a Click usage error (exit code 2, its context or ``context``)."""
    if isinstance(error, UsageMistake):
        return error
    ctx = error.ctx or context
    path = ctx.command_path if ctx is not None else "keiri-agent"
    if isinstance(error, click_errors.MissingParameter):
        label = _param_label(error.param)
        what = (getattr(error.param, "help", None) or "").rstrip("。")
        message = f"{label} がありません。{what or '値'}を指定してください"
        examples = _examples(ctx.command if ctx is not None else None)
        if examples:
            message += f"（例: {examples[0]}）"
    elif isinstance(error, click_errors.NoSuchOption):
        message = f"オプション {error.option_name} はありません。"
        if error.possibilities:
            message += f"もしかして: {', '.join(sorted(error.possibilities))}"
        else:
            message += f"使えるオプションは {path} --help で確認してください"
    elif isinstance(error, click_errors.BadOptionUsage):
        option = ctx.command.params if ctx is not None else []
        names = {o: p for p in option for o in getattr(p, "opts", [])}
        param = names.get(error.option_name)
        if param is not None and not getattr(param, "is_flag", False):
            message = (
                f"オプション {error.option_name} に値がありません。"
                f"{error.option_name} の後に値を指定してください"
            )
        else:
            message = (
                f"オプション {error.option_name} の使い方に誤りがあります。"
                f"{path} --help で確認してください"
            )
    elif isinstance(error, click_errors.BadParameter):
        if error.param is not None and error.__cause__ is not None:  # a value's type
            message = f"{_param_label(error.param)} の値が正しくありません。{_type_advice(error)}"
        else:  # our commands' own checks: their message is already Japanese
            hint = error.param_hint
            label = _param_label(error.param, hint if isinstance(hint, str) else None)
            message = (
                f"{label} の値が正しくありません: {error.message}"
                if error.param is not None or error.param_hint
                else error.message
            )
    else:
        message = f"コマンドの指定に誤りがあります: {error.format_message()}"
    return UsageMistake(message, ctx)


class _JapaneseHelp:
    """What a command and a group share: the Japanese context, usage line and help option.

    A mixin placed before ``TyperCommand`` / ``TyperGroup``: its ``super()`` calls reach
    them (mypy cannot see that, hence the ignore)."""

    context_class: type[_click.Context] = JapaneseContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["options_metavar"] = OPTIONS_METAVAR
        super().__init__(*args, **kwargs)

    def get_help_option(self, ctx: _click.Context) -> TyperOption | None:
        option: TyperOption | None = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.help = HELP_OPTION_TEXT
        return option


class JapaneseCommand(_JapaneseHelp, TyperCommand):
    """A command with Japanese help and usage errors."""

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        _format_params(self, ctx, formatter)

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        allowed = ctx.allow_extra_args
        ctx.allow_extra_args = True
        try:
            rest = super().parse_args(ctx, args)
        except click_errors.UsageError as error:
            raise japanese(error, ctx) from None
        finally:
            ctx.allow_extra_args = allowed
        if rest and not allowed and not ctx.resilient_parsing:
            raise UsageMistake(
                f"余分な引数があります: {' '.join(rest)}。"
                "値に空白を含むときは引用符で囲んでください"
                f"（{ctx.command_path} --help で確認できます）",
                ctx,
            )
        return rest

    def invoke(self, ctx: _click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click_errors.UsageError as error:
            raise japanese(error, ctx) from None


def _format_params(
    command: _click.Command, ctx: _click.Context, formatter: _click.HelpFormatter
) -> None:
    arguments: list[tuple[str, str]] = []
    options: list[tuple[str, str]] = []
    for param in command.get_params(ctx):
        record = _help_record(param, ctx)
        if record is not None:
            (arguments if param.param_type_name == "argument" else options).append(record)
    for heading, rows in (("arguments", arguments), ("options", options)):
        if rows:
            with formatter.section(heading):
                formatter.write_dl(rows)


class JapaneseGroup(_JapaneseHelp, TyperGroup):
    """A command group with Japanese help and usage errors (unknown or missing command)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["subcommand_metavar"] = SUBCOMMAND_METAVAR
        super().__init__(*args, **kwargs)

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        _format_params(self, ctx, formatter)
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                summary = (command.short_help or command.help or "").strip().split("\n\n")[0]
                rows.append((name, join_lines(summary)))
        if rows:
            with formatter.section("commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click_errors.NoArgsIsHelpError:
            raise
        except click_errors.UsageError as error:
            raise japanese(error, ctx) from None

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        name = args[0]
        if (
            self.get_command(ctx, name) is None
            and not ctx.resilient_parsing
            and not name.startswith("-")
        ):
            names = self.list_commands(ctx)
            close = get_close_matches(name, names)
            guess = f"もしかして: {', '.join(close)}。" if close else ""
            message = f"コマンド {name} はありません。{guess}使えるコマンド: {', '.join(names)}"
            raise UsageMistake(message, ctx)
        try:
            return super().resolve_command(ctx, args)
        except click_errors.UsageError as error:
            raise japanese(error, ctx) from None

    def invoke(self, ctx: _click.Context) -> Any:
        if not ctx._protected_args and not self.invoke_without_command:
            names = ", ".join(self.list_commands(ctx))
            raise UsageMistake(f"コマンドがありません。次のどれかを指定してください: {names}", ctx)
        try:
            return super().invoke(ctx)
        except click_errors.NoArgsIsHelpError:
            raise
        except click_errors.UsageError as error:
            raise japanese(error, ctx) from None
        except (click_errors.ClickException, typer.Exit, typer.Abort):
            raise
        except Exception as error:  # what no command expected: one line, not a traceback
            from keiri_agent.cli.common import last_resort

            raise last_resort(error) from None


class KeiriTyper(typer.Typer):
    """``typer.Typer`` with plain Japanese help and usage errors (every app of the CLI)."""

    def __init__(self, *, cls: type[JapaneseGroup] = JapaneseGroup, **kwargs: Any) -> None:
        kwargs.setdefault("add_completion", False)
        kwargs.setdefault("pretty_exceptions_enable", False)
        super().__init__(cls=cls, rich_markup_mode=None, **kwargs)

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Any:
        return super().command(name, cls=cls or JapaneseCommand, **kwargs)
