"""English words for the words of Japanese category values and column names, as data.

A colleague may ask in English about a ledger whose headers and values are Japanese:
"the Nagoya branch" for 名古屋支店, "electricity" for 電気, "payments to sole
proprietors" for 個人事業主, "the estimated amount" for 見積金額, "urgent requests" for
至急. ``WORD_ENGLISH`` says, for a word a value or a name may be made of (places, kinds
of utility, payment means, counterparties, offices, statuses, the words of back-office
column names), the English a request may use; ``english_readings`` reads a whole value
or name as those words (名古屋支店 → "nagoya branch", 見積金額 → "estimated amount"). One
with a word outside the table has no English reading: nothing is guessed.
"""

from __future__ import annotations

import itertools
import re

from keiri_agent.agents.analysis.reasoning.offline.ja_english_glossary import GLOSSARY

# A word inside a Japanese category value → English words for it.
WORD_ENGLISH: dict[str, tuple[str, ...]] = {
    # places
    "東京": ("tokyo",),
    "大阪": ("osaka",),
    "名古屋": ("nagoya",),
    "福岡": ("fukuoka",),
    "札幌": ("sapporo",),
    "仙台": ("sendai",),
    "横浜": ("yokohama",),
    "広島": ("hiroshima",),
    "京都": ("kyoto",),
    "神戸": ("kobe",),
    "埼玉": ("saitama",),
    "千葉": ("chiba",),
    "川崎": ("kawasaki",),
    "北海道": ("hokkaido",),
    "沖縄": ("okinawa",),
    "関東": ("kanto",),
    "関西": ("kansai",),
    "中部": ("chubu",),
    "九州": ("kyushu",),
    "東北": ("tohoku",),
    "四国": ("shikoku",),
    # offices
    "本社": ("head office", "headquarters", "hq"),
    "支店": ("branch", "branch office"),
    "支社": ("branch", "branch office"),
    "営業所": ("sales office", "office"),
    "倉庫": ("warehouse",),
    "工場": ("factory", "plant"),
    # utilities
    "電気": ("electricity", "electric", "power"),
    "ガス": ("gas",),
    "水道": ("water",),
    # payment means
    "現金": ("cash",),
    "振込": ("bank transfer", "transfer", "wire transfer"),
    "口座振替": ("direct debit", "auto debit", "automatic debit"),
    "小切手": ("cheque", "check"),
    "手形": ("promissory note", "bill"),
    # counterparties
    "個人事業主": ("sole proprietor", "sole trader", "self-employed", "freelancer"),
    "法人": ("corporation", "corporate", "company"),
    "個人": ("individual",),
    # statuses
    "承認済": ("approved",),
    "承認済み": ("approved",),
    "却下": ("rejected", "declined"),
    "審査中": ("under review", "in review"),
    "申請中": ("pending",),
    "未払": ("unpaid",),
    "未払い": ("unpaid",),
    "支払済": ("paid",),
    "支払済み": ("paid",),
    "入金済": ("received",),
    "完了": ("completed", "done"),
    "承認待ち": ("waiting for approval", "awaiting approval", "pending approval"),
    "未承認": ("unapproved", "not approved"),
    "利用中": ("in use", "active"),
    "使用中": ("in use", "active"),
    "稼働中": ("in operation", "running", "active"),
    "契約中": ("under contract", "active"),
    "対応中": ("in progress", "being handled"),
    # carriers
    "佐川急便": ("sagawa", "sagawa express"),
    "ヤマト運輸": ("yamato", "yamato transport", "kuroneko"),
    "日本郵便": ("japan post",),
    "西濃運輸": ("seino",),
    # words of column names
    "見積": ("estimated", "estimate", "quoted"),
    "登録": ("registration",),
    "手数料": ("commission", "fee", "fees"),
    "番号": ("number", "numbers", "no"),
    "戻入済": ("reversed",),
    "承認": ("approved",),
    "申請": ("requested", "claimed"),
    "部品": ("parts",),
    "部品代": ("parts cost", "parts"),
    "工賃": ("labour", "labor", "labour cost", "labor cost"),
    "出張費": ("call-out fee", "travel cost", "travel expense"),
    "金額": ("amount",),
    "額": ("amount",),
    "重量": ("weight",),
    "重さ": ("weight",),
    "至急": ("urgent", "rush"),
    "担当者": ("person in charge", "staff member", "handler"),
    "担当営業": ("sales rep", "salesperson", "account manager"),
    "営業担当": ("sales rep", "salesperson", "account manager"),
    "税抜": ("pre-tax", "tax-exclusive", "tax-excluded", "net of tax"),
    "税込": ("tax-inclusive", "tax-included", "gross"),
    "消費税": ("consumption tax", "sales tax"),
    "実支払": ("actual payment", "actually paid"),
    "支払": ("payment",),
    "入金": ("received", "receipt"),
    "請求": ("invoiced", "billed"),
    "発行": ("issuing", "issue"),
    "依頼": ("request",),
    "納品": ("delivery",),
    "数量": ("quantity",),
    "単価": ("unit price",),
    "料金": ("charge", "fee"),
    "基本": ("base", "basic"),
    "加算": ("extra", "surcharge"),
    "合計": ("total",),
    "配送業者": ("carrier", "courier", "delivery company", "shipping company"),
    "宛先": ("destination", "recipient"),
    "都道府県": ("prefecture",),
    "部門": ("department", "office", "division"),
    "部署": ("department",),
    "方法": ("method",),
    "購入先": ("supplier", "vendor"),
    "勘定科目": ("account", "account title"),
    "日": ("date",),
}
WORD_ENGLISH = {**GLOSSARY, **WORD_ENGLISH}  # the words above win over the glossary's
_BY_FIRST: dict[str, list[str]] = {}  # the words starting with each character, longest first
for _word in sorted(WORD_ENGLISH, key=len, reverse=True):
    _BY_FIRST.setdefault(_word[0], []).append(_word)
_MAX_READINGS = 12


def _pieces(value: str) -> list[tuple[str, ...]]:
    """The English of each ``WORD_ENGLISH`` word of ``value`` in order, longest word first
    at each point; empty when a part of it has no English word."""
    pieces: list[tuple[str, ...]] = []
    rest = value
    while rest:
        word = next((w for w in _BY_FIRST.get(rest[0], ()) if rest.startswith(w)), None)
        if word is None:
            return []
        pieces.append(WORD_ENGLISH[word])
        rest = rest[len(word) :].lstrip()
    return pieces


def head_readings(value: str) -> tuple[str, ...]:
    """The English of the last word of a Japanese name of two words or more: what the
    name is (a Japanese compound ends in its head: 債権残高 is a balance, "balance");
    none when a part of the name has no English word."""
    pieces = _pieces(value)
    return pieces[-1] if len(pieces) >= 2 else ()


def english_readings(value: str) -> list[str]:
    """English readings of a Japanese value made only of ``WORD_ENGLISH`` words (名古屋支店
    → "nagoya branch", "nagoya branch office"), longest word first at each point; none
    when a part of it has no English word."""
    pieces = _pieces(value)
    if not pieces:
        return []
    if len(pieces) == 1 and len(value) == 1 and value in GLOSSARY:
        return []  # a value of one character (中 of 高 / 中 / 低) is too loose to read alone
    readings = [" ".join(words) for words in itertools.product(*pieces)]
    if len(pieces) == 2:  # 手当月額 is also "monthly allowance": English may lead with either
        readings += [" ".join(words) for words in itertools.product(*reversed(pieces))]
    if len(pieces) == 1 and len(value) >= 3:
        # a compound with English of its own (検収日: "acceptance date") is also read by
        # its words (検収 + 日: "inspection date")
        for cut in range(2, len(value)):
            head, tail = value[:cut], value[cut:]
            if head in WORD_ENGLISH and tail in WORD_ENGLISH:
                parts = (WORD_ENGLISH[head], WORD_ENGLISH[tail])
                readings += [" ".join(words) for words in itertools.product(*parts)]
                break
    return list(itertools.islice(dict.fromkeys(readings), _MAX_READINGS))


# A state said in English (Paid, Returned, Signed) is the Japanese word of that state
# (支払済), never the action's own word (支払い is a payment, not the Paid rows): a past
# participle other than a word's first English names no value in reverse.
_PARTICIPLE = re.compile(
    r"[a-z]+ed|paid|sold|lent|sent|bought|built|held|made|done|given|taken|written|spent"
)
_JAPANESE_FOR: dict[str, list[str]] = {}
for _japanese, _english in WORD_ENGLISH.items():
    for _rank, _said in enumerate(_english):
        if _rank == 0 or not _PARTICIPLE.fullmatch(_said):
            _JAPANESE_FOR.setdefault(_said, []).append(_japanese)


def japanese_words_for(value: str) -> list[str]:
    """The Japanese words whose English is exactly ``value`` ("Tokyo" → 東京, "Finance" →
    経理 …); a request in Japanese may say an English category value so."""
    return [w for w in _JAPANESE_FOR.get(value.strip().lower(), []) if len(w) >= 2]
