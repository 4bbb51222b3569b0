"""Bank statements, invoice lists and customer masters read by their headers."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal

import openpyxl
import pytest

from keiri_agent.accounting.bank_statements import read_statement
from keiri_agent.accounting.columns import Role, find_columns
from keiri_agent.accounting.receivables import read_customers, read_invoices
from keiri_agent.accounting.zengin import wareki_date
from keiri_agent.errors import UserInputError


def test_a_download_with_preamble_lines_one_amount_column_and_a_direction() -> None:
    text = (
        "口座番号,普通 1234567\r\n"
        "照会期間,2026/11/01～2026/11/30\r\n"
        "\r\n"
        "取引日,入払区分,お取引金額,残高,お取引内容\r\n"
        '2026/11/05,入金,"109,340","1,109,340",振込 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ\r\n'
        '2026/11/06,出金,"5,000","1,104,340",ATM\r\n'
        '2026/11/07,入金,120,"1,104,460",ﾌﾘｺﾐ ﾕ)ｻｸﾗ\r\n'
    )
    statement = read_statement({"name": "bank.csv", "data": text.encode("cp932")})
    lines = statement.lines
    assert statement.format == "csv"
    assert [(line.row, line.deposit, line.withdrawal) for line in lines] == [
        (1, Decimal(109_340), Decimal(0)),
        (2, Decimal(0), Decimal(5_000)),
        (3, Decimal(120), Decimal(0)),
    ]
    assert lines[0].date == dt.date(2026, 11, 5)
    assert lines[0].payer == "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"  # the transaction word taken off
    assert lines[2].payer == "ﾕ)ｻｸﾗ"


def test_separate_deposit_and_withdrawal_columns_and_a_payer_column() -> None:
    records = [
        {
            "日付": "2026-11-05",
            "摘要": "振込",
            "出金金額": None,
            "入金金額": "55,000",
            "残高": 1,
            "振込依頼人名": "ﾐﾅﾄｲﾝｻﾂ",
        },
        {
            "日付": "2026-11-06",
            "摘要": "決算お利息",
            "出金金額": None,
            "入金金額": "12",
            "残高": 1,
            "振込依頼人名": None,
        },
    ]
    lines = read_statement(records).lines
    assert (lines[0].payer, lines[0].deposit) == ("ﾐﾅﾄｲﾝｻﾂ", Decimal(55_000))
    assert lines[1].bank_entry and not lines[0].bank_entry


def test_an_excel_download_is_read_the_same_way() -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["入出金明細"])
    sheet.append(["お取引日", "お預り金額", "お引出し金額", "摘要"])
    sheet.append([dt.datetime(2026, 11, 5), 33_000, None, "振込 ｶ)ｱｵﾊﾞ"])
    buffer = io.BytesIO()
    book.save(buffer)
    statement = read_statement(buffer.getvalue())
    assert statement.format == "excel"
    assert [(line.date, line.deposit, line.payer) for line in statement.lines] == [
        (dt.date(2026, 11, 5), Decimal(33_000), "ｶ)ｱｵﾊﾞ")
    ]


def test_no_deposit_column_says_which_columns_there_are_and_how_to_name_it() -> None:
    records = [{"日付": "2026-11-05", "ｵｱｽﾞｶﾘ": "100", "摘要": "x"}]
    with pytest.raises(UserInputError) as raised:
        read_statement(records)
    assert "入金額" in raised.value.message
    assert "ｵｱｽﾞｶﾘ" in (raised.value.hint or "") and "columns.bank" in (raised.value.hint or "")
    named = read_statement(records, {"deposit": "ｵｱｽﾞｶﾘ"})
    assert named.lines[0].deposit == Decimal(100)


def test_an_unreadable_amount_names_the_row() -> None:
    records = [{"日付": "2026-11-05", "入金額": "100"}, {"日付": "2026-11-06", "入金額": "百円"}]
    with pytest.raises(UserInputError) as raised:
        read_statement(records)
    assert "2 行目" in raised.value.message


def test_an_override_naming_a_missing_column_is_refused() -> None:
    with pytest.raises(UserInputError) as raised:
        find_columns(
            ["日付"],
            [Role("date", "日付", ("日付",))],
            table="入金明細",
            overrides={"date": "取引日"},
        )
    assert "取引日" in raised.value.message


def test_a_compound_header_is_what_it_ends_with() -> None:
    roles = [Role("name", "得意先名", ("得意先名",)), Role("kana", "カナ", ("カナ", "フリガナ"))]
    assert find_columns(["得意先名カナ", "得意先名"], roles, table="t") == {
        "kana": "得意先名カナ",
        "name": "得意先名",
    }


def _zengin_record(fields: list[tuple[str, int]]) -> bytes:
    """A 200-byte record from (text, width): numbers zero-filled right, text left."""
    out = b""
    for text, width in fields:
        raw = text.encode("cp932")
        out += raw.rjust(width, b"0") if text.isdigit() else raw.ljust(width, b" ")
    assert len(out) == 200, len(out)
    return out


def test_a_zengin_transactions_file_入出金取引明細() -> None:
    header = _zengin_record(
        [
            ("1", 1),
            ("03", 2),
            ("0", 1),
            ("081201", 6),
            ("081101", 6),
            ("081130", 6),
            ("0001", 4),
            ("ﾐｽﾞﾎ", 15),
            ("001", 3),
            ("ﾎﾝﾃﾝ", 15),
            ("000", 3),
            ("1", 1),
            ("1234567", 7),
            ("ｶ)ｹｲﾘ", 40),
            ("0", 1),
            ("1", 1),
            ("00000000000000", 14),
            (" " * 74, 74),
        ]
    )

    def data(reference: str, date: str, direction: str, amount: str, payer: str) -> bytes:
        return _zengin_record(
            [
                ("2", 1),
                (reference, 8),
                (date, 6),
                (date, 6),
                (direction, 1),
                ("11", 2),
                (amount, 12),
                ("0", 12),
                ("000000", 6),
                ("000000", 6),
                ("0", 1),
                ("0", 7),
                ("000", 3),
                ("0", 10),
                (payer, 48),
                ("ｻﾝﾜ", 15),
                ("ｼﾝｼﾞﾕｸ", 15),
                ("ﾌﾘｺﾐ", 20),
                (" " * 20, 20),
                (" ", 1),
            ]
        )

    trailer = _zengin_record([("8", 1), (" " * 199, 199)])
    end = _zengin_record([("9", 1), (" " * 199, 199)])
    body = [
        header,
        data("1", "081105", "1", "109340", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        data("2", "081106", "2", "5000", ""),
        trailer,
        end,
    ]
    for joined in (b"".join(body), b"\r\n".join(body) + b"\r\n"):
        lines = read_statement(joined).lines
        assert [(ln.row, ln.date, ln.deposit, ln.withdrawal, ln.payer) for ln in lines] == [
            (1, dt.date(2026, 11, 5), Decimal(109_340), Decimal(0), "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
            (2, dt.date(2026, 11, 6), Decimal(0), Decimal(5_000), ""),
        ]


def test_a_zengin_transfer_notice_振込入金通知() -> None:
    header = _zengin_record(
        [
            ("1", 1),
            ("01", 2),
            ("0", 1),
            ("081201", 6),
            ("081101", 6),
            ("081130", 6),
            ("0172", 4),
            ("ｱﾜｷﾞﾝｺｳ", 15),
            ("101", 3),
            ("ﾎﾝﾃﾝ", 15),
            ("1", 1),
            ("7654321", 7),
            ("ｶ)ｹｲﾘ", 40),
            (" " * 93, 93),
        ]
    )
    notice = _zengin_record(
        [
            ("2", 1),
            ("1", 6),
            ("081110", 6),
            ("081110", 6),
            ("55000", 10),
            ("0", 10),
            ("0", 10),
            ("ﾐﾅﾄｲﾝｻﾂ", 48),
            ("ｻﾝﾜ", 15),
            ("ｼﾝｼﾞﾕｸ", 15),
            ("0", 1),
            (" " * 20, 20),
            (" " * 52, 52),
        ]
    )
    statement = read_statement(header + notice)
    assert statement.format == "zengin"
    assert [(ln.date, ln.deposit, ln.payer) for ln in statement.lines] == [
        (dt.date(2026, 11, 10), Decimal(55_000), "ﾐﾅﾄｲﾝｻﾂ")
    ]


def test_wareki_dates_in_zengin_files() -> None:
    today = dt.date(2026, 11, 29)
    assert wareki_date("081130", today) == dt.date(2026, 11, 30)
    assert wareki_date("310430", today) == dt.date(2019, 4, 30)  # 平成31: 令和31 is 2049
    assert wareki_date("000000", today) is None


def test_customers_with_several_transfer_names_and_a_reading_column() -> None:
    records = [
        {
            "得意先コード": "C1",
            "得意先名": "株式会社山田商事",
            "得意先名カナ": "ヤマダショウジ",
            "振込名義": "ﾔﾏﾀﾞｼﾖｳｼﾞ ｹｲﾘ;ﾔﾏﾀﾞ ﾀﾛｳ",
        },
        {"得意先コード": "", "得意先名": "", "得意先名カナ": "", "振込名義": ""},
    ]
    (customer,) = read_customers(records)
    assert (customer.id, customer.kana) == ("C1", "ヤマダショウジ")
    assert customer.aliases == ("ﾔﾏﾀﾞｼﾖｳｼﾞ ｹｲﾘ", "ﾔﾏﾀﾞ ﾀﾛｳ")


def test_invoices_use_the_balance_column_and_skip_paid_ones() -> None:
    customers = read_customers([{"得意先コード": "C1", "得意先名": "山田商事"}])
    records = [
        {
            "請求書番号": "I1",
            "得意先名": "山田商事",
            "請求金額(税込)": "110,000",
            "未入金額": "10,000",
            "支払期限": "2026/10/31",
        },
        {
            "請求書番号": "I2",
            "得意先名": "山田商事",
            "請求金額(税込)": "50,000",
            "未入金額": "0",
            "支払期限": "2026/11/30",
        },
    ]
    (only,) = read_invoices(records, customers)
    assert (only.id, only.amount, only.balance, only.due) == (
        "I1",
        Decimal(110_000),
        Decimal(10_000),
        dt.date(2026, 10, 31),
    )


def test_an_invoice_of_a_customer_missing_from_the_master_is_an_error() -> None:
    customers = read_customers([{"得意先コード": "C1", "得意先名": "山田商事"}])
    records = [{"請求書番号": "I1", "得意先コード": "C9", "請求額": 1000}]
    with pytest.raises(UserInputError) as raised:
        read_invoices(records, customers)
    assert "C9" in raised.value.message and "取引先マスタ" in raised.value.message


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\x00\x01\x02binary\xff\xfe" * 50, "CSV"),  # not text at all
        ("日付,入金額\r\n2026/11/05,100\r\n".encode("utf-16-be"), "入金明細"),  # odd encoding
        (b"103" + b"0" * 197 + b"2" + b"0" * 50, "200 バイト"),  # a 全銀 file cut short
    ],
)
def test_a_damaged_or_foreign_bank_file_is_a_clear_error(data: bytes, said: str) -> None:
    with pytest.raises(UserInputError) as raised:
        read_statement({"name": "bank.csv", "data": data})
    assert said in raised.value.message + (raised.value.hint or "")


def test_an_unreadable_invoice_amount_names_the_row_and_how_to_write_it() -> None:
    customers = read_customers([{"得意先コード": "C1", "得意先名": "山田商事"}])
    records = [{"請求書番号": "I1", "得意先コード": "C1", "請求額": "十万円"}]
    with pytest.raises(UserInputError) as raised:
        read_invoices(records, customers)
    assert "1 行目" in raised.value.message and "110,000" in (raised.value.hint or "")


def test_the_payer_is_in_the_摘要_when_お取引内容_holds_only_the_kind_of_transaction() -> None:
    text = (
        '"入出金明細照会"\r\n'
        '"口座名義","ｶ)ﾅﾆﾜｼﾖｸﾋﾝｼﾖｳｶｲ"\r\n'
        '"照会期間","令和8年11月1日～令和8年11月30日"\r\n'
        "\r\n"
        '"取引日","入出金区分","お取引内容","金額","残高","摘要"\r\n'
        '"令和8年11月2日","入金","振込入金","66990","5199210","ｶ)ﾌｼﾞｲｼﾖｳﾃﾝ"\r\n'
        '"令和8年11月5日","入金","振替入金","2000000","7199210","ﾃｲｷﾖｷﾝ ｶｲﾔｸ"\r\n'
        '"令和8年11月10日","入金","振込入金","184600","7383810","ｺｸｾﾞｲｶﾝﾌﾟｷﾝ ﾅﾆﾜｾﾞｲﾑｼﾖ"\r\n'
        '"令和8年11月11日","入金","振込資金返却","35200","7419010","ﾔｽﾀﾞ ｺｳｷ"\r\n'
        '"令和8年11月12日","入金","振込 ｶ)ﾐﾅﾄｲﾝｻﾂ","5000","7424010",""\r\n'
    )
    statement = read_statement({"name": "bank.csv", "data": text.encode("cp932")})
    assert statement.holder == "ｶ)ﾅﾆﾜｼﾖｸﾋﾝｼﾖｳｶｲ"
    lines = statement.lines
    assert lines[0].payer == "ｶ)ﾌｼﾞｲｼﾖｳﾃﾝ" and not lines[0].bank_entry
    assert [line.bank_entry for line in lines[1:4]] == [True, True, True]
    assert lines[4].payer == "ｶ)ﾐﾅﾄｲﾝｻﾂ"  # one column holding both: the kind taken off


def _transactions_header(number: str, width: int) -> bytes:
    """An 入出金取引明細 header with the 口座番号 in ``width`` digits (N10 as the 全銀協
    layout; some banks' files give 7) and the 口座名 after it."""
    return _zengin_record(
        [
            ("1", 1), ("03", 2), ("0", 1), ("080901", 6), ("080801", 6), ("080831", 6),
            ("0017", 4), ("ｻｲﾀﾏﾘｿﾅ", 15), ("120", 3), ("ｵｵﾐﾔ", 15), ("000", 3), ("1", 1),
            (number, width), ("ｶ)ﾎｸﾄｲﾝｻﾂ", 40), ("0", 1), ("1", 1), ("0", 14),
            (" " * (81 - width), 81 - width),
        ]
    )  # fmt: skip


def _transaction(row: int, kind: str, amount: str, payer: str, text: str) -> bytes:
    return _zengin_record(
        [
            ("2", 1), (str(10000 + row), 8), ("080810", 6), ("080810", 6), ("1", 1),
            (kind, 2), (amount, 12), ("0", 12), ("000000", 6), ("000000", 6), ("0", 1),
            ("0", 7), ("000", 3), ("0", 10), (payer, 48), ("", 15), ("", 15), (text, 20),
            ("", 20), (" ", 1),
        ]
    )  # fmt: skip


@pytest.mark.parametrize("width", [10, 7])
def test_a_zengin_file_names_its_holder_and_marks_the_banks_own_entries(width: int) -> None:
    body = [
        _transactions_header("0001234567"[-width:], width),
        _transaction(1, "11", "110000", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ﾌﾘｺﾐ"),
        _transaction(2, "18", "312", "", "ﾘｿｸ"),
        _transaction(3, "14", "500000", "", "ﾌﾘｶｴ"),
        _transaction(4, "14", "33000", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "ﾌﾘｶｴ"),
        _transaction(5, "11", "48400", "ｶ)ﾅｶﾞｾｼｼﾖｳ ﾍﾝｷﾝ", "ﾌﾘｺﾐ"),
    ]
    statement = read_statement(b"\r\n".join(body) + b"\r\n")
    assert statement.holder == "ｶ)ﾎｸﾄｲﾝｻﾂ"
    assert [line.bank_entry for line in statement.lines] == [False, True, True, False, True]
    assert statement.lines[2].record["取引区分"] == "14"


def _notice(reference: str, amount: str, payer: str, cancelled: str, edi: str = "") -> bytes:
    return _zengin_record(
        [
            ("2", 1), (reference, 6), ("081110", 6), ("081110", 6), (amount, 10), ("0", 10),
            ("0", 10), (payer, 48), ("ｻﾝﾜ", 15), ("ｼﾝｼﾞﾕｸ", 15), (cancelled, 1), (edi, 20),
            (" " * 52, 52),
        ]
    )  # fmt: skip


def test_a_cancelled_transfer_notice_takes_back_the_earlier_deposit_and_edi_is_read() -> None:
    header = _zengin_record(
        [
            ("1", 1), ("01", 2), ("0", 1), ("081201", 6), ("081101", 6), ("081130", 6),
            ("0172", 4), ("ｱﾜｷﾞﾝｺｳ", 15), ("101", 3), ("ﾎﾝﾃﾝ", 15), ("1", 1), ("7654321", 7),
            ("ｶ)ｹｲﾘ", 40), (" " * 93, 93),
        ]
    )  # fmt: skip
    body = [
        header,
        _notice("1", "97200", "ｶ)ｽｽﾞﾗﾝ", "0"),
        _notice("2", "55000", "ﾐﾅﾄｲﾝｻﾂ", "0", "INV-0042"),
        _notice("3", "97200", "ｶ)ｽｽﾞﾗﾝ", "1"),
        _notice("4", "41300", "ｽｲﾀｼｶｲｹｲｶﾝﾘｼﾔ", "0", "ﾎｳｼﾞﾝｼﾐﾝｾﾞｲｶﾝﾌｷﾝ"),  # ﾌﾟ keyed as ﾌ
    ]
    statement = read_statement(b"".join(body))
    assert statement.holder == "ｶ)ｹｲﾘ"
    assert [line.deposit for line in statement.lines] == [0, 55_000, 0, 41_300]
    assert statement.lines[0].record["取消"] == "照会番号 000003 で取消"
    assert "INV-0042" in statement.lines[1].text
    assert [line.bank_entry for line in statement.lines] == [False, False, False, True]


def test_an_excel_download_with_account_lines_and_a_blank_row_above_its_header() -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in [
        ["入出金明細照会"],
        ["金融機関名", "はまかぜ銀行"],
        ["口座", "本店営業部 普通 1234567"],
        ["口座名義", "ｶ)ﾐﾅﾄﾚﾝﾃﾂｸ"],
        ["照会期間", "2025年08月01日～2025年08月31日"],
        ["作成日時", "2025年09月01日 09:00"],
        [],
        ["照会口座", "番号", "勘定日", "出金金額(円)", "入金金額(円)", "残高(円)", "摘要"],
        ["本店営業部 普通 1234567", 1, "2025年08月01日", None, 110_000, 2_110_000, "ｶ)ｱｵﾊﾞ"],
        ["本店営業部 普通 1234567", 2, "2025年08月04日", 5_000, None, 2_105_000, "ｶ-ﾄﾞ"],
    ]:
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    statement = read_statement(buffer.getvalue())
    assert statement.holder == "ｶ)ﾐﾅﾄﾚﾝﾃﾂｸ"
    assert [(line.date, line.deposit, line.withdrawal) for line in statement.lines] == [
        (dt.date(2025, 8, 1), Decimal(110_000), Decimal(0)),
        (dt.date(2025, 8, 4), Decimal(0), Decimal(5_000)),
    ]


def test_okurigana_headers_and_the_payer_in_a_second_description_column() -> None:
    """三菱UFJ's download: 支払い金額 / 預かり金額 (kana after the kanji), 摘要 holding the
    kind of transfer and 摘要内容 the payer."""
    text = (
        '"日付","摘要","摘要内容","支払い金額","預かり金額","差引残高","メモ","入払区分"\r\n'
        '"2025/8/1","手数料","ﾌﾘｺﾐﾃｽｳﾘﾖｳ","4,620","","5,569,735","","振替支払い"\r\n'
        '"2025/8/1","振込１","ｻﾝﾜﾋﾞﾙｶﾝﾘ(ｶ","","395,450","5,965,185","","振替入金"\r\n'
    )
    lines = read_statement(text.encode("cp932")).lines
    assert [(line.deposit, line.withdrawal, line.payer) for line in lines] == [
        (Decimal(0), Decimal(4_620), ""),
        (Decimal(395_450), Decimal(0), "ｻﾝﾜﾋﾞﾙｶﾝﾘ(ｶ"),
    ]


def test_a_date_given_in_year_month_and_day_columns() -> None:
    """PayPay銀行's download: 操作日(年), 操作日(月), 操作日(日) and no date column."""
    text = (
        '"操作日(年)","操作日(月)","操作日(日)","摘要","お支払金額","お預り金額","残高"\r\n'
        '"2025","6","6","ｶ)ﾀｲﾖｳﾒﾃﾞｲｶﾙ","","36300","7503237"\r\n'
    )
    (line,) = read_statement(text.encode("cp932")).lines
    assert (line.date, line.deposit, line.payer) == (
        dt.date(2025, 6, 6),
        Decimal(36_300),
        "ｶ)ﾀｲﾖｳﾒﾃﾞｲｶﾙ",
    )
