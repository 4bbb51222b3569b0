"""仕訳 exports: byte-exact files for 弥生会計 / freee / MF / 仕訳帳, and Japanese errors.

The expected files under ``data/journal_exports`` were written by hand from the
vendors' published layouts (see ``keiri_agent.accounting.journal_export``), not from
this code's output.
"""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from keiri_agent.accounting.journal_export import FORMATS, default_tax_table
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.journal_export import ExportJournalBlock
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError

DATA = Path(__file__).parent / "data" / "journal_exports"
SPEC = (
    Path(__file__).parents[2]
    / "src/keiri_agent/block_specs/accounting/accounting.export_journal.yaml"
)

JOURNAL: list[dict[str, Any]] = [
    # slip 1: two rows (deposit + the fee the customer deducted), 補助科目 on the credit
    {
        "伝票番号": 1,
        "日付": "2026-11-10",
        "借方勘定科目": "普通預金",
        "借方補助科目": "",
        "借方金額": 109340,
        "貸方勘定科目": "売掛金",
        "貸方補助科目": "株式会社あおば商事",
        "貸方金額": 109340,
        "摘要": "入金消込 株式会社あおば商事 INV-001",
    },
    {
        "伝票番号": 1,
        "日付": "2026-11-10",
        "借方勘定科目": "支払手数料",
        "借方補助科目": "",
        "借方金額": 660,
        "貸方勘定科目": "売掛金",
        "貸方補助科目": "株式会社あおば商事",
        "貸方金額": 660,
        "摘要": "入金消込 株式会社あおば商事 INV-001",
    },
    # slip 2: one row, a 摘要 with a comma and double quotes (CSV quoting)
    {
        "伝票番号": 2,
        "日付": "2026-11-12",
        "借方勘定科目": "普通預金",
        "借方補助科目": "",
        "借方金額": 50000,
        "貸方勘定科目": "売掛金",
        "貸方補助科目": "ミナト印刷",
        "貸方金額": 50000,
        "摘要": '入金消込 ミナト印刷 INV-002,INV-003 "合算"',
    },
]


@pytest.fixture
def ctx() -> BlockContext:
    return BlockContext(
        run_id="run",
        plan_id="plan",
        node_id="node",
        settings=Settings(),
        logger=logging.getLogger(),
    )


def export(ctx: BlockContext, **inputs: Any) -> dict[str, Any]:
    return ExportJournalBlock().run({"journal": JOURNAL, **inputs}, ctx)


def fails(ctx: BlockContext, **inputs: Any) -> BlockError:
    with pytest.raises(BlockError) as caught:
        ExportJournalBlock().run(inputs, ctx)
    assert caught.value.code == "INPUT_VALIDATION_FAILED"
    return caught.value


def row(**changes: Any) -> dict[str, Any]:
    return {**JOURNAL[2], **changes}


# --------------------------------------------------------------------------- the files


@pytest.mark.parametrize(
    ("fmt", "encoding", "header"),
    [
        ("yayoi", "cp932", False),
        ("freee", "cp932", True),
        ("moneyforward", "cp932", True),
        ("journal", "utf-8-sig", True),
    ],
)
def test_each_format_is_the_handwritten_file_byte_for_byte(
    ctx: BlockContext, fmt: str, encoding: str, header: bool
) -> None:
    out = export(ctx, format=fmt)
    assert out["csv"] == (DATA / f"{fmt}.csv").read_bytes()
    assert out["summary"] == {
        "format": fmt,
        "format_name": FORMATS[fmt].name,
        "filename": FORMATS[fmt].filename,
        "encoding": encoding,
        "header": header,
        "slips": 2,
        "rows": 3,
    }


def test_the_spec_sample_is_the_handwritten_yayoi_file() -> None:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    sample = spec["dry_run"]["samples"]
    assert sample["inputs"]["journal"] == JOURNAL
    assert sample["outputs"]["csv"] == (DATA / "yayoi.csv").read_bytes()
    assert base64.b64encode(sample["outputs"]["csv"])  # a real file, not a stub


def test_a_journal_file_is_read_like_records(ctx: BlockContext) -> None:
    # the 仕訳帳 file (UTF-8 with BOM, 2026/11/10 dates, amounts as text) → 弥生
    out = ExportJournalBlock().run(
        {"journal": {"name": "仕訳帳.csv", "data": (DATA / "journal.csv").read_bytes()}}
        | {"format": "yayoi"},
        ctx,
    )
    assert out["csv"] == (DATA / "yayoi.csv").read_bytes()


def test_a_compound_slip_with_one_sided_rows_is_a_three_line_yayoi_voucher(
    ctx: BlockContext,
) -> None:
    # 配当金 50,000 received net of 源泉所得税 3,063 and 住民税 2,042 (written by hand:
    # 2110 / 2100 / 2101, タイプ 3, a side without an account carries 金額 0)
    base = {"伝票番号": 7, "日付": "2026/11/30", "摘要": "配当金 受取"}
    journal = [
        base
        | {
            "借方勘定科目": "普通預金",
            "借方部門": "本社",
            "借方金額": "44,895",
            "貸方勘定科目": "受取配当金",
            "貸方金額": 50000,
        },
        base | {"借方勘定科目": "租税公課", "借方税区分": "対象外", "借方金額": 3063},
        base | {"借方勘定科目": "租税公課", "借方税区分": "対象外", "借方金額": 2042.0},
    ]
    out = ExportJournalBlock().run(
        {
            "journal": journal,
            "format": "yayoi",
            "tax_categories": [{"勘定科目": "受取配当金", "弥生": "対象外"}],
        },
        ctx,
    )
    expected = (
        "2110,7,,2026/11/30,普通預金,,本社,対象外,44895,,受取配当金,,,対象外,50000,,"
        "配当金 受取,,,3,,,0,0,no\r\n"
        "2100,7,,2026/11/30,租税公課,,,対象外,3063,,,,,,0,,配当金 受取,,,3,,,0,0,no\r\n"
        "2101,7,,2026/11/30,租税公課,,,対象外,2042,,,,,,0,,配当金 受取,,,3,,,0,0,no\r\n"
    )
    assert out["csv"] == expected.encode("cp932")
    assert (out["summary"]["slips"], out["summary"]["rows"]) == (1, 3)


def test_the_users_table_and_a_rows_own_tax_category_win(ctx: BlockContext) -> None:
    journal = [
        JOURNAL[1] | {"伝票番号": 1, "借方金額": 660, "貸方金額": 660},
        row(伝票番号=2, 借方税区分="課税売上込10%", 借方税額=4545),
    ]
    out = ExportJournalBlock().run(
        {
            "journal": journal,
            "format": "yayoi",
            "tax_categories": [{"勘定科目": "支払手数料", "弥生会計": "課対仕入込10%適格"}],
        },
        ctx,
    )
    lines = out["csv"].decode("cp932").split("\r\n")
    assert lines[0].startswith("2000,1,,2026/11/10,支払手数料,,,課対仕入込10%適格,660,,売掛金,")
    assert lines[1].startswith("2000,2,,2026/11/12,普通預金,,,課税売上込10%,50000,4545,売掛金,")


def test_an_empty_journal_is_an_empty_file(ctx: BlockContext) -> None:
    yayoi = ExportJournalBlock().run({"journal": [], "format": "yayoi"}, ctx)
    assert (yayoi["csv"], yayoi["summary"]["slips"]) == (b"", 0)
    mf = ExportJournalBlock().run({"journal": [], "format": "moneyforward"}, ctx)
    assert mf["csv"].decode("cp932").startswith("取引No,取引日,借方勘定科目,")


def test_encoding_can_be_chosen(ctx: BlockContext) -> None:
    out = export(ctx, format="freee", encoding="utf-8")
    expected = (DATA / "freee.csv").read_bytes().decode("cp932").encode("utf-8")
    assert out["csv"] == expected and out["summary"]["encoding"] == "utf-8"


def test_the_default_table_covers_the_common_accounts() -> None:
    table = default_tax_table()
    for account in ("普通預金", "当座預金", "売掛金", "前受金", "現金", "買掛金", "未払金"):
        assert {table[f][account] for f in ("yayoi", "freee", "moneyforward")} == {"対象外"}
    assert [table[f]["支払手数料"] for f in ("yayoi", "freee", "moneyforward")] == [
        "課対仕入込10%",
        "課対仕入10%",
        "課仕 10%",
    ]


# --------------------------------------------------------------------------- errors


def test_unknown_format(ctx: BlockContext) -> None:
    error = fails(ctx, journal=JOURNAL, format="yayo")
    assert (
        "形式 'yayo' は見つかりません" in error.message and "'yayoi' のことですか" in error.message
    )
    assert error.details["field"] == "format"


def test_an_account_without_a_tax_category_is_named(ctx: BlockContext) -> None:
    journal = [row(借方勘定科目="雑費"), row(伝票番号=3, 貸方勘定科目="雑収入")]
    error = fails(ctx, journal=journal, format="moneyforward")
    assert error.message.startswith(
        "勘定科目 「雑費」、「雑収入」 のマネーフォワード クラウド会計の"
    )
    assert "税区分がわかりません" in error.message
    assert error.hint and "{勘定科目: 雑費, マネーフォワード:" in error.hint
    assert error.details["field"] == "tax_categories"
    assert error.details["accounts"] == ["雑費", "雑収入"]
    # the plain 仕訳帳 needs no 税区分
    assert ExportJournalBlock().run({"journal": journal, "format": "journal"}, ctx)["csv"]


def test_an_unbalanced_slip_is_named(ctx: BlockContext) -> None:
    journal = [*JOURNAL[:2], {**JOURNAL[1], "貸方金額": 600}]
    error = fails(ctx, journal=journal, format="freee")
    assert error.message == (
        "伝票 1 の借方合計 110,660 円と貸方合計 110,600 円が一致しません（1、2、3 行目）"
    )
    assert (error.details["field"], error.details["slip"]) == ("journal", "1")


def test_a_slip_with_two_dates_is_an_error(ctx: BlockContext) -> None:
    journal = [JOURNAL[0], {**JOURNAL[1], "日付": "2026-11-11"}]
    error = fails(ctx, journal=journal, format="yayoi")
    assert "伝票 1 の行の日付が違います" in error.message and "2026/11/11" in error.message


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"借方金額": "五万円"},
            "仕訳の 1 行目の 借方金額 '五万円' を金額（円の整数）として読めません",
        ),
        ({"貸方金額": 500.5}, "仕訳の 1 行目の 貸方金額 500.5 を金額（円の整数）として読めません"),
        ({"借方金額": -50000}, "仕訳の 1 行目の 借方金額 -50000 は 1 円以上の金額ではありません"),
        ({"借方金額": None}, "仕訳の 1 行目の借方勘定科目「普通預金」に借方金額がありません"),
        ({"日付": "11月10日"}, "仕訳の 1 行目の 日付 '11月10日' を日付として読めません"),
    ],
)
def test_a_bad_cell_names_the_row_and_column(
    ctx: BlockContext, changes: dict[str, Any], message: str
) -> None:
    error = fails(ctx, journal=[row(**changes)], format="yayoi")
    assert error.message.startswith(message)
    assert (error.details["field"], error.details["row"]) == ("journal", 1)


def test_a_missing_required_column_is_named(ctx: BlockContext) -> None:
    journal = [{k: v for k, v in record.items() if k != "貸方金額"} for record in JOURNAL]
    error = fails(ctx, journal=journal, format="yayoi")
    assert error.message == "仕訳に「貸方金額」の列が見つかりません"
    assert error.hint and "columns の credit_amount" in error.hint
    assert error.details["field"] == "journal"


def test_a_named_column_is_used(ctx: BlockContext) -> None:
    journal = [
        {("入金額" if k == "貸方金額" else k): v for k, v in record.items()} for record in JOURNAL
    ]
    out = ExportJournalBlock().run(
        {"journal": journal, "format": "yayoi", "columns": {"credit_amount": "入金額"}}, ctx
    )
    assert out["csv"] == (DATA / "yayoi.csv").read_bytes()


def test_a_character_the_encoding_lacks_is_named(ctx: BlockContext) -> None:
    error = fails(ctx, journal=[row(摘要="入金 🎉")], format="freee")
    assert error.message == "仕訳の 1 行目の 摘要 の文字 '🎉' は CP932（Shift_JIS） で書けません"
    assert (error.details["row"], error.details["column"]) == (1, "摘要")


def test_a_line_break_in_a_yayoi_memo_is_an_error(ctx: BlockContext) -> None:
    error = fails(ctx, journal=[row(摘要="入金\n合算")], format="yayoi")
    assert "摘要 に改行があります" in error.message
    # other CSV readers take a quoted line break
    out = ExportJournalBlock().run({"journal": [row(摘要="入金\n合算")], "format": "journal"}, ctx)
    assert '"入金\n合算"' in out["csv"].decode("utf-8-sig")


def test_a_tax_table_without_a_package_column_is_an_error(ctx: BlockContext) -> None:
    error = fails(
        ctx, journal=JOURNAL, format="yayoi", tax_categories=[{"勘定科目": "雑費", "区分": "x"}]
    )
    assert error.message == "税区分表に 弥生 / freee / マネーフォワード のどの列もありません"
    assert error.details["field"] == "tax_categories"
