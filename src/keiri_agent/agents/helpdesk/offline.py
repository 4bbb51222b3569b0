"""The HelpDesk agent's offline rules: plan, search terms, answers and reflection without an LLM.

When no LLM is configured (the "offline" provider), the agent calls these functions
in place of the model. They are deterministic rules over Japanese and English text:

* :func:`split_question` — the plan: the question split into its parts
  ("パスワードの条件と、ロックされた時の解除方法を教えて" → two parts, each with
  the shared 「教えて」).
* :func:`key_terms` — a text's content terms (``search.tokenize.content_terms``)
  minus question words and generic terms (``STOP_TERMS``).
* :func:`reformulate` — the search query for an attempt: key terms, then key terms
  plus synonyms (``SYNONYM_GROUPS``) and what the advice says is missing, then only
  the missing terms.
* :func:`subtask_answer` — quotes the best 1–3 passages, each with its citation.
* :func:`reflect` — done when the quoted passages cover the part's key terms;
  otherwise advice ``"不足: A, B。…"`` that :func:`reformulate` parses back.
* :func:`final_answer` — Markdown: a label line, one section per part, the sources,
  and the parts that were not found.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from keiri_agent.agents.helpdesk.models import ReflectionResult, SearchOutput, Subtask
from keiri_agent.search.tokenize import content_terms, normalize_for_search

OFFLINE_LABEL = "（オフラインモード：LLMを使わず、検索結果の引用で回答しています）"
MAX_PARTS = 5
MAX_QUOTES = 3
MAX_QUOTE_CHARS = 200
MAX_SECTION_CHARS = 320
"""A passage whose heading names the part's key terms is quoted from its start, up to this."""

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


def _atomic(terms: Sequence[str]) -> list[str]:
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
class _Text:
    """A passage (or sentence) prepared for term matching."""

    norm: str
    terms: frozenset[str]

    @classmethod
    def of(cls, text: str) -> _Text:
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


# --------------------------------------------------------------------------- plan


def _require_text(value: str, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} is empty: give a non-blank text")
    return value.strip()


_JA_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LIST_ITEM = re.compile(
    r"^\s*(?:\d{1,2}\s*[.)．）:：、]|[(（]\d{1,2}[)）]|[①-⑳]|[・\-*•●○◦▪■□]|[a-eA-E][.)])\s*"
)
_SENTENCE_END = re.compile(r"(?<=[。？?！!])|(?<=[.])\s+(?=[A-Za-z])")
_NOUNISH = r"[\u3400-\u9fff\u30a0-\u30ffー々〆ヶA-Za-z0-9」』）)]"
# Nouns written with okurigana end in kana: 違い, 手続き, 差し戻し, 問い合わせ …
_NOUNISH_END = re.compile(
    rf"(?:{_NOUNISH}|こと|もの|とき|ところ|かた|違い|扱い|払い|続き|切り|消し|戻し|合わせ|込み|替え|"
    r"付け|書き|出し|入れ|渡し)$"
)
_NOUNISH_START = re.compile(rf"^(?:{_NOUNISH}|「|『)")
_ABOUT_END = re.compile(r"(?:について|に関して|に関する|に対して)(?:は|も)?$")
# An adverbial clause ends in one of these before 「、」: not a new part.
_CLAUSE_END = re.compile(r"(?:場合|時|とき|際|後|あと|前|ため|ところ|以外)(?:は|に|も|で)?$")
# 「と」 followed by one of these is a quotation or a relation, not an enumeration.
_TO_BLOCKED = re.compile(
    r"^(?:表示|出|言|い[うわ]|書|記載|入力|な[るっりら]|し[てた]|す[るれ]|思|呼|同|一緒|共|比|違|"
    r"異な|連携|連動|接続|紐付|紐づ|関係|関連|一致|重複|混同|区別|交換|併用|同時|同様)"
)
_SEPARATOR = re.compile(
    r"(?P<conn>[、,，]\s*(?:また|それから|あと|さらに|それと|加えて|ほかに|他に)\s*[、,，]?)"
    r"|(?P<and>\s*(?:および|及び|ならびに|並びに)\s*[、,，]?)"
    # the と of こと / とき / ところ is part of a word, not a separator
    r"|(?P<tocomma>(?<!こ)と\s*[、,，])"
    r"|(?P<to>(?<!こ)と(?!き|ころ))"
    r"|(?P<ya>や)"
    r"|(?P<comma>[、,，])"
)
_COMPARISON_JA = re.compile(
    r"違い|違う|ちがい|ちがう|差異|相違|比較|比べ|くらべ|どちら|どっち|使い分け|区別|異な|の差(?![戻し])"
)
_LEADING_CONNECTOR = re.compile(
    r"^(?:また|それから|あと|さらに|それと|加えて|ほかに|他に|and|also)\s*[、,，]?\s*",
    re.IGNORECASE,
)
# The shared predicate of a Japanese request, carried to the parts that lack one.
_CARRY = re.compile(
    r"(?P<particle>については|に関しては|について|に関して|を|は|が|も)?\s*"
    r"(?P<pred>(?:教えて|おしえて|知りた|しりた|説明して|説明を|確認したい|確認させて|聞きた|伺いた|"
    r"どうすれ|どうしたら|どうやったら|どうやって|どのようにすれ|どのようにしたら|どのように).*)$"
)
# Words that start a new English clause or object: "and" before one of them splits.
_EN_STARTER_TEXT = (
    "how what where when why who which whether can could do does did is are should will"
    " would i please tell explain show describe the my a an"
)
_EN_STARTERS = frozenset(_EN_STARTER_TEXT.split())
_EN_PREFIX = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:tell\s+me(?:\s+about)?|explain|"
    r"describe|show\s+me|i(?:'d|\s+would)\s+like\s+to\s+know(?:\s+about)?|"
    r"i\s+want\s+to\s+know(?:\s+about)?)\s+",
    re.IGNORECASE,
)
_EN_COMPARISON = re.compile(r"\b(?:between|compare|comparing|difference\s+of|vs\.?|versus)\s+")
_EN_DIFFER_AFTER = re.compile(r"^\s*(?:\S+\s+){0,3}?(?:differ|different|compare)", re.IGNORECASE)


def _has_content(text: str) -> bool:
    return bool(key_terms(text))


def _protected_ja(sentence: str, matches: list[re.Match[str]]) -> set[int]:
    """Start offsets of separators that belong to a comparison ("AとBの違い").

    For each comparison word, the と/や/および between the previous 「、」 and the word
    are part of the comparison; when there is none ("Aと、Bの違い"), the 「と、」 just
    before that 「、」 is.
    """
    protected: set[int] = set()
    for hit in _COMPARISON_JA.finditer(sentence):
        pos = hit.start()
        commas = [m.end() for m in re.finditer(r"[、,，]", sentence[:pos])]
        region = commas[-1] if commas else 0
        inside = [
            m.start()
            for m in matches
            if m.lastgroup in ("to", "ya", "and") and region <= m.start() < pos
        ]
        if inside:
            protected.update(inside)
        else:
            for m in matches:
                if m.lastgroup == "tocomma" and m.end() == region:
                    protected.add(m.start())
    return protected


def _cuts_ja(sentence: str) -> list[tuple[int, int]]:
    """Where a Japanese sentence splits into parts: (start, end) of each separator."""
    matches = list(_SEPARATOR.finditer(sentence))
    protected = _protected_ja(sentence, matches)
    cuts: list[tuple[int, int]] = []
    last = 0
    for m in matches:
        kind = m.lastgroup
        before = sentence[last : m.start()].rstrip()
        after = sentence[m.end() :].lstrip()
        if not before or not after or m.start() in protected:
            continue
        if kind == "conn" or kind == "and":
            ok = True
        elif kind == "tocomma":
            ok = bool(_NOUNISH_END.search(before))
        elif kind in ("to", "ya"):
            ok = bool(_NOUNISH_END.search(before) and _NOUNISH_START.search(after))
            if ok and kind == "to":
                ok = not _TO_BLOCKED.search(after)
        else:  # a bare 「、」
            ok = not _CLAUSE_END.search(before) and bool(
                _NOUNISH_END.search(before)
                or _ABOUT_END.search(before)
                or _CARRY.search(before)
                or before.endswith(("たい", "ですか", "ますか", "でしょうか"))
            )
        if ok:
            cuts.append((m.start(), m.end()))
            last = m.end()
    return cuts


def _cuts_en(sentence: str) -> list[tuple[int, int]]:
    """Where an English sentence splits: ";" always, "and" before a new clause or object."""
    cuts: list[tuple[int, int]] = []
    protected: set[int] = set()
    for hit in _EN_COMPARISON.finditer(sentence):
        first_and = re.search(r"\band\b", sentence[hit.end() :], re.IGNORECASE)
        if first_and:
            protected.add(hit.end() + first_and.start())
    for m in re.finditer(r"\s*;\s*|,?\s+\band\b\s+", sentence, re.IGNORECASE):
        if ";" not in m.group(0):
            and_at = m.start() + m.group(0).lower().index("and")
            after = sentence[m.end() :]
            first = after.split(maxsplit=1)[0].lower() if after.split() else ""
            if and_at in protected or _EN_DIFFER_AFTER.search(after):
                continue
            if first not in _EN_STARTERS:
                continue
        cuts.append((m.start(), m.end()))
    return cuts


def _pieces(sentence: str, cuts: list[tuple[int, int]]) -> list[str]:
    """The sentence cut at ``cuts``; a piece without content terms rejoins its neighbour."""
    bounds = [0, *[x for cut in cuts for x in cut], len(sentence)]
    spans = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        # A piece without content joins the previous one; so does the piece after a
        # content-less first piece.
        if merged and (
            not _has_content(sentence[start:end])
            or not _has_content(sentence[merged[-1][0] : merged[-1][1]])
        ):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return [sentence[s:e].strip() for s, e in merged if sentence[s:e].strip()]


def _carry_ja(parts: list[str], predicate: re.Match[str] | None) -> list[str]:
    """Give the parts that end in a noun (or について) the request's shared predicate."""
    if predicate is None:
        return parts
    particle = predicate.group("particle") or ""
    pred = predicate.group("pred")
    if particle == "も" or (not particle and re.match(r"教えて|おしえて|説明して", pred)):
        particle = "を"  # 「…の意味をまとめて教えて」 → 「パスワードのルールを教えて…」
    out: list[str] = []
    for part in parts:
        bare = part.rstrip("、,，。 ")
        if _ABOUT_END.search(bare):
            out.append(re.sub(r"(?:は|も)$", "", bare) + pred)
        elif _NOUNISH_END.search(bare):
            out.append(bare + particle + pred)
        else:
            out.append(part)
    return out


def _carry_en(parts: list[str]) -> list[str]:
    prefix = _EN_PREFIX.match(parts[0]) if parts else None
    out: list[str] = []
    for i, part in enumerate(parts):
        first = part.split(maxsplit=1)[0].lower() if part.split() else ""
        if i and prefix and first not in _EN_STARTERS - {"the", "my", "a", "an"}:
            part = prefix.group(0) + part
        out.append(part)
    return out


def _split_sentence(sentence: str, shared: re.Match[str] | None = None) -> list[str]:
    """One sentence (or list item) → its parts, the predicate carried."""
    sentence = _LEADING_CONNECTOR.sub("", sentence.strip()).strip()
    if not sentence:
        return []
    if _JA_CHAR.search(sentence):
        parts = [_LEADING_CONNECTOR.sub("", p) for p in _pieces(sentence, _cuts_ja(sentence))]
        predicate = _CARRY.search(parts[-1]) or shared
        parts = _carry_ja(parts, predicate)
    else:
        parts = [_LEADING_CONNECTOR.sub("", p) for p in _pieces(sentence, _cuts_en(sentence))]
        parts = _carry_en(parts)
    return [p.strip().rstrip("。．、,， ").strip() for p in parts if p.strip()]


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        out.extend(s.strip() for s in _SENTENCE_END.split(line) if s and s.strip())
    return out


def _join(parts: Sequence[str]) -> str:
    text = ""
    for part in parts:
        if not text:
            text = part
        elif _JA_CHAR.search(part):
            text += ("" if text.endswith(("。", "？", "?", "！", "!")) else "。") + part
        else:
            text += "; " + part
    return text


def split_question(question: str) -> list[str]:
    """Split a question into its parts (the plan), by rules.

    Rules, in order:

    1. **Lists.** When ≥ 2 lines start with a number or bullet ("1.", "(2)", "③",
       "・", "-"), each item is a part; the request of the lines before the list
       ("以下を教えてください") is carried to items without their own request.
    2. **Sentences.** Otherwise the text is cut into sentences at 。？?！! (and
       ". " in English) and line breaks.
    3. **Enumerations** inside a Japanese sentence split at 「と、」「と」「や」
       「、」「および／及び／並びに」 and at 「、また／それから／あと／さらに」 when
       the text before is a noun phrase (「、」 also after 「について」 or a request);
       not after an adverbial clause (「…場合、」「…時、」) and not before a
       quotation or relation (「」と表示」「Xと連携」). English sentences split at
       ";" and at "and" before a new clause or object ("how", "what", "the" …).
    4. **Comparisons stay one part**: 「承認と差戻しの違い」「AとBを比較」
       "the difference between X and Y".
    5. **The shared predicate** (「を教えて」「はどうすればいいですか」, "Tell me")
       of the last part is carried to the parts that end in a noun.
    6. **Fragments without a content term** (「どうすればいいですか」) rejoin their
       neighbour; duplicates are dropped; more than ``MAX_PARTS`` parts → the tail
       is merged into the last part. A question with no content term at all is one
       part (itself).

    >>> split_question("パスワードの条件と、ロックされた時の解除方法を教えて")
    ['パスワードの条件を教えて', 'ロックされた時の解除方法を教えて']
    >>> split_question("承認と差戻しの違いを教えてください")
    ['承認と差戻しの違いを教えてください']
    >>> split_question("How do I reset my password and what are the password rules?")
    ['How do I reset my password', 'what are the password rules?']

    Raises:
        ValueError: the question is empty or only whitespace.
    """
    text = _require_text(question, "question")
    lines = [line for line in text.splitlines() if line.strip()]
    items = [i for i, line in enumerate(lines) if _LIST_ITEM.match(line)]
    parts: list[str] = []
    if len(items) >= 2:
        head = [s for line in lines[: items[0]] for s in _sentences(line)]
        shared = next((m for s in head if (m := _CARRY.search(s))), None)
        for sentence in head:
            parts.extend(p for p in _split_sentence(sentence) if _has_content(p))
        for i, line in enumerate(lines[items[0] :], start=items[0]):
            if i in items:
                item = _LIST_ITEM.sub("", line, count=1)
                parts.extend(_split_sentence(item, shared))
            else:
                parts.extend(p for s in _sentences(line) for p in _split_sentence(s))
    else:
        for sentence in _sentences(text):
            pieces = _split_sentence(sentence)
            if parts and pieces and not _has_content(pieces[0]) and len(pieces) == 1:
                parts[-1] = _join([parts[-1], pieces[0]])
            else:
                parts.extend(pieces)
    parts = [p for p in dict.fromkeys(parts) if p]
    contentful = [p for p in parts if _has_content(p)]
    if not contentful:
        return [re.sub(r"\s+", " ", text)]
    if len(contentful) > MAX_PARTS:
        contentful = [*contentful[: MAX_PARTS - 1], _join(contentful[MAX_PARTS - 1 :])]
    return contentful


# --------------------------------------------------------------------------- queries

_MISSING = re.compile(r"(?:不足|missing)\s*[:：]\s*([^。\n]*)", re.IGNORECASE)


def missing_from_advice(advice: str) -> list[str]:
    """The terms an advice names as missing: ``"不足: ロック, 解除。…"`` → ["ロック", "解除"].

    Without a 「不足:」 marker, terms in 「」 are taken.
    """
    if not advice:
        return []
    found = _MISSING.search(advice)
    raw = re.split(r"[,、，/]", found.group(1)) if found else re.findall(r"「([^」]+)」", advice)
    out: list[str] = []
    for item in raw:
        term = normalize_for_search(item).strip(" 「」\"'")
        if term and term not in out:
            out.append(term)
    return out


def _with_synonyms(terms: Iterable[str]) -> list[str]:
    out: list[str] = []
    for term in terms:
        for word in (term, *synonyms(term)):
            if word not in out:
                out.append(word)
    return out


def reformulate(subtask: str, attempt: int, advice: str) -> str:
    """The search query for ``attempt`` (0-based) of a part.

    * attempt 0: the part's key terms, space-separated. The original text is *not*
      added: the index tokenizes a query the same way, so it would only add the
      stop terms (「方法」「教える」) that match unrelated passages.
    * attempt 1: key terms, the terms the advice names as missing (「不足: …」),
      and the synonyms (``SYNONYM_GROUPS``) of all of them.
    * attempt 2 and later: only the missing terms and their synonyms; when the
      advice names none, as attempt 1.

    Never empty: with no usable term the part's own text is the query.

    >>> reformulate("パスワードの条件を教えて", 0, "")
    'パスワード 条件'

    Raises:
        ValueError: blank ``subtask`` or negative ``attempt``.
    """
    text = _require_text(subtask, "subtask")
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    keys = key_terms(text)
    missing = missing_from_advice(advice)
    if attempt == 0:
        words = keys
    elif attempt >= 2 and missing:
        words = _with_synonyms(missing)
    else:
        words = _with_synonyms([*keys, *(m for m in missing if m not in keys)])
    query = " ".join(dict.fromkeys(w for w in words if w.strip()))
    return query or text


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class _Candidate:
    result: SearchOutput
    order: int
    covered: frozenset[str]
    in_heading: frozenset[str]
    """Key terms named by the passage's heading: the section is about them."""

    @property
    def is_section(self) -> bool:
        """The heading names every key term the passage covers (at least one)."""
        return bool(self.in_heading) and self.in_heading >= self.covered


def _best_passages(terms: list[str], results: Sequence[SearchOutput]) -> list[_Candidate]:
    """The passages to quote: up to ``MAX_QUOTES`` covering ≥ 1 term, most terms first.

    Passages are deduplicated by (file, page, heading, row) and by text; ties go to
    the passage whose heading names more key terms (the section about the topic),
    then the higher score, then the earlier result. When no passage contains a key
    term, the single best-scored passage is returned.
    """
    seen: set[tuple[object, ...]] = set()
    candidates: list[_Candidate] = []
    for order, result in enumerate(results):
        key = (result.file_name, result.page, result.heading, result.row)
        text_key = ("text", re.sub(r"\s+", "", result.content))
        if key in seen or text_key in seen:
            continue
        seen.update({key, text_key})
        prepared = _Text.of(result.content)
        covered = frozenset(t for t in terms if prepared.has(t))
        heading = _Text.of(result.heading or "")
        in_heading = frozenset(t for t in terms if heading.has(t))
        candidates.append(_Candidate(result, order, covered | in_heading, in_heading))
    if not candidates:
        return []
    ranked = sorted(
        candidates,
        key=lambda c: (-len(c.covered), -len(c.in_heading), -c.result.score, c.order),
    )
    chosen = [c for c in ranked if c.covered][:MAX_QUOTES]
    return chosen or ranked[:1]


_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?])|\n+|(?<=[.])\s+")


def _window(sentence: str, terms: list[str]) -> str:
    """A ~200-character window of a long sentence around its first key term."""
    norm = normalize_for_search(sentence)
    first = min((p for t in terms if (p := norm.find(t)) >= 0), default=0)
    start = max(0, min(first - 40, len(sentence) - (MAX_QUOTE_CHARS - 1)))
    lead = "…" if start else ""
    if len(sentence) - start <= MAX_QUOTE_CHARS - len(lead):
        return lead + sentence[start:]
    return lead + sentence[start : start + MAX_QUOTE_CHARS - len(lead) - 1] + "…"


def _section_start(content: str) -> str:
    """The start of a section, its lines kept, up to ``MAX_SECTION_CHARS`` (「…」 when cut).

    A line that does not fit is cut at its last sentence end that fits, or left out.
    """
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in content.split("\n")]
    kept: list[str] = []
    size = 0
    for line in (line for line in lines if line):
        if size + len(line) <= MAX_SECTION_CHARS:
            kept.append(line)
            size += len(line)
            continue
        room = MAX_SECTION_CHARS - size
        ends = [m.end() for m in re.finditer(r"[。！？!?]", line) if m.end() <= room]
        if ends:
            kept.append(line[: ends[-1]])
        elif not kept:
            kept.append(line[: MAX_SECTION_CHARS - 1])
        kept[-1] += "…"
        break
    return "\n".join(kept)


def _trim(content: str, terms: list[str], *, section: bool = False) -> str:
    """The sentences of ``content`` that contain key terms, at most ~200 characters.

    Sentences with the most key terms are kept first while they fit; kept sentences
    stay in text order, with 「…」 where sentences were left out between them. A
    single sentence longer than the limit is cut to a window around its first key
    term, with 「…」 where it was cut. With ``section`` (the passage's heading names
    the key terms, so its body is the answer, e.g. the list under 「パスワードの条件」)
    the passage is quoted from its start instead, up to ``MAX_SECTION_CHARS``.
    """
    if section:
        return _section_start(content)
    sentences = [
        re.sub(r"\s+", " ", s).strip() for s in _SENTENCE_SPLIT.split(content) if s and s.strip()
    ]
    if not sentences:
        return ""
    hits = [sum(1 for t in terms if _Text.of(s).has(t)) for s in sentences]
    ranked = sorted((i for i, n in enumerate(hits) if n), key=lambda i: (-hits[i], i)) or [0]
    if len(sentences[ranked[0]]) > MAX_QUOTE_CHARS:
        return _window(sentences[ranked[0]], terms)
    keep: list[int] = []
    size = 0
    for i in ranked:
        if size + len(sentences[i]) <= MAX_QUOTE_CHARS:
            keep.append(i)
            size += len(sentences[i])
    keep.sort()
    pieces: list[str] = []
    for n, i in enumerate(keep):
        if n and i != keep[n - 1] + 1:
            pieces.append("…")
        elif n and pieces[-1][-1:].isascii() and sentences[i][:1].isascii():
            pieces.append(" ")
        pieces.append(sentences[i])
    return "".join(pieces)


def _label(subtask: str) -> str:
    return re.sub(r"\s+", " ", subtask.strip())


def subtask_answer(subtask: str, results: list[SearchOutput]) -> tuple[str, list[str]]:
    """An answer that quotes the best 1–3 passages, each followed by 【citation】.

    Returns the answer text (Japanese) and the citations used, in order. With no
    results the answer says plainly that nothing was found, and the list is empty.
    """
    text = _require_text(subtask, "subtask")
    terms = _atomic(key_terms(text))
    chosen = _best_passages(terms, results)
    if not chosen:
        return (
            f"「{_label(text)}」については、マニュアル・FAQに該当する記述が見つかりませんでした。",
            [],
        )
    if any(c.covered for c in chosen):
        lines = [f"「{_label(text)}」について、資料には次の記述があります。"]
    else:
        lines = [
            f"「{_label(text)}」に直接当てはまる記述は見つかりませんでしたが、"
            "関連しそうな記述は次のとおりです。"
        ]
    citations: list[str] = []
    for candidate in chosen:
        citation = candidate.result.citation()
        # an FAQ row (Q + A) is quoted whole: its answer is the point
        whole = candidate.is_section or candidate.result.row is not None
        quote = _trim(candidate.result.content, terms, section=whole)
        # a quote of several lines stays one list item: hard breaks, indented
        lines.append("- " + quote.replace("\n", "  \n  ") + f"【{citation}】")
        if citation not in citations:
            citations.append(citation)
    return "\n".join(lines), citations


def _accepts(n_terms: int, n_covered: int) -> bool:
    """All key terms covered, or ≥ 2/3 of them (rounded up) when there are ≥ 3."""
    if n_terms >= 3:
        return n_covered >= math.ceil(2 * n_terms / 3)
    return n_covered == n_terms


def reflect(subtask: str, results: list[SearchOutput], attempt: int) -> ReflectionResult:
    """Is the part answered? Judged on the passages :func:`subtask_answer` quotes.

    Rule: the quoted passages (with synonyms) must contain every key term of the
    part, or ≥ 2/3 of them (rounded up: 3 of 4, 2 of 3) when it has 3 or more. A part
    with no key terms is done when anything was found. No results is never done.
    The advice names the missing terms as ``"不足: A, B。"`` (parsed back by
    :func:`reformulate`) and a next step that depends on ``attempt`` (0-based).

    Raises:
        ValueError: blank ``subtask`` or negative ``attempt``.
    """
    text = _require_text(subtask, "subtask")
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, got {attempt}")
    terms = _atomic(key_terms(text))
    chosen = _best_passages(terms, results)
    covered = {t for c in chosen for t in c.covered}
    if chosen and _accepts(len(terms), len(covered)):
        return ReflectionResult(advice="", is_completed=True)
    missing = [t for t in terms if t not in covered]
    lead = "検索結果がありませんでした。" if not results else ""
    named = f"不足: {', '.join(missing)}。" if missing else ""
    if attempt == 0:
        step = "同義語を加えて、マニュアル検索とFAQ検索の両方で検索し直してください。"
    elif attempt == 1:
        step = "不足している語だけに絞り、もう一方のツールでも検索してください。"
    else:
        step = "資料に記載がない可能性があります。見つからなかった点として回答してください。"
    return ReflectionResult(advice=lead + named + step, is_completed=False)


# --------------------------------------------------------------------------- final answer

_CITED = re.compile(r"【([^】]+)】")


def final_answer(question: str, subtasks: list[Subtask]) -> str:
    """The final answer in Markdown, built from the parts' answers.

    Layout: the offline label line, the question, one ``###`` section per part with
    its answer, a 「出典」 list (distinct citations in first-use order: each part's
    ``sources``, then citations in 【】 of its answer), and — when any part is not
    completed — a 「見つからなかった点」 section naming those parts.

    Raises:
        ValueError: blank ``question``.
    """
    text = _require_text(question, "question")
    lines = [OFFLINE_LABEL, "", f"**ご質問**: {_label(text)}", ""]
    if not subtasks:
        lines.append("回答できる内容が見つかりませんでした。")
    sources: list[str] = []
    for number, subtask in enumerate(subtasks, start=1):
        answer = subtask.subtask_answer.strip() or "（回答がありません）"
        lines += [f"### {number}. {_label(subtask.task_name)}", "", answer, ""]
        for citation in [*subtask.sources, *_CITED.findall(subtask.subtask_answer)]:
            if citation not in sources:
                sources.append(citation)
    lines += ["### 出典", ""]
    if sources:
        lines += [f"{n}. {citation}" for n, citation in enumerate(sources, start=1)]
    else:
        lines.append("該当する資料は見つかりませんでした。")
    open_parts = [s for s in subtasks if not s.is_completed]
    if open_parts:
        lines += [
            "",
            "### 見つからなかった点",
            "",
            "次の点は、マニュアル・FAQから十分な記述が見つかりませんでした。"
            "ヘルプデスクにお問い合わせください。",
            "",
        ]
        lines += [f"- {_label(s.task_name)}" for s in open_parts]
    return "\n".join(lines).rstrip() + "\n"


__all__ = [
    "MAX_PARTS",
    "OFFLINE_LABEL",
    "STOP_TERMS",
    "SYNONYM_GROUPS",
    "final_answer",
    "key_terms",
    "missing_from_advice",
    "reflect",
    "reformulate",
    "split_question",
    "subtask_answer",
    "synonyms",
]
