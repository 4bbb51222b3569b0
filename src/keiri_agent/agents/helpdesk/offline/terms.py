"""Key terms of a text for the offline rules: stop terms, synonyms, term matching.

:func:`key_terms` is a text's content terms (``search.tokenize.content_terms``) minus
question words and generic terms (``STOP_TERMS``); :func:`synonyms` are the other
members of its ``SYNONYM_GROUPS``; :class:`PreparedText` tells whether a passage
contains a term or one of its synonyms.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from keiri_agent.search.tokenize import content_terms, normalize_for_search

# --------------------------------------------------------------------------- vocabulary

# Question words and generic terms that say nothing about *what* is asked. Compared
# after normalisation: each entry and its tokenizer terms ("教えて" → "教える",
# "について" → "つく", "もの" → "物") are stop terms. Terms starting with 何 ("何日",
# "何文字") are question words too.
_STOP_JA = (
    "教える 教えて 知る 知りたい 聞く 聞きたい 伺う 説明 質問 確認したい 方法 やり方 仕方 手順"
    " 場合 時 とき 際 方 件 こと もの ため よう 等 他 中 後 前 上 下"
    " 何 なに 何故 なぜ どう どの どれ どこ いつ 誰 幾つ いくら"
    " する ある いる できる 出来る なる ください 下さい 欲しい いい 良い よい 分かる 困る"
    " について 関して 関する 対して 以下 下記 次 上記 以上 それぞれ"
    " 違い 違う 比較 比べる 差異 相違"
    " 意味 まとめる 纏める まとめて 詳しい 詳しく 具体的 簡単 簡単に ざっくり 一通り 全部 全て"
    " 宜しく お願い 願い 御願い お世話 様 さん 私 我々"
    " xyz システム xyzシステム ヘルプデスク"
)
_STOP_EN = (
    "a an the and or but if of in on at to for from by with about into as is are was were be"
    " been being am do does did done doing have has had can could should would will shall may"
    " might must i me my mine we us our you your it its this that these those there here"
    " what which who whom whose when where why how whether please tell explain describe show"
    " know want need like get got way ways help thanks thank hello hi also any some all"
    " not no yes so then than just more most xyz system difference differences differ"
    " mean means meaning summarize summarise summary detail details brief briefly"
    " different compare comparison between versus vs"
)
STOP_TERMS: frozenset[str] = frozenset(_STOP_JA.split()) | frozenset(_STOP_EN.split())

# Synonym groups of the help-desk domain (Japanese and English). A key term in a group
# is searched (attempt 1 and later) together with every other member of that group.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("ロック", "ロックアウト", "アカウントロック", "lock", "locked", "lockout"),
    ("解除", "ロック解除", "アンロック", "unlock"),
    ("パスワード", "暗証番号", "pw", "password", "passcode"),
    ("通知", "お知らせ", "メール", "通知メール", "notification", "email", "mail"),
    ("申請", "提出", "申込", "申し込み", "application", "submit", "submission"),
    ("承認", "決裁", "認可", "approval", "approve"),
    ("差し戻し", "差戻し", "差戻", "却下", "reject", "rejection"),
    ("エラー", "エラーコード", "エラーメッセージ", "error", "error code"),
    ("期限", "有効期限", "締め切り", "締切", "期日", "deadline", "expiry", "expiration"),
    ("ログイン", "サインイン", "ログオン", "login", "log in", "sign in"),
    ("再設定", "リセット", "初期化", "reset"),
    ("変更", "更新", "change", "update"),
    ("条件", "要件", "ルール", "ポリシー", "規則", "requirement", "rule", "rules", "policy"),
    ("経費精算", "精算", "経費", "立替", "expense", "reimbursement"),
    ("領収書", "レシート", "証憑", "receipt"),
    ("権限", "アクセス権", "ロール", "permission", "role"),
    ("問い合わせ", "問合せ", "連絡先", "サポート", "contact", "support"),
    ("多要素認証", "二要素認証", "2段階認証", "二段階認証", "mfa", "2fa"),
    ("削除", "取消", "取り消し", "キャンセル", "delete", "cancel"),
    ("出力", "エクスポート", "ダウンロード", "export", "download"),
    ("文字数", "桁数", "長さ", "length", "characters"),
)

# --------------------------------------------------------------------------- terms


@lru_cache(maxsize=1)
def _stop_terms() -> frozenset[str]:
    """``STOP_TERMS`` plus the tokenizer's terms of each entry (its normalised forms)."""
    out = set(STOP_TERMS)
    for word in STOP_TERMS:
        out.update(content_terms(word))
    return frozenset(out)


def _is_stop(term: str) -> bool:
    return term in _stop_terms() or (term.startswith("何") and len(term) <= 3)


def key_terms(text: str) -> list[str]:
    """The content terms of ``text`` without question words and generic terms.

    >>> key_terms("パスワードの条件を教えて")
    ['パスワード', '条件']
    """
    return [t for t in content_terms(text) if not _is_stop(t)]


def atomic_terms(terms: Sequence[str]) -> list[str]:
    """Terms for coverage: a compound is dropped when ≥ 2 other terms are inside it.

    The tokenizer gives a compound and its parts ("有効期限", "有効", "期限"); counting
    all three would weigh the compound three times, so coverage counts the parts.
    """
    return [t for t in terms if sum(1 for o in terms if o != t and o in t) < 2]


@lru_cache(maxsize=1)
def _synonym_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for group in SYNONYM_GROUPS:
        members = [normalize_for_search(m) for m in group]
        for member in members:
            index.setdefault(member, [])
            index[member].extend(m for m in members if m != member and m not in index[member])
    return {k: tuple(v) for k, v in index.items()}


def synonyms(term: str) -> tuple[str, ...]:
    """The other members of every ``SYNONYM_GROUPS`` group that contains ``term``."""
    return _synonym_index().get(normalize_for_search(term).strip(), ())


_ASCII_TERM = re.compile(r"[0-9a-z][0-9a-z ._\-]*")


@dataclass(frozen=True)
class PreparedText:
    """A passage (or sentence) prepared for term matching."""

    norm: str
    terms: frozenset[str]

    @classmethod
    def of(cls, text: str) -> PreparedText:
        return cls(normalize_for_search(text), frozenset(content_terms(text)))

    def has(self, term: str) -> bool:
        """True when the text contains the term or one of its synonyms.

        A term matches a tokenizer term of the text, or a substring (Japanese) or a
        word prefix (ASCII: "rule" matches "rules"; "rules" matches "rule").
        """
        for word in (term, *synonyms(term)):
            if word in self.terms:
                return True
            if _ASCII_TERM.fullmatch(word):
                stem = word[:-1] if len(word) > 3 and word.endswith("s") else word
                if re.search(r"(?<![0-9a-z])" + re.escape(stem), self.norm):
                    return True
            elif word in self.norm:
                return True
        return False


def require_text(value: str, what: str) -> str:
    """``value`` stripped; a blank ``value`` raises ``ValueError`` naming ``what``."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} is empty: give a non-blank text")
    return value.strip()
