"""Japanese tokenisation for the keyword (BM25) index.

A :class:`Tokenizer` turns text into index terms. Every tokenizer NFKC-normalises and
lowercases first, so full-width input ("ＸＹＺ", "９０日") matches its half-width form.

* :class:`SudachiTokenizer` — morphological analysis with SudachiPy (``sudachidict_core``).
  Terms are Sudachi's *normalized form* (lowercased): "ﾊﾟｽﾜｰﾄﾞ" and "パスワード" give the same
  term, as do some spelling variants ("手続" / "手続き"). Particles, auxiliary verbs,
  symbols, pronouns, conjunctions, interjections, prefixes and dependent verbs/adjectives
  ("する", "いる", "ください") are dropped by part of speech. Runs of ASCII letters and digits
  that Sudachi splits ("E1023" → "E" + "1023") are merged back into one term ("e1023").
  ``mode`` picks the split: ``"C"`` (long units: "経費精算システム"), ``"A"`` (short units:
  "経費", "精算", "システム") or ``"CA"`` (the long unit *and* its short units, so a
  query for "精算" finds "経費精算システム" and a query for the compound still ranks the
  exact compound highest).
* :class:`CharNgramTokenizer` — character n-grams over runs of kana/kanji plus Latin/digit
  runs as whole words; no dictionary, robust to unknown words, larger index.

Sudachi tokenizer objects are not thread-safe; :class:`SudachiTokenizer` keeps one per
thread (the dictionary itself is shared). :func:`default_tokenizer` returns one cached
instance for the process; :func:`content_terms` is its terms, deduplicated in order.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal, Protocol, runtime_checkable

SudachiMode = Literal["A", "B", "C", "CA"]

DEFAULT_SUDACHI_MODE: SudachiMode = "A"
"""Chosen by ``benchmarks/search_tokenizers.py`` on the 44 sample help-desk questions (recall
first, then speed; BM25 k1=1.5, b=0.3): A-mode hit@3 0.795 / MRR 0.682; CA 0.795 / 0.647 (and
slower); MeCab+unidic-lite 0.795 / 0.663; C 0.636 / 0.542; character bigrams 0.659 / 0.568."""

# Parts of speech (first field) that never make useful search terms.
_DROP_POS = frozenset(
    {"助詞", "助動詞", "補助記号", "記号", "空白", "接続詞", "感動詞", "代名詞", "接頭辞"}
)
# Dependent verbs/adjectives: する, いる, ある, ください, なる, ない ...
_DEPENDENT = "非自立可能"
_DEPENDENT_POS = frozenset({"動詞", "形容詞"})

_ASCII_WORD = re.compile(r"[0-9a-z]+(?:[._\-][0-9a-z]+)*")
_ASCII_PIECE = re.compile(r"[0-9A-Za-z._\-]+")
_ENGLISH_ENTRY = re.compile(r"'?[A-Za-z][A-Za-z' ]*[A-Za-z]|'[A-Za-z]")
_CONTRACTION = re.compile(r"'(?:s|re|ve|d|ll|m|t)\b|n't\b", re.IGNORECASE)
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3})")
NEGATIVE_PREFIXES = frozenset("不未非無")
"""Prefixes that turn a word into its opposite (不安定, 未承認, 非表示, 無効)."""
_MAX_SEGMENT = 4000  # characters per Sudachi call (its input limit is in bytes)


def normalize_for_search(text: str) -> str:
    """NFKC and lowercase: what every tokenizer (and chunk matching) starts from."""
    return unicodedata.normalize("NFKC", text).lower()


@runtime_checkable
class Tokenizer(Protocol):
    """Text → index terms. ``name`` identifies the analysis (it is stored with an index)."""

    name: str

    def terms(self, text: str) -> list[str]: ...


def _segments(text: str) -> Iterator[str]:
    """Lines, and long lines cut to ``_MAX_SEGMENT`` characters (Sudachi's input limit)."""
    for line in text.split("\n"):
        if not line.strip():
            continue
        for start in range(0, len(line), _MAX_SEGMENT):
            yield line[start : start + _MAX_SEGMENT]


def _is_ascii_piece(surface: str) -> bool:
    """Latin letters and digits, also a dictionary entry of several English words or a
    contraction (「What's」「is it」): their words, never the dictionary's katakana reading
    (ホワッツ, イズイット)."""
    return bool(_ASCII_PIECE.fullmatch(surface) or _ENGLISH_ENTRY.fullmatch(surface))


_SURU = "為る"
"""Sudachi's normalized form of する, the light verb after a noun (「差戻しする」)."""


class SudachiTokenizer:
    """SudachiPy morphological analysis; see the module docstring for what is kept."""

    def __init__(self, mode: SudachiMode = DEFAULT_SUDACHI_MODE, *, dict_name: str = "core"):
        from sudachipy import Dictionary, SplitMode

        if mode not in ("A", "B", "C", "CA"):
            raise ValueError(f"unknown Sudachi split mode {mode!r}; use A, B, C or CA")
        self.mode: SudachiMode = mode
        self.name = f"sudachi-{dict_name}-{mode}"
        self._dictionary = Dictionary(dict=dict_name)
        self._split_mode = {"A": SplitMode.A, "B": SplitMode.B}.get(mode, SplitMode.C)
        self._short = SplitMode.A
        self._local = threading.local()

    def _tokenizer(self) -> Any:
        tokenizer = getattr(self._local, "tokenizer", None)
        if tokenizer is None:
            tokenizer = self._dictionary.tokenizer(mode=self._split_mode)
            self._local.tokenizer = tokenizer
        return tokenizer

    @staticmethod
    def _keep(pos: tuple[str, ...]) -> bool:
        if pos[0] in _DROP_POS:
            return False
        return not (pos[0] in _DEPENDENT_POS and pos[1] == _DEPENDENT)

    def terms(self, text: str, *, keep_negation: bool = False) -> list[str]:
        """The index terms of ``text``.

        With ``keep_negation`` (the words of a text, for the offline rules' key terms) a
        negative prefix (不, 未, 非, 無) stays on the noun it modifies: 「不安定」 gives
        「不安定」, not 「安定」; and a compound verb stays one word: 「取り下げたい」 gives
        「取り下げる」, not 「取る」「下げる」 (Sudachi's short units split it). The index keeps
        the short units, so a search for 「安定」 or 「下げる」 still finds them.
        """
        text = _DIGIT_COMMA.sub("", unicodedata.normalize("NFKC", text))
        tokenizer = self._tokenizer()
        out: list[str] = []
        for segment in _segments(text):
            morphemes = tokenizer.tokenize(segment)
            ascii_run: list[str] = []
            ascii_end = -1
            negation = ""
            verb_surfaces, verb_end = "", -1  # a verb in 連用形 that may start a compound
            for morpheme in morphemes:
                surface = morpheme.surface()
                if _is_ascii_piece(surface):
                    if ascii_run and morpheme.begin() != ascii_end:
                        self._flush_ascii(ascii_run, out)
                    ascii_run.append(surface)
                    ascii_end = morpheme.end()
                    negation = ""
                    continue
                if ascii_run:
                    self._flush_ascii(ascii_run, out)
                pos = morpheme.part_of_speech()
                if keep_negation and pos[0] == "接頭辞" and surface in NEGATIVE_PREFIXES:
                    negation = surface
                    continue
                prefix, negation = negation, ""
                if (
                    keep_negation
                    and pos[0] == "動詞"
                    and morpheme.begin() == verb_end
                    and morpheme.normalized_form() != _SURU  # 差戻し|する: no compound
                ):
                    # the second half of a compound verb (取り|下げる): one word, 取り下げる
                    out[-1] = verb_surfaces + morpheme.normalized_form().lower()
                    verb_surfaces += surface
                    verb_end = morpheme.end() if pos[5].startswith("連用形") else -1
                    continue
                verb_end = -1
                if not self._keep(pos) or (keep_negation and _says_no_content(morpheme)):
                    continue
                term = morpheme.normalized_form().lower()
                if keep_negation and pos[0] == "動詞" and pos[5].startswith("連用形"):
                    verb_surfaces, verb_end = surface, morpheme.end()
                out.append(prefix + term if prefix and pos[0] in ("名詞", "形状詞") else term)
                if self.mode == "CA":
                    parts = morpheme.split(self._short)
                    if len(parts) > 1:
                        out.extend(
                            part.normalized_form().lower()
                            for part in parts
                            if self._keep(part.part_of_speech())
                        )
            if ascii_run:
                self._flush_ascii(ascii_run, out)
        return out

    @staticmethod
    def _flush_ascii(run: list[str], out: list[str]) -> None:
        out.extend(_ASCII_WORD.findall(_CONTRACTION.sub("", "".join(run)).lower()))
        run.clear()

    def __repr__(self) -> str:
        return f"SudachiTokenizer(mode={self.mode!r})"


_TOKEN_RUN = re.compile(
    r"(?P<latin>[0-9a-z]+(?:[._\-][0-9a-z]+)*)"
    r"|(?P<cjk>[\u3041-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヶ]+)"
)


class CharNgramTokenizer:
    """Character n-grams of kana/kanji runs; Latin letters and digits as whole words."""

    def __init__(self, n: int = 2) -> None:
        if n < 1:
            raise ValueError("n must be at least 1")
        self.n = n
        self.name = f"char{n}gram"

    def terms(self, text: str) -> list[str]:
        text = _DIGIT_COMMA.sub("", normalize_for_search(text))
        out: list[str] = []
        n = self.n
        for match in _TOKEN_RUN.finditer(text):
            run = match.group(0)
            if match.lastgroup == "latin" or len(run) <= n:
                out.append(run)
            else:
                out.extend(run[i : i + n] for i in range(len(run) - n + 1))
        return out

    def __repr__(self) -> str:
        return f"CharNgramTokenizer(n={self.n})"


_default: Tokenizer | None = None
_default_lock = threading.Lock()


def default_tokenizer() -> Tokenizer:
    """The process-wide default tokenizer (Sudachi, ``DEFAULT_SUDACHI_MODE``), created once."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = SudachiTokenizer(DEFAULT_SUDACHI_MODE)
    return _default


def content_terms(text: str) -> list[str]:
    """The default tokenizer's terms for ``text``, each once, in order of first appearance."""
    return list(dict.fromkeys(default_tokenizer().terms(text)))


_HIRAGANA = re.compile(r"[\u3041-\u309f]{1,2}")


def _says_no_content(morpheme: Any) -> bool:
    """A word of a question that says nothing about what is asked: an adverb (「もし」「全然」
    「ちょっと」: how or when, not what), or two hiragana the dictionary reads as another word
    (「GuestGateのどの」 → 「のど」 → 喉)."""
    if morpheme.part_of_speech()[0] == "副詞":
        return True
    surface = morpheme.surface()
    return bool(_HIRAGANA.fullmatch(surface)) and morpheme.normalized_form() != surface


def content_words(text: str) -> list[str]:
    """:func:`content_terms` with negative prefixes kept on their word (「不安定」, 「未承認」),
    without adverbs and misread hiragana (:func:`_says_no_content`).

    For matching words rather than searching an index: 「安定」 is not a word of
    「不安定です」. Needs the Sudachi default tokenizer (other tokenizers: their terms).
    """
    tokenizer = default_tokenizer()
    if isinstance(tokenizer, SudachiTokenizer):
        return list(dict.fromkeys(tokenizer.terms(text, keep_negation=True)))
    return content_terms(text)


def _dictionary_morphemes(text: str) -> list[Any]:
    """Sudachi's morphemes of ``text`` (NFKC, stripped), with parts of speech and readings;
    none for a blank text or with another tokenizer (it has no dictionary)."""
    tokenizer = default_tokenizer()
    if not isinstance(tokenizer, SudachiTokenizer) or not text.strip():
        return []
    return list(tokenizer._tokenizer().tokenize(unicodedata.normalize("NFKC", text.strip())))


@lru_cache(maxsize=4096)
def is_verbal_noun(word: str) -> bool:
    """True when ``word`` is one noun that names an action (Sudachi's サ変可能: 「修正」
    「予約」「登録」 — 修正する), not a thing (「勤怠」「ホテル」「資産」).

    False for anything else, and with a tokenizer other than Sudachi (no parts of speech).
    """
    morphemes = _dictionary_morphemes(word)
    if len(morphemes) != 1:
        return False
    pos = morphemes[0].part_of_speech()
    return pos[0] == "名詞" and pos[2].startswith("サ変")


_KATAKANA_WORD = re.compile(r"[\u30a1-\u30fa\u30fc・]+")


@lru_cache(maxsize=4096)
def loanword(word: str) -> str:
    """The katakana a Japanese text writes an English word as, when the dictionary knows
    it (printer → プリンター, plan → プラン, label → ラベル), else "".

    "" with a tokenizer other than Sudachi (no dictionary readings).
    """
    if not word.isascii() or not word.isalpha():
        return ""
    morphemes = _dictionary_morphemes(word)
    if len(morphemes) != 1:
        return ""
    reading = morphemes[0].normalized_form()
    return reading if _KATAKANA_WORD.fullmatch(reading) else ""


@lru_cache(maxsize=4096)
def is_adverbial(phrase: str) -> bool:
    """True when ``phrase`` is only words used as adverbs: nouns of time or frequency
    (Sudachi's 副詞可能: 「来週」「今回」「毎月」), adverbs, and the particles after them
    (「来週は」「今回も」) — 「来週、取引先が来ます」 opens with when, not a listed item.

    False for anything else, and with a tokenizer other than Sudachi (no parts of speech).
    """
    morphemes = _dictionary_morphemes(phrase)
    words = [m.part_of_speech() for m in morphemes if m.part_of_speech()[0] != "助詞"]
    return bool(words) and all(
        pos[0] == "副詞" or (pos[0] == "名詞" and pos[2] == "副詞可能") for pos in words
    )


__all__ = [
    "DEFAULT_SUDACHI_MODE",
    "NEGATIVE_PREFIXES",
    "CharNgramTokenizer",
    "SudachiTokenizer",
    "Tokenizer",
    "content_terms",
    "content_words",
    "default_tokenizer",
    "is_adverbial",
    "is_verbal_noun",
    "loanword",
    "normalize_for_search",
]
