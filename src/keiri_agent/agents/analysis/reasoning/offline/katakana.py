"""English loanwords said for katakana words of the data: "royalty" for ロイヤリティ,
"operator" for オペレーター, "referral" for リファラル, "channel" for チャネル.

Japanese writes a loanword by its sound, so the English spelling and the katakana
share their consonants once both are reduced to a skeleton: vowels and y dropped,
l read as r (Japanese has one sound for both), doubled letters and a closing r (the
long vowel of 「ー」 in オペレーター) dropped. ``skeleton`` gives that reduction for
either side; a match needs three consonants or more, so short words never match.
"""

from __future__ import annotations

import re

_ROMAJI = {
    "ア": "a", "イ": "i", "ウ": "u", "エ": "e", "オ": "o",
    "カ": "ka", "キ": "ki", "ク": "ku", "ケ": "ke", "コ": "ko",
    "ガ": "ga", "ギ": "gi", "グ": "gu", "ゲ": "ge", "ゴ": "go",
    "サ": "sa", "シ": "shi", "ス": "su", "セ": "se", "ソ": "so",
    "ザ": "za", "ジ": "ji", "ズ": "zu", "ゼ": "ze", "ゾ": "zo",
    "タ": "ta", "チ": "chi", "ツ": "tsu", "テ": "te", "ト": "to",
    "ダ": "da", "ヂ": "ji", "ヅ": "zu", "デ": "de", "ド": "do",
    "ナ": "na", "ニ": "ni", "ヌ": "nu", "ネ": "ne", "ノ": "no",
    "ハ": "ha", "ヒ": "hi", "フ": "fu", "ヘ": "he", "ホ": "ho",
    "バ": "ba", "ビ": "bi", "ブ": "bu", "ベ": "be", "ボ": "bo",
    "パ": "pa", "ピ": "pi", "プ": "pu", "ペ": "pe", "ポ": "po",
    "マ": "ma", "ミ": "mi", "ム": "mu", "メ": "me", "モ": "mo",
    "ヤ": "ya", "ユ": "yu", "ヨ": "yo",
    "ラ": "ra", "リ": "ri", "ル": "ru", "レ": "re", "ロ": "ro",
    "ワ": "wa", "ヲ": "o", "ン": "n", "ヴ": "vu",
    "ァ": "a", "ィ": "i", "ゥ": "u", "ェ": "e", "ォ": "o",
    "ャ": "ya", "ュ": "yu", "ョ": "yo", "ー": "",
}  # fmt: skip
_KATAKANA_WORD = re.compile(r"[\u30a1-\u30fc]{3,}")


def romaji(katakana: str) -> str:
    """A katakana word in Latin letters (ッ doubles the next consonant)."""
    out = ""
    double = False
    for char in katakana:
        if char == "ッ":
            double = True
            continue
        sound = _ROMAJI.get(char, "")
        out += (sound[:1] if double and sound else "") + sound
        double = False
    return out


def skeleton(word: str) -> str:
    """The consonants a loanword and its English spelling share: "royalty" and ロイヤリティ
    are both ``rrt``; "operator" and オペレーター ``prt``."""
    latin = romaji(word) if _KATAKANA_WORD.fullmatch(word) else word.lower()
    latin = latin.replace("shi", "s").replace("chi", "c").replace("tsu", "t").replace("fu", "f")
    latin = latin.replace("ch", "c").replace("sh", "s").replace("ph", "f").replace("l", "r")
    latin = latin.replace("v", "b").replace("c", "k").replace("q", "k").replace("x", "ks")
    consonants = re.sub(r"[aeiouyw]", "", latin)
    consonants = re.sub(r"(.)\1+", r"\1", consonants)
    return consonants[:-1] if consonants.endswith("r") and len(consonants) > 3 else consonants


def katakana_words(text: str) -> list[str]:
    """The katakana words (three characters or more) of a value or a column name."""
    return _KATAKANA_WORD.findall(text)
