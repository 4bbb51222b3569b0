"""``keiri-agent blocks``: list the block catalog and show one block's contract.

Built-in blocks plus the folders in ``KEIRI_AGENT_BLOCK_SPEC_DIRS``. Exit code 1
for a catalog problem (bad spec file, unknown block or version).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from keiri_agent.cli.common import console, print_json, settings
from keiri_agent.cli.common import fail as _fail
from keiri_agent.cli.usage import KeiriTyper
from keiri_agent.errors import KeiriAgentError

if TYPE_CHECKING:  # imported when a command runs: keeps other commands' start-up lean
    from keiri_agent.plans.catalog.catalog import BlockCatalog, BlockSpec

blocks_app = KeiriTyper(
    name="blocks",
    help="ブロックカタログ: ブロックの一覧と、各ブロックの入力・出力。",
    no_args_is_help=True,
)


def _catalog() -> BlockCatalog:
    from keiri_agent.plans.catalog.catalog import BlockCatalog

    return BlockCatalog.from_settings(settings())


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


_SENTENCE_END = re.compile(r"(?<=[。！？])|(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to 。 or ``. ``): the summary ``blocks list``
    shows; ``blocks show`` has the whole text."""
    lines = [line.strip() for line in text.strip().split("\n\n", 1)[0].splitlines()]
    paragraph = ""
    for line in lines:  # a line break between two Japanese characters is no space
        wide = paragraph[-1:] > "\x7f" and line[:1] > "\x7f"
        paragraph += line if wide or not paragraph else f" {line}"
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0].strip()


def type_label(port: Mapping[str, Any]) -> str:
    """A short type for tables: ``string``, ``array[object]``, ``integer | null``, a $ref."""
    if "$ref" in port:
        label = str(port["$ref"])
    elif "type" in port:
        types = port["type"] if isinstance(port["type"], list) else [port["type"]]
        parts = []
        for name in types:
            items = port.get("items")
            if (
                name == "array"
                and isinstance(items, Mapping)
                and ("type" in items or "$ref" in items)
            ):
                parts.append(f"array[{type_label(items)}]")
            else:
                parts.append(str(name))
        label = " | ".join(parts)
    elif "enum" in port:
        label = "enum"
    else:
        branches = port.get("oneOf") or port.get("anyOf") or []
        label = " | ".join(type_label(b) for b in branches if isinstance(b, Mapping)) or "any"
    return f"{label} | null" if port.get("nullable") is True else label


def _ports_table(title: str, ports: Mapping[str, Mapping[str, Any]], inputs: bool) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("名前", no_wrap=True)
    table.add_column("型")
    if inputs:
        table.add_column("必須")
        table.add_column("既定値")
    table.add_column("説明")
    for name, port in ports.items():
        row = [name, type_label(port)]
        if inputs:
            required = port.get("required") is True and "default" not in port
            default = json.dumps(port["default"], ensure_ascii=False) if "default" in port else ""
            row += ["✓" if required else "", default]
        row.append(_first_line(str(port.get("description", ""))))
        table.add_row(*(Text(cell) for cell in row))
    return table


@blocks_app.command("list")
def list_blocks(
    as_json: Annotated[bool, typer.Option("--json", help="カタログを JSON で出力します。")] = False,
) -> None:
    """全ブロックの一覧: ID、バージョン、種類、副作用、説明の冒頭。"""
    try:
        specs = _catalog().specs()
    except KeiriAgentError as error:
        raise _fail(error) from None
    if as_json:
        print_json([spec.to_summary() for spec in specs])
        return
    # one line per block, then its first sentence indented below it: readable in an
    # 80-column terminal, where a table column for it wraps into fragments
    console.print(Text(f"ブロック一覧（{len(specs)} 件、説明の全文は blocks show <ID>）"))
    for spec in specs:
        effects = "副作用あり" if spec.side_effects else "副作用なし"
        kind = KIND_WORDS.get(spec.kind, spec.kind)
        console.print(Text.assemble((spec.id, "bold"), f"  {spec.version}  {kind}  {effects}"))
        summary = first_sentence(spec.description)
        if summary:
            console.print(Padding(Text(summary), (0, 0, 0, 4)))


@blocks_app.command("show")
def show_block(
    reference: Annotated[
        str, typer.Argument(help="ブロック ID（id@^1.2 のようにバージョン範囲も指定可）")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="入出力の定義を JSON で出力します（$ref は展開済み）。")
    ] = False,
) -> None:
    """1 つのブロックの定義: 説明、入力、出力。"""
    try:
        catalog = _catalog()
        spec = catalog.resolve(reference)
        summary = spec.to_summary(resolve_refs=as_json)
    except KeiriAgentError as error:
        raise _fail(error) from None
    versions = [s.version for s in catalog.specs() if s.id == spec.id]
    if as_json:
        print_json({**summary, "versions": versions})
        return
    _show(spec, versions)


KIND_WORDS = {"processing": "処理ブロック", "ui": "入力ブロック"}
"""A block's kind in words (``processing`` runs by itself, ``ui`` asks a person)."""


def _show(spec: BlockSpec, versions: list[str]) -> None:
    kind = KIND_WORDS.get(spec.kind, spec.kind)
    console.print(f"[bold]{escape(spec.id)}[/bold] {spec.version}  （{kind}）")
    effects = "あり" if spec.side_effects else "なし"
    console.print(f"副作用: {effects}   バージョン: {', '.join(versions)}", highlight=False)
    console.print(Text(f"実装: {spec.entrypoint}"))
    if spec.source:
        console.print(Text(f"定義: {spec.source}"))
    if spec.description:
        console.print()
        console.print(Text(spec.description))
    console.print()
    console.print(_ports_table("入力", spec.inputs, inputs=True))
    console.print(_ports_table("出力", spec.outputs, inputs=False))
