"""The offline plan: a question split into its parts by rules (:func:`split_question`).

"パスワードの条件と、ロックされた時の解除方法を教えて" → two parts, each with the shared
「教えて」. The rules are listed in :func:`split_question`'s docstring.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from keiri_agent.agents.helpdesk.offline.specificity import is_generic
from keiri_agent.agents.helpdesk.offline.terms import (
    DEFAULT_VOCABULARY,
    Vocabulary,
    key_terms,
    require_text,
)
from keiri_agent.search.tokenize import is_adverbial

MAX_PARTS = 5

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
_CLAUSE_END = re.compile(
    r"(?:場合|時|とき|際|後|あと|前|ため|ところ|以外|の間|のうち)(?:は|に|も|で)?$"
)
# 「と」 followed by one of these is a quotation or a relation, not an enumeration.
_TO_BLOCKED = re.compile(
    r"^(?:表示|出|言|い[うわ]|書|記載|入力|な[るっりら]|し[てた]|す[るれ]|思|呼|同|一緒|共|比|違|"
    r"異な|連携|連動|接続|紐付|紐づ|関係|関連|一致|重複|混同|区別|交換|併用|同時|同様)"
)
_LIST_COMMA = re.compile(r"(?<!\d)[、,，]|(?<=\d)[、,，](?!\d)")
"""A comma that may separate parts: not the thousands separator of 「8,000円」."""
_SEPARATOR = re.compile(
    r"(?P<conn>[、,，]\s*(?:また|それから|あと|さらに|それと|加えて|ほかに|他に)\s*[、,，]?)"
    r"|(?P<and>\s*(?:および|及び|ならびに|並びに)\s*[、,，]?)"
    # the と of こと / とき / ところ is part of a word, not a separator
    r"|(?P<tocomma>(?<!こ)と\s*[、,，])"
    r"|(?P<to>(?<!こ)と(?!き|ころ))"
    r"|(?P<ya>や)"
    rf"|(?P<comma>{_LIST_COMMA.pattern})"
)
_VERB_PREDICATE = re.compile(
    r"(?:ます|ません|ました|ない|れる|られる|できる|せる|[うくぐすつぬぶむる]|た|だ)"
    r"(?:か|よね|ね|の|かな|っけ|でしょうか|んですか)?[？?。！!…]*$"
)
"""A clause ending in its own verb (「ゴミ箱から戻せますよね？」), not a noun (「…の上限は？」)."""
_OBJECT_OF_VERB = re.compile(r"^[^をのはがにでと、,，。？?]+を")
"""The noun after 「や」 is the object of a verb (「氏名や会社名を残したい」), not a topic."""
_COMPARISON_JA = re.compile(
    r"違い|違う|ちがい|ちがう|差異|相違|比較|比べ|くらべ|どちら|どっち|使い分け|区別|異な|の差(?![戻し])"
    r"|の(?:連携|連動|関係|関連|紐付け|紐づけ|組み合わせ|併用|統合)"  # 「AとBの連携」: one relation
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
# A sentence that starts by referring back to the one before: 「この場合、…」「それは…」
# 「その際…」「では…」, "In that case, …", "If so, …", "Then …", "It …". It is no part on
# its own: it joins the previous part.
_REFERS_BACK = re.compile(
    r"^(?!それ(?:と|から|に)[、,，\s])"  # 「それと、」「それから、」 add a question
    r"(?:この|その|あの|こう|そう|これ|それ|あれ|こちら|そちら|あちら|そこ|ここ|"
    r"同じ|上記|前述|では|じゃあ|だとすると|だとしたら|だったら|なら"
    r"|(?:でき|可能)(?:る|な)?(?:の)?(?:なら|ならば|れば|場合))"
    r"|^(?:in\s+(?:that|this|such\s+a|which)\s+case|if\s+so|then|that|this|it|they|those"
    r"|these|what\s+about\s+(?:that|this|it))\b",
    re.IGNORECASE,
)
_EN_DIFFER_AFTER = re.compile(r"^\s*(?:\S+\s+){0,3}?(?:differ|different|compare)", re.IGNORECASE)
_OPENERS = '（(「『【［[〔〈《“"'
_CLOSERS = '）)」』】］]〕〉》”"'
# A sentence that asks only for an amount (「何分で切れるの？」「最長何日？」"How many days?")
# names no subject of its own: it asks about the sentence before.
_ASKS_AMOUNT = re.compile(
    r"何(?:分|秒|時間|日|週|か月|ヶ月|カ月|年|件|回|円|人|名|文字|桁|個|枚|MB|GB|%|％|割)"
    r"|いくら|いくつ|いつまで|いつから|どのくらい|どれくらい|どれぐらい|どのぐらい"
    r"|\bhow\s+(?:many|much|long|often|soon)\b",
    re.IGNORECASE,
)
_AMOUNT_WORDS_TEXT = (
    "最長 最大 最小 最短 最低 最高 上限 下限 分 秒 時間 日 週 月 年 件 回 円 人 名 文字 桁 一度"
    " 個 枚 many much long often soon after before until within second seconds minute"
    " minutes hour hours day days week weeks month months year years time times"
)
_AMOUNT_WORDS = frozenset(_AMOUNT_WORDS_TEXT.split())


def enclosed(text: str) -> list[bool]:
    """For each character, whether it lies inside brackets or quotes (「…」（…）"…").

    Separators and sentence ends inside them belong to what is quoted or bracketed:
    「交通費（電車、バス）の精算方法」 is one part. An unclosed bracket encloses nothing
    (a typo must not glue the rest of the question together).
    """
    inside = [False] * len(text)
    stack: list[int] = []
    for index, char in enumerate(text):
        if char in _CLOSERS and stack and (char != '"' or text[stack[-1]] == '"'):
            start = stack.pop()
            if not stack:
                for i in range(start + 1, index):
                    inside[i] = True
        elif char in _OPENERS:
            stack.append(index)
    return inside


def _has_content(text: str, vocabulary: Vocabulary) -> bool:
    return bool(key_terms(text, vocabulary))


def _protected_ja(sentence: str, matches: list[re.Match[str]]) -> set[int]:
    """Start offsets of separators that belong to a comparison ("AとBの違い").

    For each comparison word, the と/や/および between the previous 「、」 and the word
    are part of the comparison; when there is none ("Aと、Bの違い"), the 「と、」 just
    before that 「、」 is.
    """
    protected: set[int] = set()
    for hit in _COMPARISON_JA.finditer(sentence):
        pos = hit.start()
        commas = [m.end() for m in _LIST_COMMA.finditer(sentence[:pos])]
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
    inside = enclosed(sentence)
    matches = [m for m in _SEPARATOR.finditer(sentence) if not inside[m.start()]]
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
            if ok and kind == "ya":  # 「氏名や会社名を残せますか」: the objects of one verb
                ok = not _OBJECT_OF_VERB.match(after) or _CARRY.search(after) is not None
        else:  # a bare 「、」; 「消しちゃった資産、ゴミ箱から戻せますか」: what the verb is about
            ok = (
                not _CLAUSE_END.search(before)
                and not is_adverbial(before)
                and (not _VERB_PREDICATE.search(after) or _CARRY.search(after) is not None)
                and bool(
                    _NOUNISH_END.search(before)
                    or _ABOUT_END.search(before)
                    or _CARRY.search(before)
                    or before.endswith(("たい", "ですか", "ますか", "でしょうか"))
                )
            )
        if ok:
            cuts.append((m.start(), m.end()))
            last = m.end()
    return cuts


def _cuts_en(sentence: str) -> list[tuple[int, int]]:
    """Where an English sentence splits: ";" always, "and" before a new clause or object."""
    cuts: list[tuple[int, int]] = []
    protected: set[int] = {i for i, flag in enumerate(enclosed(sentence)) if flag}
    for hit in _EN_COMPARISON.finditer(sentence):
        first_and = re.search(r"\band\b", sentence[hit.end() :], re.IGNORECASE)
        if first_and:
            protected.add(hit.end() + first_and.start())
    for m in re.finditer(r"\s*;\s*|,?\s+\band\b\s+", sentence, re.IGNORECASE):
        if m.start() in protected:
            continue
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


def _pieces(sentence: str, cuts: list[tuple[int, int]], vocabulary: Vocabulary) -> list[str]:
    """The sentence cut at ``cuts``; a piece without content terms rejoins its neighbour."""
    bounds = [0, *[x for cut in cuts for x in cut], len(sentence)]
    spans = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        # A piece without content joins the previous one; so does the piece after a
        # content-less first piece.
        if merged and (
            not _has_content(sentence[start:end], vocabulary)
            or not _has_content(sentence[merged[-1][0] : merged[-1][1]], vocabulary)
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


_PLAIN_NOUN = r"[\u30a0-\u30ff\u3400-\u9fffA-Za-z0-9ー・々\s]+"
_BARE = re.compile(rf"^{_PLAIN_NOUN}$")
_OF_HEAD = re.compile(rf"^{_PLAIN_NOUN}の(?P<head>.+)$")


def _share_head(parts: list[str]) -> list[str]:
    """「交通費と宿泊費の上限」: a listed bare noun shares the head noun of the next part that
    has one (「交通費の上限」「宿泊費の上限」), not the bare noun alone (「交通費を教えて」);
    in 「ProcuraとIdPのシングルサインオン、およびSCIMによる連携」 the head is the next
    part's (「Procuraのシングルサインオン」), not the last one's."""
    out = list(parts)
    for index, part in enumerate(parts[:-1]):
        if not _BARE.match(part.strip()):
            continue
        heads = (_OF_HEAD.match(later.strip()) for later in parts[index + 1 :])
        found = next((h for h in heads if h is not None), None)
        if found is not None:
            out[index] = part.strip() + "の" + found.group("head")
    return out


_SITUATION = re.compile(r"^(?P<situation>.+?(?:場合|とき|時|際)の)(?=\S)")
"""A first part that starts with the situation it asks about (「登録を取りやめる場合の社内
手続き」): the situation applies to the nouns listed after it too."""
_TOPIC = re.compile(r"(?:について|に関して)(?:は|も)?[、,]?\s*$")
"""A first part that is only a topic (「減損の兆候がある資産について、」)."""


def _carry_situation(parts: list[str]) -> list[str]:
    """「…を取りやめる場合の社内手続きと届出の期限」: the second part is asked in the same
    situation (「…を取りやめる場合の届出の期限」), unless it names a situation of its own.
    「減損の兆候がある資産について、減損の手順と会計処理」: a topic said first, alone, is
    what each listed part asks about (「…資産について、会計処理」), not a part of its own."""
    topic = _TOPIC.search(parts[0]) if len(parts) >= 2 else None
    if topic is not None and not any(re.search("について|に関して", p) for p in parts[1:]):
        return [f"{parts[0].strip()}、{p}" for p in parts[1:]]
    found = _SITUATION.match(parts[0]) if len(parts) >= 2 else None
    if found is None:
        return parts
    situation = found.group("situation")
    return [
        parts[0],
        *(p if re.search(r"場合|とき|時|際", p) else situation + p for p in parts[1:]),
    ]


def _rejoin_references(sentence: str, pieces: list[str]) -> list[str]:
    """A piece that refers to the one before (「…の保管期間と、それを出力する手順」: 「それ」
    is the log) stays with it, as written in ``sentence``."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for piece in pieces:
        start = sentence.find(piece, position)
        end = start + len(piece) if start >= 0 else -1
        position = max(position, end)
        if out and start >= 0 and spans[-1][0] >= 0 and _REFERS_BACK.match(piece.strip()):
            spans[-1] = (spans[-1][0], end)
            out[-1] = sentence[spans[-1][0] : end]
            continue
        out.append(piece)
        spans.append((start, end))
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


def _split_sentence(
    sentence: str, vocabulary: Vocabulary, shared: re.Match[str] | None = None
) -> list[str]:
    """One sentence (or list item) → its parts, the predicate carried."""
    sentence = _LEADING_CONNECTOR.sub("", sentence.strip()).strip()
    if not sentence:
        return []
    if _JA_CHAR.search(sentence):
        pieces = _pieces(sentence, _cuts_ja(sentence), vocabulary)
        parts = [_LEADING_CONNECTOR.sub("", p) for p in _rejoin_references(sentence, pieces)]
        predicate = _CARRY.search(parts[-1]) or shared
        parts = _carry_ja(_carry_situation(_share_head(parts)), predicate)
    else:
        parts = [
            _LEADING_CONNECTOR.sub("", p) for p in _pieces(sentence, _cuts_en(sentence), vocabulary)
        ]
        parts = _carry_en(parts)
    return [p.strip().rstrip("。．、,， ").strip() for p in parts if p.strip()]


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: cut at line breaks and at end marks outside brackets."""
    out: list[str] = []
    for line in text.splitlines():
        inside = enclosed(line)
        start = 0
        for end in _SENTENCE_END.finditer(line):
            if end.start() and inside[end.start() - 1]:
                continue
            out.append(line[start : end.start()])
            start = end.end()
        out.append(line[start:])
    return [s.strip() for s in out if s.strip()]


_ASKING_JA = re.compile(
    r"[？?]\s*$|(?:か|の|かな|っけ|かしら)[。．!！]?\s*$"
    r"|ください|下さい|教えて|知りた|聞きた|伺いた"
    r"|ほしい|欲しい|お願い"
    r"|何|どう|いつ|どこ|誰|どれ|どの|どちら|どっち|いくら|いくつ|なぜ|なんで|どんな|どのくらい"
)
_WISH_JA = re.compile(r"たい(?:です|んです|のです)?[。．!！]?\s*$")
"""A sentence saying what the user wants to do (「…を登録したいです。」)."""
_ASKING_EN = re.compile(
    r"\?\s*$|^\s*(?:how|what|where|when|why|who|which|whether|can|could|do|does|is|are"
    r"|should|will|would|please|tell|explain|show|describe)\b",
    re.IGNORECASE,
)


def asks(sentence: str) -> bool:
    """The sentence asks or requests something (a question mark, an interrogative, 「…か」
    「…の？」, 「教えて」「…したい」); one that does not (「40万円のPCを購入する予定です。」
    「ログアウトされた。」) tells the situation the question is asked in."""
    if not _JA_CHAR.search(sentence):
        return _ASKING_EN.search(sentence.strip()) is not None
    return bool(_ASKING_JA.search(sentence.strip()) or _WISH_JA.search(sentence.strip()))


def tells(sentence: str, later: Sequence[str]) -> bool:
    """The sentence tells the situation of a question asked in a ``later`` sentence: it
    asks nothing (:func:`asks`), or only says what the user wants to do (「来週…の登録を
    しておきたいです。どのメニューから入れますか？」) while a later sentence asks."""
    if not any(asks(other) for other in later):
        return False
    if not asks(sentence):
        return True
    text = sentence.strip()
    return bool(_JA_CHAR.search(text) and _WISH_JA.search(text) and not _ASKING_JA.search(text))


def _names_no_subject(sentence: str, vocabulary: Vocabulary) -> bool:
    """The sentence asks about no subject of its own: an amount (「最長何日？」) or only
    generic words (「設定メニューはどこでしょう」) — it asks about the sentence before."""
    terms = key_terms(sentence, vocabulary)
    if terms and all(is_generic(term) for term in terms):
        return asks(sentence)
    if not _ASKS_AMOUNT.search(sentence):
        return False
    return all(term.lower() in _AMOUNT_WORDS or is_generic(term) for term in terms)


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


def split_question(question: str, vocabulary: Vocabulary = DEFAULT_VOCABULARY) -> list[str]:
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
       of the last part is carried to the parts that end in a noun; **the situation**
       the first part starts with (「…を解除する場合の社内手続きと届出の期限」) to the
       parts that name none of their own; **the head noun** of the last part to the bare
       nouns listed before it (「交通費と宿泊費の上限」 → 「交通費の上限」「宿泊費の上限」).
       A thousands separator (「8,000円」) is no comma; a listed part that refers to the
       one before (「…の保管期間と、それを出力する手順」) stays with it.
    6. **Fragments without a content term** (「どうすればいいですか」) rejoin their
       neighbour; duplicates are dropped; more than ``MAX_PARTS`` parts → the tail
       is merged into the last part. A question with no content term at all is one
       part (itself).
    7. **A situation stays with its question.** A sentence that asks nothing
       (「税込40万円のPCを購入する予定です。」) before one that asks is no part on its
       own: it opens each part of the question it frames (:func:`asks`).
       **Follow-ups stay with their context.** A sentence that refers back to the one
       before (「この場合、…」「それは…」「その際…」, "In that case, …", "If so, …",
       "It …") or asks only for an amount (「何分で切れるの？」「最長何日？」) is no part
       on its own: it is kept, whole, after the previous part.
    8. **Brackets and quotes are never cut**: separators and end marks inside
       「…」（…）"…" belong to what they enclose (「交通費（電車、バス）の精算方法」).

    >>> split_question("パスワードの条件と、ロックされた時の解除方法を教えて")
    ['パスワードの条件を教えて', 'ロックされた時の解除方法を教えて']
    >>> split_question("承認と差戻しの違いを教えてください")
    ['承認と差戻しの違いを教えてください']
    >>> split_question("申請が差し戻されました。この場合、どこを直せばよいですか")
    ['申請が差し戻されました。この場合、どこを直せばよいですか']
    >>> split_question("How do I reset my password and what are the password rules?")
    ['How do I reset my password', 'what are the password rules?']

    Raises:
        ValueError: the question is empty or only whitespace.
    """
    text = require_text(question, "question")
    lines = [line for line in text.splitlines() if line.strip()]
    items = [i for i, line in enumerate(lines) if _LIST_ITEM.match(line)]
    if len(items) >= 2:
        parts = _list_parts(lines, items, vocabulary)
    else:
        parts = _sentence_parts(text, vocabulary)
    parts = [p for p in dict.fromkeys(parts) if p]
    contentful = [p for p in parts if _has_content(p, vocabulary)]
    if not contentful:
        return [re.sub(r"\s+", " ", text)]
    if len(contentful) > MAX_PARTS:
        contentful = [*contentful[: MAX_PARTS - 1], _join(contentful[MAX_PARTS - 1 :])]
    return contentful


def _list_parts(lines: list[str], items: list[int], vocabulary: Vocabulary) -> list[str]:
    """Rule 1: the parts of the lines before the list, then each item (and other lines)."""
    head = [s for line in lines[: items[0]] for s in sentences(line)]
    shared = next((m for s in head if (m := _CARRY.search(s))), None)
    parts = [
        p
        for sentence in head
        for p in _split_sentence(sentence, vocabulary)
        if _has_content(p, vocabulary)
    ]
    for i, line in enumerate(lines[items[0] :], start=items[0]):
        if i in items:
            parts.extend(_split_sentence(_LIST_ITEM.sub("", line, count=1), vocabulary, shared))
        else:
            parts.extend(p for s in sentences(line) for p in _split_sentence(s, vocabulary))
    return parts


def _sentence_parts(text: str, vocabulary: Vocabulary) -> list[str]:
    """Rules 2-7 per sentence.

    A sentence that is one content-less fragment joins the last part; so does a
    follow-up that refers back (「この場合、…」「それは…」, "In that case, …"), whole.
    """
    parts: list[str] = []
    situation = ""  # sentences telling the situation, waiting for the question they frame
    every = sentences(text)
    for index, sentence in enumerate(every):
        if parts and (
            _REFERS_BACK.match(sentence.strip()) or _names_no_subject(sentence, vocabulary)
        ):
            parts[-1] = _follow_up(parts[-1], sentence.strip())
            continue
        if tells(sentence, every[index + 1 :]):
            situation = _then(situation, sentence.strip()) if situation else sentence.strip()
            continue
        pieces = _split_sentence(sentence, vocabulary)
        if situation and pieces:
            pieces = [_then(situation, piece) for piece in pieces]
            situation = ""
        if parts and pieces and not _has_content(pieces[0], vocabulary) and len(pieces) == 1:
            parts[-1] = _join([parts[-1], pieces[0]])
        else:
            parts.extend(pieces)
    return parts


def _then(first: str, second: str) -> str:
    """Two sentences as one text: 「…です。…ですか？」, "… rejected. In that case, …"."""
    if _JA_CHAR.search(first):
        return first.rstrip("。．、,， ") + "。" + second
    return first.rstrip() + " " + second


def _follow_up(part: str, sentence: str) -> str:
    """``part`` followed by the sentence that refers back to it (its end mark dropped)."""
    sentence = sentence.rstrip("。．、,， ").strip()
    if _JA_CHAR.search(sentence):
        return part.rstrip("。．.?？!！ ") + "。" + sentence
    return part.rstrip(".?!;, ") + ". " + sentence
