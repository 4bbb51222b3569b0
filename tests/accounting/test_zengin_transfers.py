"""総合振込 files: the byte layout of the published specification, read back identically,
and a 支払予定表 checked row by row before anything is written.

The layout below is written from 全銀協制定ファイルフォーマット【総合振込】 (as banks
publish it, e.g. 群馬銀行), independently of the module's own slicing: (name, size,
kind) in record order, N numeric right-aligned zero-filled, C text left-aligned
space-filled in the 全銀 character set.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from typing import Any

import pytest

from keiri_agent.accounting.zengin_transfers import (
    Account,
    Remitter,
    Transfer,
    read_transfer_file,
    write_transfer_file,
    zengin_text,
)
from keiri_agent.blocks.base import BlockContext
from keiri_agent.blocks.zengin_transfer import ZenginTransferBlock
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError

HEADER = [
    ("データ区分", 1, "N"),
    ("種別コード", 2, "N"),
    ("コード区分", 1, "N"),
    ("振込依頼人コード", 10, "N"),
    ("振込依頼人名", 40, "C"),
    ("振込指定日", 4, "N"),
    ("仕向銀行番号", 4, "N"),
    ("仕向銀行名", 15, "C"),
    ("仕向支店番号", 3, "N"),
    ("仕向支店名", 15, "C"),
    ("預金種目", 1, "N"),
    ("口座番号", 7, "N"),
    ("ダミー", 17, "C"),
]
DATA = [
    ("データ区分", 1, "N"),
    ("被仕向銀行番号", 4, "N"),
    ("被仕向銀行名", 15, "C"),
    ("被仕向支店番号", 3, "N"),
    ("被仕向支店名", 15, "C"),
    ("手形交換所番号", 4, "N"),
    ("預金種目", 1, "N"),
    ("口座番号", 7, "N"),
    ("受取人名", 30, "C"),
    ("振込金額", 10, "N"),
    ("新規コード", 1, "N"),
    ("顧客コード1", 10, "N"),
    ("顧客コード2", 10, "N"),
    ("振込指定区分", 1, "N"),
    ("識別表示", 1, "C"),
    ("ダミー", 7, "C"),
]
TRAILER = [
    ("データ区分", 1, "N"),
    ("合計件数", 6, "N"),
    ("合計金額", 12, "N"),
    ("ダミー", 101, "C"),
]
END = [("データ区分", 1, "N"), ("ダミー", 119, "C")]
ZENGIN_CHARS = re.compile(r"[0-9A-Z ()\-./ｦｱ-ﾝﾞﾟ]*")


def fields(record: bytes, layout: list[tuple[str, int, str]]) -> dict[str, str]:
    assert sum(size for _, size, _ in layout) == 120
    found: dict[str, str] = {}
    position = 0
    for name, size, kind in layout:
        raw = record[position : position + size]
        position += size
        text = raw.decode("cp932")
        assert len(text) == size, f"{name}: one byte per character"
        if kind == "N":
            assert text.isdigit(), f"{name} {text!r} is not numeric"
        else:
            assert ZENGIN_CHARS.fullmatch(text), f"{name} {text!r} has characters outside 全銀"
            assert text == text.rstrip() + " " * (size - len(text.rstrip())), name
        found[name] = text
    return found


def account(bank: str, branch: str, kind: str = "1", number: str = "1234567") -> Account:
    names = {"0001": "ﾐｽﾞﾎ", "0005": "ﾐﾂﾋﾞｼﾕ-ｴﾌｼﾞｴｲ", "0010": "ﾘｿﾅ"}
    return Account(bank, names[bank], branch, "ｼﾃﾝ", kind, number)


REMITTER = Remitter("0012345678", "ｶ)ｹｲﾘｻﾝﾌﾟﾙ", dt.date(2026, 11, 30), account("0005", "001", "2"))
TRANSFERS = [
    Transfer(account("0001", "210"), "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110000),
    Transfer(account("0010", "299", "2", "0765432"), "ﾐﾅﾄｲﾝｻﾂ(ｶ", 52800, "123"),
    Transfer(account("0001", "240"), "ｽｽﾞｷ ｲﾁﾛｳ", 9_999_999_999),
]


def test_records_follow_the_published_layout() -> None:
    data = write_transfer_file(REMITTER, TRANSFERS)
    lines = data.split(b"\r\n")
    assert lines[-1] == b"" and all(len(line) == 120 for line in lines[:-1])
    header, *body, trailer, end = lines[:-1]

    head = fields(header, HEADER)
    assert (head["データ区分"], head["種別コード"], head["コード区分"]) == ("1", "21", "0")
    assert head["振込依頼人コード"] == "0012345678"
    assert head["振込依頼人名"].rstrip() == "ｶ)ｹｲﾘｻﾝﾌﾟﾙ"
    assert head["振込指定日"] == "1130"
    assert (head["仕向銀行番号"], head["仕向支店番号"], head["預金種目"]) == ("0005", "001", "2")
    assert head["口座番号"] == "7654321" or head["口座番号"] == "1234567"
    assert head["ダミー"] == " " * 17

    assert len(body) == 3
    first, second, third = (fields(record, DATA) for record in body)
    assert first["データ区分"] == "2" and first["被仕向銀行番号"] == "0001"
    assert first["被仕向支店番号"] == "210" and first["手形交換所番号"] == "0000"
    assert first["受取人名"].rstrip() == "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"
    assert first["振込金額"] == "0000110000"
    assert first["顧客コード1"] == "0000000000" and first["振込指定区分"] == "7"
    assert first["識別表示"] == " " and first["ダミー"] == " " * 7
    assert second["預金種目"] == "2" and second["口座番号"] == "0765432"
    assert second["顧客コード1"] == "0000000123"
    assert third["振込金額"] == "9999999999"

    tail = fields(trailer, TRAILER)
    assert tail["データ区分"] == "8" and tail["合計件数"] == "000003"
    assert int(tail["合計金額"]) == 110000 + 52800 + 9_999_999_999
    assert tail["ダミー"] == " " * 101
    last = fields(end, END)
    assert last["データ区分"] == "9" and last["ダミー"] == " " * 119


@pytest.mark.parametrize("line_breaks", [True, False])
def test_a_written_file_reads_back_identically(line_breaks: bool) -> None:
    data = write_transfer_file(REMITTER, TRANSFERS, line_breaks=line_breaks)
    assert len(data) == 6 * (122 if line_breaks else 120)
    back = read_transfer_file(data, year=2026)
    assert back.remitter == REMITTER
    assert back.transfers == TRANSFERS
    assert (back.count, back.total) == (3, sum(t.amount for t in TRANSFERS))


def test_a_damaged_file_is_refused_on_reading() -> None:
    data = write_transfer_file(REMITTER, TRANSFERS)
    with pytest.raises(ValueError, match="trailer"):
        read_transfer_file(data.replace(b"0000110000", b"0000110001"), year=2026)
    with pytest.raises(ValueError, match="120 bytes"):
        read_transfer_file(data[:-5], year=2026)
    records = data.split(b"\r\n")
    with pytest.raises(ValueError, match="order"):
        read_transfer_file(b"\r\n".join([records[1], records[0], *records[2:]]), year=2026)


def test_a_field_that_does_not_fit_is_never_cut_silently() -> None:
    too_long = Transfer(account("0001", "210"), "ｱ" * 31, 1)
    with pytest.raises(ValueError):
        write_transfer_file(REMITTER, [too_long])
    with pytest.raises(ValueError):
        write_transfer_file(REMITTER, [Transfer(account("0001", "210"), "ﾔﾏﾀﾞ", 10**10)])


@pytest.mark.parametrize(
    ("given", "written"),
    [
        ("カ）ヤマダショウジ", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        ("ｶ)ﾔﾏﾀﾞｼｮｳｼﾞ", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ"),
        ("やまだ　たろう", "ﾔﾏﾀﾞ ﾀﾛｳ"),
        ("スーパーキッチン", "ｽ-ﾊﾟ-ｷﾂﾁﾝ"),
        ("ヴィーナス", "ｳﾞｲ-ﾅｽ"),
        ("ｴｰｽ.ｺｰﾎﾟﾚｰｼｮﾝ", "ｴ-ｽ.ｺ-ﾎﾟﾚ-ｼﾖﾝ"),
        ("abc商会".replace("商会", "ｼﾖｳｶｲ"), "ABCｼﾖｳｶｲ"),
    ],
)
def test_names_are_written_in_the_zengin_character_set(given: str, written: str) -> None:
    assert zengin_text(given) == written


@pytest.mark.parametrize(
    ("given", "bad"), [("株式会社ヤマダ", "株"), ("エー・ビー", "・"), ("A&B", "&")]
)
def test_a_character_with_no_zengin_form_is_named(given: str, bad: str) -> None:
    with pytest.raises(ValueError) as error:
        zengin_text(given)
    assert str(error.value) == bad


# --- the block, on a 支払予定表 -----------------------------------------------------

REMITTER_INPUT = {
    "code": "1234567890",
    "name": "カ）ケイリサンプル",
    "bank_code": "0005",
    "branch_code": "001",
    "account_type": "当座",
    "number": "7654321",
}


def row(**overrides: Any) -> dict[str, Any]:
    base = {
        "支払先": "株式会社やまだ商事",
        "口座名義（カナ）": "カ）ヤマダショウジ",
        "銀行コード": "0001",
        "銀行名": "みずほ銀行",
        "支店コード": "210",
        "支店名": "渋谷支店",
        "預金種目": "普通",
        "口座番号": "1234567",
        "支払金額": 110000,
        "支払日": "2026-11-30",
    }
    return {**base, **overrides}


def run(payments: Any, **inputs: Any) -> dict[str, Any]:
    ctx = BlockContext("r", "p", "pay", Settings(), logging.getLogger("test"))
    return ZenginTransferBlock().run(
        {"payments": payments, "remitter": REMITTER_INPUT, **inputs}, ctx
    )


def test_a_schedule_file_becomes_a_transfer_file_that_reads_back() -> None:
    text = (
        "支払予定表 2026年11月分\n"
        "仕入先名,振込先名義,金融機関コード,支店番号,口座種別,口座番号,振込金額,振込日\n"
        'やまだ商事,ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ,1,210,普通,1234567,"110,000",2026/11/30\n'
        "みなと印刷,ミナトインサツ（カ,0010,299,当座,765432,52800,2026/11/30\n"
        "すずき設計,スズキ　イチロウ,0001,240,1,0012345,0,2026/11/30\n"
    ).encode("cp932")
    out = run({"name": "payments.csv", "data": text})
    back = read_transfer_file(out["file"]["data"], year=2026)
    assert [
        (t.account.bank_code, t.account.branch_code, t.name, t.amount) for t in back.transfers
    ] == [
        ("0001", "210", "ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", 110000),
        ("0010", "299", "ﾐﾅﾄｲﾝｻﾂ(ｶ", 52800),
    ]
    assert back.transfers[0].account.bank_name == "ﾐｽﾞﾎ"
    assert back.remitter.transfer_date == dt.date(2026, 11, 30)
    assert back.remitter.account.account_type == "2"
    assert out["summary"]["合計金額"] == 162800 and out["summary"]["件数"] == 2
    assert [(r["行"], r["理由"]) for r in out["skipped"]] == [(3, "支払金額が 0 円")]


def test_every_wrong_row_is_listed_and_no_file_is_made() -> None:
    payments = [
        row(),
        row(銀行コード="0999"),
        row(銀行名="三井住友銀行"),
        row(支店コード="999"),
        row(**{"口座名義（カナ）": "株式会社やまだ商事"}),
        row(預金種目="定期"),
        row(口座番号="12345678"),
        row(支払金額="11万円"),
        row(支払金額=1000.5),
    ]
    with pytest.raises(BlockError) as caught:
        run(payments)
    message = caught.value.message
    assert "8 行" in message
    assert "2 行目: 銀行コード 0999 は金融機関コードの一覧" in message
    assert "3 行目: 銀行コード 0001 は「みずほ」です（表の銀行名は「三井住友銀行」）" in message
    assert "4 行目: 支店コード 999 は「みずほ」の支店の一覧" in message
    assert "5 行目: 受取人名「株式会社やまだ商事」の「株」は振込データに使えません" in message
    assert "6 行目: 預金種目 '定期' がわかりません" in message
    assert "7 行目: 口座番号 '12345678' は 7 桁まで" in message
    assert "8 行目: 支払金額 '11万円' を金額として読めません" in message
    assert "9 行目: 支払金額 1000.5 は 0 以上の円単位の整数" in message
    assert caught.value.details["rows"] == [2, 3, 4, 5, 6, 7, 8, 9]


def test_a_code_is_filled_in_only_from_a_name_that_names_one_bank_or_branch() -> None:
    out = run([row(銀行コード="", 支店コード="", 支店名="新宿")])
    assert out["transfers"][0]["銀行コード"] == "0001"
    assert out["transfers"][0]["支店コード"] == "240"
    assert "銀行名から銀行コード 0001 を補いました" in out["transfers"][0]["備考"]
    with pytest.raises(BlockError, match="支店名「存在しない」から"):
        run([row(支店コード="", 支店名="存在しない")])


def test_a_long_name_is_cut_to_thirty_characters_and_says_so() -> None:
    name = "トクテイヒエイリカツドウホウジン　ニホンケイリシエンセンター"
    out = run([row(**{"口座名義（カナ）": name})])
    assert len(out["transfers"][0]["受取人名"]) == 30
    assert "受取人名を 30 文字に切り詰めました" in out["transfers"][0]["備考"]


def test_a_holiday_is_refused_with_the_business_days_around_it() -> None:
    with pytest.raises(BlockError) as caught:
        run([row(支払日="2026-11-23")])
    assert "2026-11-23 は勤労感謝の日" in caught.value.message
    assert caught.value.hint == "前営業日 2026-11-20 か翌営業日 2026-11-24 にしてください"
    with pytest.raises(BlockError, match="2027-01-02 は土曜"):
        run([row()], transfer_date="2027-01-02")


def test_the_transfer_day_comes_from_the_table_only_when_it_is_one_day() -> None:
    two_days = [row(), row(支払日="2026-12-10")]
    with pytest.raises(BlockError) as caught:
        run(two_days)
    assert "振込指定日が決まりません" in caught.value.message
    assert "2026-11-30、2026-12-10" in (caught.value.hint or "")
    out = run(two_days, transfer_date="2026-12-10")
    assert [r["行"] for r in out["transfers"]] == [2]
    assert out["skipped"][0]["理由"] == "支払日が 2026-11-30（振込指定日と違う）"
    with pytest.raises(BlockError, match="2026-12-01 に振り込む行がありません"):
        run(two_days, transfer_date="2026-12-01")


def test_a_missing_column_and_a_wrong_remitter_are_named() -> None:
    without_type = [{k: v for k, v in row().items() if k != "預金種目"}]
    with pytest.raises(BlockError, match="「預金種目」の列が見つかりません"):
        run(without_type)
    ctx = BlockContext("r", "p", "pay", Settings(), logging.getLogger("test"))
    bad = {**REMITTER_INPUT, "code": "ABC", "branch_code": "998"}
    with pytest.raises(BlockError) as caught:
        ZenginTransferBlock().run({"payments": [row()], "remitter": bad}, ctx)
    assert "委託者コード 'ABC'" in caught.value.message
    assert "支店コード 998" in caught.value.message


def test_a_columns_input_that_is_not_role_to_header_is_refused() -> None:
    with pytest.raises(BlockError, match=r"columns は 役割: 列名 の対応"):
        run([row()], columns={"kana": 3})
    out = run([{**row(), "振込先": "ヤマダ　タロウ"}], columns={"kana": "振込先"})
    assert out["transfers"][0]["受取人名"] == "ﾔﾏﾀﾞ ﾀﾛｳ"
