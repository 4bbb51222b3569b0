"""English words for the words of Japanese category values, as data.

A colleague may ask in English about a ledger whose values are Japanese: "the Nagoya
branch" for 名古屋支店, "electricity" for 電気, "payments to sole proprietors" for
個人事業主. ``WORD_ENGLISH`` says, for a word a value may be made of (places, kinds of
utility, payment means, counterparties, offices, statuses), the English a request may
use; ``english_readings`` reads a whole value as those words (名古屋支店 → "nagoya
branch"). A value with a word outside the table has no English reading: nothing is
guessed.
"""

from __future__ import annotations

import itertools

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
}
_LONGEST_FIRST = sorted(WORD_ENGLISH, key=len, reverse=True)
_MAX_READINGS = 12


def english_readings(value: str) -> list[str]:
    """English readings of a Japanese value made only of ``WORD_ENGLISH`` words (名古屋支店
    → "nagoya branch", "nagoya branch office"), longest word first at each point; none
    when a part of it has no English word."""
    pieces: list[tuple[str, ...]] = []
    rest = value
    while rest:
        word = next((w for w in _LONGEST_FIRST if rest.startswith(w)), None)
        if word is None:
            return []
        pieces.append(WORD_ENGLISH[word])
        rest = rest[len(word) :].lstrip()
    readings = (" ".join(words) for words in itertools.product(*pieces))
    return list(itertools.islice(readings, _MAX_READINGS))
