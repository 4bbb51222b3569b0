"""Personal data in research notes and log lines: what used to be stored, what is now.

* A research run over a knowledge base whose document carries a phone number, an
  e-mail address and a マイナンバー → the note's summary and source passages used
  to be written to ``research_notes`` verbatim (and the summary into the run's
  ``partial_summary`` event) → now each is replaced by a typed placeholder before
  the note is stored, and ``note_saved`` / ``done`` say how many of each kind.
* A log line carrying such data (a message, an exception's text) used to be
  written to stderr as it was → now the ``keiri_agent`` handler replaces it.
* The rules read structure, so accounting text stays as written: a 12-digit number
  without a valid check digit, an amount (``1,234,567,890,123``), an invoice number
  (``T`` + 法人番号), a JAN code, a Luhn-invalid 16-digit number, seven digits that are
  an amount (regression guards against the filter's own false positives).

Every vector below is checked against a reference written here from the published
formulas (not against ``keiri_agent.pii``); the hand computations are in comments.
"""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from keiri_agent.agents.research.agent import DeepResearchAgent, progress_line
from keiri_agent.agents.research.models import DocSnippet, ResearchNote
from keiri_agent.agents.research.notes import SqlNoteStore
from keiri_agent.agents.research.sources.internal import open_internal
from keiri_agent.config import Settings, load_settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.events import Event
from keiri_agent.logs import LOGGER_NAME, configure_logging
from keiri_agent.pii import (
    KINDS,
    PLACEHOLDERS,
    corporate_number_check_digit,
    find,
    is_card_number,
    is_corporate_number,
    is_my_number,
    luhn_valid,
    my_number_check_digit,
    redact,
)
from keiri_agent.search.knowledge_base import KnowledgeBase

MY_NUMBER = "［マイナンバー］"
PHONE = "［電話番号］"
MAIL = "［メール］"
ACCOUNT = "［口座番号］"
CARD = "［カード番号］"


# ------------------------------------------------------------------ references
def reference_my_number_check(first11: str) -> int:
    """個人番号の検査用数字 (番号法施行令 / 総務省令): weights left to right
    6,5,4,3,2,7,6,5,4,3,2 (Q(n) = n+1 for n ≤ 6, n−5 for n ≥ 7, n counted from the
    right); 11 − (sum mod 11), or 0 when the remainder is 0 or 1."""
    weights = (6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2)
    remainder = sum(int(d) * w for d, w in zip(first11, weights, strict=True)) % 11
    return 0 if remainder <= 1 else 11 - remainder


def reference_luhn(number: str) -> bool:
    digits = [int(d) for d in number]
    odd = digits[-1::-2]
    even = [sum(divmod(2 * d, 10)) for d in digits[-2::-2]]
    return (sum(odd) + sum(even)) % 10 == 0


# 123456789018: 1·6 + 2·5 + 3·4 + 4·3 + 5·2 + 6·7 + 7·6 + 8·5 + 9·4 + 0·3 + 1·2 = 212;
#               212 mod 11 = 3 → 11 − 3 = 8
# 100000000200: 1·6 + 2·3 = 12; 12 mod 11 = 1 (≤ 1) → 0
# 111111111118: 6+5+4+3+2+7+6+5+4+3+2 = 47; 47 mod 11 = 3 → 8
VALID_MY_NUMBERS = ("123456789018", "100000000200", "111111111118")
# 7000012050002 (国税庁's own 法人番号): base 000012050002, from the right odd places
# ×1, even ×2: 2 + 5 + 2 + 1·2 = 11; 11 mod 9 = 2 → 9 − 2 = 7 (the first digit)
NTA_CORPORATE_NUMBER = "7000012050002"
# 4111111111111111: the doubled places are 4 and seven 1s (8 + 14), the others eight
# 1s (8): 30, a multiple of 10. 4111111111111112 gives 31.
CARDS = {
    "4111111111111111": "Visa",
    "5555555555554444": "Mastercard",
    "3530111333300000": "JCB",
    "378282246310005": "American Express",
}
# 4789879797979: a valid 法人番号 (odd places 52 + even 2·44 = 140; 140 mod 9 = 5 →
# 9 − 5 = 4) that is also Luhn-valid (sum 90) with Visa's prefix and 13 digits
CORPORATE_AND_LUHN = "4789879797979"


def test_the_references_agree_with_the_hand_computations() -> None:
    for number in VALID_MY_NUMBERS:
        assert reference_my_number_check(number[:11]) == int(number[11])
        assert my_number_check_digit(number[:11]) == int(number[11])
    assert corporate_number_check_digit(NTA_CORPORATE_NUMBER[1:]) == 7
    assert is_corporate_number(NTA_CORPORATE_NUMBER)
    assert is_corporate_number(CORPORATE_AND_LUHN) and reference_luhn(CORPORATE_AND_LUHN)
    for number in CARDS:
        assert reference_luhn(number) and luhn_valid(number) and is_card_number(number)
    assert not reference_luhn("4111111111111112") and not luhn_valid("4111111111111112")


# ------------------------------------------------------------------ マイナンバー
@pytest.mark.parametrize("number", VALID_MY_NUMBERS)
def test_a_my_number_with_a_valid_check_digit_is_replaced(number: str) -> None:
    assert is_my_number(number)
    grouped = f"{number[:4]} {number[4:8]} {number[8:]}"
    text = f"個人番号は{number}、カード表記は{grouped}です。"
    result = redact(text)
    assert result.text == f"個人番号は{MY_NUMBER}、カード表記は{MY_NUMBER}です。"
    assert result.counts == {"my_number": 2}


def test_twelve_digits_without_a_valid_check_digit_stay() -> None:
    # 123456789012: the check digit would be 8 (above), not 2
    for wrong in range(10):
        number = f"12345678901{wrong}"
        assert is_my_number(number) is (wrong == 8)
    text = "伝票番号 123456789012 と 1234-5678-9012 を確認"
    assert redact(text).text == text


@hypothesis_settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet="0123456789", min_size=11, max_size=11), st.integers(0, 9))
def test_my_number_check_digit_matches_the_reference(first11: str, last: int) -> None:
    valid = reference_my_number_check(first11) == last
    result = redact(f"番号 {first11}{last} です")
    assert (result.counts == {"my_number": 1}) is valid


def test_my_number_inside_codes_amounts_and_longer_numbers_stays() -> None:
    number = VALID_MY_NUMBERS[0]
    for text in (
        f"INV-{number}",  # a document code
        f"¥{number}",  # an amount
        f"{number}円",
        f"{number}.5",
        f"9{number}",  # 13 digits
        f"{number}0",
        f"1-{number}",
        f"T{number}9",
    ):
        assert find(text) == [], text


# ------------------------------------------------------------------ 法人番号・amounts
def test_invoice_numbers_and_amounts_stay() -> None:
    text = (
        f"登録番号 T{NTA_CORPORATE_NUMBER}（法人番号 {NTA_CORPORATE_NUMBER}）"
        "請求金額 1,234,567,890,123 円、税込 ¥1,234,567、2024-01-15 支払、"
        "〒060-0001、請求書番号 INV-2024-000123、勘定科目コード 1234567"
    )
    assert redact(text).text == text


def test_a_valid_corporate_number_is_not_a_card_number() -> None:
    assert not is_card_number(CORPORATE_AND_LUHN)
    assert find(f"取引先の法人番号 {CORPORATE_AND_LUHN}") == []


def test_a_jan_code_is_not_a_card_number() -> None:
    # 4901234567894: JAN check 4+27+0+3+2+9+4+15+6+21+8+27 = 126 → 4 (126 + 4 = 130);
    # Luhn: doubled places 9,7,5,3,1,9 → 9+5+1+6+2+9 = 32, the others 28: 60, valid,
    # and 49… is Visa's prefix with a length Visa once issued
    jan = "4901234567894"
    assert reference_luhn(jan)
    assert redact(f"商品 JAN {jan} 数量 12").text == f"商品 JAN {jan} 数量 12"


# ------------------------------------------------------------------ cards
@pytest.mark.parametrize("number", sorted(CARDS))
def test_a_luhn_valid_card_number_is_replaced_in_every_layout(number: str) -> None:
    if len(number) == 15:
        grouped = f"{number[:4]} {number[4:10]} {number[10:]}"
    else:
        grouped = " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    for layout in (number, grouped, grouped.replace(" ", "-")):
        result = redact(f"カード番号: {layout} 有効期限 12/28")
        assert result.text == f"カード番号: {CARD} 有効期限 12/28", layout
        assert result.counts == {"card": 1}


def test_a_luhn_invalid_sixteen_digit_number_stays() -> None:
    for text in ("カード 4111111111111112", "カード 4111 1111 1111 1112", "注文 1234567890123456"):
        assert redact(text).text == text


# ------------------------------------------------------------------ phone numbers
@pytest.mark.parametrize(
    "phone",
    [
        "03-1234-5678",
        "045-123-4567",
        "0467-12-3456",
        "090-1234-5678",
        "080 1234 5678",
        "050-1234-5678",
        "0120-123-456",
        "0800-123-4567",
        "(03)1234-5678",
        "03(1234)5678",
        "0312345678",
        "09012345678",
        "+81-3-1234-5678",
        "+81 90 1234 5678",
        "+81(0)90-1234-5678",
        "+819012345678",
        "０３－１２３４－５６７８",
        "０９０ー１２３４ー５６７８",
        "＋８１　９０－１２３４－５６７８",
    ],
)
def test_japanese_phone_numbers_are_replaced(phone: str) -> None:
    result = redact(f"連絡先（TEL）：{phone}まで。")
    assert result.text == f"連絡先（TEL）：{PHONE}まで。"
    assert result.counts == {"phone": 1}


@pytest.mark.parametrize(
    "text",
    [
        "03-1234-567",  # too short
        "0001234567",  # 00 is no area code
        "090-123-45678",  # a mobile number groups 3-4-4
        "03-12345-6789",  # area code and exchange make six digits
        "2024-01-15",
        "〒100-0001",
        "1,234,567,890",
        "口座 0123456",
    ],
)
def test_digit_runs_that_are_not_phone_numbers_stay(text: str) -> None:
    assert [f.kind for f in find(text)] in ([], ["bank_account"])
    assert "phone" not in redact(text).counts


# ------------------------------------------------------------------ e-mail
def test_email_addresses_are_replaced_full_width_too() -> None:
    text = "問い合わせ: yamada.taro+keiri@example.co.jp、ｓａｔｏ＠ｅｘａｍｐｌｅ．ｃｏｍ。"
    result = redact(text)
    assert result.text == f"問い合わせ: {MAIL}、{MAIL}。"
    assert result.counts == {"email": 2}
    for other in ("@dataclass", "価格@100円", "user@localhost"):
        assert redact(other).text == other


# ------------------------------------------------------------------ bank accounts
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("三菱UFJ銀行 新宿支店 普通 1234567", f"三菱UFJ銀行 新宿支店 普通 {ACCOUNT}"),
        ("口座番号：1234567", f"口座番号：{ACCOUNT}"),
        ("当座預金 No.7654321", f"当座預金 No.{ACCOUNT}"),
        ("口座（普通）１２３４５６７", f"口座（普通）{ACCOUNT}"),
        ("普通預金 001-1234567", f"普通預金 001-{ACCOUNT}"),
        ("口座番号は 0012345 です", f"口座番号は {ACCOUNT} です"),
    ],
)
def test_bank_account_numbers_after_their_words_are_replaced(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.counts == {"bank_account": 1}


@pytest.mark.parametrize(
    "text",
    [
        "普通は1234567円です",  # an amount
        "当座比率 1234567",
        "口座数 1234567",
        "普通 12345678",  # eight digits
        "取引番号 1234567",  # no account word
        "当座 1,234,567",
    ],
)
def test_seven_digits_that_are_not_an_account_stay(text: str) -> None:
    assert redact(text).text == text


# ------------------------------------------------------------------ kinds and text
def test_only_the_enabled_kinds_are_replaced_and_the_rest_is_kept_as_written() -> None:
    text = "ＴＥＬ ０３－１２３４－５６７８／mail a@example.jp／番号 123456789018"
    only_email = f"ＴＥＬ ０３－１２３４－５６７８／mail {MAIL}／番号 123456789018"
    assert redact(text, ["email"]).text == only_email
    assert redact(text, []).text == text
    everything = redact(text)
    assert everything.text == f"ＴＥＬ {PHONE}／mail {MAIL}／番号 {MY_NUMBER}"
    assert everything.counts == {"my_number": 1, "phone": 1, "email": 1}
    assert redact(everything.text).text == everything.text  # placeholders are not found again
    assert set(PLACEHOLDERS) == set(KINDS)
    with pytest.raises(ValueError, match="unknown PII kind"):
        redact(text, ["address"])


def test_an_email_address_holding_digits_is_one_email() -> None:
    result = redact("0312345678@example.jp")
    assert result.text == MAIL and result.counts == {"email": 1}


# ------------------------------------------------------------------ settings
def test_the_setting_lists_kinds_comma_separated_and_empty_disables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().logs.pii_filter == KINDS
    monkeypatch.setenv("KEIRI_AGENT_PII_FILTER", "phone, email")
    assert load_settings().logs.pii_filter == ("phone", "email")
    monkeypatch.setenv("KEIRI_AGENT_PII_FILTER", "")
    assert load_settings().logs.pii_filter == ()
    monkeypatch.setenv("KEIRI_AGENT_PII_FILTER", "phone,address")
    with pytest.raises(ConfigurationError, match="KEIRI_AGENT_PII_FILTER"):
        load_settings()


# ------------------------------------------------------------------ note store
def _note(text: str) -> ResearchNote:
    snippet = DocSnippet(ref="a.md#0", text=text, title="名簿", heading=f"連絡先 {text}")
    return ResearchNote(
        session_id="s1", step_no=0, query="連絡先", summary_md=text, sources=(snippet,)
    )


def test_the_note_store_keeps_notes_verbatim_when_the_filter_is_off(tmp_path: Path) -> None:
    text = "電話 03-1234-5678"
    off = SqlNoteStore.from_settings(Settings(home=tmp_path, pii_filter=()))
    assert off.add(_note(text)).summary_md == text
    on = SqlNoteStore.from_settings(Settings(home=tmp_path, pii_filter=("phone",)))
    saved = on.add(_note(text))
    assert saved.summary_md == f"電話 {PHONE}" and saved.pii_redacted == {"phone": 3}
    kept = on.notes("s1")[-1]
    assert kept.summary_md == f"電話 {PHONE}"
    assert kept.sources[0].text == f"電話 {PHONE}"
    assert kept.sources[0].heading == f"連絡先 電話 {PHONE}"


# ------------------------------------------------------------------ log lines
def test_log_lines_are_redacted_before_they_are_written(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    logger = logging.getLogger(f"{LOGGER_NAME}.pii_test")
    try:
        configure_logging("INFO")
        logger.info("問い合わせ %s / %s", "03-1234-5678", "yamada@example.co.jp")
        try:
            raise ValueError("カード 4111 1111 1111 1111 を拒否")
        except ValueError:
            logger.warning("failed for %r", "口座番号 1234567", exc_info=True)
        configure_logging("INFO", pii_kinds=())
        logger.info("filter off: %s", "03-1234-5678")
    finally:
        configure_logging("WARNING")
    written = stream.getvalue()
    assert f"問い合わせ {PHONE} / {MAIL}" in written
    assert f"口座番号 {ACCOUNT}" in written and f"カード {CARD} を拒否" in written
    assert "yamada@example.co.jp" not in written and "4111 1111" not in written
    assert "filter off: 03-1234-5678" in written


# ------------------------------------------------------------------ a research run
CONTACT_DOC = """# 経費精算の問い合わせ先

経費精算の問い合わせ先は経理部の山田（電話 03-1234-5678、メール yamada.taro@example.co.jp）です。
経費精算の振込先登録には山田の個人番号 123456789018 を使います。
"""


def test_research_notes_are_stored_without_personal_data(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", provider="offline")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "contacts.md").write_text(CONTACT_DOC, encoding="utf-8")
    KnowledgeBase.for_workspace(settings, "pii").index_files([docs], "manual")
    store = SqlNoteStore.from_settings(settings)
    agent = DeepResearchAgent(settings, tools=[open_internal(settings)], store=store)
    events: list[Event] = []

    result = agent.research("経費精算の問い合わせ先を調べて", on_event=events.append)

    kept = SqlNoteStore.from_settings(settings).notes(result.session_id)
    assert kept, result.report_md
    stored = json.dumps(
        [[note.summary_md, [s.to_dict() for s in note.sources]] for note in kept],
        ensure_ascii=False,
    )
    summaries = "".join(note.summary_md for note in kept)
    shown = json.dumps([event.to_dict() for event in events], ensure_ascii=False)
    for value in ("03-1234-5678", "yamada.taro@example.co.jp", "123456789018"):
        assert value not in stored
        assert value not in result.report_md
        assert value not in shown
    for placeholder in (PHONE, MAIL, MY_NUMBER):
        assert placeholder in stored
    assert PHONE in summaries and MAIL in summaries
    saved = [event for event in events if event.kind == "note_saved"]
    totals: dict[str, int] = {}
    for event in saved:
        for kind, count in event.payload["pii_redacted"].items():
            totals[kind] = totals.get(kind, 0) + count
    assert totals["phone"] >= 1 and totals["email"] >= 1 and totals["my_number"] >= 1
    done = next(event for event in events if event.kind == "done")
    assert done.payload["pii_redacted"] == totals
    line = progress_line(saved[0])
    assert line is not None and "個人情報を伏せ字にしました" in line and "電話番号" in line
