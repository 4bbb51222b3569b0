"""Offline reading of an instruction into its requirement model (issue 27 §2).

``read_procedure(instruction, documents=())`` returns a ``procedure.Procedure`` by
rules over Japanese word formation and the catalog's own vocabulary (the operations
the table blocks do: 絞り込み, 集計, 並べ替え, 重複, 結合, 照合, 計算, 表記の統一,
承認, 出力), never over the wording of a test set:

- numbers are read as offices write them (``5,000円``, ``５万円``, ``1万5千円``);
- a column is the noun (kanji / katakana / Latin run, okurigana allowed) right before
  the particle of the pattern; a parameter the instruction does not give is left
  ``None`` and listed in ``StepSpec.missing`` (asked later, never defaulted);
- ``X が N円を超える``: X is the amount column when it reads as an amount (a noun
  ending in 額, 金, 価, 料, 代, 高, 売上 …); otherwise X is a value of a column the
  instruction does not name (an account such as 交際費) and both columns are asked;
- **honesty**: every action word (a verb, or a サ変 noun used with する) the rules did
  not use, every number they did not use and every 「quoted」 term they did not use
  makes a ``Gap``: the part is named and nothing is silently dropped. A step that needs
  a second table the instruction never names is a ``missing_source`` gap.

Reference documents: a filter whose threshold is missing takes it from a sentence of
the documents that names the same word with an amount and an operator (a 社内規程
「交際費は5,000円超で要承認」), and the step's ``source`` says where it came from.
"""

from __future__ import annotations

import bisect
import calendar
import contextlib
import functools
import itertools
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from keiri_agent.plans.design.procedure import (
    COUNT_ALL,
    METRIC_WORDS,
    Condition,
    Gap,
    GapKind,
    InputSpec,
    OutputSpec,
    Procedure,
    StepSpec,
    condition_text,
    step_text,
)
from keiri_agent.plans.design.tasks import TASKS

_K = "\u4e00-\u9fff々〆ヵヶ"
_KATA = "\u30a1-\u30faー"
_NAME_CHAR = rf"[A-Za-z_{_K}{_KATA}]"
_NAME = (
    rf"{_NAME_CHAR}(?:{_NAME_CHAR}|(?<=[A-Za-z0-9])\d|(?<=[A-Za-z])[-/](?=[A-Za-z])"
    r"|(?<=[A-Za-z]) (?=[A-Z][a-z])"  # 「Invoice No」
    r"|(?<=_)[%°]|(?<=°)[CF])"  # 「塩分濃度_%」「温度_℃」: a unit after the underscore
    r"{0,39}"
)
"""One character a step and at most 40, so no run can be split two ways or be retried at
length on a long instruction (bounded backtracking); digits belong to Latin runs (S012,
amount2), never glue kanji to a number (金額10万); B/L番号 and e-Gov are one name."""
_STEP_NOUN_SHI = (
    r"(?<=結合|集計|抽出|計算|合計|除外|削除|照合|突合|連結|追加|付与|作成|出力|変換|統一|置換|分類"
    r"|比較|参照|集約|合算|確認|整列|選択)し"
)
"""「…で結合し商品カテゴリを付ける」: a step's verb in its 連用形, not okurigana of a noun."""
NOUN = (
    rf"(?<![.A-Za-z_])(?:\d+(?=[A-Za-z_{_K}{_KATA}])|(?<![ぁ-ん])[おご](?=[{_K}]))?{_NAME}"
    rf"(?:(?:(?!した)(?!{_STEP_NOUN_SHI})[いみめりしきえたせげけち]{{1,2}}|わせ|合わせ|まり)[{_K}](?:[{_K}{_KATA}A-Za-z]|(?<=[A-Za-z])\d){{0,19}}){{0,3}}"
)
"""A column-like noun: kanji, katakana, Latin and digits; okurigana between kanji. Never
the tail of a Latin word or a file's extension (「経費.csv、金額」 names no column csv)."""
QNOUN = rf"(?:「[^」]{{1,40}}」|{NOUN})"
LIST_SEP = r"(?:・|と|、|,|及び|および|並びに|や|\+)"
NUM = r"-?\d+(?:,\d{3})*(?:\.\d+)?"
UNIT = (
    r"(?:円|件|個|日|人|名|%|％|時間|分|泊|回|台|枚|本|部|冊|箱|ヶ月|か月|カ月|年|歳|トン|点|ドル|ユーロ"
    r"|kg|km|km/h)"
)
AMOUNT = (
    rf"(?:{NUM}\s*(?:億\s*(?:{NUM}\s*万)?|千\s*万|万(?:{NUM}\s*千(?:\d{{1,3}}(?![\d,]))?|\d{{1,4}}(?![\d,]))?"
    rf"|万\s*(?:{NUM}\s*千)?|千(?:\d{{1,3}}(?![\d,]))?)?\s*{UNIT}?"
    r"|(?<![\d万千億])(?:千|一千|一万|万)\s*円)"
)

_AMOUNT_NOUN = re.compile(
    r"(額|金|価|価格|料|料金|代|代金|高|売上|残高|費用|単価|金額|報酬|賃金|給与|給料|手当|税|賃|給"
    r"|年収|月収|収入|収益|利益|所得|賞与"
    r"|予算|原価|(?<=..)合計|(?<=..)小計)$"
)
"""Nouns that name an amount column (word formation: 金額, 請求額, 単価, 残高 …)."""

ORDERING_OPS = (">=", ">", "<=", "<")
_OP_WORDS: list[tuple[str, str]] = [
    (r"以上|以降|以後", ">="),
    (
        r"超(?:え(?:る|た|の)?)?|を超え(?:る|た|て)?|を上回る|より(?:大きい|大きく|多い|多く|高い|高く|上)",
        ">",
    ),
    (r"以下|以内|まで|以前", "<="),
    (
        r"未満|を下回る|に満たない|に届(?:いて(?:い)?ない|かない)|より(?:小さい|少ない|低い|下)",
        "<",
    ),
    (r"で(?:は)?ない|以外|じゃない", "!="),
    (r"ちょうど|と等しい|と同じ|の(?=\s*(?:行|もの|データ|明細|取引|レコード))", "=="),
]


def _op_of(word: str) -> str:
    """The operator of a comparison word (「の」 before 行 / もの is equality)."""
    if word == "の":
        return "=="
    return next(o for words, o in _OP_WORDS if re.fullmatch(words, word))


_DATE = (
    r"(?:\d{4}[/\-.]\d{1,2}[/\-.]\d{1,2}|\d{4}年\d{1,2}月\d{1,2}日"
    r"|(?:令和|平成)(?:元|\d{1,2})年\d{1,2}月\d{1,2}日)"
)
_DATE_OPS: list[tuple[str, str]] = [
    (r"以降|以後|から|以上", ">="),
    (r"以前|まで|以下", "<="),
    (r"未満", "<"),
    (r"超|より後", ">"),
    (r"より前|前", "<"),
    (r"後", ">"),
]

_GLUE_ACTIONS = frozenset(
    [
        "ダブる",
        "だぶる",
        "向ける",  # 「展示会の案内に向けて」: what the list is for
        "はさむ",  # 「承認をはさむこと」: said with the approval it places
        "挟む",
        "混じる",
        "食い違う",
        "教える",
        "載る",
        "助かる",
        "幸い",
        "嬉しい",
        "照らす",
        "当てはまる",
        "差し引く",
        "ずれる",
        "込",
        "込む",
        "許す",
        "認める",
        "混ざる",
        "混在",
        "挟む",
        "含める",
        "合う",
        "する",
        "いる",
        "ある",
        "なる",
        "できる",
        "行う",
        "おこなう",
        "ください",
        "くださる",
        "頼む",
        "組む",
        "下さい",
        "ほしい",
        "欲しい",
        "もらう",
        "貰う",
        "頂く",
        "いただく",
        "お願い",
        "願う",
        "出す",
        "作る",
        "作成",
        "まとめる",
        "出力",
        "書き出す",
        "書き出し",
        "保存",
        "読む",
        "読み込む",
        "読込",
        "読み込み",
        "取り込む",
        "取込",
        "取り込み",
        "使う",
        "用いる",
        "使用",
        "利用",
        "入れる",
        "見る",
        "見せる",
        "表示",
        "確認",
        "知る",
        "分かる",
        "わかる",
        "求める",
        "出る",
        "並べる",
        "並べ替える",
        "並べ直す",
        "並び替える",
        "返す",
        "渡す",
        "置く",
        "持つ",
        "含む",
        "受け取る",
        "アップロード",
        "添付",
        "開く",
        "与える",
        "用意",
        "準備",
        "処理",
        "実行",
        "とる",
        "取る",
        "落とす",
        "吐き出す",
        "集める",
        "抜き出す",
        "抽出",
        "リストアップ",
        "絞る",
        "絞り込む",
        "絞り込み",
        "探す",
        "見つける",
        "洗い出す",
        "洗い出し",
        "拾う",
        "拾い出す",
        "除く",
        "除外",
        "外す",
        "省く",
        "削除",
        "消す",
        "取り除く",
        "集計",
        "合計",
        "平均",
        "算出",
        "計算",
        "掛ける",
        "かける",
        "引く",
        "割る",
        "照合",
        "突合",
        "突き合わせる",
        "突き合わせ",
        "消込",
        "消し込む",
        "消し込み",
        "結合",
        "連結",
        "紐付ける",
        "紐づける",
        "ひも付ける",
        "参照",
        "付与",
        "統一",
        "揃える",
        "そろえる",
        "正規化",
        "整える",
        "チェック",
        "超える",
        "上回る",
        "下回る",
        "満たす",
        "満たない",
        "該当",
        "分ける",
        "分類",
        "仕分ける",
        "推定",
        "読み取る",
        "取り出す",
        "一致",
        "重複",
        "指定",
        "基づく",
        "沿う",
        "従う",
        "入力",
        "記載",
        "越える",
        "対象",
        "ソート",
        "ならべる",
        "以外",
        "抜く",
        "変換",
        "出来る",
        "整理",
        "作れる",
        "まとまる",
        "混在",
        "混ざる",
        "挟む",
        "含める",
        "超す",
        "合う",
        "つく",
        "許容",
        "入る",
        "来る",
        "届く",
        "なる",
        "違う",
        "異なる",
        "乗せる",
        "上乗せ",
        "作る",
        "バラバラ",
        "付く",
        "みなす",
        "見なす",
        "扱う",
        "数える",
        "加える",
        "追加",
        "求まる",
        "言う",
        "いう",
        "済む",
        "すむ",
        "存ずる",
        "存じる",
        "点る",
        "一覧化",
        "リスト化",
        "表化",
        "見える化",
        "データ化",
        "ファイル化",
        "経る",
        "ちょうだい",
        "頂戴",
        "恐れ入る",
        "恐縮",
        "出し直す",
        "作り直す",
        "保存し直す",
        "構う",
        "思う",
        "考える",
        "書く",
        "記入",
        "承認",
        "決裁",
        "レビュー",
        "点検",
        "残る",
    ]
)
"""Action words that carry no step of their own (the step is found by its own words)."""

STEP_VERBS: dict[str, frozenset[str]] = {
    "計算": frozenset({"compute", "aggregate"}),
    "算出": frozenset({"compute", "aggregate"}),
    "求める": frozenset({"compute", "aggregate"}),
    "集計": frozenset({"aggregate"}),
    "グループ化": frozenset({"aggregate"}),
    "合計": frozenset({"aggregate"}),
    "平均": frozenset({"aggregate"}),
    "限る": frozenset({"filter", "select"}),
    "限定": frozenset({"filter", "select"}),
    "数える": frozenset({"aggregate"}),
    "カウント": frozenset({"aggregate"}),
    "抽出": frozenset({"filter", "select", "extract", "dedupe", "reconcile"}),
    "リストアップ": frozenset({"filter", "select"}),
    "絞る": frozenset({"filter", "select"}),
    "絞り込む": frozenset({"filter", "select"}),
    "抜き出す": frozenset({"filter", "select", "extract"}),
    "洗い出す": frozenset({"filter", "reconcile"}),
    "拾う": frozenset({"filter", "reconcile"}),
    "除く": frozenset({"filter", "dedupe", "select"}),
    "除外": frozenset({"filter", "dedupe", "select"}),
    "削除": frozenset({"filter", "dedupe", "select"}),
    "除去": frozenset({"filter", "dedupe", "select"}),
    "取り除く": frozenset({"filter", "dedupe", "select"}),
    "外す": frozenset({"filter", "dedupe", "select"}),
    "並べる": frozenset({"sort"}),
    "ソート": frozenset({"sort"}),
    "並べ替える": frozenset({"sort"}),
    "並べ直す": frozenset({"sort"}),
    "並び替える": frozenset({"sort"}),
    "照合": frozenset({"reconcile", "join"}),
    "引っ張る": frozenset({"join"}),
    "持ってくる": frozenset({"join"}),
    "比べる": frozenset({"reconcile"}),
    "比較": frozenset({"reconcile"}),
    "突合": frozenset({"reconcile", "join"}),
    "突き合わせる": frozenset({"reconcile", "join"}),
    "消し込む": frozenset({"reconcile"}),
    "結合": frozenset({"join", "concat"}),
    "連結": frozenset({"concat", "join"}),
    "紐付ける": frozenset({"join", "reconcile"}),
    "紐づける": frozenset({"join", "reconcile"}),
    "ひも付ける": frozenset({"join", "reconcile"}),
    "ひもづける": frozenset({"join", "reconcile"}),
    "正規化": frozenset({"normalize"}),
    "統一": frozenset({"normalize"}),
    "揃える": frozenset({"normalize"}),
    "直す": frozenset({"normalize"}),
    "整える": frozenset({"normalize"}),
    "そろえる": frozenset({"normalize"}),
    "分類": frozenset({"classify"}),
    "判定": frozenset({"classify", "filter"}),
    "振り分ける": frozenset({"classify"}),
    "追加": frozenset({"compute", "join"}),
    "付ける": frozenset({"join", "compute", "classify", "reconcile"}),
    "足す": frozenset({"compute", "join", "aggregate"}),
    "くっつける": frozenset({"join", "concat"}),
    "付け足す": frozenset({"join", "compute"}),
    "付け加える": frozenset({"join", "compute"}),
    "つなげる": frozenset({"concat", "join"}),
    "繋げる": frozenset({"concat", "join"}),
    "繋ぐ": frozenset({"concat", "join"}),
    "積む": frozenset({"concat"}),
    "つなぐ": frozenset({"concat", "join"}),
    "残す": frozenset({"filter", "select", "dedupe"}),
    "付与": frozenset({"join", "compute", "classify", "reconcile"}),
    "承認": frozenset({"approval"}),
}
"""Action words that name a step: each needs a step of one of these kinds, or it is a gap."""


_DECLARED_COLUMNS = re.compile(
    r"\(\s*(?:列|項目|カラム|columns?)\s*(?:名)?\s*(?:は|:|=)\s*"
    rf"(?P<names>{QNOUN}(?:\s*(?:、|,|・)\s*{QNOUN}){{2,}})\s*(?:です|があります)?\s*\)"
)
"""「sales.csv（列は store_name, amount, count）」: the columns a file has, said in brackets
(「列は A、B だけ」 outside them keeps those columns)."""


@dataclass
class _Reader:
    text: str
    used: list[tuple[int, int]] = field(default_factory=list)
    inputs: list[InputSpec] = field(default_factory=list)
    steps: list[tuple[int, StepSpec]] = field(default_factory=list)
    outputs: list[OutputSpec] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    condition_spans: list[tuple[int, int]] = field(default_factory=list)
    """Where each condition of the filter step was read (its index → span)."""
    input_positions: dict[str, int] = field(default_factory=dict)
    """Where each input was mentioned (its id → offset)."""
    value_or_column: list[str] = field(default_factory=list)
    """Nouns before an amount (「交際費が5,000円を超える」): a value of an unnamed column,
    unless another step names a column so (then the amount is compared in it)."""
    context_rules: bool = True
    """Whether sentences telling what is done today are read as context, not steps."""
    numbered_joins: set[int] = field(default_factory=set)
    numbered_lines: list[tuple[int, int]] = field(default_factory=list)
    """Where each numbered line of the instruction is (「1) …」「2) …」), in order."""
    """Where one numbered step of the instruction ends and the next begins (「1) … 2) …」)."""
    context_used: bool = False
    """Set when such a sentence was passed over (the reading is retried without if no step
    is left: 「いつも担当者ごとに合計しています。今月分も同様にお願いします」)."""

    @functools.cached_property
    def declared_columns(self) -> frozenset[str]:
        """The columns the writer lists as a file's (「列は store_name, amount, count」): a
        name there is a column, even one that is also a word for a metric (count, 件数)."""
        return frozenset(
            name
            for match in _DECLARED_COLUMNS.finditer(self.text)
            for name in _names(match.group("names"))
        )

    def use(self, start: int, end: int) -> None:
        self.used.append((start, end))

    def refuse(self, kind: GapKind, message: str, match: re.Match[str]) -> None:
        """Record that the matched words cannot be built, and mark them read."""
        self.gaps.append(Gap(kind=kind, message=message, source=match.group(0)))
        self.use(match.start(), match.end())

    def is_used(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self.used)

    def overlaps(self, start: int, end: int) -> bool:
        return any(start < b and a < end for a, b in self.used)

    def add_step(self, position: int, step: StepSpec) -> StepSpec:
        self.steps.append((position, step))
        return step

    def first_step(self, kind: str) -> StepSpec | None:
        return next((step for _, step in self.steps if step.kind == kind), None)


_COLUMN_UNIT = (
    r"(?:kg|g|t|mm|cm|m|m2|m3|km|L|ml|mL|kWh|h|H|円|千円|万円|百万円|時間|分|日|件|個|人|名|%|本|台|枚|回|月|年"
    r"|連|袋|箱|ケース|冊|ドル|USD|税込|税込み|税抜|税抜き|税別|リットル|キロ|グラム|トン|メートル)"
)
"""Units said of a column in parentheses (「重量(kg)」): not part of its name."""
_DATE_FORMAT = r"(?:YYYY|yyyy|YY|yy)(?:\s*[/\-.年]?\s*(?:MM|mm)(?:\s*[/\-.月]?\s*(?:DD|dd)日?)?)?"
_UNIT_SAID = (
    rf"(?:\(\s*(?:単位\s*:\s*)?{_COLUMN_UNIT}(?:\s*[/・、,]\s*{_COLUMN_UNIT})*\s*\)"
    rf"|\(\s*{_DATE_FORMAT}\s*\)"
    r"|\[\s*(?:単位\s*:\s*)?[A-Za-z%/ぁ-んァ-ヶー\u4e00-\u9fff]{1,6}\s*\]"
    r"|\(\s*[A-Za-z]{1,4}\d?(?:\s*/\s*[A-Za-z]{1,4}\d?)+\s*\))"  # 「放流量(m3/s)」
)
"""What is said of a column in brackets after its name and is no part of it: its unit in
parentheses (「水揚げ量(kg)」「年収(単位:万円)」), any word in square brackets
(「滞納月数［か月］」「部数[部]」: the way a header states its unit) and the format of its dates
(「納品日(YYYY/MM/DD)」)."""


def normalize(text: str) -> str:
    """NFKC (full-width digits and letters to ASCII) with 「」 kept and blanks single; a
    line break (with its bullet or step number: ・, -, 1., ①) ends a clause (。)."""
    return _normalized(text)[0]


def _normalized(text: str) -> tuple[str, set[int]]:
    """``normalize(text)`` and where in it one numbered step ends and the next begins (the
    。 between them): 「1) … 2) …」 says the order the steps run in."""
    lines = _lines(_fold(text))
    joins, offset = set(), 0
    for index, (line, numbered) in enumerate(lines):
        if index:
            if numbered and lines[index - 1][1]:
                joins.add(offset)
            offset += 1
        offset += len(line)
    return "。".join(line for line, _ in lines), joins


_KANA_VERBS = (
    (r"しぼ(?=[らりるれろっ])", "絞"),
    (r"(?<![ぁ-ん])なら(?=べ|び)", "並"),
    (r"(?:(?<![ぁ-ん])|(?<=だけ)|(?<=のみ))ぬき(?:だ|出)", "抜き出"),
    (r"(?<=[をはに])\s*のこ(?=[しすさせ])", "残"),
    (r"(?<=[をはのでが])\s*ぬ(?=い[てた])", "抜"),  # 「…のはぬいてね」
    (r"(?<=[をでは複])\s*け(?=し[てた]|す)", "消"),  # 「重複けして」「…で重複をけして」
    (r"(?<=[をでは複])\s*はず(?=す|し[てた])", "外"),  # 「部屋番号で重複をはずす」
    (r"(?<=[い])じゅん(?=[にでの、。]|$)", "順"),  # 「多いじゅんにならべて」
    (r"(?<![ぁ-ん])おおきい(?=\s*順|じゅん)", "大きい"),
    (r"(?<![ぁ-ん])おおい(?=\s*順|じゅん)", "多い"),
    (r"(?<![ぁ-ん])すくない(?=\s*順|じゅん)", "少ない"),
    (r"(?<![ぁ-ん])ふるい(?=\s*順|じゅん)", "古い"),
    (r"(?<![ぁ-ん])あたらしい(?=\s*順|じゅん)", "新しい"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))ながい(?=\s*順|じゅん)", "長い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))みじかい(?=\s*順|じゅん)", "短い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))たかい(?=\s*順|じゅん)", "高い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))ひくい(?=\s*順|じゅん)", "低い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))やすい(?=\s*順|じゅん)", "安い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))はやい(?=\s*順|じゅん)", "早い"),
    (r"(?:(?<=[がのは])|(?<![ぁ-ん]))おそい(?=\s*順|じゅん)", "遅い"),
    (r"引っぱ(?=[らりるれろっ])", "引っ張"),  # 「艇種を引っぱって」
    (r"えくせる", "エクセル"),
    (r"(?<=\d)\s*いか(?=[のでは、。]|$)", "以下"),  # 「2015いかの」
    (r"(?<=\d)\s*いじょう", "以上"),
    (r"(?<=\d)\s*みまん", "未満"),
    (r"ごうけい", "合計"),
    (r"(?<=[をにでと])\s*かぞえ(?=[てたるま]|と)", "数え"),  # 「件数かぞえといて」
    (r"(?<=件数)\s*かぞえ", "数え"),
    (r"(?<=[のな])ひと(?=\s*(?:だけ|のみ|を|は|が))", "人"),  # 「「滞納」のひとだけ」
    (r"どっちも", "どちらも"),
    (r"おなじ", "同じ"),
    (r"さいしょ", "最初"),
    (r"(?<=[をでに]|[\u4e00-\u9fff])\s*だ(?=し(?:て|と|た|ま))", "出"),  # 「件数だしといて」
)
"""Step words written in kana, with the kanji the rules read them in."""
_LOANWORD_VERBS = (
    (r"\s*で\s*グルーピング(?:して|し|する)?", "ごとに"),  # 「券種 でグルーピングして」
    (r"グルーピング", "グループ化"),
    (r"マージ(?!ン)", "結合"),  # (「マージン率」 is a column)
    (r"ノーマライズ", "正規化"),
    (r"ユニーク化", "重複を削除"),
    (r"(?<=で)\s*ユニークに", "重複を削除"),
    (
        r"(?:を\s*)?セレクト(?=\s*(?:して|し|する))",
        "残",
    ),  # 「…だけセレクトして」 (not セレクトショップ)
    (r"(?<=[でに])\s*フィルター?(?:を\s*かけ|し|する|して)?", "絞り込み"),  # 「…以外でフィルター」
    (
        r"(?<=だけ|のみ)\s*フィルター?(?:を\s*かけ|し|する|して)?",
        "に絞り込み",
    ),  # 「…行だけフィルター」
    (r"フィルター?(?:して|し|する|をかけ)", "絞り込み"),
    (r"エクストラクト", "抽出"),
    (r"(?:アウトプット|エクスポート)(?=\s*(?:して|し|する|で|を|。|$|お願い|ください))", "出力"),
)
"""Step words said as loanwords (グルーピング, マージ, ユニーク化, フィルター), with the words the
rules read them in."""


_PIVOT_FIELDS = re.compile(
    r"(?:(?:ピボット(?:テーブル)?|クロス集計表?|集計表)\s*(?:で|を|:|\()?\s*(?:を\s*)?(?:作って|作り)?\s*"
    r"|(?:(?<=[。\n])|^)[^\S\n]*)"  # 「…を作ってほしいです。行ラベルに生産者名、値に…」
    r"行(?:ラベル)?\s*(?:[=:]|に)\s*(?P<rows>[^、,/()。\n]+?)\s*[、,/]?\s*"
    r"(?:列(?:ラベル)?\s*(?:[=:]|に)\s*(?P<cols>[^、,/()。\n]+?)\s*[、,/]?\s*)?"
    r"値\s*(?:[=:]|に)\s*(?P<values>(?:[^()。\n]|\([^()。\n]*\))+?)\s*(?:\)|(?=[。\n]|$|→|⇒))"
)
"""「ピボット：行＝配送センター、値＝件数」「ピボット（行：利用者番号／値：提供時間の平均）」: a
pivot table said by its fields: rows (and columns) are the groups, values the metrics."""


def _pivot_as_groups(match: re.Match[str]) -> str:
    groups = match["rows"].strip() + (f"・{match['cols'].strip()}" if match["cols"] else "")
    return f"{groups}ごとに{match['values'].strip()}を集計"


_SPREADSHEET_TERMS = (
    (r"(?<=件数)\s*\(\s*データの個数\s*\)", ""),  # 「値＝件数（データの個数）」
    (r"データの個数", "件数"),  # Excel's データの個数 (a column named 個数 stays a column)
    # 「患者IDの個数」: the rows counted by their identifier (Excel's データの個数)
    (
        rf"[{_K}{_KATA}A-Za-z0-9_]*(?:ID|番号|コード)\s*の\s*(?:件数|個数)(?!\s*(?:が|は|を?\s*(?:比|く)))",
        "件数",
    ),
    (_PIVOT_FIELDS, _pivot_as_groups),
    (r"\(\s*ピボット(?:テーブル)?\s*\)", ""),  # 「…を合計（ピボット）」
    (  # 「担当営業でピボットして受注金額の合計」「地区と肥料名でクロス集計して」: the groups
        rf"(?P<cols>{QNOUN}(?:\s*[と・]\s*{QNOUN}){{0,3}})\s*で\s*(?:ピボット(?:テーブル)?|クロス集計)"
        r"\s*(?:を\s*(?:作|組)んで|を作って|にして|して|し)",
        lambda m: re.sub(r"\s*と\s*", "・", m["cols"]) + "ごとに集計して",
    ),
    (r"ピボット(?:テーブル)?\s*(?:で|を使って|を使い|にして)\s*", ""),  # 「ピボットで部門別の…」
    (r"ピボット(?:テーブル)?", "集計"),
    (  # 「発注日 でフィルタ → 2024/4/1～2024/9/30」: the column filtered, then its range
        rf"(?P<col>{QNOUN})\s*で\s*(?:オート)?フィルター?\s*(?:を\s*かけ(?:て|る)?)?\s*(?:→|⇒|:)\s*",
        r"\g<col>が",
    ),
    (  # 「勘定科目でフィルタかけて交際費だけに」: the column filtered, then the value kept
        rf"(?P<col>{QNOUN})\s*で\s*(?:オート)?フィルター?\s*(?:(?:を)?\s*(?:かけ|掛け)(?:て|た)?|して|し)\s*[、,]?\s*"
        r"「?(?P<value>[^\s、。「」]{1,20}?)」?\s*(?=だけ|のみ)",
        r"\g<col>が「\g<value>」のもの",
    ),
    (r"オートフィルター?\s*(?:機能)?\s*(?:で|を使って|を使い|を使用して)\s*(?=[^\s、。→⇒])", ""),
    (r"オートフィルター?\s*:", "絞り込み:"),  # 「オートフィルタ：サービス種別＝訪問介護」
    (r"オートフィルター?\s*(?:を\s*(?:かけ|使っ)\s*(?:て|た)?|して|し|する)?", "絞り込み"),
    (r"(?<=だけ|のみ)\s*表示(?:する|して|し)?", "残す"),  # 「…のものだけ表示」: the rows kept
    (r"重複の削除", "重複を削除"),
    (  # 「日付は前後3日ずれていても同じとみなす」: the window of a reconciliation
        r"前後\s*(\d{1,2})\s*日\s*(?:ずれて|ズレて|ずれが\s*あって)\s*(?:いて)?\s*も",
        r"前後\1日まで",
    ),
    (
        r"(?:それ|これ)\s*だけ\s*(?:です|で\s*(?:大丈夫|OK|結構|いい|構いません))",
        "",
    ),  # 「…。それだけです」
    # 「仕入先名で並べ替えて」: a sort with no direction, as Excel's 並べ替え (昇順), like 「…順に」
    (
        rf"(?P<cols>{QNOUN}(?:\s*[と・]\s*{QNOUN}){{0,3}})\s*で\s*(?=(?:並べ替え|並び替え|並べて|並べる|ソート))",
        lambda m: (
            m.group(0)
            if re.search(r"順$|昇順|降順|(?:小さ|大き|多|少な|新し|古|高|低)い$", m["cols"])
            or re.search(r"昇順|降順|逆順|順番?\s*[はが]", m.string[m.end() : m.end() + 14])
            else re.sub(r"\s*と\s*", "・", m["cols"]) + "の順に"
        ),
    ),
    (  # 「所属部署ごとに何人いるか数えて」: the rows counted
        r"何\s*(?:人|件|名|社|台)\s*(?:いる|ある)?\s*(?:の)?\s*か\s*(?:を)?\s*(?=数え|カウント|出し|出して|集計)",
        "件数を",
    ),
    (  # 「「残業時間」の列を足してください。中身は 総労働時間 − 所定労働時間 です」
        rf"(?:「(?P<quoted>[^」]+)」|(?P<bare>{NOUN}))\s*(?:の)?\s*列\s*を\s*(?:足し|追加し|加え|作っ)\s*て"
        r"(?:ください|下さい|ほしいです|もらえますか)?\s*[。、,]\s*"
        r"(?:(?:中身|内容|値|式|計算式|計算|計算方法)\s*は\s*)?(?P<expr>[^。、]*?[-+*/×÷−][^。、]*?)\s*"
        r"(?:です|で|とします|にしてください|を入れる|を入れて(?:ください)?)(?=\s*(?:。|$))",
        lambda m: f"列を追加して {m['quoted'] or m['bare']} = {m['expr']}",
    ),
    (  # 「マスタ.xlsx から「診療科名」を VLOOKUP で引いてくる」: a lookup joins the master
        r"\s*を\s*(?:VLOOKUP|XLOOKUP)\s*(?:関数)?\s*(?:で|して)?\s*"
        r"(?:引いてくる|引いて|引く|取ってくる|取って|取得する|取得|参照する|参照|持ってくる)?",
        "を付ける",
    ),
    (r"検索(?:キー|値|列)\s*(?:は|:|=)\s*", "キー:"),  # 「（検索値：JANコード）」
    (r"(?:\d+|一)\s*枚の\s*シートに\s*(?=縦|下)", ""),  # 「1枚のシートに縦に貼り付け」
    (r"(?:縦|下)\s*に\s*(?:貼り付け|貼りつけ|貼付け|コピー)", "縦につなげ"),  # stacked
    (r"別(?:ブック|ファイル)\s*\(\s*([^()]+?\.xlsx)\s*\)", r"\1"),  # 「別ブック（x.xlsx）に」
    (r"別(?:ブック|ファイル)\s*(?=「)", ""),
    (r"(?:(?<=xlsx)|(?<=csv)|(?<=[」)]))\s*に\s*(?:貼り付け|貼りつけ|貼付け)(?:て|る)?", "に出力"),
)
"""Spreadsheet operations said in Excel's own words (オートフィルタ, ピボット, VLOOKUP, 重複の
削除, 縦に貼り付け, 別ブックに貼り付け), with the words the rules read them in."""


_SPEAKER = re.compile(
    r"^[ \t\u3000]*(?P<name>[^\s:：「」()（）、。0-9０-９]{1,8})[ \t\u3000]*[:：][ \t\u3000]*"
)
_ROLES = re.compile(
    r"事務長|院長|園長|店長|所長|社長|部長|課長|係長|主任|室長|支配人|担当|経理|総務|事務|受付|教頭|校長"
    r"|店員|バイト|私|自分"
)


def _without_speakers(text: str) -> str:
    """A chat thread pasted as it is (「田中: …」「佐藤: 了解です」): the speakers' names are no
    part of the request. Only when two lines or more start with a person's name or role."""
    from sudachipy import tokenizer

    lines = text.split("\n")
    speakers = [_SPEAKER.match(line) for line in lines]

    def a_person(name: str) -> bool:
        if _ROLES.fullmatch(name):
            return True
        morphemes = list(_tokenizer().tokenize(name, tokenizer.Tokenizer.SplitMode.C))
        return all(m.part_of_speech()[2] == "人名" for m in morphemes)

    people = [m for m in speakers if m and a_person(m.group("name"))]
    if len(people) < 2:
        return text
    return "\n".join(
        line[m.end() :] if m and a_person(m.group("name")) else line
        for m, line in zip(speakers, lines, strict=True)
    )


def _unit_dropped(name: str) -> str:
    """A column's name without the unit said in brackets after it (「超過時間(h)」: 超過時間),
    as every other rule reads a column."""
    return re.sub(rf"\s*{_UNIT_SAID}$", "", name)


def without_units(text: str) -> str:
    """``text`` (NFKC) with every unit said in brackets after a name dropped (「実作業時間（h） -
    見積作業時間（h）」: 実作業時間 - 見積作業時間): names as the rules read them."""
    return re.sub(rf"\s*{_UNIT_SAID}", "", unicodedata.normalize("NFKC", text))


_QUOTED_NAME = r"「(?P<name>[^」\s。、]{1,30})」"
_QUOTED_COLUMN = re.compile(
    rf"{_QUOTED_NAME}(?=\s*(?:(?:が|は)\s*(?:「|-?\d|空欄|空白|未入力|入って|ある|ない|[<>=])"
    r"|に\s*「|(?:ごと|毎|別)\s*に|ごとの|で\s*(?:結合|重複|照合|突き合わせ|突合|紐付け)"
    r"|で\s*「[^」]{1,40}\.(?:csv|xlsx|xlsm|xls)」"  # 「会員番号」で『会員マスタ.xlsx』の…
    r"|を\s*キー|を\s*(?:合計|集計|平均|足し)|の\s*(?:合計|平均|最大|最小)|の\s*(?:昇順|降順|(?:大きい|小さい|多い|少ない|古い|新しい|高い|低い|早い|遅い)\s*順)))"
)
"""A column named in quotes, as a manual writes it (「「予約ステータス」が「キャンセル」の行を
除く」「「現場コード」ごとに」): the quotes are dropped where a column stands (before が, ごとに,
で結合…), never around a value."""
_QUOTED_COLUMNS = re.compile(
    r"(?P<names>「[^」\s。、]{1,30}」(?:\s*[、・,と]?\s*「[^」\s。、]{1,30}」){1,19})"
    r"(?=\s*(?:の\s*\d*\s*(?:列|項目)|(?:を|の列を)\s*(?:付け|付与|残|くっつけ|持って|追加|引)"
    r"|について|の\s*(?:全角|半角|表記|スペース)|を\s*(?:合計|集計|平均|足し)|の\s*(?:合計|平均|最大|最小)"
    r"|(?:だけ|のみ)\s*(?:を|に)?\s*(?:残|して)))"
)
"""Columns listed in quotes (「「便名」「AWB番号」「荷主名」の3列だけ残し」「「ISBN」「書名」を
付ける」): one list of names."""
_CONDITION_IN_BRACKETS = re.compile(
    rf"(?<![{_K}{_KATA}A-Za-z0-9_])(?!(?:プラス|マイナス|赤字|黒字|正|負)\s*\()(?!\d)"
    # (「…が20に届いてない人（20未満）」: a row word, its condition said again)
    r"(?!(?:人|者|方|もの|行|分|件|回|社|店|品)\s*\()"
    r"(?!(?:上期|下期|上半期|下半期|今期|当期|前期|第\s*\d\s*四半期|年度)\s*\()"  # a period's name
    rf"(?P<col>{NOUN})\s*\(\s*(?P<cond>"
    r"(?:空欄|空白|未入力|ブランク)\s*(?:の\s*(?:行|もの))?\s*(?:は|を)\s*(?:除く|除外|除いて)"
    r"|「[^」]{1,30}」(?:\s*[・、]\s*「[^」]{1,30}」){0,9}\s*(?:以外|のみ|だけ)"
    rf"|{_DATE}\s*(?:〜|~|～|から)\s*{_DATE}\s*(?:まで)?"
    rf"|{AMOUNT}\s*(?:以上|以下|未満|超|を超える)"
    r")\s*\)"
)
"""「派遣先コード（空欄の行は除く）」「区画種別（「バイク」以外）」「検収日（2024-07-01〜2024-09-30）」:
a condition said in brackets after its column."""


_FORMAL_PLAIN = {
    "宜しく": "よろしく",
    "申し上げます": "します",
    "にて": "で",
    "に於いて": "で",
    "に於て": "で",
    "において": "で",
    "の上、": "して、",
    "の上で": "てから",
    "頂きたく存じます": "ください",
    "いただきたく存じます": "ください",
    "致します": "します",
    "を付し": "を付けて",
    "を付す": "を付ける",
    "を乗じ": "を掛け",
    "で除し": "で割り",
    "を新設": "を追加",
    "の列に整え": "の列だけ残し",
}
_FORMAL = re.compile("|".join(sorted(map(re.escape, _FORMAL_PLAIN), key=len, reverse=True)))
"""A stiff formal letter (「Excelにて御提出願います」「宜しく御願い申し上げます」) said plainly."""


_CORRECTED = re.compile(
    r"\s*[、,]\s*(?:いや|いえ|じゃなくて|じゃなく|ではなくて|でなくて|もとい)\s*[、,]?\s*(?=[^\s、。])"
)
"""「上位5件、いや10件」「同じ注文番号、じゃなくて同じ「顧客番号」」: said, then corrected."""


def _self_corrections(text: str) -> str:
    """Each correction said aloud (voice input, chat) with the word it replaces dropped: the
    replaced word is the end of what came before that has the correction's shape (「3月末、
    いや4月末」: 3月末; 「3万、いや5万円未満」: 3万), or, when the correction starts again with
    a word said just before (「同じ注文番号、じゃなくて同じ「顧客番号」」), from that word on.
    A correction whose replaced word cannot be found is left as written (and asked)."""
    for said in reversed(list(_CORRECTED.finditer(text))):
        before, after = text[: said.start()], text[said.end() :]
        start = _replaced_by_shape(before, after)
        if start is None:
            first = re.match(
                r"[^\s、。,「」]{1,6}?(?=「|\s|[\u4e00-\u9fff\u30a1-\u30fa]{2})", after
            )
            clause_start = max(before.rfind("、"), before.rfind("。")) + 1
            found = before.rfind(first.group(0), clause_start) if first else -1
            start = found if found >= 0 else None
        if start is not None:
            text = before[:start] + after
    return text


def _replaced_by_shape(before: str, after: str) -> int | None:
    """Where in ``before`` the word that ``after`` corrects begins: the longest start of
    ``after`` (numbers as any number) that ``before`` ends with and that holds a number."""
    runs = re.findall(r"\d+(?:[.,]\d+)*|[^\d\s、。,]", after[:20])
    for length in range(len(runs), 0, -1):
        shape = runs[:length]
        if not any(run[0].isdigit() for run in shape):
            continue
        pattern = "".join(
            r"\d+(?:[.,]\d+)*" if run[0].isdigit() else re.escape(run) for run in shape
        )
        match = re.search(rf"{pattern}$", before)
        if match:
            return match.start()
    return None


_KANJI_DIGITS = {
    "〇": 0,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_KANJI_NUMBER = re.compile(
    r"(?<![\u4e00-\u9fff々0-9０-９.,，．])(?P<n>[〇一二三四五六七八九十百千]+)"
    r"(?=\s*(?:万|名|件|つ|個|円|社|品目|行|位|本|枚|台|歳|か月|ヶ月|カ月|箇所|%|パーセント))"
    r"|(?:(?<=上位)|(?<=下位)|(?<=先頭)|(?<=トップ)|(?<=ワースト))(?P<m>[〇一二三四五六七八九十百千]+)"
)
"""A number written in kanji before a counter (「三十名未満」「上位五つ」「二千円」「三万円」)."""


def _kanji_number(said: str) -> int:
    """「三十」 → 30, 「十二」 → 12, 「二千五百」 → 2500, 「一〇」 → 10 (digit by digit)."""
    if not re.search("[十百千]", said):
        return int("".join(str(_KANJI_DIGITS[c]) for c in said))
    total, digit = 0, None
    for char in said:
        if char in _KANJI_DIGITS:
            digit = _KANJI_DIGITS[char]
        else:
            total += (1 if digit is None else digit) * {"十": 10, "百": 100, "千": 1000}[char]
            digit = None
    return total + (digit or 0)


def _kanji_numbers(text: str) -> str:
    """Kanji numbers as digits; a lone 一 stays (「一人当たり単価」「一回見せて」 are words)."""

    def digits(match: re.Match[str]) -> str:
        said = match.group("n") or match.group("m")
        return match.group(0) if said == "一" else str(_kanji_number(said))

    return _KANJI_NUMBER.sub(digits, text)


def _fold(text: str) -> str:
    text = re.sub(r"(?m)^[ \t\u3000]*(?:>|＞)+[ \t\u3000]?", "", text)  # a mail quoted: its lines
    text = _without_speakers(text)
    text = _self_corrections(text)
    text = _kanji_numbers(text)
    text = re.sub(  # 「■出力先」 on a line of its own, 「・エリア別売上.xlsx」 below: the output
        r"(?m)^[ \t\u3000]*(?:[■□◆◇●○▼▶◎]\s*|【\s*|\[\s*)?"
        r"(?P<key>出力先|出力|保存先|保存名|出力ファイル名?|アウトプット)\s*(?:】|\])?\s*[:：]?"
        r"[ \t\u3000]*\n"
        r"[ \t\u3000]*(?:[・\-*•]\s*)?(?=\S)",
        r"\g<key>: ",
        text,
    )
    text = re.sub(  # 「①で除外」 in a note points back at a step: said as 「上記」
        r"(?<=[^\s\n、。:：])[①-⑳](?=\s*(?:で|の|に|を|は|と|まで|から)(?![\d]))", "上記", text
    )
    text = re.sub(r"\s*[①-⑳]\s*", "\n\x00", text)  # step numbers (NFKC would make them digits)
    text = re.sub(  # 「 1-1. 走行距離が…」: a sub-step's number is a bullet, no value
        r"(?m)^([ \t\u3000]*)\d{1,2}\s*[-－]\s*\d{1,2}\s*[.)．、]?[ \t\u3000]+", r"\1・", text
    )
    text = re.sub(  # 「[条件] 区分 が 「有」」「【出力列】日付、氏名」: a settings line
        r"(?m)^(\s*)[\[【]([^\]】\n]{1,12})[\]】][ \t\u3000]*(?=[^\s\]】])",
        r"\1\2: ",
        text,
    )
    text = re.sub(r"【([^】\n]{1,30})】", r"\1\n", text)  # 【依頼】 heads a request
    folded = unicodedata.normalize("NFKC", text)
    folded = folded.replace("おねがい", "お願い")  # 「CSVでおねがい」
    folded = folded.replace("『", "「").replace("』", "」")  # 『コースコード』: quotes either way
    folded = re.sub(r"`([^`\n]{1,40})`", r"「\1」", folded)  # `Amount`: a name, as in Markdown
    folded = re.sub(r'"([^"\n]{1,40})"', r"「\1」", folded)  # "East", "Dept": one quoting
    folded = (
        re.sub(  # 「部長から転送です：「売上.csv を…書き出すこと」とのことなので」: the request
            r"「([^「」]*\.(?:csv|xlsx|xls)[^「」]*)」\s*(?:との|という)\s*こと"
            r"(?:なので|です|でした)?\s*[、,]?",
            r"\1。",
            folded,
        )
    )
    folded = re.sub(  # 「金額の差は1円も許容しません」「差額の許容はございません（0円）」: none
        r"(?:金額の)?差(?:額)?\s*は\s*1\s*円も許容し(?:ません|ない)"
        r"|差額の許容は\s*(?:ございません|ありません|なし)\s*(?:\(\s*0\s*円\s*\))?",
        "差額は0円まで",
        folded,
    )
    folded = _FORMAL.sub(lambda m: _FORMAL_PLAIN[m.group(0)], folded)
    folded = re.sub(r"御(?=(?:依頼|提出|作成|報告|確認|連絡|送付|対応|手配|査収|願))", "", folded)
    folded = re.sub(
        r"(?<=[ぁ-ん])ー+(?=[\s。、!！?？〜~]|$)", "", folded
    )  # 「くださいー」「しといてー」
    folded = re.sub(
        r"(?<![A-Za-z0-9_])(?:key|KEY|Key)(?![A-Za-z0-9_])", "キー", folded
    )  # 「key は id」
    for kana, kanji in _KANA_VERBS:  # 「…の行にしぼる」「古い順にならべて」: a step verb in kana
        folded = re.sub(kana, kanji, folded)
    for term, words in _SPREADSHEET_TERMS:
        folded = re.sub(term, words, folded)
    for loanword, word in _LOANWORD_VERBS:
        folded = re.sub(loanword, word, folded)
    folded = re.sub(  # 「空欄になっていない」: a blank denied, said with なる (never 「空欄」)
        r"(空欄|空白|未入力|ブランク)\s*(?:の\s*まま)?\s*(?:に|と)?\s*なって\s*(?:い)?\s*(?:ない|ません)",
        r"\1でない",
        folded,
    )
    folded = re.sub(  # 「45を超えている人だけ」「下回ってる店舗だけ」: progressive
        r"(超え|越え|上回っ|下回っ|切っ)\s*(?:てい|て)(?:る|ます)(?=\s*[^\s、。]{1,8}?\s*(?:だけ|のみ))",
        lambda m: {"超え": "超える", "越え": "越える", "上回っ": "上回る", "下回っ": "下回る"}.get(
            m[1], "切る"
        ),
        folded,
    )
    folded = re.sub(  # 「地区が関東と東北の行だけ」: two values said with と, unquoted
        rf"(?P<col>{NOUN})\s*が\s*(?P<a>[{_K}{_KATA}A-Za-z]{{1,12}}?)\s*と\s*(?P<b>[{_K}{_KATA}A-Za-z]{{1,12}}?)"
        r"\s*の\s*(?=[\u4e00-\u9fff\u30a1-\u30faー]{0,6}\s*(?:だけ|のみ))",
        r"\g<col>が「\g<a>」と「\g<b>」の",
        folded,
    )
    folded = re.sub(  # 「…の人だけ 会員番号・氏名・会員種別 CSVで」: a memo's columns kept
        rf"(?<=[\s、,])(?P<cols>{QNOUN}(?:\s*・\s*{QNOUN}){{2,19}})\s+(?=(?:CSV|csv|Excel|エクセル)\s*(?:で|に|[。、]|$))",
        r"\g<cols>の列だけ ",
        folded,
    )
    folded = re.sub(  # 「…の行を除いて、日付と氏名だけCSVで」: rows chosen, then two columns
        rf"(?<=て[、,\s])\s*(?P<a>{QNOUN})\s*(?:と|・)\s*(?P<b>{QNOUN})\s*(?:だけ|のみ)\s*"
        r"(?=(?:CSV|csv|Excel|EXCEL|エクセル)\s*(?:で|に|[。、]|$))",
        r"\g<a>・\g<b>の列だけ残して ",
        folded,
    )
    folded = re.sub(  # 「…だけ残して 職員番号・氏名・所属 をCSVに」: a list, the format, no verb
        rf"(?<=[\s、,])(?P<cols>{QNOUN}(?:\s*[・、]\s*{QNOUN}){{2,19}})\s*を\s*"
        r"(?=(?:CSV|csv|Excel|EXCEL|エクセル)\s*(?:で|に)\s*(?:[。]|$|ください|下さい|お願い))",
        r"\g<cols>の列だけ残して ",
        folded,
    )
    folded = re.sub(  # 「分類は「花苗」「野菜苗」の2つだけで大丈夫」: the only values wanted
        rf"(?P<key>{NOUN})\s*は\s*(?P<values>(?:「[^」]+」\s*(?:[、,・と]\s*)?){{2,}})\s*の\s*"
        r"(?:\d+|[二三四五六七八九])\s*(?:つ|種類|件|項目)\s*(?:だけ|のみ)\s*(?:で)?\s*"
        r"(?:大丈夫|結構|OK|いい|構いません|かまいません)?\s*(?:です)?",
        r"\g<key>が\g<values>のいずれかのものだけ",
        folded,
    )
    folded = re.sub(  # 「Q. 対象は？→ 要介護度が…の方」「Q. 形式は?\nA. Excel」: a setting
        r"(?m)^[ \t]*(?:Q\s*[.:]?|問\s*[.:]?)?[ \t]*(?P<key>[^?\n→:]{1,20}?)[ \t]*(?:は|って)?"
        r"[ \t]*\?[ \t]*(?:\n[ \t]*)?(?:→|⇒|->|A\s*[.:])[ \t]*(?P<value>[^\n]+)$",
        r"\g<key>: \g<value>",
        folded,
    )
    folded = re.sub(  # 「Excel（集計.xlsx、シート名「Q1」）に出力」: the file, then its sheet
        r"(?:Excel|EXCEL|excel|エクセル|CSV|csv)\s*\(\s*(?P<file>[^\s()、,「」]+\.(?:xlsx|xlsm|xls|csv))"
        r"\s*[、,]\s*(?P<sheet>シート名?\s*(?:は|:)?\s*「[^」]+」)\s*\)",
        r"\g<file>(\g<sheet>)",
        folded,
    )
    folded = re.sub(  # 「フィルタで抜き出して」: how, in a spreadsheet's words; the verb says it
        r"(?:オート)?フィルター?\s*(?:機能)?\s*(?:で|を使って|をかけて)\s*(?=抜き出|抽出|絞り込|絞|取り出)",
        "",
        folded,
    )
    folded = re.sub(  # 「わからないことがあれば鈴木課長に聞いてください」: whom to ask, no step
        r"(?:(?<=[。\n])|^)[^。\n]{0,6}(?:わからない|分からない|不明な|ご不明な)\s*(?:こと|点|ところ)?\s*"
        r"(?:があれば|があったら|は)[^。\n]{0,30}?(?:聞いて|連絡して|問い合わせて|相談して|確認して)"
        r"[^。\n]{0,12}(?:。|$)",
        "",
        folded,
    )
    folded = re.sub(  # 「フリガナと電話番号の列、全角・半角…がバラバラ」: the columns, then how
        rf"(?P<cols>{QNOUN}(?:\s*(?:と|・|、)\s*{QNOUN}){{0,9}})\s*の\s*列\s*[、,]\s*"
        r"(?=[^。]{0,30}?(?:バラバラ|ばらばら|混在|ゆれ|揺れ|まちまち))",
        r"\g<cols>、",
        folded,
    )
    folded = re.sub(  # 「ハイフンの有無がバラバラ」: whether a mark is written, no column 有無
        r"(?P<mark>ハイフン|スペース|空白|記号)\s*の\s*(?:有無|あるなし|有り無し|ありなし)",
        r"\g<mark>",
        folded,
    )
    folded = re.sub(  # 「品目がトマト・きゅうり・なすの3品目だけ」: values counted, unquoted
        rf"(?P<col>{NOUN})\s*が\s*(?P<values>[^\s、。「」・()]{{1,12}}(?:\s*・\s*[^\s、。「」・()]{{1,12}}){{1,9}})"
        r"\s*の\s*(?:\d+|[二三四五六七八九])\s*(?:品目|種類|つ|件|品|か所|箇所|部門|店舗)\s*(?=だけ|のみ)",
        lambda m: (
            m["col"]
            + "が"
            + "".join(f"「{v.strip()}」" for v in m["values"].split("・"))
            + "のいずれかのもの"
        ),
        folded,
    )
    folded = re.sub(  # 「…に列を2つ足してください。1.「手数料」＝…」: the formulas follow
        r"\s*に\s*列\s*を\s*(?:(?:\d+|[二三四五])\s*つ\s*)?(?:足して|追加して|増やして)\s*"
        r"(?:ください|下さい|ほしいです|もらえますか)?\s*[。:]?(?=[\s\S]*[=＝])",
        "。",
        folded,
    )
    folded = re.sub(  # 「製造日で4月分（2025-04-01〜2025-04-30）だけに絞って」: the column's dates
        rf"(?P<col>{NOUN})\s*で\s*[^()\s、。]{{0,8}}?\(\s*(?P<span>{_DATE_SPAN})\s*\)\s*(?=だけ|のみ)",
        r"\g<col>が\g<span>のもの",
        folded,
    )
    folded = re.sub(  # 「おつかれさまです 売上.csv から…」: a greeting typed without a stop
        r"(?m)^[ \t\u3000]*(?:お疲れ様|お疲れさま|おつかれさま|おつかれ"
        r"|お世話に\s*なって\s*おります)(?:です)?[。!！、, \t\u3000]+(?=\S)",
        "",
        folded,
    )
    folded = re.sub(  # 「所属学部と指導教員を学籍番号をキーにしてくっつけて」: the key of a join
        r"を\s*キー\s*に\s*(?:して)?\s*(?=くっつけ|付け|紐付け|紐づけ|ひもづけ)", "で", folded
    )
    folded = re.sub(  # 「取引先の数（重複なし）」: a distinct count said with an aside
        rf"(?P<col>{QNOUN})\s*の\s*(?:数|件数|個数)\s*\(\s*(?:重複なし|重複を除く|重複除く|ユニーク)\s*\)",
        r"\g<col>のユニーク数",
        folded,
    )
    folded = re.sub(  # 「店舗名が渋谷店 新宿店 池袋店のだけ」: values typed with spaces in a chat
        rf"(?P<col>{NOUN})\s*が\s*(?P<values>{NOUN}(?:[ \u3000]+{NOUN}){{1,9}})"
        r"\s*の\s*(?=だけ|のみ)",
        lambda m: (
            m["col"] + "が" + "".join(f"「{v}」" for v in m["values"].split()) + "のいずれかのもの"
        ),
        folded,
    )
    folded = re.sub(  # 「表記を揃え（㈱→株式会社など）」: the company forms, written out
        r"(?P<short>\(株\)|\(有\))\s*(?:→|⇒|->)\s*(?P<long>株式会社|有限会社)",
        r"\g<short>と\g<long>",
        folded,
    )
    folded = re.sub(  # 「A.xlsx、B.xlsx（いずれも「請求」シート）」: each file's sheet
        r"(?P<files>[^\s、,()「」]+\.(?:xlsx|xlsm|xls)(?:\s*[、,・と]\s*[^\s、,()「」]+\.(?:xlsx|xlsm|xls))+)"
        r"\s*\(\s*(?:どちらも|いずれも|すべて|全て|両方とも?|全部)\s*(?:シート\s*(?:名\s*)?(?:は|:)?\s*)?"
        r"「(?P<sheet>[^」]+)」\s*(?:シート)?\s*\)",
        lambda m: re.sub(
            r"[^\s、,()「」・と]+\.(?:xlsx|xlsm|xls)",
            lambda f: f"{f.group(0)}(シート「{m['sheet']}」)",
            m["files"],
        ),
        folded,
    )
    folded = re.sub(  # 「受講者IDの異なる数」「患者IDの重複を除いた数」: a distinct count
        rf"(?P<col>{QNOUN})\s*の\s*(?:異なる|重複しない|重複を除いた|重複を除く|ユニークな)\s*"
        r"(?:数|件数|個数)",
        r"\g<col>のユニーク数",
        folded,
    )
    named = re.search(  # 「申込者数（受講者IDのユニーク数）…申込者数が多い順」: a count's name
        rf"(?P<name>{NOUN}数)\s*\(\s*(?P<inner>{QNOUN}\s*のユニーク数)\s*\)", folded
    )
    if named:
        folded = folded[: named.start()] + named["inner"] + folded[named.end() :]
        folded = re.sub(rf"(?<![{_K}{_KATA}]){re.escape(named['name'])}", named["inner"], folded)
    folded = re.sub(  # 「`status` が active のもの」「「状態」が有効の行」: a bare value
        rf"「(?P<col>{NOUN})」\s*が\s*(?=[{_K}{_KATA}A-Za-z][^、。\s「」()]{{0,20}}?\s*"
        r"(?:の|だけ|のみ|以外|でない|ではない))",
        lambda m: f"{m['col']}が" if re.fullmatch(NOUN, m["col"]) else m.group(0),
        folded,
    )
    folded = re.sub(  # 「の書き方（全角・半角、ハイフンの有無など）がバラバラ」: examples of how
        r"(?<=書き方|入り方|入れ方)\s*\([^()]*(?:全角|半角|ハイフン|スペース|空白|カナ|大文字|小文字)"
        r"[^()]*\)\s*(?=が|も|は)",
        "",
        folded,
    )
    folded = re.sub(  # 「区分が「停止」になっていない」: not that value
        r"(?<=」)\s*に\s*なって\s*(?:い)?(?:ない|ません)",
        "でない",
        folded,
    )
    if re.search(r"突き合わせ|突合|照合|照らし合わせ", folded):
        folded = re.sub(  # 「金額の差が1,000円を超えるもの」 after matching: the tolerance
            rf"(?P<col>{NOUN})\s*の\s*(?:差|差額|ずれ|ズレ)\s*が\s*(?P<n>\d[\d,]*\s*円)\s*"
            r"(?:を超える|を上回る|より大きい)\s*(?=もの|行|分|明細|取引)",
            r"\g<col>の差が\g<n>までは一致扱いとし、差異のある",
            folded,
        )
    folded = re.sub(  # 「社員番号で重複してる行を消して」: the key the rows are doubled on
        rf"(?P<key>{QNOUN})\s*で\s*重複\s*(?:して(?:い)?る|している|した)\s*(?=(?:行|もの|データ|レコード|分))",
        r"\g<key>が重複している",
        folded,
    )
    folded = re.sub(  # 「活動種別：「清掃」「見守り」のどちらか」: a settings line of values
        rf"(?P<key>{NOUN})\s*:\s*(?P<values>(?:「[^」]+」\s*(?:[、,・と]\s*)?){{2,}})\s*の\s*(?:どちらか|いずれか|どれか)",
        r"\g<key>が\g<values>のいずれかのもの",
        folded,
    )
    folded = re.sub(  # 「差額がマイナスになってる現場だけ」: the value the rows have
        r"\s*に\s*なって\s*(?:い)?る(?=\s*[\u4e00-\u9fff\u30a1-\u30faー]{1,8}\s*(?:だけ|のみ))",
        "の",
        folded,
    )
    folded = re.sub(  # 「区分が「返品」のは除いてね」: 「の」 stands for the rows
        r"(?<=[」\u4e00-\u9fff\u30a1-\u30faA-Za-z0-9])のは(?=\s*(?:除|抜|外|消|いらな|要らな))",
        "のものは",
        folded,
    )
    folded = re.sub(  # 「その後フリガナと…」: 後 begins no column name
        r"(その後|そのあと|その上で|そのうえで|次に)(?=[\u4e00-\u9fff\u30a1-\u30fa])",
        r"\1 ",
        folded,
    )
    folded = re.sub(  # 「R6.11.1」「H31.4.1」: an era and a date said short
        r"(?<![A-Za-z0-9])([RH])\s?(\d{1,2})[./](\d{1,2})[./](\d{1,2})(?![\d./])",
        lambda m: f"{'令和' if m[1] == 'R' else '平成'}{m[2]}年{m[3]}月{m[4]}日",
        folded,
    )
    folded = re.sub(  # 「担当技師×検査項目で件数集計」: two group columns, not a formula
        rf"(?<![=＝]\s)(?<![=＝])({NOUN})\s*[×xX]\s*({NOUN})\s*(?:で|ごとに|ごと|別に|別)\s*"
        r"(?=(?:(?!計算|列|算出|出し|求め|掛け|かけ)[^。、]){0,20}(?:集計|合計|件数|平均))",
        r"\1・\2ごとに",
        folded,
    )
    folded = re.sub(  # 「購入日が2015年以前」: a year compared in a column of dates
        rf"(?P<col>{NOUN}(?:日|日付|期限|日時))(?P<case>\s*(?:が|は)\s*)(?P<y>\d{{4}})\s*年\s*"
        r"(?P<op>以前|まで|以降|から)(?!\s*\d)",
        lambda m: (
            f"{m['col']}{m['case']}{m['y']}年"
            + ("12月31日" if m["op"] in ("以前", "まで") else "1月1日")
            + m["op"]
        ),
        folded,
    )
    folded = _english_settings(folded)
    folded = re.sub(  # 「条件：支社＝東京以外」: the value is 東京, the rows are the others
        rf"(?P<col>{NOUN})\s*=\s*(?P<v>[^\s、。=「」()]{{1,20}}?)\s*以外",
        r"\g<col>が「\g<v>」以外",
        folded,
    )
    folded = re.sub(  # 「絞り込みなし」「抽出条件：不要」: no filter is asked, said outright
        r"(?:絞り?込み|抽出条件|フィルタ(?:ー|リング)?)\s*(?:[:：]\s*|は\s*)?"
        r"(?:なし|無し|不要|ありません|いりません|しない|しません)(?:です)?",
        "",
        folded,
    )
    folded = re.sub(  # 「勘定科目が交際費と会議費以外」: two values joined by と, then 以外
        rf"(?P<col>{NOUN})(?P<case>\s*(?:が|は)\s*)(?P<a>{NOUN})\s*(?:と|及び|および)\s*"
        rf"(?P<b>{NOUN})\s*(?=以外)",
        r"\g<col>\g<case>「\g<a>」「\g<b>」",
        folded,
    )
    folded = _DOUBLED_ROWS.sub(lambda m: f"{m['cols']}の重複を{m['verb']}", folded)
    folded = re.sub(  # 「Phone が同じ行の重複を除き」: the key, said of the rows
        rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,9}})\s*が\s*(?:同じ|一致する)\s*"
        r"(?:行|もの|データ|レコード|明細)\s*の\s*(?=重複)",
        r"\g<cols>の",
        folded,
    )
    folded = re.sub(  # 「重複は 申請番号 で除く」: the key said between
        rf"重複\s*(?:は|を)\s*({QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,5}})\s*で\s*"
        r"(除|削除|消|1行に|一行に|1件に|一件に|まとめ)",
        r"\1で重複を\2",
        folded,
    )
    folded = re.sub(  # 「client_code（顧問先コード）」: the column's name, then what it means
        rf"(?<![A-Za-z0-9_.])([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]{{3,}})\s*"
        rf"\(\s*[{_K}{_KATA}ぁ-んー・]{{1,20}}\s*\)",
        r"\1",
        folded,
    )
    folded = re.sub(  # 「列は「会員番号」「氏名」「有効期限」で」: the columns kept, in quotes
        r"(?P<head>(?:列|項目|カラム)\s*は)\s*"
        r"(?P<names>「[^」\s。、]{1,30}」(?:\s*[、・,と]?\s*「[^」\s。、]{1,30}」){1,19})",
        lambda m: (
            m.group("head")
            + "・".join(map(_unit_dropped, re.findall(r"「([^」]+)」", m.group("names"))))
        ),
        folded,
    )
    folded = re.sub(  # 「列は 車両番号・点検日・点検者 だけ」: the columns kept
        rf"(?:(?<=^)|(?<=[。\s・]))(?:列|項目|カラム)\s*は\s*(?P<names>{NOUN}(?:\s*[・、,]\s*{NOUN}){{1,19}})"
        r"\s*(?:だけ|のみ)(?=\s*(?:[。、,]|$|(?:で|を)?\s*(?:お願い|CSV|Excel|エクセル)))",
        r"\g<names>の列だけ残す",
        folded,
    )
    folded = re.sub(  # 「同じ「顧客番号」のは1行に」: the rows sharing a key, said before it
        rf"同じ\s*(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,4}})\s*の\s*(?:もの|行|データ)?\s*"
        r"(?:は|を)\s*(?=(?:1|一|ひと)\s*(?:つ|行|件)\s*に)",
        r"\g<cols>が同じ行は",
        folded,
    )
    folded = re.sub(  # 「「点検結果」が「要整備」のやつ、あ、あと「要観察」も」: a value added
        rf"(?P<col>{QNOUN})\s*が\s*「(?P<a>[^」]{{1,30}})」(?P<rows>[^。「」、]{{0,12}}?)\s*[、,]\s*"
        r"(?:あ\s*[、,]\s*)?(?:あと|それと|それから|加えて)\s*「(?P<b>[^」]{1,30})」\s*も\s*[、,]?\s*"
        r"(?:それ|これ|その分|それら)?\s*",
        r"\g<col>が「\g<a>」か「\g<b>」\g<rows>を",
        folded,
    )
    folded = re.sub(  # 「さっきの表を」「上で絞った行に」: the table made so far
        r"(?:(?:さっき|先ほど|先程)\s*の?|(?<!以)上\s*で(?=\s*(?:絞|抜|抽|作|出|分|ま)))\s*"
        r"(?:絞った|抜いた|抽出した|作った|出した|分けた|まとめた)?"
        r"\s*(?:の)?\s*(?:表|結果|行|一覧|データ)(?=\s*(?:を|に|から|の))",
        "その結果",
        folded,
    )
    folded = _QUOTED_COLUMNS.sub(
        lambda m: "・".join(map(_unit_dropped, re.findall(r"「([^」]+)」", m.group("names")))),
        folded,
    )
    folded = _QUOTED_COLUMN.sub(lambda m: _unit_dropped(m.group("name")), folded)
    folded = (
        re.sub(  # 「「実作業時間」−「見積作業時間」で「超過時間」」: a formula's columns in quotes
            r"「([^」\s。、]{1,30})」(?=\s*[-−+×÷*/]\s*(?:「|\d))"
            r"|(?<=[-−+×÷*/])(\s*)「([^」\s。、]{1,30})」",
            lambda m: (
                _unit_dropped(m.group(1)) if m.group(1) else m.group(2) + _unit_dropped(m.group(3))
            ),
            folded,
        )
    )
    folded = _CONDITION_IN_BRACKETS.sub(r"\g<col>が\g<cond>", folded)
    folded = re.sub(  # 「入塾済み（入塾フラグ=1）でないもの」: a state glossed by its condition
        rf"[^\s、。,()「」]{{1,12}}\(\s*(?P<col>{NOUN})\s*=\s*(?P<v>[^\s()=、。]{{1,20}})\s*\)"
        r"\s*(?P<neg>でない|ではない|じゃない|でなく|ではなく|以外)",
        r"\g<col>が\g<v>\g<neg>",
        folded,
    )
    folded = re.sub(  # 「40歳以上（年齢列）」: the column said in brackets after its condition
        rf"({AMOUNT}\s*(?:以上|以下|未満|超|を超える))\s*\(\s*({NOUN})\s*(?:列|欄)\s*\)",
        r"\2が\1",
        folded,
    )
    folded = re.sub(  # 「重複（メールアドレス が同じもの）を消して」: the key said in brackets
        rf"重複\s*\(\s*({QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,5}})\s*が\s*同じ[^()]{{0,8}}\)",
        r"\1が同じ重複",
        folded,
    )
    folded = re.sub(  # 「得意先コードが「C999」（社内取引）以外」: a gloss of the value, then 以外
        r"(?<=」)\s*\([^()「」]{1,20}\)\s*(?=以外|のみ|だけ|を除|は除|を含|の行|のもの)", "", folded
    )
    folded = re.sub(  # 「単価は平均も見たい」: the metric of the column said as the topic
        rf"(?<![{_K}{_KATA}A-Za-z0-9_])({NOUN})\s*は\s*(平均|合計|最大|最小|最大値|最小値)\s*も",
        r"\1の\2も",
        folded,
    )
    folded = re.sub(  # 「納期2024-12-20以前」「単価空欄は除外」: a terse condition with no particle
        rf"(?<![{_K}{_KATA}A-Za-z0-9_\-.])([{_K}{_KATA}]{{2,12}})(?=(?:{_DATE})\s*(?:〜|~|～|から|以前|以降|以後|まで|より)"
        r"|(?:空欄|未入力)\s*(?:は|の|を))",
        r"\1が",
        folded,
    )
    folded = re.sub(  # 「日付が 2024-06-01〜2024-09-30 の範囲の行だけ」: the dates themselves
        rf"(?m)({_DATE})\s*の\s*(?:範囲|期間)(?:内)?(?=[ \t]*(?:の|で|に|、|。|$))", r"\1", folded
    )
    folded = re.sub(  # 「『未割当』というシートに出力（Excel）」: the format of the output
        r"出力\s*\(\s*(Excel|EXCEL|エクセル|CSV|csv)\s*\)", r"\1で出力", folded
    )
    folded = _settings_separators(folded)
    folded = _restated_periods(folded)
    folded = re.sub(r"[、,]\s*しかも\s*", "、かつ", folded)  # 「…で、しかも担当営業が空欄」
    folded = re.sub(r"OK\s*扱い", "一致扱い", folded)  # 「差が千円以内ならOK扱い」
    folded = re.sub(  # 「日付順（古い方から）」: the direction said as where to start
        r"\(\s*(古い|新しい|小さい|大きい|早い|遅い|少ない|多い)\s*(?:方|ほう)\s*から\s*\)",
        r"(\1順)",
        folded,
    )
    folded = re.sub(  # 「ship_date ＝ 2024-07-01 〜 2024-09-30」: a period said as a setting
        rf"(?<![{_K}{_KATA}A-Za-z0-9_])(?!(?:対象)?期間)(?P<col>{NOUN})\s*[=:]\s*(?P<d1>{_DATE})"
        rf"\s*(?P<to>〜|~|～)\s*(?P<d2>{_DATE})",
        r"\g<col>が\g<d1>〜\g<d2>",
        folded,
    )
    folded = re.sub(  # 「店舗が本店を除き、」: the rows of every other value
        rf"(?P<col>{NOUN})\s*が\s*(?P<v>{NOUN})\s*を\s*(?:除き|除いて|のぞき|のぞいて)(?=\s*[、,])",
        r"\g<col>が「\g<v>」以外で",
        folded,
    )
    folded = re.sub(  # 「件数と設計料合計で集計」: the total of 設計料, said after its column
        r"(?<=と)(?P<x>[\u4e00-\u9fff\u30a1-\u30faー]{2,10}?)(?P<m>合計|平均)(?=\s*(?:で|を)\s*集計)",
        r"\g<x>の\g<m>",
        folded,
    )
    folded = re.sub(  # 「⇒ 絞り込み（魚種が「まぐろ」）」「絞り込み：状況 が「未入金」」: rows kept
        r"(?:絞り込み|絞込み?|フィルター?)\s*(?:\(\s*(?P<a>[^()]{1,80}?)\s*\)|:\s*(?P<b>[^。⇒→()\n]{1,80}?))"
        r"(?=[^\S\n]*(?:[。⇒→\n]|$))",
        lambda m: f"{m['a'] or m['b']}の行だけに絞り込み",
        folded,
    )
    folded = re.sub(  # 「魚種 が まぐろ・ぶり・まだい のいずれか」: values set apart by spaces
        rf"(?P<col>{NOUN})\s*が\s+(?P<vs>[^\s、。「」()・/]{{1,15}}(?:\s*[・/]\s*[^\s、。「」()・/]{{1,15}}){{1,9}})"
        r"\s+の?\s*(?=いずれか|どれか|どちらか)",
        lambda m: (
            f"{m['col']}が" + "".join(f"「{v}」" for v in re.split(r"\s*[・/]\s*", m["vs"])) + "の"
        ),
        folded,
    )
    folded = re.sub(  # 「魚種が さば のやつだけ」: a value set apart by spaces
        rf"(?P<col>{NOUN})\s*が\s+(?P<v>[ぁ-んァ-ヶー\u4e00-\u9fffA-Za-z]{{1,15}})\s+の"
        r"(?=\s*(?:やつ|もの|行|人|分|データ)?\s*(?:だけ|のみ))",
        r"\g<col>が「\g<v>」の",
        folded,
    )
    folded = re.sub(  # 「（a.csv / b.csv、レイアウトは共通）」: how the files listed are alike
        r"\s*[、,/]\s*(?:レイアウト|様式|形式|列構成|列の並び|列|フォーマット)\s*(?:は|も)?\s*"
        r"(?:共通|同じ|一緒|揃って(?:い)?ます|そろって(?:い)?ます)\s*(?:です)?\s*(?=\))",
        "",
        folded,
    )
    folded = re.sub(  # 「a.xlsx と b.xlsx（同じ様式）をつなげて」: how the files are alike
        r"\s*\(\s*(?:同じ|列は同じ|様式は同じ|形式は同じ|レイアウトは同じ|列構成は同じ)[^()]{0,10}\)\s*(?=を|は)",
        "",
        folded,
    )
    folded = re.sub(  # 「重複削除（キー：依頼番号）」: the key said in brackets
        r"(重複(?:を)?(?:削除|除去|カット|チェック|除外)?)\s*\(\s*(?:キー|key)\s*(?:は|:)\s*([^()]{1,40}?)\s*\)",
        r"\2で\1",
        folded,
    )
    folded = re.sub(  # 「サイズ区分（小型・中型・大型）ごとに」: the values of a group, listed
        r"\s*\((?![^()]*(?:除|外|抜|だけ|のみ|以外|以上|以下|未満|超))[^()]{1,20}[・、,][^()]{1,30}\)\s*(?=ごと|別|毎)",
        "",
        folded,
    )
    folded = re.sub(  # 「部門 = 精肉, 鮮魚（この２つだけ）」: how many values were listed
        r"\s*\(\s*(?:この|その|上記の)?\s*\d{1,2}\s*(?:つ|種類?|点)\s*(?:だけ|のみ)?\s*\)",
        "",
        folded,
    )
    folded = re.sub(  # 「伝票番号の重複（二重入力分）を除いて」: a name for the rows, no condition
        r"(?<=重複)\s*\((?![^()]*(?:除|外|抜|だけ|のみ|以外|\d|「))[^()]{1,20}\)\s*(?=を|は|が)",
        "",
        folded,
    )
    folded = re.sub(r"[『“]([^』”]{1,40})[』”]", r"「\1」", folded)
    folded = re.sub(r"「([^」]{1,60}=[^」]{1,60})」", r"\1", folded)  # 「粗利 = 売価 - 原価」
    folded = re.sub(  # 「水揚げ量(kg)」「単価(円/kg)」「部数[部]」: a column's unit
        rf"(?<=[\u4e00-\u9fff\u30a1-\u30fa\u30fcA-Za-z」])\s?{_UNIT_SAID}", "", folded
    )
    folded = re.sub(  # 「業者ごと（協力業者列）」: the column a word stands for, said beside it
        rf"{NOUN}(\s*(?:ごと|別|毎)?)\s*\(\s*「?({NOUN})」?\s*(?:列|欄)\s*\)", r"\2\1", folded
    )
    folded = re.sub(  # 「送迎（行数）」: a count of rows, named by the writer
        # (「予約件数（行数）」 keeps its name, read by ``_COUNT_NAME``)
        rf"{NOUN}(?<!件数)(?<!回数)(?<!人数)(?<!者数)\s*\(\s*(?:行数|行の数|レコード数|件数)\s*\)",
        "件数",
        folded,
    )
    return _formulas_said_in_words(folded)


_KEYED_LINE = re.compile(
    r"^(?P<lead>\s*(?:[・\-*•■□◆◇●○▶]\s*)?)(?P<key>[^\s:=→⇒|.。、()「」]{1,10})"
    r"(?:\s*\t\s*|\s*(?:→|⇒|->|\|)\s*)(?P<value>[^\t→⇒|]*?[^\s→⇒|])\s*$"
)


_SETTING_ON_ONE_LINE = re.compile(r"\s*[/|]\s*(?=[^\s:/|「」()。、]{1,10}\s*:)")
"""Where one setting ends and the next begins on a line of several (「対象ファイル: a.xlsx/条件:
…/出力: CSV」): a slash or a bar before the next key."""


_TABLE_HEADS = frozenset(
    {"列", "列名", "条件", "項目", "内容", "設定", "値", "キー", "設定値", "指定"}
)


def _table_row_said(line: str) -> str:
    """A row of a table pasted as text (「| ステータス | 解約予定 以外 |」) as a settings line
    (「ステータス: 解約予定 以外」); its head (「| 列 | 条件 |」) and rule (「|---|---|」) say
    nothing."""
    row = re.fullmatch(r"\s*[|｜](?P<cells>.+?)[|｜]?\s*", line)
    if not row:
        return line
    cells = [cell.strip() for cell in re.split(r"[|｜]", row.group("cells"))]
    if all(re.fullmatch(r":?-{2,}:?|", cell) for cell in cells):
        return ""
    if len(cells) == 2 and all(cell in _TABLE_HEADS for cell in cells):
        return ""
    if len(cells) == 2 and cells[0] and cells[1]:
        return f"{cells[0]}: {cells[1]}"
    return line


def _settings_separators(text: str) -> str:
    """A settings block whose keys and values are parted by a tab (pasted from a sheet) or an
    arrow (「故障区分 → 「ドラム」のどれか」) written as 「key: value」 lines. Only when three lines
    (two with tabs) are so: one arrow in a line of prose is a step of a chain. Settings on one
    line, parted by slashes or bars (three keys or more), are one line each."""
    text = "\n".join(_table_row_said(line) for line in text.split("\n"))
    text = "\n".join(
        "\n".join(_SETTING_ON_ONE_LINE.split(line))
        if len(_SETTING_ON_ONE_LINE.findall(line)) >= 2
        and re.match(r"\s*[^\s:/|「」()。、]{1,10}\s*:", line)
        else line
        for line in text.split("\n")
    )
    lines = text.split("\n")
    keyed = [_KEYED_LINE.match(line) for line in lines]
    tabbed = sum(1 for m, line in zip(keyed, lines, strict=True) if m and "\t" in line)
    if sum(1 for m in keyed if m) < 3 and tabbed < 2:
        return text
    return "\n".join(
        f"{m.group('lead')}{m.group('key')}: {m.group('value')}" if m else line
        for m, line in zip(keyed, lines, strict=True)
    )


def _formulas_said_in_words(text: str) -> str:
    """A computed column said with a verb or 「という列」 written as its formula:
    「distance_km を fuel_l で割って「燃費」列をつくる」 →
    「燃費 = distance_km / fuel_l の列を追加」;
    「容量×数量 を「移出量」という列にして」 → 「移出量 = 容量×数量 の列を追加して」."""
    verbs = {"割": "/", "掛け": "*", "かけ": "*"}
    text = re.sub(
        rf"(?P<a>{NOUN})\s*を\s*(?P<b>{NOUN})\s*で\s*(?P<v>割|掛け|かけ)って?\s*"
        r"「(?P<c>[^」]{1,20})」\s*(?:という)?\s*列\s*を\s*(?:つく|作|出|追加|足)(?P<tail>[ぁ-ん]{0,4})",
        lambda m: f"{m['c']} = {m['a']} {verbs[m['v']]} {m['b']} の列を追加{m['tail']}",
        text,
    )
    text = re.sub(  # 「走行距離に単価20円をかけて「交通費」列をつくり」
        rf"(?P<a>{NOUN})\s*に\s*(?:単価|係数)?\s*(?P<n>\d+(?:\.\d+)?)\s*(?:円|倍)?\s*を\s*(?:かけ|掛け)て\s*"
        r"「(?P<c>[^」]{1,20})」\s*(?:という)?\s*列\s*を\s*(?:つく|作|出|追加|足)(?P<tail>[ぁ-ん]{0,4})",
        lambda m: f"{m['c']} = {m['a']} * {m['n']} の列を追加{m['tail']}",
        text,
    )
    text = re.sub(  # 「チャージ累計からご利用累計を引いて「残高」を出し」
        rf"(?P<a>{NOUN})\s*から\s*(?P<b>{NOUN})\s*を\s*引いて\s*「(?P<c>[^」]{{1,20}})」\s*(?:という)?\s*(?:列)?\s*を\s*"
        r"(?:出|つく|作|計算|追加|足)(?P<tail>[ぁ-ん]{0,4})",
        lambda m: f"{m['c']} = {m['a']} - {m['b']} の列を追加{m['tail']}",
        text,
    )
    term = rf"(?:{NOUN}|\d+(?:\.\d+)?)"
    return re.sub(
        rf"(?P<expr>{term}(?:\s*[×÷*/+\-−]\s*{term})+)\s*を\s*「(?P<c>[^」]{{1,20}})」\s*"
        r"(?:という)?\s*列\s*(?:に|と)\s*(?P<v>して|する|し)",
        lambda m: f"{m['c']} = {m['expr'].strip()} の列を追加{m['v']}",
        text,
    )


_ENGLISH_KEYS = (
    (r"input(?:\s*file)?|source|file", "入力ファイル"),
    (r"condition|conditions|filter|where", "条件"),
    (r"keep|columns|select|fields", "残す列"),
    (r"sort(?:\s*by)?|order(?:\s*by)?", "並び順"),
    (r"group(?:\s*by)?", "集計単位"),
    (r"output(?:\s*file)?|save(?:\s*as)?", "出力"),
)
_ENGLISH_KEY = re.compile(
    r"(?i)(?:^|(?<=[\n/|]))\s*(?P<key>"
    + "|".join(words for words, _ in _ENGLISH_KEYS)
    + r")\s*:\s*"
)


def _english_settings(text: str) -> str:
    """A settings block written with English keys (「Input file: a.csv / Condition: usage is
    blank / Keep: no, address」) said with the Japanese keys the rules read, one per line."""
    if len(_ENGLISH_KEY.findall(text)) < 2:
        return text
    lines = re.split(r"\s+/\s+|\n", text)
    said = []
    for line in lines:
        key = _ENGLISH_KEY.match(line)
        if key is None:
            said.append(line)
            continue
        name = next(ja for words, ja in _ENGLISH_KEYS if re.fullmatch(words, key["key"], re.I))
        value = line[key.end() :]
        value = re.sub(r"(?i)\s+is\s+not\s+(?:blank|empty)\b", " が空欄でない", value)
        value = re.sub(r"(?i)\s+is\s+(?:blank|empty)\b", " が空欄", value)
        value = re.sub(
            r"(?i)\bdesc(?:ending)?\b", "降順", re.sub(r"(?i)\basc(?:ending)?\b", "昇順", value)
        )
        said.append(f"{name}: {value}")
    return "\n".join(said)


def _english_instruction(reader: _Reader) -> None:
    """An instruction written in English sentences is refused offline: the rules read
    Japanese, and English words read as column names would build something else (a settings
    block with English keys is read; with a model configured, English is understood)."""
    text = re.sub(rf"{_FILE_NAME.pattern}|「[^」]*」", " ", reader.text)
    words = re.findall(r"[A-Za-z]{2,}", text)
    japanese = re.findall(r"[ぁ-んァ-ヶ\u4e00-\u9fff]", text)
    steps = re.findall(
        r"(?i)\b(?:keep|drop|filter|exclude|group|sort|count|sum|total|save|output|where|per)\b",
        text,
    )
    if len(words) >= 6 and len(steps) >= 2 and len(japanese) < 6:
        reader.gaps.append(
            Gap(
                kind="needs_llm",
                message="英語で書かれた指示は、LLM を設定したときだけ読み取れます"
                "（LLM なしでは日本語の指示を読み取ります）。"
                "日本語で書くか、LLM を設定してから生成してください",
                source=reader.text[:60],
            )
        )


_PERIOD_LABEL = (
    r"(?:(?:令和|平成)(?:元|\d{1,2})|\d{4})\s*年度?"
    r"(?:\s*(?:上期|下期|上半期|下半期|第\s*\d\s*四半期|\d{1,2}\s*月\s*(?:中|分)?))?"
    r"|上期|下期|上半期|下半期|第\s*\d\s*四半期|今期|当期|前期|本年度|今年度|前年度|昨年度"
)
_DATE_SPAN = rf"{_DATE}\s*(?:から|〜|~|～|-|－)\s*{_DATE}\s*(?:まで)?"


def _western_year(era: str | None, number: str) -> int:
    year = 1 if number == "元" else int(number)
    return year + (2018 if era == "令和" else 1988 if era == "平成" else 0)


def _label_fits(label: str, span: str) -> bool:
    """Whether the first date of ``span`` lies in the year (or month) ``label`` names: a 年度
    or a half-year begins in its year, a month is that month; a label with no year fits."""
    named = re.match(r"\s*(?:(?P<era>令和|平成)(?P<n>元|\d{1,2})|(?P<y>\d{4}))\s*年", label)
    if named is None:
        return True  # 「上期（…）」「今期（…）」: no year to hold the dates to
    year = _western_year(named.group("era"), named.group("n") or named.group("y"))
    said = re.match(_DATE, span)
    try:
        first = date.fromisoformat(_date_iso(said.group(0))) if said else None
    except (_DateNotReadable, ValueError):
        first = None
    if first is None:
        return False
    month = re.search(r"(\d{1,2})\s*月", label[named.end() :])
    if month:
        return (first.year, first.month) == (year, int(month.group(1)))
    return first.year == year


def _in_the_fiscal_year(text: str) -> str:
    """Months and days said without a year in the one 年度 the instruction names (「令和6年度の
    仕訳帳…伝票日付が10月以降」, 「令和7年度…支出日が4/1〜6/30」): a 年度 runs April to March."""
    years = {
        _western_year(era, number)
        for era, number in re.findall(r"(令和|平成)?(元|\d{1,4})\s*年度", text)
        if era or len(number) == 4
    }
    if len(years) != 1:
        return text
    fiscal = years.pop()

    def month_of_the_year(match: re.Match[str]) -> str:
        month, said = int(match.group("month")), match.group("rel")
        if not 1 <= month <= 12:
            return match.group(0)
        year = fiscal if month >= 4 else fiscal + 1  # a 年度 runs from April to March
        last = calendar.monthrange(year, month)[1]
        day = 1 if said in ("以降", "以後", "から", "より前") else last
        return f"{match.group('head')}{year}年{month}月{day}日{said}"

    text = re.sub(
        rf"(?P<head>{NOUN}\s*が\s*)(?<![年\d])(?P<month>\d{{1,2}})\s*月\s*"
        r"(?P<rel>以降|以後|から|以前|まで|より前|より後)",
        month_of_the_year,
        text,
    )

    def days_of_the_year(match: re.Match[str]) -> str:
        m1, m2 = (int(match.group(f"m{n}") or match.group(f"jm{n}")) for n in (1, 2))
        d1, d2 = (match.group(f"d{n}") or match.group(f"jd{n}") for n in (1, 2))
        if not (1 <= m1 <= 12 and 1 <= m2 <= 12):
            return match.group(0)
        y1, y2 = (fiscal if m >= 4 else fiscal + 1 for m in (m1, m2))
        return f"{match.group('head')}{y1}/{m1}/{d1}〜{y2}/{m2}/{d2}"

    text = re.sub(  # 「令和7年度…支出日が4/1〜6/30」: days of that fiscal year
        rf"(?P<head>{NOUN}\s*が\s*)(?<![/\d年])"
        r"(?:(?P<m1>\d{1,2})/(?P<d1>\d{1,2})|(?P<jm1>\d{1,2})\s*月\s*(?P<jd1>\d{1,2})\s*日)"
        r"\s*[〜~\-ー]\s*"
        r"(?:(?P<m2>\d{1,2})/(?P<d2>\d{1,2})|(?P<jm2>\d{1,2})\s*月\s*(?P<jd2>\d{1,2})\s*日)"
        r"(?![/\d])",
        days_of_the_year,
        text,
    )
    return text


def _restated_periods(text: str) -> str:
    """A period said twice, as a name and as its dates, is said once, by its dates:
    「令和5年度（令和5年4月1日〜令和6年3月31日）」 → the two dates, 「令和6年（2024年）」 →
    「令和6年」 (only when both name the same year). A name whose dates are not said stays
    as it is, and its numbers are asked about: the months a 年度 covers differ by company.
    「この期間」 after the only period the text gives is that period."""

    text = re.sub(  # 「2025年2月中（2025年2月1日〜2月28日）」: the second date in the first's year
        r"(?P<y>(?:(?:令和|平成)(?:元|\d{1,2})|\d{4})\s*年)(?P<md>\s*(?P<m1>\d{1,2})\s*月\s*\d{1,2}\s*日"
        r"\s*(?:から|〜|~|～)\s*)(?=(?P<m2>\d{1,2})\s*月\s*\d{1,2}\s*日)",
        lambda m: (
            m.group(0) + m.group("y") if int(m.group("m2")) >= int(m.group("m1")) else m.group(0)
        ),  # (「12月1日から1月31日」 runs into the next year: read as such)
        text,
    )

    def dated(match: re.Match[str]) -> str:
        if not _label_fits(match.group("label"), match.group("span")):
            return match.group(0)  # 「2025年3月分（2025/4/1〜…）」: which one is meant is asked
        span, column = match.group("span"), match.group("col")
        return f"{column}が{span}" if column else span

    text = re.sub(
        rf"(?P<label>{_PERIOD_LABEL})\s*\(\s*(?P<span>{_DATE_SPAN})\s*"
        rf"(?:[、,]\s*(?P<col>{NOUN}?)\s*(?:ベース|基準|で判定|で見る)\s*)?\)",
        dated,
        text,
    )  # 「令和6年度（令和6年4月1日〜令和7年3月31日、入庫日ベース）」: the dates of a column

    def month_days(match: re.Match[str]) -> str:
        year, month = match.group("year"), int(match.group("month"))
        if int(match.group("m1")) != month or int(match.group("m2")) != month:
            return match.group(0)  # 「3月中（2/1〜3/31）」: which one is meant is asked
        first, last = match.group("d1"), match.group("d2")
        return f"{year}年{month}月{first}日〜{year}年{month}月{last}日"

    text = re.sub(  # 「令和7年3月中（3/1〜3/31）」: the month's days, its year said before
        r"(?P<year>(?:令和|平成)(?:元|\d{1,2})|\d{4})\s*年\s*(?P<month>\d{1,2})\s*月\s*(?:中|分)?\s*"
        r"\(\s*(?P<m1>\d{1,2})\s*/\s*(?P<d1>\d{1,2})\s*(?:から|〜|~|～|-|－)\s*"
        r"(?P<m2>\d{1,2})\s*/\s*(?P<d2>\d{1,2})\s*\)",
        month_days,
        text,
    )

    def month_end(match: re.Match[str]) -> str:
        era, number, month = match.group("era"), match.group("n"), int(match.group("month"))
        if not 1 <= month <= 12:
            return match.group(0)
        year = _western_year(era, number) if era else int(number)
        last = calendar.monthrange(year, month)[1]
        return f"{era or ''}{number}年{month}月{last if match.group('end') == '末' else 1}日"

    text = re.sub(  # 「2025年4月末まで」「令和7年3月末」: the month's last (or first) day
        r"(?P<era>令和|平成)?(?P<n>元|\d{1,4})\s*年\s*(?P<month>\d{1,2})\s*月\s*(?P<end>末|初)"
        r"(?!\s*(?:締め|締|時点の|〆))",
        month_end,
        text,
    )

    def whole_month(match: re.Match[str]) -> str:
        era, number, month = match.group("era"), match.group("n"), int(match.group("month"))
        if not 1 <= month <= 12 or (not era and len(number) != 4):
            return match.group(0)
        year = _western_year(era, number) if era else int(number)
        last = calendar.monthrange(year, month)[1]
        said = f"{era or ''}{number}年{month}月"
        return f"{match.group('head')}{said}1日から{said}{last}日まで"

    text = re.sub(  # 「入荷日が令和6年7月中のもの」「計上日が2024年7月の行」: the month's days
        rf"(?P<head>{NOUN}\s*が\s*)(?P<era>令和|平成)?(?P<n>元|\d{{1,4}})\s*年\s*"
        r"(?P<month>\d{1,2})\s*月\s*(?:中|分)?"
        r"(?=\s*(?:の\s*(?:もの|行|分|データ|取引|明細|レコード|やつ|人|案件|伝票)|だけ|のみ))",
        whole_month,
        text,
    )

    text = _in_the_fiscal_year(text)

    def same_year(match: re.Match[str]) -> str:
        western = _western_year(match.group("era"), match.group("n"))
        return match.group("said") if western == int(match.group("western")) else match.group(0)

    era = r"(?P<era>令和|平成)(?P<n>元|\d{1,2})年"
    text = re.sub(
        rf"(?P<said>{era})\s*\(\s*(?:西暦\s*)?(?P<western>\d{{4}})\s*年?\s*\)", same_year, text
    )
    text = re.sub(rf"(?P<said>(?P<western>\d{{4}})\s*年)\s*\(\s*{era}\s*\)", same_year, text)
    text = re.sub(  # 「2024年4月1日〜2024年9月30日に 入金日 がある分」: the column's dates
        rf"(?P<span>{_DATE_SPAN})\s*に\s*(?P<col>{NOUN})\s*が\s*(?:ある|入っている|含まれる)",
        r"\g<col>が\g<span>の",
        text,
    )
    spans = list(re.finditer(_DATE_SPAN, text))
    if len({re.sub(r"\s|まで", "", span.group(0)) for span in spans}) != 1:
        return text
    head, tail = text[: spans[0].end()], text[spans[0].end() :]
    said = re.sub(r"\s*まで$", "", spans[0].group(0))
    return head + re.sub(r"(?:この|その|上記の?|前記の?|同|当該)\s*期間", said, tail)


def _lines(folded: str) -> list[tuple[str, bool]]:
    """Each non-empty line without its bullet or step number, and whether it was numbered."""
    said = []
    for line in folded.splitlines():
        numbered = bool(_STEP_NUMBER.match(line))
        line = re.sub(r"\s+", " ", _BULLET.sub("", _STEP_NUMBER.sub("", line))).strip()
        line = line.rstrip("。")
        if line:
            said.append((line, numbered))
    return said


_STEP_NUMBER = re.compile(
    r"^\s*(?:(?:手順|Step|STEP|ステップ)\s*\d{1,2}\s*[.:)]?|\d{1,2}[.)]|\(\d{1,2}\)"
    r"|\d{1,2}\s+(?=[^\d\s万千億円件%日年月時分人名個本枚回台])|\x00)\s*"
)
_BULLET = re.compile(r"^\s*(?:[・\-*•■□◆◇●○▶☐☑☒✓✔➤►▸◎★☆]|一\s*[、,](?!\s*[、,]))\s*")
"""A bullet (・, ■, ☐ …, or 「一、」 of a formal letter's list) before a line."""


def amount_value(text: str) -> int | float:
    """``5,000円`` ``5万`` ``1万5千`` ``1.5万`` ``3億`` → the number."""
    text = text.replace(" ", "")
    text = re.sub(rf"{UNIT}$", "", text)
    text = re.sub(r"^一?(?=[千万])", "1", text)  # 「千円未満」「一万円」
    text = re.sub(r"^(\d+(?:\.\d+)?)千万", lambda m: f"{float(m.group(1)) * 1000:g}万", text)
    total = 0.0
    rest = text
    for unit, scale in (("億", 100_000_000), ("万", 10_000), ("千", 1_000)):
        if unit in rest:
            head, rest = rest.split(unit, 1)
            total += float(head.replace(",", "")) * scale
    if rest:
        total += float(rest.replace(",", ""))
    return int(total) if total.is_integer() else total


def _clean(noun: str) -> str:
    return noun.strip().strip("「」").strip()


def _column_name(noun: str) -> str:
    """「金額列」「備考欄」 name the column 金額, 備考."""
    name = _clean(noun)
    return name[:-1] if len(name) >= 3 and name[-1] in "列欄" else name


def _names(text: str) -> list[str]:
    names = [
        _column_name(part)
        for part in re.split(LIST_SEP, text)
        if _clean(part) and not re.fullmatch(_FORMAT_WORD, _clean(part))  # 「…xlsx、取引先コード」
    ]
    return list(dict.fromkeys(names))


def is_amount_column(noun: str) -> bool:
    return bool(_AMOUNT_NOUN.search(_clean(noun)))


class _DateNotReadable(ValueError):
    """A date the instruction states that does not exist (「2025/2/30」): its message says so."""


def _date_iso(text: str) -> str:
    from keiri_agent.files.cells import parse_date

    try:
        return parse_date(text).isoformat()
    except ValueError as error:
        raise _DateNotReadable(str(error)) from error


# --------------------------------------------------------------------------- inputs / outputs

_FORMATS = (
    (r"csv|CSV|Csv|ＣＳＶ", "csv"),
    (r"Excel|EXCEL|excel|エクセル|xlsx|xlsm|XLSX|xls", "excel"),
    (r"zip|ZIP|Zip", "zip"),
    (r"pdf|PDF|Pdf", "pdf"),
)
_FORMAT_WORD = r"csv|CSV|Csv|Excel|EXCEL|excel|エクセル|xlsx|xlsm|XLSX|zip|ZIP|pdf|PDF"
_FILE = re.compile(
    rf"(?:(?P<holds>{QNOUN})(?:の|\s)?)?\(?\s*(?P<fmt>{_FORMAT_WORD})(?:ファイル|ブック|データ)?"
)
# 「ひまわり組名簿.xlsx」「その他仕入先.csv」「お礼状.csv」: a name may open in kana
_FILE_NAME = re.compile(
    rf"(?P<name>(?:(?:^|(?<=[、,「(\s。]))(?:その他|[おご](?=[{_K}])|(?!まず|そして|また|さらに|それ|これ|あと|次)[ぁ-ん]{{2,6}}"
    rf"(?<![はがをにのでともへやかずて]))(?=[{_K}{_KATA}])|(?<=[てでにへを])[おご](?=[{_K}]))?"
    rf"[A-Za-z0-9_\-{_K}{_KATA}]+(?:(?:・|(?<=[{_K}])(?:さん|様|さま)(?=[{_K}])|(?<=[{_K}])(?<![並揃分付抜残絞集消除])(?![はがをにのでともへやか])[ぁ-ん](?=[{_K}_\-])|(?<=[{_K}])(?<![並揃分付抜残絞集消除])(?![はがをにのでともへやか]|から|まで|より|して|した|ごと|だけ|のみ|など|[ぁ-ん][てで])[ぁ-ん]{{2}}(?=[{_K}])|(?<=[_\-])[ぁ-ん]{{1,4}}(?=[{_K}{_KATA}]))[A-Za-z0-9_\-{_K}{_KATA}]+)*(?:(?<=[_\-])[ぁ-ん]{{1,6}}(?=\.))?"
    rf"(?:(?<=[{_K}])(?![はがをにのでともへやか])[ぁ-ん]{{1,3}}(?=\.))?)"
    r"\.(?P<ext>csv|xlsx|xlsm|xls|zip|pdf)",
    re.I,
)
_OUTPUT_VERB = (
    r"出力|書き出|保存|まとめ|出し|出す|出して|作成(?![日者])|作っ|落と|吐き出|ダウンロード|エクスポート|一覧|にして|にし|しといて|しておいて|したい|したく|"
    r"して|する|結構|大丈夫|構いません|かまいません|OK|いいです|よいです|助かります|いただけ"
    r"|確認(?![\u4e00-\u9fff\u30a1-\u30fa])|返し|返して|戻し|戻して|抜き出|のまま|ください|下さい|お願い|で結構|がほしい|が欲しい|でほしい|で欲しい|化"
    r"|共有|ご共有|提出|返却(?=\s*(?:して|し|願|お願|くだ|下さ))"
    r"|output|export"
)
_AS_OUTPUT_NAMED = re.compile(
    rf"^\s*[)」』]?\s*(?:\(\s*(?:シート名?|sheet)\s*[:=は]?\s*「?(?P<sheet>[^」)]+)」?\s*\)"
    rf"|[、,]\s*シート名?\s*(?:は|:|=)?\s*「(?P<sheet_b>[^」]+)」)?\s*(?:\(\s*(?:{_FORMAT_WORD})\s*(?:ファイル|形式)?\s*\))?\s*(?:ファイル|ブック|形式|の?ファイル)?\s*"
    rf"(?:(?:で|に(?!つき|つい|関し|より|基づ)|へ|として)\s*(?:{_FORMAT_WORD})?\s*[ぁ-ん]{{0,3}}(?:{_OUTPUT_VERB})|出力|output|export|の?一覧(?:に|で)|という(?:ファイル)?名前?|というファイル|の名前"
    rf"|という\s*(?:{_FORMAT_WORD})\s*(?:ファイル|ブック|形式)?\s*(?:で|に|として)\s*[ぁ-ん]{{0,3}}(?:{_OUTPUT_VERB})"
    rf"|として\s*(?:{_FORMAT_WORD})\s*(?:に|で|へ)\s*[ぁ-ん]{{0,3}}(?:{_OUTPUT_VERB})"
    r"|\s*(?:へ|に|で)\s*(?:[。!！~〜]|$)"  # 「…を合計、「集計.xlsx」へ」「…順で 集計.csv に。」
    r"|を\s*(?:作成|作って|作り|作る))"  # 「…の2列で 在庫戻し対象.xlsx を作成してください」
)
_AS_OUTPUT = re.compile(
    _AS_OUTPUT_NAMED.pattern
    # 「Excelでシート名は「5月」で」: the sheet said right after the format
    + r"|^\s*\)?\s*(?:で|に|へ)\s*シート名?\s*(?:は|:)?\s*「(?P<sheet_c>[^」]+)」"
    + r"|^\s*\)?\s*(?:で|に|へ)\s*(?:[。、]|$|\(|シート)"
)
_ASKED_FOR = re.compile(
    r"^\s*(?:ファイル|ブック)?\s*(?:の\s*一覧\s*(?:に|で)|を\s*(?:ください|下さい|ちょうだい|お願い|作って|作成|出して|出力|もらえ)"
    r"|が\s*(?:ほしい|欲しい|必要)|に\s*(?:しといて|しておいて|して|したい)|の\s*シート(?:名)?\s*(?:は|を|:)"
    r"|「[^」]+\.(?:xlsx|xlsm|csv)」|の\s*「[^」]+」\s*シート|[、,]\s*(?:ファイル名|シート名?)\s*(?:は|:)"
    r"|で\s*(?:ちょうだい|いいです|いいよ|いい|よろしく|OK|大丈夫)|で\s*\d+\s*行\s*で)"
)
"""「…Excelの一覧にして」「…並べたCSVをください」: the format asked for is the output."""
_AS_INPUT = re.compile(
    r"^\s*(?:ファイル|ブック|データ)?\s*(?:から|を読|の中|を取り込|を使|と|を|は|の|、|\)|,)"
)
_OUTPUT_BEFORE = re.compile(
    r"(?:(?<![\u4e00-\u9fff\u30a1-\u30fa])(?:出力|結果|出力先|出力形式|出力ファイル|出力ファイル名|ファイル名|アウトプット|保存先|保存名|保存ファイル名?|名前)\s*(?:は|を|:)?\s*「?"
    r"|(?:(?<=^)|(?<=。))\s*保存\s*:\s*「?"  # 「保存：剪定候補.csv」 (a settings line)
    r"|(?:出力ファイル名?|出力先|保存先|ファイル名)\s*\(\s*"  # 「出力ファイル（未収一覧.xlsx）は」
    # 「出力: Excel 消込.xlsx」「結果はExcelで 照合.xlsx」
    r"|(?:出力|結果)\s*(?:は|:)?\s*(?:Excel|EXCEL|エクセル|CSV)\s*(?:で|の)?\s*"
    r"|[→⇒>]|[①-⑳]\s*|\(\s*ファイル名\s*(?:は|:)?\s*)\s*$"
)
_SHEET = re.compile(
    r"シート(?:名)?\s*(?:は|を|:|=)?\s*「(?P<a>[^」]+)」|「(?P<b>[^」.]+)」\s*(?:という\s*)?シート|シート(?:名)?\s*(?:は|:|=)\s*(?P<c>[^\s、。()「」]+?)\s*(?:で|に|\)|、|。|$)"
)
_INPUT_SHEET = re.compile(
    r"^\s*\(\s*シート(?:名)?\s*(?:は|:|=)?\s*「?(?P<sheet>[^」)]+?)」?\s*\)"
    r"|^\s*\)?\s*の\s*「(?P<sheet2>[^」]+)」\s*シート"
    r"|^\s*[、,]\s*シート(?:名)?\s*(?:は|:|=)?\s*「?(?P<sheet3>[^」)]+?)」?\s*\)"
    r"|^\s*\)?\s*の\s*シート(?:名)?\s*「(?P<sheet4>[^」]+)」"
    r"|^\s*\(\s*「(?P<sheet5>[^」]+)」\s*シート\s*\)"  # 「出荷実績.xlsx（「出荷」シート）」
)
_SHEET_OUTPUT = re.compile(
    r"^\s*」?\s*の\s*(?:「(?P<sheet>[^」]+)」\s*シート|シート(?:名)?\s*「(?P<sheet2>[^」]+)」)"
    r"\s*(?:に|へ)\s*(?:[ぁ-ん]{0,3}(?:出力|書き出|まとめ|出し|保存)|(?=[。!！]|$))"
)
_BARE_SHEET_OUTPUT = re.compile(
    r"「(?P<sheet>[^」]+)」\s*シート\s*(?:に|へ)\s*[ぁ-ん]{0,3}(?:出力|書き出|まとめ|出し|保存)"
)


_ENCODING = re.compile(r"\s*\(\s*(?:Shift_JIS|SJIS|UTF-8|shift_jis|cp932|CP932|UTF8)\s*\)")
_WORD_OUTPUT = re.compile(
    r"(?:Word|WORD|word|ワード)\s*(?:の|で)?\s*(?:文書|ファイル|報告書|資料|形式)?"
    r"[^、。]{0,16}?(?:に|で|へ|として)\s*[ぁ-ん]{0,4}(?:して|し|まとめ|出力|出し|書き出|作|する|ほしい|お願い|ください)"
    r"|[A-Za-z0-9_\-\u4e00-\u9fff\u30a1-\u30fa\u30fc]+\.docx"
)
"""A Word document asked for (「Word文書にして」「Wordの報告書（報告.docx）にまとめて」)."""
_FORMAT_AFTER_VERB = re.compile(
    rf"\(\s*(?P<fmt>{_FORMAT_WORD})\s*(?:で|形式|ファイル)?\s*(?:お願いします)?\s*\)"
)


_MADE_FIRST = re.compile(
    r"^\s*[」』]?\s*(?:を\s*作り\s*(?:たい|たく)|の\s*作成\s*(?:を|依頼|のお願い|お願い)"
    r"|を\s*作成\s*(?:したい|したく|して|お願い|いただ|願)|(?:を\s*)?お願いした(?:い|く))"
)
"""「年度末購入.csv の作成をお願いします。…台帳.xlsx から…」「ワースト20.xlsx を作りたくて」:
a file asked to be made, named before the file it is made from."""
_NAME_POINTED = re.compile(
    r"(?:上記|前記|上|冒頭|先頭|タイトル|表題)\s*の?\s*(?:ファイル名|名前|名称|ファイル)\s*(?:で|に|として)"
)
"""「上記ファイル名でExcel出力」: the output is the file named alone above."""


def _named_alone_above(text: str, start: int, end: int) -> bool:
    """Whether the file at ``text[start:end]`` is a line of its own (「[損失.xlsx]」) that a later
    sentence names as the output's name (「上記ファイル名で出力」)."""
    alone = re.match(r"(?:^|(?<=。))\s*[\[「(]?\s*$", text[:start][-3:] or "") and re.match(
        r"\s*[\]」)]?\s*(?:。|$)", text[end:]
    )
    return bool(alone and _NAME_POINTED.search(text, end))


def _is_output(text: str, start: int, end: int, *, named: bool = False) -> bool:
    after = text[end : end + 30]
    before = text[max(0, start - 12) : start]
    if named and (
        _named_alone_above(text, start, end)
        or (_MADE_FIRST.match(after) and _FILE_NAME.search(text, end))
    ):
        return True
    if re.match(
        r"\s*」?\s*(?:と|を)\s*[^→。]{0,20}?(?:つな|繋|結合|照合|突き合わせ|突合|紐づけ|紐付け)",
        after,
    ):
        return False  # 「奉納金.xlsx → 氏子台帳.xlsx と氏子番号でつなぐ」: a table joined, read
    if _OUTPUT_BEFORE.search(before):
        return True
    return bool((_AS_OUTPUT_NAMED if named else _AS_OUTPUT).match(after))


def _format_of(word: str) -> str:
    for pattern, name in _FORMATS:
        if re.fullmatch(pattern, word):
            return name
    return "table"


_IMAGES = re.compile(
    rf"(?:(?P<holds>{NOUN})\s*(?:\(\s*[^()]{{0,16}}?|の\s*))?"
    r"(?P<img>画像|写真|スキャン(?:データ|した(?:もの|ファイル)?)?|JPE?G|PNG|jpe?g|png)(?:\s*\))?"
    r"(?=\s*(?:から|を|の|で|、|\)|など))"
)
"""Photos and scans of papers (「名簿（手書きを撮った画像）から」): documents, read by a model."""
_FILE_DESCRIPTION = re.compile(
    rf"(?:{NOUN}\s*(?:さん|様|さま)?\s*の\s*){{0,3}}{NOUN}\s*(?:の|\(|「)?\s*$"
)
"""The words naming a file before its mention: 「先月分の請求データ（請求.csv）」「集乳記録
『集乳日報.csv』」."""


def _add_input(reader: _Reader, fmt: str, holds: str, source: str, start: int, end: int) -> None:
    item = InputSpec(id=f"in{len(reader.inputs) + 1}", format=fmt, holds=holds, source=source)  # type: ignore[arg-type]
    described = _FILE_DESCRIPTION.search(reader.text[max(0, start - 24) : start])
    if described and described.group(0).strip():
        reader.use(start - len(described.group(0)), start)
    sheet = _INPUT_SHEET.match(reader.text[end:])
    if sheet:
        item.sheet = (
            sheet.group("sheet")
            or sheet.group("sheet2")
            or sheet.group("sheet3")
            or sheet.group("sheet4")
            or sheet.group("sheet5")
        ).strip()
        end += sheet.end()
    reader.inputs.append(item)
    reader.input_positions[item.id] = start
    reader.use(start, end)


_NOUN_CHAIN = re.compile(
    rf"(?:(?:{NOUN})[ぁ-ん]?\s*(?:と|・|の|や|及び|および|,)?\s*){{1,8}}"
    rf"(?:{_FORMAT_WORD})?(?:ファイル|データ)?\s*$"
)


_RELATIVE_CLAUSE = re.compile(
    rf"(?P<desc>[^、。()「」]{{1,40}}?(?:ている|てる|ております|た))"
    rf"\s*(?:{NOUN})?\s*[(「]?\s*$"
)
"""「本館と別館で別々に出しているミニバー売上CSV」「全店の売上をまとめたExcel」: a clause
before a file that tells how it was made describes the file; its words are no columns."""


def _use_relative_clauses_of_inputs(reader: _Reader) -> None:
    text = reader.text
    for position in reader.input_positions.values():
        start = max(text.rfind(mark, 0, position) for mark in "、。") + 1
        described = _RELATIVE_CLAUSE.search(text, start, position)
        if described and not re.search(
            r"\d|「|だけ|のみ|以上|以下|未満|超|除|絞|抜き出|抽出|合計|集計|並べ",
            described.group("desc"),
        ):  # 「金額が1万円以上のものに絞った売上.csv」 says a step: read, not passed over
            reader.use(described.start("desc"), described.end("desc"))


def _use_descriptions_of_named_inputs(reader: _Reader) -> None:
    """「A教室とB教室の出欠記録（出欠_A.csv、出欠_B.csv）」: the nouns describing input files
    named in the parentheses after them say what the files hold, no column."""
    text = reader.text
    named = [item.source for item in reader.inputs if _FILE_NAME.fullmatch(item.source)]
    for aside in re.finditer(r"\(([^()]*)\)", text):
        if not any(name in aside.group(1) for name in named):
            continue
        clause_start = max(text.rfind(mark, 0, aside.start()) for mark in "。、()") + 1
        described = _NOUN_CHAIN.search(text, clause_start, aside.start())
        if (
            described
            and described.group(0).strip()
            and not re.search(r"[をがは]|ごと|別に|合計|件数|抽出|出す|出して", described.group(0))
        ):  # (「…年齢帯別に件数を出す（ファイル：…）」 asks for a step: read)
            reader.use(described.start(), aside.start())


def _last_bare_format_is_the_output(reader: _Reader) -> None:
    """「外注費.csv、…合計と件数ちょうだい。Excelで！」: with no output read, a bare format
    word (no name, no description) mentioned after every named file is the output."""
    bare = [
        item
        for item in reader.inputs
        if item.format in ("csv", "excel")
        and re.fullmatch(rf"\(?\s*(?:{_FORMAT_WORD})(?:ファイル|ブック|データ)?", item.source)
    ]
    named = [item for item in reader.inputs if item not in bare]
    if not bare or not named:
        return
    last = bare[-1]
    if reader.input_positions[last.id] < max(reader.input_positions[n.id] for n in named):
        return
    reader.inputs.remove(last)
    reader.input_positions.pop(last.id)
    reader.outputs.append(OutputSpec(format=last.format, source=last.source))  # type: ignore[arg-type]
    _renumber_inputs(reader)


def _file_ranges(reader: _Reader) -> None:
    """「自費売上_2024_Q1.csv 〜 自費売上_2024_Q4.csv」: the files between the two named are read
    too (their names differ in one number); any other range is asked, never read as two."""
    items = sorted(reader.inputs, key=lambda item: reader.input_positions[item.id])
    added = False
    for first, last in itertools.pairwise(items):
        start = reader.input_positions[first.id]
        between = reader.text[start + len(first.source) : reader.input_positions[last.id]]
        if not re.fullmatch(r"\s*[」』]?\s*(?:〜|~|～|から)\s*[「『]?\s*", between):
            continue
        ends = re.split(r"(\d+)", first.holds), re.split(r"(\d+)", last.holds)
        differ = [i for i, (a, b) in enumerate(zip(*ends, strict=False)) if a != b]
        months = _months_between(ends, differ) if first.format == last.format else []
        names = []  # the names of the files between the two, in order
        for year, month in months:  # 「書籍売上_2024-04.csv」〜「書籍売上_2025-03.csv」
            parts = list(ends[0])
            parts[differ[0]] = str(year)
            parts[differ[1]] = str(month).zfill(len(ends[0][differ[1]]))
            names.append("".join(parts))
        if not months:
            span = (
                int(ends[1][differ[0]]) - int(ends[0][differ[0]])
                if len(ends[0]) == len(ends[1]) and len(differ) == 1 and differ[0] % 2 == 1
                else 0
            )
            if span == 1 and first.format == last.format:
                continue  # 「売上_1.csv 〜 売上_2.csv」: nothing between the two
            if first.format != last.format or not 1 < span <= 24:
                message = (
                    f"「{first.source} 〜 {last.source}」の間にどのファイルがあるか読み取れません"
                    "でした。読み込むファイルの名前をそれぞれ書いてください"
                )
                if all(gap.message != message for gap in reader.gaps):
                    reader.gaps.append(
                        Gap(
                            kind="not_understood",
                            message=message,
                            source=f"{first.source}〜{last.source}",
                        )
                    )
                continue
            number = ends[0][differ[0]]
            for step in range(1, span):
                parts = list(ends[0])
                parts[differ[0]] = str(int(number) + step).zfill(len(number))
                names.append("".join(parts))
        extension = first.source.rsplit(".", 1)[-1]
        for step, holds in enumerate(names, start=1):
            item = InputSpec(
                id=f"range{len(reader.inputs)}",
                format=first.format,
                holds=holds,
                source=f"{holds}.{extension}",
            )
            reader.inputs.append(item)
            reader.input_positions[item.id] = start + step  # between the two, in order
            added = True
    if added:
        reader.inputs.sort(key=lambda item: reader.input_positions[item.id])
        positions = [reader.input_positions.pop(item.id) for item in reader.inputs]
        for number, (item, position) in enumerate(zip(reader.inputs, positions, strict=True), 1):
            item.id = f"in{number}"
            reader.input_positions[item.id] = position


def _months_between(ends: tuple[list[str], list[str]], differ: list[int]) -> list[tuple[int, int]]:
    """The months strictly between two names that differ in a year and the month after it
    (「売上_2024-11」「売上_2025-02」: 2024-12, 2025-01), at most two years of them."""
    if len(ends[0]) != len(ends[1]) or len(differ) != 2 or differ[1] != differ[0] + 2:
        return []
    years = [int(ends[0][differ[0]]), int(ends[1][differ[0]])]
    months = [int(ends[0][differ[1]]), int(ends[1][differ[1]])]
    if not all(1900 < y < 2100 for y in years) or not all(1 <= m <= 12 for m in months):
        return []
    first, last = years[0] * 12 + months[0] - 1, years[1] * 12 + months[1] - 1
    if not 1 < last - first <= 24:
        return []
    return [(n // 12, n % 12 + 1) for n in range(first + 1, last)]


def _renumber_inputs(reader: _Reader) -> None:
    """Ids in1, in2… again after an input was taken for the output."""
    for number, item in enumerate(reader.inputs, start=1):
        reader.input_positions[f"in{number}"] = reader.input_positions.pop(item.id)
        item.id = f"in{number}"


def _bare_format_of_the_output(reader: _Reader) -> None:
    """「エクセルでほしいです、ファイル名は 評価.xlsx で」「Excel形式（ファイル名：実績.xlsx）」:
    a bare format word after every named file, of the named output's format, is that
    output said twice, not one more file to read."""
    named = [item for item in reader.inputs if _FILE_NAME.fullmatch(item.source)]
    for item in list(reader.inputs):
        bare = re.fullmatch(
            rf"\(?\s*(?:{_FORMAT_WORD})(?:ファイル|ブック|データ|形式)?", item.source
        )
        after = reader.text[reader.input_positions[item.id] + len(item.source) :]
        if (
            bare
            and named
            and not re.match(r"\s*(?:ファイル|データ)?\s*(?:を|と|から|の中|にある)", after)
            and any(o.format == item.format and o.file_name for o in reader.outputs)
            and reader.input_positions[item.id] > max(reader.input_positions[n.id] for n in named)
        ):
            reader.inputs.remove(item)
            reader.input_positions.pop(item.id)
    _renumber_inputs(reader)


_NAME_WITHOUT_EXTENSION = re.compile(
    r"(?:出力|保存)?\s*(?:ファイル名|ファイルの名前)\s*(?:は|を|:)?\s*「(?P<name>[^」.。]{1,60})」"
)


_ENCODING_SAID = re.compile(
    r"(?P<sjis>Shift[_\-\s]?JIS|SJIS|S-JIS|シフトJIS|CP932|MS932)|(?P<utf8>UTF-?8)",
    re.IGNORECASE,
)
_OUTPUT_WORD = re.compile(r"出力|保存|書き出|形式|納品|で(?:ください|下さい|お願い|ほしい)|CSVで")


def _csv_encoding(reader: _Reader) -> None:
    """「出力形式：CSV（Shift_JIS）」: the character code of the CSV written (an input's code
    is read from the file itself, so a code said of an input is no parameter)."""
    outputs = [output for output in reader.outputs if output.format == "csv"]
    if len(outputs) != 1:
        return
    for said in _ENCODING_SAID.finditer(reader.text):
        clause = _clause(reader.text, said.start(), said.end())
        if _FILE_NAME.search(clause) and not _OUTPUT_WORD.search(clause):
            continue  # 「入金明細.csv（Shift_JIS）を読み込んで」: the input's code
        if not _OUTPUT_WORD.search(clause):
            continue
        outputs[0].encoding = "cp932" if said.group("sjis") else "utf-8"
        reader.use(said.start(), said.end())
        return


def _output_named_without_extension(reader: _Reader) -> None:
    """「Excel出力、ファイル名は「地区別出荷実績」で」: a file name without its extension
    names the one output (of the one format asked for); its words are no steps
    (「地区別」 inside it is no grouping). With no output format, or two, the format is
    asked."""
    formats = {output.format for output in reader.outputs}
    for match in _NAME_WITHOUT_EXTENSION.finditer(reader.text):
        if reader.overlaps(match.start(), match.end()):
            continue
        if len(formats) != 1:
            said = match.group("name").strip()
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"ファイル名「{said}」を、どの形式（Excel か CSV）で出力するか"
                    f"読み取れませんでした。「{said}.xlsx」のように拡張子を付けるか、"
                    "「Excelで出力」と書いてください",
                    source=match.group(0),
                )
            )
            reader.use(match.start(), match.end())
            continue
        extension = ".csv" if formats == {"csv"} else ".xlsx"
        name = match.group("name").strip() + extension
        unnamed = [output for output in reader.outputs if not output.file_name]
        if len(unnamed) != len(reader.outputs):
            continue  # another name was given (「売上.xlsx」): two names are asked, not merged
        for output in unnamed:
            output.file_name = name
        reader.use(match.start(), match.end())


def _last_said_after_the_steps(reader: _Reader, match: re.Match[str]) -> bool:
    """「…早い順に並べて更新案内対象.xlsx」「…Excelで出してください（利用状況.xlsx）」: a CSV or
    Excel file named last, after a file already read and not listed with it, is the result."""
    before = reader.text[: match.start()]
    return (
        bool(reader.inputs)
        and match.group("ext").lower() in ("csv", "xlsx", "xlsm", "xls")
        and re.fullmatch(r"\s*[)」]?\s*[。!！]?\s*", reader.text[match.end() :]) is not None
        and not re.search(r"(?:と|、|,|・|/|／|及び|および|や)\s*[(「]?\s*$", before)
        # 「◆対象ファイル：レンタル契約一覧.csv」 said last: the file read
        and not re.search(
            r"(?:対象|入力|元|読込|読み込み)\s*(?:ファイル|データ)?\s*(?:名)?\s*:\s*$", before
        )
    )


def _read_files(reader: _Reader) -> None:  # noqa: C901 (one rule per branch)
    text = reader.text
    for match in _FILE_NAME.finditer(text):
        fmt = _format_of(match.group("ext").lower())
        inside = re.search(  # (never the extension of a file named before: 「a.csvに「b.xlsx」を」)
            rf"(?<![.A-Za-z0-9_])(?:{_FORMAT_WORD})\s*(?:(?:1|一|ひと)\s*(?:つ|ファイル)\s*)?"
            r"(?:ファイル|ブック)?\s*"
            r"(?:(?:出力|保存|で出力|で保存|で|に)?\s*[\(「]\s*「?|[、,]\s*(?:ファイル名|名前)\s*(?:は|:)?)\s*"
            r"(?:ファイル名\s*(?:は|:)?\s*)?$",
            text[: match.start()],
        )
        if (
            inside
            and inside.group(0).rstrip().endswith("「")
            and re.match(
                r"^」?\s*(?:から|を読|の中|を取り込|を使|を元に|をもとに)", text[match.end() :]
            )
        ):
            inside = None  # 「Excel「売上.xlsx」を読み込んで」: an input
        to_sheet = _SHEET_OUTPUT.match(text[match.end() :])
        first_of_a_chain = (  # 「集計 → request_log.xlsx → … → Excel（TOP20.xlsx）」: the input
            not reader.inputs
            and re.search(r"[→⇒]\s*$", text[: match.start()])
            and _FILE_NAME.search(text, match.end())
        )
        if not first_of_a_chain and (
            to_sheet
            or _is_output(text, match.start(), match.end(), named=True)
            or _last_said_after_the_steps(reader, match)
            or (
                inside
                and (
                    re.search("出力|保存|「", inside.group(0))
                    or _is_output(text, match.start(), match.end() + 1)
                    or _OUTPUT_BEFORE.search(text[: match.start() - len(inside.group(0))])
                )
            )
        ):
            aside = None if to_sheet else _INPUT_SHEET.match(text[match.end() :])
            if aside and not aside.group("sheet"):
                aside = None  # only 「（シート名 Q1）」 right after the file's name
            output = OutputSpec(
                format="csv" if fmt == "csv" else "excel",
                file_name=match.group(0),
                sheet=(
                    (to_sheet.group("sheet") or to_sheet.group("sheet2"))
                    if to_sheet
                    else aside.group("sheet").strip()
                    if aside
                    else None
                ),
                source=match.group(0),
            )
            said_sheet = to_sheet or aside
            if said_sheet:
                reader.use(match.end(), match.end() + said_sheet.end())
            reader.outputs.append(output)
            reader.use(match.start() - (len(inside.group(0)) if inside else 0), match.end())
            said = _OUTPUT_BEFORE.search(text, max(0, match.start() - 12), match.start())
            if said:  # 「出力先: エリア別売上.xlsx」: the key names the output
                reader.use(said.start(), match.start())
            continue
        _add_input(reader, fmt, match.group("name"), match.group(0), match.start(), match.end())
    for match in _FORMAT_AFTER_VERB.finditer(text):
        fmt = _format_of(match.group("fmt"))
        if (
            fmt in ("csv", "excel")
            and re.search(
                r"(?:ください|下さい|出して|出力して|お願いします|ほしい|欲しい|保存して|もらえますか)\s*$",
                text[max(0, match.start() - 12) : match.start()],
            )
            and re.match(r"\s*(?:。|$)", text[match.end() :])
        ):  # 「…出してください（Excel）。」: the format of the result
            if not any(o.format == fmt for o in reader.outputs):
                reader.outputs.append(OutputSpec(format=fmt, source=match.group(0)))  # type: ignore[arg-type]
            reader.use(match.start(), match.end())
    for match in _FILE.finditer(text):
        if reader.overlaps(match.start("fmt"), match.end("fmt")):
            continue
        fmt = _format_of(match.group("fmt"))
        before = text[max(0, match.start("fmt") - 12) : match.start("fmt")]
        encoding = _ENCODING.match(text, match.end())  # 「CSV（UTF-8）を作って」
        end = encoding.end() if encoding else match.end()
        lead = re.compile(r"\s*(?:で|に|へ|形式で|ファイルで)?\s*[「(]?\s*").match(text, end)
        at = lead.end() if lead else end
        if any(
            o.file_name and o.format == fmt and text.startswith(o.file_name, at)
            for o in reader.outputs
        ):  # 「Excelで「集計.xlsx」として出力」: the format of the named output
            reader.use(match.start("fmt"), end)
            continue
        if (
            fmt in ("csv", "excel")
            and (
                (  # 「…助成金名の昇順 Excel」: a terse request ending in its format
                    re.fullmatch(r"\s*。?\s*", text[end:])
                    and not re.search(
                        r"(?:入力|元データ|対象|読込|読み込み)\s*[:は]?\s*$",
                        text[max(0, match.start() - 12) : match.start()],
                    )
                )
                or _OUTPUT_BEFORE.search(before)
                or _ASKED_FOR.match(text[end:])
                or (not _AS_INPUT.match(text[end:]) and _is_output(text, match.start("fmt"), end))
            )
        ):
            after = _AS_OUTPUT.match(text[end:])
            sheet = (
                (after.group("sheet") or after.group("sheet_b") or after.group("sheet_c"))
                if after
                else None
            )
            if not any(o.format == fmt for o in reader.outputs):
                named = [o for o in reader.outputs if o.file_name and o.format == fmt]
                if not named:
                    output = OutputSpec(format=fmt, sheet=sheet, source=match.group(0))  # type: ignore[arg-type]
                    reader.outputs.append(output)
            reader.use(match.start("fmt"), end + (after.end() if after else 0))
            continue
        if re.match(r"^\s*\([^()]*\.(?:csv|xlsx|xlsm|xls|zip|pdf)", text[match.end() :], re.I):
            reader.use(match.start(), match.end())  # 「売上CSV（a.csv と b.csv）」: the files named
            continue
        holds = _clean(match.group("holds") or "")
        if not holds or _GENERIC.fullmatch(holds):
            holds = {"csv": "CSV", "excel": "Excel", "zip": "ZIP", "pdf": "PDF"}[fmt]
        if (
            reader.inputs
            and re.match(r"^\s*(?:、|,|\))", text[match.end() :])
            and match.group(0).startswith("(")
        ):
            reader.use(
                match.start("fmt"), match.end()
            )  # 「…データ（CSV、Shift_JIS）」: the format of a named input
            continue
        _add_input(reader, fmt, holds, match.group(0), match.start(), match.end())
    for match in re.finditer(
        r"\(\s*(?:Shift_JIS|SJIS|UTF-8|shift_jis|cp932|CP932)\s*\)|Shift_JIS|UTF-8", text
    ):
        reader.use(match.start(), match.end())
    for match in _IMAGES.finditer(text):
        if reader.overlaps(match.start("img"), match.end("img")) or any(
            item.format == "pdf" for item in reader.inputs
        ):
            continue  # 「宿泊者名簿（手書きを撮った画像）から」: documents read like a scan
        holds = _clean(match.group("holds") or "") or "画像"
        _add_input(reader, "pdf", holds, match.group(0), match.start(), match.end())
    _use_descriptions_of_named_inputs(reader)
    _file_ranges(reader)
    if not reader.outputs:
        _last_bare_format_is_the_output(reader)
    else:
        _bare_format_of_the_output(reader)
    _use_relative_clauses_of_inputs(reader)
    if not reader.outputs:
        bare = _BARE_SHEET_OUTPUT.search(text)
        if bare:  # 「Q1実績」シートに出力: a sheet is an Excel output
            reader.outputs.append(
                OutputSpec(format="excel", sheet=bare.group("sheet"), source=bare.group(0))
            )
            reader.use(bare.start(), bare.end())
    for output in reader.outputs:
        if output.sheet:
            continue
        for sheet in _SHEET.finditer(text):
            if reader.overlaps(sheet.start(), sheet.end()) or output.format != "excel":
                continue
            output.sheet = sheet.group("a") or sheet.group("b") or sheet.group("c")
            reader.use(sheet.start(), sheet.end())
            break
    word = _WORD_OUTPUT.search(text)
    if word and not reader.overlaps(word.start(), word.end()):  # 「その結果をWord文書に」
        docx_name = re.search(rf"(?P<name>[A-Za-z0-9_\-{_K}{_KATA}]+\.docx)", text)
        reader.outputs.append(
            OutputSpec(
                format="docx",
                file_name=docx_name.group("name") if docx_name else None,
                source=word.group(0),
            )
        )
        reader.use(word.start(), word.end())
        if docx_name:
            reader.use(docx_name.start(), docx_name.end())
    for match in re.finditer(
        r"(?:パワポ|PowerPoint|pptx)[^、。]{0,12}|"
        r"(?:PDF|pdf)\s*(?:文書|ファイル|形式)?\s*(?:に|で|へ)\s*[ぁ-ん]{0,3}(?:出力|して|し|作成|まとめ|する)",
        text,
    ):
        reader.refuse(
            "unsupported_action",
            f"「{match.group(0)}」: 表を PDF・PowerPoint にする出力は作れません"
            "（Excel・CSV・Word 文書への出力なら作れます）",
            match,
        )
    if not reader.outputs and not any(g.kind == "unsupported_action" for g in reader.gaps):
        output_word = re.search(
            r"(?:出力|書き出|エクスポート|保存)(?!した|された|済み|済)"
            r"(?=\s*(?:して|する|を|お願い|ください|で|前|。|$))",
            text,
        )
        if output_word:
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message="出力の形式（Excel か CSV か）が指示にありません。"
                    "「Excelに出力」「CSVで出力」のように書いてください",
                    source=_clause(text, output_word.start(), output_word.end()),
                )
            )
            reader.use(output_word.start(), output_word.end())


# --------------------------------------------------------------------------- table steps

_FILTER_NUM = re.compile(
    rf"(?:(?P<col>{QNOUN})\s*(?:が|は|の|で|:|：)?\s*)?"
    r"(?:(?:月額|年額|日額|時給|税込み?|税抜き?|1件|1回|1人|一件|一回)\s*(?:あたり|当たり)?\s*"
    r"|(?:1|一)\s*(?:kg|g|個|本|枚|台|人|件|回|泊|日|時間|箱|ケース|L|m)\s*(?:あたり|当たり)\s*)?"
    rf"(?<![A-Za-z0-9_])(?P<num>{AMOUNT})\s*(?P<op>"
    + "|".join(f"(?:{words})" for words, _ in _OP_WORDS)
    + ")"
)
_FILTER_DATE = re.compile(
    rf"(?:(?P<col>{QNOUN})(?:\s*(?:が|は|の|:|：)|(?<=[日付時期])(?=\s))\s*)?(?P<date>{_DATE})\s*(?P<op>"
    + "|".join(f"(?:{words})" for words, _ in _DATE_OPS)
    + ")"
)
_FILTER_DATE_RANGE = re.compile(
    rf"(?P<col>{QNOUN})(?:\s*(?:が|は|の|:|：)|\s(?=\s*{_DATE}\s*(?:から|〜|~|～|-|－)))\s*"
    rf"(?:(?P<first>{_DATE})\s*(?:から|〜|~|～|-|－)\s*"
    rf"(?P<last>{_DATE}|\d{{1,2}}月\d{{1,2}}日|\d{{1,2}}/\d{{1,2}}(?![\d/])|\d{{1,2}}日)|(?P<year>\d{{4}})\s*年\s*の?\s*(?P<m1>\d{{1,2}})\s*/\s*(?P<d1>\d{{1,2}})"
    r"\s*(?:から|〜|~|～|-|－)\s*(?P<m2>\d{1,2})\s*/\s*(?P<d2>\d{1,2}))"
    r"\s*(?:まで)?(?:\s*\(\s*両端(?:を)?含む\s*\))?"
)
"""「出荷日が2024/5/1〜2024/5/31」: a period, both ends kept."""
_ERA_YEAR = r"(?:\d{4}|(?:令和|平成)(?:元|\d{1,2}))"
_FILTER_MONTH_RANGE = re.compile(
    rf"(?P<col>{QNOUN})\s*(?:が|は|の|:)\s*(?P<y>{_ERA_YEAR})\s*年\s*(?P<m1>\d{{1,2}})\s*月\s*"
    rf"(?:から|〜|~|～|-|－)\s*(?:(?P<y2>{_ERA_YEAR})\s*年\s*)?(?P<m2>\d{{1,2}})\s*月(?!\s*\d)\s*(?:まで|末まで)?"
)
"""「申請日が令和7年1月〜3月」「計上月が2024年10月から2025年3月まで」: whole months, both
ends kept."""
_YEAR_MONTH = r"\d{4}[-/]\d{1,2}(?![\d/-])|\d{4}年\d{1,2}月(?!\d)"
"""A month (「成約月が 2024-06」): not read as a value, since a column of dates or of months
written another way (2024/6) would match no row without a word; named as not understood."""
_FILTER_NOT_EQUAL = re.compile(
    rf"(?P<col>{NOUN})\s*(?:≠|!=|<>)\s*(?P<val>「[^」]{{1,40}}」|{NOUN}|{NUM})"
    rf"(?![{_K}{_KATA}A-Za-z0-9,.])(?!\s*(?:または|か|、|・|/))"
)
"""「勤務区分≠公休」: a column that is not the value."""
_SYMBOLS = {
    ">=": ">=",
    "=>": ">=",
    "≧": ">=",
    "<=": "<=",
    "=<": "<=",
    "≦": "<=",
    ">": ">",
    "<": "<",
    "!=": "!=",
    "≠": "!=",
    "<>": "!=",
}
_FILTER_SYMBOL = re.compile(
    rf"(?P<col>{QNOUN})\s*(?P<op>>=|=>|≧|<=|=<|≦|<>|!=|≠|>|<)\s*"
    rf"(?:(?P<date>{_DATE})|(?P<num>{AMOUNT}))(?![\d/])"
)
"""「請求金額 >= 100000」「金額＞＝30000」「請求日 >= 2025/4/1」: a comparison said in symbols
(NFKC makes ＞＝ >=)."""
_FILTER_CODE = re.compile(
    rf"(?P<col>{NOUN})\s*==?\s*(?:(?P<num>-?\d+(?:\.\d+)?)(?![\d.,万千円%/-])"
    rf"|(?P<val>「[^」]{{1,40}}」|{NOUN}|[A-Za-z0-9{_K}{_KATA}ー\-]{{1,15}}?)(?=\s*(?:[、,。)]|の|で|だけ|のみ|$)))"
)
"""「返品区分=1」「工事区分=公共」: a column equal to a code or a word, said with 「=」."""
_FILTER_EQ = re.compile(
    rf"(?P<col>{NOUN})\s*(?:が|は|==?|:|：|(?<!シート)(?<!ファイル)(?<!ブック)(?=「[^」]{{1,40}}」\s*(?:だけ|のみ|以外|(?:は|を)\s*(?:除|外し|外す|対象外))))\s*(?:まだ|すでに|既に|現在|今も|今でも|いまだに)?\s*(?P<val>{_DATE}|{QNOUN}(?:\s*(?:か|または|又は|もしくは|若しくは|・|、|,|(?<=」)(?:と|及び|および|or|OR))?\s*「[^」]{{1,40}}」|\s*(?:か|または|もしくは|・|、|,|/|／)\s*{QNOUN}){{0,19}})\s*"
    rf"(?P<tail>以外|(?:でない|ではない|じゃない)(?=\s*(?:{NOUN}|もの|こと|分|方|やつ|ヤツ))|(?:の(?:いずれか|どれか|どちらか)(?:に当たる|に当てはまる|に該当する|になっている|になってる|の)?|の(?!\s*(?:列|項目|カラム))|である|となっている|になっている|となる|に該当する|と等しい)(?=\s*(?:{NOUN}|もの|こと|分|方|やつ|ヤツ|だけ|のみ))|(?<=」)(?=\s*(?:。|$))|の(?:いずれか|どれか)(?=\s*(?:。|$))|(?:で|かつ|且つ)(?=\s*(?:[、,]?\s*かつ|[、,])?\s*{NOUN}\s*(?:が|は|に\s*「))|だけ|のみ"
    r"|(?<=」)(?=\s*(?:は|を)\s*(?:除|外し|外す|対象外))"  # 「券種「関係者」は除く」
    r"|(?:になっている|となっている|になってる|である)(?=\s*(?:ので|から|ため)\s*[、,]?\s*(?:それ|これ|そちら)\s*(?:は|を|も)\s*(?:除|外|抜|省))"
    rf"|(?=\s*[、,]\s*(?:かつ|且つ|および|及び)?\s*{NOUN}\s*(?:が|は)?\s*\d)|(?=\s*[、,]\s*(?:かつ|且つ|および|及び)?\s*{NOUN}\s*(?:が\s*(?:「|{NOUN}\s*(?:の|で|、))|に\s*「))"
    r"|(?P<chain>(?=\s*(?:[→⇒>]|。|$))))"
)
"""「都道府県が東京都か神奈川県 → …」: a step of an arrow chain that is only a condition keeps
those rows (the ``chain`` tail: accepted only between arrows, see ``_chain_step``)."""


def _quoted_value_of(column: str, raw: str, after: str) -> bool:
    """「結果 が「合格」」「区分が「返品」」: a word said as a column with が and a quoted value,
    whatever the word (the rows and the file are never said so)."""
    return (
        "「" in raw
        and bool(re.match(r"\s*が", after))
        and column
        not in ("行", "列", "件", "分", "もの", "データ", "ファイル", "一覧", "表", "明細")
    )


_FILTER_SMALL_NUMBER = re.compile(
    rf"(?P<col>{QNOUN})\s*(?:列|欄)?\s*(?:が|は)\s*(?P<num>\d{{1,4}})\s*"
    rf"(?:(?:の|で)(?=\s*(?:{NOUN}|もの|やつ|ヤツ|こと|方|だけ|のみ|を|は))|(?![\d,.])(?=\s*(?:、(?!\s*\d)|。|$|かつ)))"
)
"""「学年列が2の生徒」「キャンセルフラグが1のやつ」: a column equal to a code number."""
_NOT_VALUES = frozenset(
    {"最大", "最小", "最高", "最低", "同じ", "空欄", "空白", "未入力", "重複", "一致", "完全一致"}
)
_GENERIC = re.compile(
    r"(?:^|\d|各|全)(?:行|列|件|分)$|(?:もの|明細|データ|レコード|項目|一覧|結果|ファイル|条件|手順)$"
)
"""Nouns that name rows or the file, never a value to filter on (「行だけ」「明細のみ」)."""
_NOT_A_COLUMN = re.compile(
    r"(?:今|昨|去|来|前|毎|例)(?:年度?|月|週|日|回)(?:末|初|頭)?|本日|先月|先週|先日|当社|弊社|当法人|当院|当店|当方"
)
"""Times and the writer's own organisation: the topic of a remark (「今年は天候不順で」), no
column to compare."""
_FILTER_ONLY = re.compile(rf"(?P<val>{QNOUN})\s*(?P<tail>だけ|のみ|以外)")
_QUOTED_DROPPED = re.compile(
    r"(?<![\u4e00-\u9fff\u30a1-\u30fa\u30fcA-Za-z0-9」])「(?P<val>[^」]{1,40})」\s*(?:は|を|も)\s*"
    r"(?:[^、。「」]{0,20}?(?:ので|ため|から)\s*[、,]?\s*)?(?:除|外し|外す|外して|抜いて|対象外)"
)
"""「「離れ」は別管理なので除いてね」: a value dropped with no column said (the column is asked)."""
_ENDS_WITH_METRIC = re.compile(
    r"(?:合計|総合計|総額|合計額|総計|平均|件数|人数|最大|最小|最高|最低|最安)(?:値|額)?$"
)
_FILTER_CONTAINS = re.compile(
    rf"(?P<col>{QNOUN})\s*(?:欄|列)?\s*(?:に|が)\s*(?P<val>{QNOUN})\s*(?:という(?:文字|文言|言葉|単語|語)|って)?\s*(?:を|が)?\s*"
    r"(?:含む|含まれ|含んで|含み|入っている|入ってる|入っていて|入った|入る|入って(?=い?(?:ない|なかった|ません))|含ま(?=ない|なかった|ず))"
)
_FILTER_SIGN = re.compile(
    rf"(?P<col>{NOUN})\s*(?:が|は)\s*(?P<sign>マイナス|負|赤字|プラス|正)(?:の値)?\s*(?:\([^()]*\))?\s*(?=の|だけ|のみ|に|な|で)"
)
"""「粗利 がマイナス（0未満）の品目」: below or above zero."""
_FILTER_NULL = re.compile(
    rf"(?!(?:前後|先頭|末尾|両端)\s*の\s*(?:空白|スペース))(?P<col>{QNOUN})\s*(?:欄|列)?(?:\s*(?:が|の|に|は)|\s)\s*(?:何か|なにか|何かしら)?\s*"
    r"(?P<state>(?:未定|未設定|未登録|未記入|なし)\s*\(\s*(?:空欄|空白|未入力|ブランク)\s*\)"
    r"|(?:空欄|空白|空|ブランク|未入力)\s*(?:で(?:は)?\s*な[いく]|じゃ\s*ない|ではありません|以外)"
    r"|空欄|空白|未入力|ブランク|空(?![\u4e00-\u9fff])|未記入|未記載|入っていない|入力されていない|記入されていない"
    r"|入力されている|入力されてる|入力済み?|入っている|入ってる|入っていて|記入されている|記入済み?|記載されている"
    r"|埋まっている|埋まってる)"
    r"(?:\s*(?:に|と)\s*なって(?:いる|る))?"
)
_GROUP = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の組み合わせ|の組合せ)?\s*"
    r"(?:別|ごと|毎|(?<!円)(?<!ケース)(?<!個)(?<!千)(?<!万)(?:の\s*)?単位(?=\s*(?:で|に|の))|(?:で|を|を\s*キーに)\s*(?=グループ化|グルーピング|グループ分け)"
    r"|で\s*(?=まとめ(?:て|る)))"
)
_DESCRIBES_GROUP = re.compile(
    # 「支部ごとに別ファイルになってる」: how the files are split, no grouping
    r"\s*に\s*(?:別|別々)\s*の?\s*(?:ファイル|シート|表|ブック)"
    r"|\s*に?\s*[^\s、。]{0,4}?(?:管理|保存|作成|分け|分かれ|届|出力|集め|提出|記録)"
    r"[^\s、。]{0,3}?(?:ている|てる|てある|た)(?![いら])\s*[^\s、。てで]"
    r"|\s*に?\s*(?:見|確認し|チェックし|眺め)たい\s*(?:ので|から|ため)(?=\s*[^\s、。]{1,12}?\s*で\s*(?:並べ|ソート))"
)
"""「支店ごとに管理している顧客リスト」: how the data is kept; 「仕入先ごとに見たいので仕入先で
並べ替え」: why an order is asked — no grouping either way."""
_NOT_WANTED = re.compile(
    r"\s*(?:とか|など|の集計|の内訳)?\s*(?:は|も)?\s*"
    r"(?:要りません|いりません|要らない|いらない|不要|必要ありません|必要ない|なしで|無しで"
    r"|ではなく|じゃなくて?|でなく)"
)
"""「部署別とかは要りません」: what is not wanted asks for nothing."""
_METRIC_WORDS = {
    "合計": "sum",
    "足し上げ": "sum",
    "足し合わせ": "sum",
    "合算": "sum",
    "足し": "sum",
    "総合計": "sum",
    "総額": "sum",
    "合計額": "sum",
    "小計": "sum",
    "総計": "sum",
    "累計": "sum",
    "集計": None,
    "平均": "mean",
    "平均値": "mean",
    "中央値": "median",
    "ユニーク数": "nunique",
    "異なり数": "nunique",
    "種類数": "nunique",
    "件数": "count",
    "回数": "count",
    "者数": "count",
    "人数": "count",
    "社数": "count",
    "総数": "count",
    "数": "count",
    "最大": "max",
    "最大値": "max",
    "最高": "max",
    "最高点": "max",
    "最高額": "max",
    "最大額": "max",
    "最低額": "min",
    "最安": "min",
    "最安値": "min",
    "最高値": "max",
    "最小額": "min",
    "最低点": "min",
    "平均点": "mean",
    "最小": "min",
    "最小値": "min",
    "最低": "min",
    "sum": "sum",
    "total": "sum",
    "mean": "mean",
    "median": "median",
    "nunique": "nunique",
    "avg": "mean",
    "average": "mean",
    "count": "count",
    "max": "max",
    "min": "min",
}
"""Japanese words and the table.aggregate block's own metric names."""
_METRIC = re.compile(
    rf"(?:(?P<cols>{NOUN}(?:\s*(?:と|・|、)\s*{NOUN}){{1,19}})\s*(?:(?:の|を)\s*(?:それぞれ|各々|両方)?|(?:それぞれ|各々)\s*の)\s*|(?P<col>{QNOUN})\s*(?:(?<=」)\s*(?:列|欄))?\s*(?P<join>の|を|で)?\s*)?(?P<m>足し上げ|足し合わせ|合算|足し(?=て|た|ます)|合計額|総合計|合計|総額|小計|総計|平均値|平均点|平均|中央値|ユニーク数|異なり数|種類数|件数|回数|者数|人数|社数|総数|最大値|最大額|最大|最高点|最高額|最高値|最高|最小値|最小額|最小|最低点|最低額|最低|最安値|最安|集計"
    r"|(?<![A-Za-z])(?:sum|total|mean|median|nunique|avg|average|count|max|min)(?![A-Za-z]))"
)
_SORT = re.compile(
    rf"(?P<col11>{QNOUN})\s*(?:で|を)\s*(?:並べ替え|並び替え|ソート|並べ)[ぁ-ん]{{0,2}}\s*\(\s*(?P<dir11>昇順|降順)\s*\)"
    rf"|(?P<cols13>{QNOUN}(?:\s*(?:と|・|、)\s*{QNOUN}){{1,4}})\s*(?:で|の順に?)\s*(?:並べ|並び替え|ソート)[ぁ-ん]{{0,2}}"
    r"\s*\(\s*(?:どちらも|いずれも|両方とも?|すべて|全て)?\s*(?P<dir13>昇順|降順)\s*\)"
    rf"|(?P<col12>{QNOUN})(?<!順)\s*\(\s*(?P<dir12>新しい|古い|大きい|小さい|多い|少ない|早い|遅い|高い|低い)\s*順\s*\)"
    rf"|\(\s*(?:同日|同額|同点|同値|同順位|同じ[^()、。]{{0,8}}?)\s*(?:の場合|のとき|の時|なら)?\s*(?:は|なら)?\s*"
    rf"(?P<col8>{QNOUN})\s*(?:の)?\s*(?:(?P<dir8>昇順|降順)|(?P<dir9>大きい|多い|高い|新しい|遅い|小さい|少ない|低い|古い|早い)\s*順|順)\s*\)"
    rf"|(?P<col10>{QNOUN})\s*(?:の|を)?\s*(?:五十音|50音|あいうえお|アイウエオ|アルファベット|ABC|abc|辞書|名前)\s*順"
    rf"|(?P<cols6>{QNOUN}(?:\s*(?:→|⇒|>|、|・)\s*{QNOUN}){{1,5}})\s*の\s*順\s*(?:番)?"
    r"\s*(?:\(\s*(?:いずれも|どちらも|すべて|全て)?\s*(?P<dir6b>昇順|降順|早い順|古い順|小さい順|新しい順|遅い順|大きい順)\s*\)\s*)?"
    r"\s*(?:で|に)?\s*(?:(?P<dir6>昇順|降順)\s*(?:に|で)?\s*)?(?=並|ソート|[。、]|$)"
    rf"|(?P<col7>{QNOUN})\s*(?:が|の)\s*(?P<dir7>多い|大きい|高い|少ない|小さい|低い|古い|新しい|早い|遅い)\s*(?:{NOUN}|もの|ほう|方)?\s*から\s*(?:順|並べ)"
    rf"|(?:(?P<col>{QNOUN})\s*(?:の|が|で|を)?\s*)?(?P<dir>大きい|多い|高い|降順|新しい|長い|重い|遠い|小さい|少ない|低い|安い|昇順|古い|早い|近い|遅い|短い|軽い|若い)\s*順"
    r"|(?P<col2>"
    + QNOUN
    + r"(?:\s*(?:・|と)\s*"
    + QNOUN
    + r"){0,5})\s*(?:の|で|は)?\s*(?P<dir2>降順|昇順)"
    r"|(?P<dir3>降順|昇順)(?=\s*(?:に|で)\s*(?:並|ソート))"
    r"|(?P<col5>"
    + QNOUN
    + r")\s*(?:の)?\s*順\s*(?:\(\s*(?P<dir5>昇順|降順|古い|新しい|小さい|大きい|早い|遅い"
    r"|少ない|多い|古(?:い)?\s*(?:→|⇒|->)\s*新(?:しい)?|新(?:しい)?\s*(?:→|⇒|->)\s*古(?:い)?"
    r"|小(?:さい)?\s*(?:→|⇒|->)\s*大(?:きい)?|大(?:きい)?\s*(?:→|⇒|->)\s*小(?:さい)?)\s*(?:順)?\s*\))?\s*(?:(?:に|で)\s*(?=並|ソート)|(?<=\))\s*(?=で|に|、|。|$)|(?<=順)\s*(?:で|に)?\s*(?=[、。,，→⇒!！?？]|$))"
    r"|(?P<col4>"
    + QNOUN
    + r")\s*(?:の)?\s*(?P<dir4>desc|asc|descending|ascending|DESC|ASC)(?![A-Za-z])"
)
_DEDUPE_VERB = (
    r"(?:重複|ダブり|だぶり|ダブリ|ダブってる(?:行|もの|データ)?|ダブっている(?:行|もの|データ)?)"
    r"(?:している|した|する)?(?:行|データ|レコード|明細)?\s*(?:を|は|も)?\s*"
    r"(?:(?:最後|最初|先頭|後|前|最新|古い|新しい|一番下|一番上)[^、。]{0,8}?残して\s*)?"
    r"(?P<verb>除去|除|削除|排除|取り除|取|まとめ|消|なく|1行に|一行に|1件に|一件に|省|チェック|除外|カット|落と)"
)
"""「申込番号の重複を最後の行を残して消して」: the row kept may be said before the verb."""
_ROW_WORD = re.compile(r"行|もの|データ|レコード|明細|件")
"""Words for rows (「同じ行の重複」), never a key column."""
_DEDUPE_KEYED = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の組み合わせ|の組合せ)?\s*(?:が同じ|が一致する|をキーに(?:して)?|をキーとして|で|の|が|(?<=[A-Za-z0-9{_K}{_KATA}])\s)\s*"
    + _DEDUPE_VERB
)
_DEDUPE = re.compile(
    _DEDUPE_VERB
    + r"|二重(?:登録|入力|計上)(?:分|行|データ)?\s*(?:を|は|も)?\s*"
    + r"(?:除|削除|排除|取り除|消|なく|省|除外|落と)"
    + r"|(?:ダブ|だぶ|二重に?(?:登録|入))[^。]{0,30}?"
    + r"(?P<one>(?:1|一)(?:件|行|つ)に(?:まとめ|して|する))"
)
_DOUBLED_ROWS = re.compile(
    r"(?:重複|ダブ)(?:している|してる|した|ってる|っている)\s*(?!(?:行|データ|もの|レコード|分)\s*(?:を|は))"
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,4}})"
    r"\s*の?\s*(?:行|データ|もの)?\s*(?:を|は)\s*(?P<verb>消|削除|除|省|外|落と)"
)
"""「重複してる発注番号の行を消して」: the key said after the word for the doubled rows."""
_DOUBLED = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*が\s*"
    r"(?:ダブ|だぶ|重複|二重|(?:同じ|一致する)\s*(?:行|もの|データ|レコード|明細))"
)
_SAME_ROWS = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*が同じ\s*(?:{NOUN})?\s*(?:は|を)?\s*"
    r"(?:1|ひと|一)(?:つ|行|件)に(?:まとめ|する|して)"
)
_KEY = re.compile(
    rf"(?P<keys>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の\s*\d+\s*つ)?\s*(?:を|で|が)?\s*(?:キー|キーに|キーとして|をもとに|で|を基に|が一致)(?!す|し|き|は|も|あ)"
)
_JOIN = re.compile(
    r"結合|紐付け|紐づけ|ひも付け|紐付|結び(?:つ|付)け|VLOOKUP|vlookup|参照して|付与(?![\u4e00-\u9fff\u30a1-\u30fa])|付け足|(?<=[^\s、。])\s*(?:で|をキーに(?:して)?|をキーとして)\s*くっつけ|引っ張"
    r"|持ってく|引いてく|付け加え|(?<![A-Za-z])(?:join|JOIN|merge)(?![A-Za-z])"
    r"|(?<=照合し)\s*[^、。]{1,40}?を\s*付(?:し|す)"  # 「…と照合し 機種名・保管拠点 を付し」
    # 「担当チーム をキーに 担当チームマスタ.csv から チームリーダー名 を引く」: looked up
    r"|(?<=\.csv|xlsx|\.xls)\s*から\s*[^、。]{1,30}?を\s*引(?:く|いて|き|っ)"
    r"|突き合わせて[^、。]{0,24}?(?:を付け|を追加|を加え|を付与)"
    r"|(?<=[^\s、。順まま])\s*(?:で|をキーに(?:して)?|をキーとして)\s*(?:つな|繋)(?:い|げ|ぐ)"
    r"|(?<=[^\s、。])\s*(?:で|をキーに(?:して)?|をキーとして)\s*(?:付け|つけ)(?=て|る|た|ま)"
)
"""A table added beside another by a key (「学籍番号でつないで」: a key, so not stacked)."""
_RECONCILE = re.compile(
    r"(?:照合|突合|消込)(?![日者番欄印])|突き合わせ|突き合せ|付き合わせ|つき合わせ|つきあわせ|照らし合わせ|付け合わせ|消し込"
    r"|マッチング|一致しない|不一致"
)
_COMPARED = re.compile(
    rf"(?:(?P<left>{NOUN})\s*と\s*)?(?P<col>{QNOUN})\s*が\s*(?:(?:\d+\s*[^\s、。\d]{{0,2}}|少し|ちょっと)\s*でも\s*)?"
    r"(?:合わない|合っていない|食い違|違う|違って|異なる|一致しない)"
    rf"|(?P<col2>{NOUN})\s*に\s*(?:差異|差|違い|ズレ|ずれ)\s*が\s*(?:ある|あり|出)"
)
_MASTER_WORDS = re.compile(r"マスタ|マスター|台帳|master", re.IGNORECASE)
_CONCAT = re.compile(
    r"縦に?[^、。]{0,6}?(?:つな|繋|結合|連結|まとめ|積|くっつけ|合わせ)|連結"
    r"|(?:1|ひと|一)つ\s*の\s*(?:表|ファイル|一覧|リスト)\s*に|まとめて\s*(?:1|ひと|一)つ|(?:1|ひと|一)(?:つ|本)に(?:まとめ|つな|結合)"
    r"|(?<=を)\s*(?:1|ひと|一)つに(?=して|し、|する)"  # 「（a.csv／b.csv）をひとつにして」
    r"|(?:\d|二|両方|全部|すべて)(?:つ|ファイル)?を?(?:つなげ|つない|つなぐ|合わせ)|合体|統合"
)
_TOLERANCE = re.compile(
    rf"(?:差額|誤差|金額の差|差|ずれ|ズレ)\s*(?:が|は)?\s*(?P<num>{AMOUNT})(?<![日月年分間])\s*(?:以内|まで|以下)"
    rf"|(?P<num2>{NUM}\s*(?:(?:万|千)?\s*円|ドル|ユーロ))\s*(?:以内|まで|以下)\s*の\s*(?:差額|誤差|金額差|金額の差|差|ずれ|ズレ)"
    rf"|(?:±|\+-|プラスマイナス)\s*(?P<num3>{NUM}\s*(?:(?:万|千)?\s*円|ドル|ユーロ))\s*(?:以内|まで)"
    rf"|(?:許容差|許容誤差|許容額|差額の上限|金額の許容差)\s*(?:は|:)\s*(?P<num4>{NUM}\s*(?:(?:万|千)?\s*円|ドル|ユーロ))"
)
"""An amount tolerance (差額1,000円以内, 1ドルまでの差); a number of days is a date window."""
_WINDOW = re.compile(
    r"(?:日付|日)?\s*(?:の?(?:差|ずれ|ズレ))?\s*(?:が|は)?\s*(?:前後)?\s*(?P<num>\d+)\s*日\s*(?:の\s*(?:差|ずれ|ズレ)\s*)?(?:以内|まで|以下)"
    r"(?:\s*の\s*(?:差|ずれ|ズレ)\s*(?:なら|は)\s*(?:OK|ok|可|大丈夫|許容|一致)?\s*(?:扱い)?)?"
    r"|(?:日付|日)\s*(?:は|が|も)?\s*(?:前後)?\s*(?P<num2>\d+)\s*日\s*(?:ずれ|ズレ)て\s*も\s*"
    r"(?:OK|ok|可|大丈夫|構わ|かまわ|問題な|よい|良い|いい|許容|同じ|同一)"
    r"|(?:日付の?(?:ずれ|ズレ|差)|日付の許容差?|許容日数)\s*(?:は|:)\s*(?:前後)?\s*(?P<num3>\d+)\s*日(?![付])"
)
"""A date window: 日付は前後3日まで, 日付のずれは5日以内, 日付は2日ずれてもOK."""
_COMPUTE_OP = r"(?:[×*xX÷/＋+－−]|(?<![A-Za-z])-|-(?![A-Za-z]))"
"""Operators of a formula; a hyphen inside a Latin word (e-Gov) is none."""
_COMPUTE_OPERAND = rf"\(?\s*(?:{NOUN}|{NUM})\s*\)?"
_COMPUTE_EXPR = rf"\(?\s*{NOUN}\s*\)?(?:\s*{_COMPUTE_OP}\s*{_COMPUTE_OPERAND}){{1,9}}"
"""A formula over columns and numbers, with parentheses (「販売価格÷(土地面積÷3.3058)」)."""
_COMPUTE = re.compile(
    rf"(?P<new>{QNOUN})\s*(?:=|＝|は|を)\s*(?P<expr>{_COMPUTE_EXPR})"
    rf"|(?P<expr2>{_COMPUTE_EXPR})\s*(?:で|を|として|の)\s*(?P<new2>{QNOUN})\s*(?:(?:という列|って列|の列|列)?\s*(?:を|として|で)?\s*(?:計算|算出|求め|出|追加|作|足|付け|加え)|(?:という列|の列|列)\s*と"
    r"|(?<=」)\s*と\s*(?:する|します|して))"  # 「課税支給額 × 0.1021 を「源泉税額」とする」
    rf"|(?P<col5>{NOUN})\s*に\s*(?:[{_K}{_KATA}]*?)\s*(?P<pct>{NUM})\s*[%％]\s*(?:を|分を)?\s*(?:上乗せ|乗せ|のせ|加算|足|加え)\s*し?\s*(?:た|て)\s*[、,]?\s*(?P<new5>{QNOUN})"
    rf"|(?P<col>{NOUN})\s*に\s*(?P<num>{NUM})\s*を\s*(?:掛け|かけ|乗じ)\s*(?:て|た)\s*(?P<new3>{QNOUN})"
    rf"|(?P<m1>{NOUN})\s*と\s*(?P<m2>{NOUN})\s*を\s*(?:掛け|かけ|乗じ)\s*(?:て|た)\s*(?P<new10>{QNOUN})\s*(?=列|の列|という列|を|として)"
    # 「延長保育時間 に 単価 を掛け、延長保育料 の列を追加」「原価 を 売上 で割り 原価率 の列…」
    rf"|(?P<m15>{NOUN})\s*(?P<how15>に|を)\s*(?P<n15>{NOUN})\s*"
    r"(?:を\s*(?:掛け|かけ|乗じ)|で\s*(?:割り|割っ|除し))"
    rf"[ぁ-ん]{{0,2}}\s*[、,]?\s*(?P<new15>{QNOUN})\s*(?=の列|列|という列)"
    rf"|(?P<a9>{NOUN})\s*から\s*(?P<b9>{NOUN})\s*を\s*(?:引い|差し引い)\s*た\s*(?:額|金額|値|もの)\s*を\s*(?P<new9>{QNOUN})\s*(?=として|という列|の列)"
    rf"|(?P<a>{NOUN})\s*から\s*(?P<b>{NOUN})\s*を\s*(?:引い|差し引い|控除し)\s*(?:て|た)\s*(?!(?:差|差額|差分|結果|額|金額|値|もの)\s*を)(?P<new4>{NOUN})"
    rf"|(?P<new7>{QNOUN})\s*(?:という|の)?\s*列\s*を\s*「?(?P<expr7>{_COMPUTE_EXPR})」?\s*で\s*(?=追加|作|計算|算出|出)"
    # 「「発注金額」を「履修者数 × 単価」で計算する」: the column, then its formula in quotes
    rf"|(?P<new14>「[^」]{{1,30}}」)\s*を\s*「(?P<expr14>{_COMPUTE_EXPR})」\s*で\s*(?=追加|作|計算|算出|求め|出)"
    rf"|「(?P<expr8>{_COMPUTE_EXPR})」\s*で\s*(?P<new8>{QNOUN})\s*(?:(?:って|という|の)\s*列\s*)?を\s*(?=足|追加|作|計算|算出|求め|出)"
    rf"|\(\s*(?P<expr12>{_COMPUTE_EXPR})\s*\)\s*を\s*(?P<new12>{QNOUN})\s*として\s*(?=計算|算出|求め|出)"
    rf"|(?<![=÷×*/+−\-])(?P<expr13>{_COMPUTE_EXPR})\s*で\s*(?P<new13>「[^」]+」)\s*も(?=[、。]|$)"
    rf"|(?P<new11>{QNOUN})\s*(?:という列|の列|列)\s*を\s*(?:追加|作成|作|つく|足|付け|加え)[ぁ-ん]{{0,10}}\s*\(\s*=?\s*(?P<expr11>{_COMPUTE_EXPR})\s*\)"
    rf"|(?P<new6>{QNOUN})\s*\(\s*=?\s*(?P<expr6>{NOUN}(?:\s*[×*÷+\-−]\s*(?:{NOUN}|{NUM})){{1,9}})\s*\)"
)
_COLUMN_ADDED = re.compile(
    rf"(?P<new>{QNOUN})\s*(?:の|という|って)?\s*列\s*を\s*(?:足|追加|作|付け|加え|設け)"
)
_FORMULA_SAID_APART = re.compile(
    rf"(?:計算|計算式|式|算式|求め方|出し方)\s*(?:は|:)\s*(?P<expr>{_COMPUTE_EXPR})"
    r"\s*(?:です|でお願い|で計算|とします|とする|で|。|$)"
)
"""「「返還額」の列を足して。計算は 敷金 − 原状回復費 です」: the column, then its formula."""
_VERBAL_OPERATORS = (
    (r"足し|足|加え|加算し|合算し|プラスし", "+"),
    (r"引い|差し引い|控除し|マイナスし", "-"),
    (r"掛け|かけ|乗じ", "*"),
    (r"割っ|除し", "/"),
)
_VERBAL_COMPUTE = re.compile(
    rf"(?:その\s*)?(?P<a>{QNOUN}|{NUM})\s*(?P<particle>と|に|から|を)\s*(?:その\s*)?(?P<b>{QNOUN}|{NUM})"
    r"\s*(?:で|を)?\s*(?P<verb>足し|足|加え|加算し|合算し|プラスし|引い|差し引い|控除し|マイナスし"
    r"|掛け|かけ|乗じ|割っ|除し)\s*(?:て|た)\s*(?:(?:額|金額|値|もの|数|差|差額|差分|和|積|商|結果)\s*を\s*)?[、,]?\s*"
    rf"(?P<new>{QNOUN})\s*(?=という列|って列|の列|列|欄|を|として|で(?:計算|算出|出|追加|作))"
)
"""A formula said in words: 「基本給と手当を足した「総支給額」」, 「付与日数から取得日数を引いた
残日数を計算」, 「その請求額に1.1をかけた「税込請求額」の列」, 「金額を数量で割った単価列」."""


def _computed_over_itself(reader: _Reader) -> None:
    """「金額（税込）＝金額（税抜）×1.1」 read as 金額 = 金額 * 1.1 would overwrite the column
    it reads (the two names differ only in what the rules strip): the new name is asked."""
    for _, step in reader.steps:
        if step.kind != "compute":
            continue
        for target, expression in step.expressions.items():
            operands = re.split(r"\s*[-+*/()]\s*", expression)
            if target in operands:
                reader.gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{step.source}」は、列「{target}」を同じ列を使った式で"
                        "上書きすることになります。作る列に別の名前を付けてください"
                        "（例: 「税込金額＝金額×1.1」）",
                        source=step.source,
                    )
                )


_NOUN_COMPUTE = re.compile(
    rf"(?P<a>{QNOUN})\s*と\s*(?P<b>{QNOUN})\s*の\s*(?P<what>合計|和|差額|差|積)\s*(?:額)?\s*を\s*"
    rf"(?P<new>「[^」]{{1,40}}」|{NOUN})\s*(?=という列|って列|の列|列|欄|として|で(?:計算|算出|追加|作))"
)
"""A formula said as a noun of two columns, named: 「基本給と手当の合計を「総支給額」として
計算」."""


def _verbal_expression(match: re.Match[str]) -> str | None:
    """The formula of a verbal match, or ``None`` when its particles do not fit the verb
    (「AからBを足す」 says no formula)."""
    operator = next(o for words, o in _VERBAL_OPERATORS if re.fullmatch(words, match["verb"]))
    particle = match["particle"]
    fits = {"+": ("と", "に"), "-": ("から",), "*": ("と", "に"), "/": ("を",)}[operator]
    if particle not in fits:
        return None
    operands = [_clean(match[name]).replace(",", "") for name in ("a", "b")]
    return f"{operands[0]} {operator} {operands[1]}"


_NORMALIZE = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の\s*(?:列|項目))?\s*(?:列)?\s*(?:の|を|も|について\s*[、,]?)?\s*(?:数値に|日付に|(?:日付|数値)の(?:形式|書式)に)?\s*(?:表記ゆれ|表記揺れ|表記のゆれ|全角半角|全角・半角|正規化|変換|(?<=に)(?:そろえ|揃え|統一)|表記\s*(?:\((?:[^()]|\([^()]{{0,8}}\)){{0,30}}\))?\s*を(?:統一|揃え|そろえ|整え)|書き方を(?:統一|揃え|そろえ|整え)"
    r"|(?:(?:前後|先頭|末尾|両端)\s*の\s*)?(?:空白|スペース)\s*を?\s*(?:除去|削除|取り除|消|取っ|取り|トリム)"
    # 「氏名とフリガナのスペース・全半角を統一」
    r"|(?:スペース|空白|全半角|全角半角|全角・半角|大文字小文字)(?:\s*[・、と]\s*(?:スペース|空白|全半角"
    r"|全角半角|全角・半角|大文字小文字)){0,3}\s*(?:の\s*)?(?:ゆれ|揺れ|違い|ばらつき)?\s*を?\s*"
    r"(?:統一|揃え|そろえ|整え|直し|直す))"
)
_SELECT = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*(?:{LIST_SEP}|/|／)\s*{QNOUN}){{1,19}})\s*(?:の)?\s*(?:\d+\s*)?(?:列|項目|カラム|つ)\s*(?:だけ|のみ|に絞|に限|にして|にする|にし(?=て|、)|を\s*残[しす])"
    rf"|(?<![がは{_K}{_KATA}A-Za-z0-9_])(?P<cols3>{QNOUN}(?:\s*(?:{LIST_SEP}|/|／)\s*{QNOUN}){{2,19}})\s*(?:だけ|のみ)\s*(?:を|に)?\s*(?=一覧|残|出|抜き出|書き出|表示|して|する|し[、,]|した(?:の|もの)を|[^\s、。]+\.(?:csv|xlsx)\s*(?:に|で|へ)|の\s*(?:CSV|Excel|エクセル|表|一覧|ファイル)|で\s*(?:大丈夫|OK|結構|いい|お願い|構いません)|(?:CSV|csv|Excel|excel|エクセル)\s*(?:に|で|へ)|\s*(?:[＞>→⇒]|$))"
    rf"|(?<!\d)(?<!上位)(?<!先頭)(?<!トップ)(?P<cols5>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{1,19}})\s*の\s*(?:\d+\s*)?(?:列|項目)\s*(?:で|に)\s*(?=[^。]{{0,30}}?(?:出力|書き出|保存|出し|一覧|お願い|ください|下さい|にて|して|CSV|Excel|エクセル))"
    rf"|(?P<cols4>{QNOUN}(?:\s*(?:{LIST_SEP}|/|／)\s*{QNOUN}){{1,19}})\s*(?:の)?\s*(?:\d+\s*)?(?:列|項目|カラム)\s*以外は?\s*(?=要らない|いらない|不要|削除|落と|消|除)"
    rf"|(?:(?:出す|出力する|出力|残す|必要な)\s*(?:列|項目)|(?:必要な|欲しい|ほしい|残したい|残す|出してほしい)\s*の)\s*(?:は|:)\s*(?P<cols7>{QNOUN}(?:\s*(?:{LIST_SEP}|/)\s*{QNOUN}){{0,19}})"
    rf"|(?<![がは{_K}{_KATA}A-Za-z0-9_])(?P<cols8>{QNOUN}(?:\s*(?:・|、|と)\s*{QNOUN}){{2,19}})\s*を\s*(?:(?:CSV|csv|Excel|EXCEL|エクセル)\s*(?:で|に)\s*)?(?=出して|出力|表示して|一覧にして|並べた(?:表|一覧)|残し|残す|保存)"
    rf"|(?:列|項目|カラム)\s*(?:は|を)\s*(?P<cols2>{QNOUN}(?:\s*(?:{LIST_SEP}|/)\s*{QNOUN}){{0,19}})\s*(?:の\s*\d+\s*つ\s*(?:で|に(?:して)?)?\s*(?=[、,。]|$)|(?:の\s*\d+\s*つ)?\s*(?:だけ|のみ|に絞))"
    # 「列は氏名・住所・寄付金額。」: the columns kept, said as a sentence of their own
    rf"|(?:列|項目|カラム)\s*(?:は|:)\s*(?P<cols11>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{1,19}})\s*"
    r"(?:で\s*(?:お願い(?:します|いたします|できますか)?|ください|下さい|よろしく(?:お願いします)?)?)?"
    r"(?=\s*(?:。|$|[!！]))"
    # 「…園児名・クラス・保護者名 を 未納者一覧.xlsx にして」: three or more, then the file
    rf"|(?<![がは{_K}{_KATA}A-Za-z0-9_])(?P<cols15>{QNOUN}(?:\s*・\s*{QNOUN}){{2,19}})\s*(?:を|で)\s*"
    r"(?=[^\s、。]+\.(?:xlsx|csv|xls|xlsm)\b)"
    # 「…を抽出。社員番号、氏名、部署、入社年月日。」「…を抽出、試薬名・ロット・保管場所。」
    # 「部署・氏名・残業時間を、…の多い順に」: three or more columns said alone, after a step
    rf"|(?:(?<=。)|(?<=抽出[、,])|(?<=抜き出し[、,])|(?<=抽出して[、,]))\s*"
    rf"(?P<cols12>{QNOUN}(?:\s*(?:、|,|・)\s*{QNOUN}){{2,19}})"
    r"\s*(?:を\s*(?=[、,])|(?:で|だけ|のみ)?\s*(?=。|$))"
    # 「職員番号・氏名・所属の3列、所属順」: the columns counted, with no verb
    rf"|(?<![がは:={_K}{_KATA}A-Za-z0-9_])(?<![:=]\s)(?P<cols9>{QNOUN}(?:\s*(?:{LIST_SEP}|/|／)\s*{QNOUN}){{1,19}})\s*の\s*\d+\s*(?:列|項目|つ)\s*(?:だけ|のみ)?(?=\s*(?:で|に(?:して)?|を)?\s*(?:[、,。→]|$|CSV|csv|Excel|エクセル))"
    # 「請求番号・顧客名・請求額でExcel出力」「氏名と電話番号でCSV」: the columns of the file
    rf"|(?:(?<=^)|(?<=[、。,]))\s*(?P<cols10>{QNOUN}(?:\s*(?:{LIST_SEP})\s*{QNOUN}){{1,19}})\s*(?:の列)?\s*で\s*"
    r"(?=(?:Excel|EXCEL|エクセル|CSV|csv)\s*(?:に|で|ファイル)?\s*(?:出力|保存|出し|書き出|ちょうだい|お願い|[。、]|$)"
    r"|(?<=[^・、,]{1}\s)?(?:出力|書き出)|(?<=で)(?:出して|出力して)(?=\s*(?:ください|下さい|ほしい|もらえ|いただけ))"
    r"|一覧に(?:して|する|し))"
)
_APPROVAL = re.compile(
    r"(?<!未)承認(?!日|者|番号|状況|区分|ステータス|欄|フラグ|済|待ち|され|の有無)|決裁(?!日|者)|了承"
    r"|(?:確認|チェック|OK|ＯＫ|目視)\s*(?:を)?\s*(?:して|し|受けて|もらって|取って|得て|入れて)?\s*"
    r"(?:もらって|いただいて|もらい|いただき|もらった|いただいた)?\s*(?:から|後|のうえ|の上|を経て|のち)"
    r"|(?:チェック|確認)\s*(?:を)?\s*(?:して)?\s*(?:もらって|受けて|もらう|もらい)"
    r"|(?:確認|承認|チェック)\s*(?:を|の)?\s*(?:ステップ)?\s*(?:を)?\s*(?:挟|はさ|入れ|回して\s*から)"
    r"|(?:確認|承認|OK|了承)\s*が\s*(?:取れ|出|もらえ)て\s*から"  # 「課長の確認が取れてから」
    # 「書き出す前に、一度私に確認させて」「書き出す前に一声かけてください」
    r"|(?<=前に)[、,]?[^。]{0,12}?(?:確認|チェック)\s*させて"
    r"|(?<=前に)[、,]?[^。]{0,12}?(?:確認|チェック|目を通)\s*(?:し)?\s*(?:たい|ます|する)"
    r"|(?<=前に)[、,]?[^。]{0,12}?一声\s*(?:かけ|掛け)"
    r"|(?<=前に)[、,]?[^。]{0,12}?(?:止めて|とめて|ストップして)"  # 「書き出す前に一度止めて」
    r"|(?<=前に)[、,]?[^。]{0,12}?(?:見せて|お見せ|見てもら|確認を?\s*もら)"  # 「…前に私に見せて」
    r"|(?<=前に)[、,]?[^。]{0,12}?(?:確認|承認|OK)\s*を?\s*(?:とって|取って|もらって)"
    # 「承認待ちにしておいて」「結果を塾長に見ていただいてから」
    r"|(?:確認|承認)待ち|(?:見て|目を通して)\s*(?:いただいて|もらって|いただき|もらい)\s*から"
    r"|(?:OK|了承|許可)\s*(?:を|が)?\s*(?:出す|出る|もらう|もらえる|出して|出た)\s*(?:まで|後に?|から)"
    # 「保存前に院長に見てもらうから、確認とれたら保存」
    r"|(?<=に)\s*(?:見て|目を通して)\s*(?:もらう|いただく)|確認\s*(?:が)?\s*(?:とれ|取れ)(?:たら|次第)"
    r"|(?:出力|保存|書き出し)\s*の?\s*前\s*で\s*(?:止め|とめ|ストップ)"
)
"""A person's approval before the output: 承認, 課長に確認してもらってから, チェックを受けて."""
_EXTRACT = re.compile(
    r"(?P<fields>[^。、「」]{0,40}?)\s*を?\s*(?:抽出|読み取|読みと|取り出|抜き出|拾い出|拾っ|転記)"
)
_CLASSIFY = re.compile(
    rf"(?:に|へ)\s*分類|分類\s*(?:する|して|し|され|でき)|仕分け|振り分け|(?:推定|推測)(?![{_K}{_KATA}])|割り当て|判別"
    # 「要望／苦情／感謝のどれかを「分類」列に入れて」「欠席／遅刻／その他 で「区分」をつけて」
    r"|(?:どれか|いずれか)\s*(?:を|に)\s*[^、。]{0,16}?(?:列|欄)\s*(?:に|へ)\s*(?:入れ|記入|入力|セット|書)"
    r"|(?<=[/])[^、。/\s]{1,10}\s*で\s*「[^」]+」\s*(?:列|欄)?\s*を\s*(?:つけ|付け|入れ)"
    # 「「カテゴリ」列に 料金／配送／その他 のどれかを入れて」
    r"|(?:列|欄)\s*に\s*[^、。]{0,40}?(?:の\s*)?(?:どれか|いずれか)\s*を\s*(?:入れ|記入|入力|セット)"
    r"|(?:文章|本文|自由記述|記述)\s*を\s*(?:見て|読んで|読み取って)"
    # 「自由記述を読んで」「内容を読み取って」: reading text is language understanding
    r"|(?:内容|本文|文章|自由記述|記述|コメント|メモ|備考|摘要|意見|感想)(?:欄)?\s*」?\s*(?:\([^()]*\))?"
    r"\s*を\s*(?:読んで|読み取って|読みとって)"
)
"""Sorting rows into labels (「…のどれかに分類して」); 「資材分類ごと」 names a column."""
_FILTER_VERBS = re.compile(
    r"抽出|絞り込|絞込|抜き出|取り出|洗い出|拾い出|拾っ|探し|見つけ|選び|選ん|リストアップ|一覧に"
)


def _column(noun: str | None) -> str | None:
    if noun is None:
        return None
    name = _column_name(noun)
    return name or None


_OTHER_THAN = re.compile(r"\s*(?:の|な)?\s*(?:行|もの|人|分|データ|レコード)?\s*以外")
"""The words after a condition that keep the other rows (「…の行以外」)."""
_NOT_A_CONDITION_COLUMN = frozenset({"対象", "対象期間", "範囲", "条件", "抽出条件", "期間"})
"""Words that head a condition in a sentence (「対象は…以降」) but name no column."""


def _condition(
    reader: _Reader,
    column: str | None,
    op: str,
    value: Any,
    start: int,
    end: int,
    source: str,
    *,
    carry: bool = True,
) -> None:
    """Add a condition to the filter step; with no column, one said just before with only
    「、」「かつ」 between (「金額が1万円以上、5万円未満」) is carried over when ``carry``."""
    if column is not None and re.fullmatch(r"\d+\s*(?:行|件|枚|人|個|回|本|台)", column):
        reader.use(start, end)  # 「1行＝1枚です」: what one row stands for, no condition
        return
    vague = isinstance(value, str) and re.match(
        r"(?:低|高|多|少|大き|小さ|安|長|短|古|新し|早|遅|良|悪|ひど)い", value
    )
    if vague:  # 「【条件】執行率が低い研究者」: a comparison with no number, never a value
        clause = _clause(reader.text, start, end)
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」の「{vague.group(0)}」の基準が指示にありません"
                f"（「{column or '金額'}が50以下」のように、数値で書いてください）",
                source=clause,
            )
        )
        reader.use(start, end)
        return
    if column is not None and re.fullmatch(
        r"(?:\d{4}|(?:令和|平成)\d{1,2})\s*年度?(?:上期|下期|上半期|下半期)?|\d{1,2}\s*月分?"
        r"|月|週|年|日|毎月|月間|年間",  # 「利用回数が月8回以上」: per month, no column 月
        column,
    ):
        column = None  # 「2024年度が…以外」: a period, not a column: which date column is asked
    if (column is not None and _LIMIT_WORD.fullmatch(column)) or re.search(
        rf"(?:{_LIMIT_WORD.pattern})\s*$", reader.text[:start]
    ):
        return  # 「上位10名まで」「上位20品だけ」: how many rows the sort keeps (``_read_limit``)
    step = reader.first_step("filter")
    if step is None:
        step = reader.add_step(start, StepSpec(id="", kind="filter", source=source))
    else:
        step.source = f"{step.source} / {source}"
    if carry and column is None and step.conditions and step.conditions[-1].column and reader.used:
        previous_end = (
            max(b for a, b in reader.used if b <= start)
            if any(b <= start for a, b in reader.used)
            else -1
        )
        said_last = (  # the condition carried from is the one said just before, in the text
            reader.condition_spans[len(step.conditions) - 1][1]
            if len(reader.condition_spans) >= len(step.conditions)
            else -1
        )
        if (
            previous_end >= 0
            and said_last == previous_end
            and re.fullmatch(
                r"[\s、,,〜~]*(?:から|かつ|且つ|で)?[\s、,]*", reader.text[previous_end:start]
            )
        ):
            column = step.conditions[-1].column
    if column in _NOT_A_CONDITION_COLUMN:
        column = None  # 「対象は2025年4月1日以降の申請分」: which date column is asked
    if (
        column is None
        and not re.search(r"合計|総額|平均|件数|小計", reader.text[max(0, start - 6) : end])
        and any(c.column and c.op == op and c.value == value for c in step.conditions)
    ):  # 「金額が5万円以上…。5万円以上は稟議が必要なため」: the same condition said again
        # (「合計が10万円を超えるもの」 is a condition on totals, read apart)
        reader.use(start, end)
        return
    other = _OTHER_THAN.match(reader.text, end)
    if other and op in _NEGATE and op not in ("!=", "not_in", "not_null", "not_contains"):
        # 「年代 が 空欄 の行以外」「…以前 のもの以外」: the rest of the rows (a rule that read
        # the 以外 itself already gave the negation)
        op, end = _NEGATE[op], other.end()
    step.conditions.append(Condition(column=column, op=op, value=value))  # type: ignore[arg-type]
    reader.condition_spans.append((start, end))
    if column is None:
        step.missing.append(f"conditions.{len(step.conditions) - 1}.column")
    reader.use(start, end)


_CONDITIONS_POINTED = re.compile(r"(?:上記|前記|以下|下記|次)\s*の?\s*(?:抽出)?条件")
_CONDITION_LINE = re.compile(
    rf"(?:^|(?<=。))\s*(?P<col>{NOUN})\s*:\s*(?P<vals>{NOUN}(?:\s*[、,・/]\s*{NOUN}){{0,19}})\s*(?=。|$)"
)
_NOT_CONDITION_HEADS = re.compile(
    r"^(?:出力|入力|対象|ファイル|ファイル名|シート|シート名|キー|期間|集計|並び順|並べ替え|ソート|形式"
    r"|条件|作業|手順|目的|依頼|件名|宛先|担当|備考|結果|期限|納期|形|方法|単位|抽出|保存|読込|読み込み"
    r"|処理内容|処理|内容|概要|用途|タイトル|依頼内容|作業内容"
    r"|氏名|名前|所属|部署|連絡先|電話|電話番号|メール|依頼者|差出人|担当者|内線"
    r"|注意|注|補足|参考|注記|ポイント|注意事項|留意点)$"
)


def _read_condition_lines(reader: _Reader) -> None:
    """「品目:トマト、ミニトマト / 出荷量:100以上 / 上記条件で抽出」: with the conditions pointed
    at, a line 「column: values」 keeps the rows whose column is one of the values."""
    if not _CONDITIONS_POINTED.search(reader.text):
        return
    for match in _CONDITION_LINE.finditer(reader.text):
        column = _clean(match.group("col"))
        values = [v for v in _names(match.group("vals").replace("/", "・")) if v]
        if (
            reader.overlaps(match.start("col"), match.end())
            or _NOT_CONDITION_HEADS.match(column)
            or not values
            or any(_FILE_NAME.search(v) or re.fullmatch(_FORMAT_WORD, v) for v in values)
        ):
            continue
        op, value = ("==", values[0]) if len(values) == 1 else ("in", values)
        _condition(reader, column, op, value, match.start("col"), match.end(), match.group(0))
    if reader.first_step("filter") is not None:
        for pointer in _CONDITIONS_POINTED.finditer(reader.text):
            reader.use(pointer.start(), pointer.end())


def _after_condition(reader: _Reader, start: int) -> bool:
    """True when a condition read just before ``start`` ends in 「の」 or a verb form
    (「販売価格が150万円以上の車両」「空欄になっている学生」): the noun names the rows."""
    ends = [b for a, b in reader.condition_spans if b <= start and start - b <= 12]
    if not ends:
        return False
    end = max(ends)
    between = re.sub(r"\s*\([^()]*\)\s*", "", reader.text[end:start])
    rows = rf"\s*(?:{NOUN}\s*の\s*)?(?:お|ご)?"
    return bool(
        re.fullmatch(rf"\s*(?:の|な|た|る|い){rows}", between)
        or (reader.text[end - 1] in "のなたるいむうくすつぐぶぬ" and re.fullmatch(rows, between))
    )


def _read_filters(reader: _Reader) -> None:  # noqa: C901 (one rule per branch)
    text = reader.text
    for match in re.finditer(r"(?:あわせて|併せて|合わせて)(?=\s*[、,])", text):
        reader.use(match.start(), match.end())  # 「あわせて、…は除外してください」: also
    for match in _FILTER_NOT_EQUAL.finditer(text):
        if not reader.overlaps(match.start(), match.end()):
            said = match.group("val")
            unequal: Any = _clean(said)
            if re.fullmatch(NUM, said):
                unequal = amount_value(said)
            if unequal in ("空欄", "空白", "未入力", "ブランク"):  # 「担当≠空欄」: filled
                _condition(reader, match.group("col"), "not_null", None, *match.span(), said)
                continue
            _condition(
                reader,
                match.group("col"),
                "!=",
                unequal,
                match.start(),
                match.end(),
                match.group(0),
            )
    for match in _FILTER_SYMBOL.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        op = _SYMBOLS[match["op"]]
        compared: Any = _date_iso(match["date"]) if match["date"] else amount_value(match["num"])
        if op == "!=" and match["date"]:
            continue
        _condition(
            reader, _column(match["col"]), op, compared, match.start(), match.end(), match.group(0)
        )
    for match in _FILTER_CODE.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        value: Any = _clean(match.group("val") or "")
        if match.group("num") is not None:
            number = float(match.group("num"))
            value = int(number) if number.is_integer() else number
        _condition(
            reader, match.group("col"), "==", value, match.start(), match.end(), match.group(0)
        )
    for match in _FILTER_SIGN.finditer(text):
        if reader.overlaps(match.start("col"), match.end("col")):
            continue
        if _NOT_A_COLUMN.fullmatch(_clean(match.group("col"))):
            continue  # 「先月は赤字の店舗が多かったので」: a remark about a time, no column
        op = "<" if match.group("sign") in ("マイナス", "負", "赤字") else ">"
        _condition(
            reader, _column(match.group("col")), op, 0, match.start(), match.end(), match.group(0)
        )
    for match in _FILTER_DATE_RANGE.finditer(text):
        column = _column(match.group("col"))
        year = match.group("year")
        first, last = match.group("first"), match.group("last")
        if last and re.fullmatch(r"\d{1,2}/\d{1,2}", last):  # 「2025/8/1〜8/31」
            first_year, first_month = re.match(r"(\d{4})[/\-.](\d{1,2})", first).groups()  # type: ignore[union-attr]
            if int(last.split("/")[0]) < int(first_month):  # 「2025/12/20〜1/10」: next year
                first_year = str(int(first_year) + 1)
            last = f"{first_year}/{last}"
        elif last and re.fullmatch(r"\d{1,2}日", last):  # 「2025年4月1日〜30日」: same month
            last = re.sub(r"\d{1,2}日$", "", first) + last
        elif last and not re.match(r"\d{4}|令和|平成", last):  # 「2025年7月1日〜7月15日」
            last = re.sub(r"\d{1,2}月\d{1,2}日$", "", first) + last
            first_month = re.search(r"(\d{1,2})月\d{1,2}日$", first)
            last_month = re.match(r"(?:.*年)?(\d{1,2})月", last)
            western = re.match(r"(\d{4})年", last)
            if first_month and last_month and western and int(last_month[1]) < int(first_month[1]):
                # 「2025年12月1日から1月31日まで」: the end falls in the next year
                last = f"{int(western[1]) + 1}年" + last[western.end() :]
        ends = (
            (f"{year}/{match['m1']}/{match['d1']}", f"{year}/{match['m2']}/{match['d2']}")
            if year
            else (first, last)
        )
        if _date_iso(ends[1]) < _date_iso(ends[0]):  # no row can fall in it: asked, not run
            reader.refuse(
                "not_understood",
                f"「{match.group(0)}」の期間は、終わりが始まりより前になっています。"
                "終わりの日付にも年を付けて書いてください（例: 「2025年12月1日〜2026年1月31日」）",
                match,
            )
            continue
        for op, end in ((">=", ends[0]), ("<=", ends[1])):
            _condition(
                reader,
                column,
                op,
                _date_iso(end),
                match.start(),
                match.end(),
                match.group(0),
            )
    for match in _FILTER_MONTH_RANGE.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        first = _date_iso(f"{match['y']}年{match['m1']}月1日")
        # the last month as a date first: 「1月〜14月」 is named, never a traceback
        closing = _date_iso(f"{match['y2'] or match['y']}年{match['m2']}月1日")
        year = int(closing[:4])
        if not match["y2"] and int(match["m2"]) < int(match["m1"]):
            year += 1  # 「2025年11月〜2月」: into the next year
        last_day = calendar.monthrange(year, int(match["m2"]))[1]
        for op, end in ((">=", first), ("<=", f"{year:04d}-{int(match['m2']):02d}-{last_day:02d}")):
            _condition(
                reader, _column(match["col"]), op, end, match.start(), match.end(), match.group(0)
            )
    for match in _FILTER_DATE.finditer(text):
        if reader.overlaps(match.start("date"), match.end("date")):
            continue
        op = next(o for words, o in _DATE_OPS if re.fullmatch(words, match.group("op")))
        column = _column(match.group("col"))
        _condition(
            reader,
            column,
            op,
            _date_iso(match.group("date")),
            match.start(),
            match.end(),
            match.group(0),
        )
    dates = [(m.start(), m.end()) for m in re.finditer(rf"{_DATE}|{_YEAR_MONTH}", text)]
    for match in _FILTER_NUM.finditer(text):
        if reader.overlaps(match.start("num"), match.end("num")):
            continue
        if any(a < match.end("num") and match.start("num") < b for a, b in dates):
            continue  # a part of a date (2024-07-31), read by the date and equality rules
        if re.search(r"日$", match.group("num").strip()) and re.match(
            r"^\s*(?:以内|まで)", text[match.end("num") :]
        ):
            continue  # a date window (照合), read by the reconcile rule
        if re.search(
            r"(?:差額|誤差|差|ずれ)\s*(?:が|は)?\s*$", text[: match.start("num")]
        ) and not match.group("col"):
            continue  # a tolerance
        op = _op_of(match.group("op"))
        value = amount_value(match.group("num"))
        noun = match.group("col")
        start = match.start()
        end = match.end()
        denial = _NEGATED_COMPARISON.match(text, end)
        if denial and op in (">", ">=", "<", "<=", "=="):  # 「5万円を超えない」「ちょうどでない」
            op = _NEGATE[op]
            end = denial.end()
        if (
            noun is not None
            and not is_amount_column(noun)
            and re.search(r"円\s*$", match.group("num"))
        ):
            # 「交際費が5,000円を超える」: 交際費 is a value of an unnamed column; the amount
            # column is not named either. Both are asked.
            _condition(
                reader,
                None,
                "==",
                _clean(noun),
                start,
                match.start("num"),
                match.group(0),
                carry=False,
            )
            reader.value_or_column.append(_clean(noun))
            noun = None
        _condition(reader, _column(noun), op, value, start, end, text[start:end])
    for match in _FILTER_SMALL_NUMBER.finditer(text):
        if reader.overlaps(match.start(), match.end()) or _NOT_A_COLUMN.fullmatch(
            _clean(match.group("col"))
        ):
            continue
        _condition(
            reader,
            _column(match.group("col")),
            "==",
            int(match.group("num")),
            match.start(),
            match.end("num"),
            match.group(0),
        )
    for match in _FILTER_CONTAINS.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        said = _clean(match.group("val"))
        if re.fullmatch(r"\d+\s*(?:回|件|行|つ|度)|二重|何回|何度|複数", said):
            continue  # 「おなじ会員番号が２回入ってる」: rows doubled, no value contained
        filled = re.fullmatch(
            r"日付|値|数字|数値|データ|何か|なにか|文字|金額|番号|入力|記入|日にち", said
        )
        end = match.end()
        denied = re.match(r"[ぁ-ん]{0,3}?(?:ない|なかった|ず(?!つ))", text[end:])
        if denied and not re.match(r"[ぁ-ん]{0,3}?ないで", text[end:]):
            end += denied.end()  # 「摘要に「会議」が含まれていない」「入っていない」
        op = (
            ("is_null" if denied else "not_null")
            if filled
            else ("not_contains" if denied else "contains")
        )
        _condition(  # 「退会日に日付が入っている人」: filled, not the text 「日付」
            reader,
            _column(match.group("col")),
            op,
            None if filled else said,
            match.start(),
            end,
            text[match.start() : end],
        )
    for match in _FILTER_NULL.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        if _clean(match.group("col")) in GENERIC_NOUNS or _GENERIC.search(match.group("col")):
            continue  # 「文字が入っている」: no column
        if re.fullmatch(
            r"二重|2重|重複|二度|2度|何度も|何回も|同じ|ダブり", _clean(match.group("col"))
        ):
            continue  # 「伝票番号の行が二重に入っている」: rows doubled, said of no column
        state = match.group("state")
        if re.fullmatch(r"入っている|入ってる|入っていて", state) and re.match(
            r"\s*(?:んです|のです|んだ|けど|けれど|ので|から|ため|が\s*[、,])", text[match.end() :]
        ):
            continue  # 「…csv に 店舗名・時給・勤務時間 が入ってるんですが」: what the file holds
        op = (
            "is_null"
            if re.search(r"空欄\)?$|空白\)?$|未入力$|ブランク$|^空$|未記入|未記載|ていない", state)
            else "not_null"
        )
        _condition(
            reader,
            _column(match.group("col")),
            op,
            None,
            match.start(),
            match.end(),
            match.group(0),
        )
    for match in _FILTER_EQ.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        if re.search(r"(?:ごと|毎)$", match.group("col")) or (
            match.group("col").endswith("別") and _suffix_betsu(match.group("col"))
        ):
            continue  # 「部門別」 is a grouping (「保険種別」 is a column)
        raw = match.group("val")
        if re.match(r"\s*の?\s*(?:前後|から)\s*\d+\s*日", text[match.end("val") :]):
            continue  # 「入金日が請求日の前後5日以内」: a date window between two columns
        if re.fullmatch(_DATE, raw):
            values = [_date_iso(raw)]
        else:
            quoted = re.findall(r"「([^」]+)」", raw)
            parts = (
                quoted
                if len(quoted) > 1
                else re.split(r"\s*(?:か|または|もしくは|・|、|/|／)\s*", raw)
            )
            values = [_clean(v) for v in parts if _clean(v)]
        negated = bool(values) and all(v.endswith("以外") and len(v) > 2 for v in values)
        negated = negated or (  # 「東京都・神奈川県・埼玉県以外」: 以外 said once, of the list
            len(values) > 1 and values[-1].endswith("以外") and len(values[-1]) > 2
        )
        negated = (
            negated
            or bool(  # 「ステータスが「完了」のもの以外」「すでに「完了」になっているもの以外」
                re.match(
                    r"\s*(?:の|に\s*なって(?:いる|る)|と\s*なって(?:いる|る)|である)?\s*"
                    r"(?:もの|行|データ|方|人|分|案件|明細)?\s*以外",
                    text[match.end("val") :],
                )
            )
        )
        if negated:  # 「油種が灯油以外の」: the negation read as a part of the value
            values = [v.removesuffix("以外") for v in values]
        if any(v in _METRIC_WORDS or v in _NOT_VALUES for v in values):
            continue
        compared = next(
            (v for v in values if re.search(r"(?:超|以上|以下|未満|以内|以降|以前|以後)$", v)), None
        )
        if (
            compared
            and not re.search(r"\d", compared)
            and not re.fullmatch(r"(?:超|以上|以下|未満|以内|以降|以前|以後)", compared)
        ):  # 「在庫数が発注点以下」 (「今回は以下の手順で」 compares nothing)
            said = f"{match.group('col')}が{compared}"
            reader.gaps.append(
                Gap(
                    kind="unsupported_action",
                    message=f"「{said}」のような列どうしの比較で行を絞り込むことはできません"
                    "（「在庫数が10以下」のように、数や日付と比べる条件で書いてください）",
                    source=said,
                )
            )
            reader.use(match.start(), _clause_span(text, match.start(), match.end())[1])
            continue
        if compared:
            continue  # 「3万部超」: a comparison the number rule could not read, not a value
        column = match.group("col")
        owner = re.search(rf"(?P<owner>{NOUN})\s*の\s*$", text[: match.start("col")])
        if (
            column in ("種類", "区分", "状態", "種別")
            and owner
            and not any(item.holds.startswith(owner.group("owner")) for item in reader.inputs)
        ):  # 「廃棄物の種類が「廃プラ」」 (「請求一覧 の 状態」 is the file's 状態 column)
            column = f"{owner.group('owner')}の{column}"
        elif not _quoted_value_of(column, raw, text[match.end("col") :]) and (
            column in GENERIC_NOUNS
            or (_GENERIC.search(column) and not ("「" in raw and len(column) > 2))
            or _NOT_A_COLUMN.fullmatch(column)
        ):
            continue  # 「結果は…」「今年は…」 name no column (「振替結果が「不能」」 does)
        particle = text[match.end("col") : match.start("val")].strip()
        tail = match.group("tail")
        if particle == ":" and _NOT_CONDITION_HEADS.match(column):
            continue  # 「処理内容: 翻訳者支払の集計」: a heading, no condition
        if match.group("chain") is not None and not (
            particle in ("が", ":", "=", "==")
            and _chain_step(text, match.start(), match.end())
            and not re.search(r"確認|承認|チェック|決裁|集計|抽出|出力|保存|作成", raw)
        ):
            continue  # 「出力はExcel」「→ 課長が確認 →」: no condition
        if (
            particle == "は"
            and "「" not in raw
            and tail == "の"
            and not re.match(r"\s*(?:もの|行|データ|明細|レコード|分|方)", text[match.end() :])
        ):
            continue  # 「税込金額 は端数処理の違いがあるので」: a topic and a remark, no value
        # 「0円」 is a number
        typed: list[Any] = [amount_value(v) if re.fullmatch(AMOUNT, v) else v for v in values]
        op = "!=" if negated or tail in ("以外", "でない", "ではない", "じゃない") else "=="
        if len(values) > 1:
            op = "in" if op == "==" else op
        wanted: Any = typed if op == "in" else typed[0]
        if op == "!=" and len(values) > 1:
            for item in values:
                _condition(
                    reader,
                    column,
                    "!=",
                    item,
                    match.start(),
                    match.end(),
                    match.group(0),
                )
            continue
        _condition(reader, column, op, wanted, match.start(), match.end(), match.group(0))
    for match in _QUOTED_DROPPED.finditer(text):
        if not reader.overlaps(match.start(), match.end()):  # 「「離れ」は別管理なので除いてね」
            _condition(
                reader, None, "!=", match.group("val"), match.start(), match.end(), match.group(0)
            )
    for match in _FILTER_ONLY.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        noun = _clean(match.group("val"))
        if re.search(r"(?:その|この|あの|それらの)\s*$", text[: match.start()]):
            continue  # 「その前後だけ」: a word pointing back, no value to keep
        reason = rf"\s*(?:の\s*{NOUN}\s*)?(?:なので|だから|のため|ですので)"
        if re.match(reason, text[match.end() :]):
            continue  # 「…のは教材だけの申込なので除いて」: a reason, no value to keep
        if _names_a_file(reader, noun) or _GENERIC.search(noun) or noun in _NOT_VALUES:
            continue
        if _ENDS_WITH_METRIC.search(noun):
            continue  # 「合計だけ」「総額と平均だけ」: the figure wanted, read by the aggregation
        if _after_condition(reader, match.start("val")):
            condition_end = max(b for a, b in reader.condition_spans if b <= match.start("val"))
            reader.use(condition_end, match.end())
            continue  # 「…以上の車両だけ」「「要注意」の得意先の受注だけ」: the rows kept, named
        op = "!=" if match.group("tail") == "以外" else "=="
        _condition(reader, None, op, noun, match.start(), match.end(), match.group(0))


_NEGATE = {
    "==": "!=",
    "!=": "==",
    ">": "<=",
    ">=": "<",
    "<": ">=",
    "<=": ">",
    "is_null": "not_null",
    "not_null": "is_null",
    "in": "not_in",
    "not_in": "in",
    "contains": "not_contains",
    "not_contains": "contains",
}
_NEGATED_COMPARISON = re.compile(
    r"\s*(?:ない|なかった|ず(?!つ)|で(?:は)?\s*ない|でなく|ではなく|じゃ\s*ない|ではありません)"
)
"""「5万円を超えない」「5万円以上でない」: a comparison said and then denied."""
_EXCLUDE = re.compile(
    r"^(?:(?:\([^()]{0,20}\)|[^、。(（]){0,30}?(?:(?<!も)ので|のため|だから)\s*[、,]?\s*(?:それ|これ)?)?"
    r"(?:(?!だけ|のみ)(?:\([^()]{0,20}\)|[^、。(（])){0,12}?(?:は|を|が)?\s*(?<!重複)(?<!ダブり)"
    r"(?:不要|除外|除く|除い|除き|外し|外す|外して|削除|取り除|省|(?<=は)\s*抜(?:いて|く|き(?!出))|落と(?!し込)"
    r"|消し|消す|対象外|含めな[いく]|含めず|含めません|含まない|含まず|含みません|入れな[いく]|入れず|入れません"
    r"|載せな[いく]|載せず|載せません"
    r"|出力しない|出力しません|出さない|出しません|対象と?(?:に)?(?:しない|しません)|いらない|要らない"
    r"|要りません|いりません|無視)"
)
"""After a condition, in its clause (a reason may stand between: 「…未満のは教材だけの申込
なので除いて」): the rows it names are dropped (「重複削除」 is a dedupe; 「入っている物件だけ
（空白は除外）」 keeps them and says so twice)."""
_LISTED_CONDITIONS = re.compile(
    rf"\s*(?:の)?\s*(?:行|もの|データ|明細|取引|分|人|方|レコード|(?<=の)\s*[{_K}{_KATA}]{{1,6}})?"
    r"\s*(?:\([^()]{0,20}\))?\s*"
    r"(?:と|や|、|,|および|及び|または|又は|か)\s*[、,]?\s*"
)
"""What lies between two conditions listed for one verb (「金額が0円の行と、備考に…」)."""


_INCLUDED_TOO = re.compile(
    r"^(?:\([^()]{0,20}\)|[^、。(（]){0,14}?も\s*(?:含め|含む|含ん|入れ|対象に|対象と|集計に入れ"
    r"|残し|残す|残した|消さ|除かず|外さ)"  # 「通級回数が空欄の児童も残したまま」
)
"""「金額が1万円未満の少額経費も含めてください」: rows said to be kept too, no condition."""


def _included_too(reader: _Reader) -> None:
    """A condition on rows said to be included as well keeps every row: it is dropped."""
    step = reader.first_step("filter")
    if step is None:
        return
    spans = reader.condition_spans[: len(step.conditions)]
    keep = [i for i, (_, end) in enumerate(spans) if not _INCLUDED_TOO.match(reader.text[end:])]
    if len(keep) == len(step.conditions):
        return
    for index, (_, end) in enumerate(spans):
        said = _INCLUDED_TOO.match(reader.text[end:])
        if index not in keep and said:
            reader.use(end, end + said.end())
    step.conditions = [step.conditions[i] for i in keep]
    step.missing = [m for m in step.missing if not m.startswith("conditions.")] + [
        f"conditions.{n}.column" for n, c in enumerate(step.conditions) if c.column is None
    ]
    reader.condition_spans = [spans[i] for i in keep]
    if not step.conditions:
        reader.steps = [(p, s) for p, s in reader.steps if s is not step]


def _said_twice(reader: _Reader) -> None:
    """「支払額50千円未満は対象外にして（＝50,000円以上だけ残す）」: a condition with no column,
    in an aside, that repeats a condition on a column (same comparison, same value) is that
    one, said again."""
    step = reader.first_step("filter")
    if step is None:
        return
    said = {(c.op, str(c.value)) for c in step.conditions if c.column is not None}
    spans = reader.condition_spans[: len(step.conditions)]
    asides = [(m.start(), m.end()) for m in re.finditer(r"\([^()]*\)", reader.text)]
    keep = [
        i
        for i, c in enumerate(step.conditions)
        if c.column is not None
        or (c.op, str(c.value)) not in said
        or i >= len(spans)
        or not any(a <= spans[i][0] < b for a, b in asides)  # restated in an aside only
    ]
    if len(keep) == len(step.conditions):
        return
    step.conditions = [step.conditions[i] for i in keep]
    reader.condition_spans = [spans[i] for i in keep if i < len(spans)]
    step.missing = [m for m in step.missing if not m.startswith("conditions.")] + [
        f"conditions.{n}.column" for n, c in enumerate(step.conditions) if c.column is None
    ]


_EXCLUDED_KEY = re.compile(
    r"(?:^|(?<=。)|(?<=\s))\s*(?:除外(?:条件|対象)?|除く(?:もの)?|対象外)\s*[:=]\s*$"
)
"""「除外：在庫数 が 0 の行」 said in a line no settings rule rewrote: its condition drops rows."""


def _negate_excluded(reader: _Reader) -> None:
    """「請求額が0円の行は除外」: a condition on the rows to drop keeps the others; 「在庫数が0の
    ものと、廃番フラグが1のものを除いて」: conditions listed for one exclusion all drop."""
    step = reader.first_step("filter")
    if step is None:
        return
    text = reader.text
    spans = reader.condition_spans[: len(step.conditions)]
    in_text_order = sorted(range(len(spans)), key=lambda index: spans[index])
    dropped: list[int] = []
    for place in reversed(range(len(in_text_order))):
        index = in_text_order[place]
        end = spans[index][1]
        excluded = _EXCLUDE.match(text[end:])
        keyed = _EXCLUDED_KEY.search(text, 0, spans[index][0])
        if excluded:
            reader.use(end, end + excluded.end())  # 「…が1のやつ除外」
            dropped.append(index)
        elif (
            keyed
            and keyed.end() == spans[index][0]
            and (step.conditions[index].op not in ("!=", "not_in", "not_contains", "not_null"))
        ):
            dropped.append(index)  # 「除外：記録状態 が「下書き」」: the rows the key drops
        elif (
            dropped
            and step.conditions[index].op not in ("!=", "not_in", "not_contains")
            and place + 1 < len(in_text_order)
            and dropped[-1] == in_text_order[place + 1]
            and _LISTED_CONDITIONS.fullmatch(text, end, spans[dropped[-1]][0])
        ):
            if re.fullmatch(r"\s*[、,]\s*", text[end : spans[dropped[-1]][0]]):
                said = text[spans[index][0] : spans[dropped[-1]][1]]
                # 「配達区分が「当日」、配達エリアが「市外」を除く」: both dropped, or the last one?
                reader.gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{said}」の「除く」が、どの条件にかかるか読み取れませんでした"
                        "（両方を除くなら「…と、…を除く」、片方だけなら「…のものだけ。…は除く」の"
                        "ように書いてください）",
                        source=said,
                    )
                )
                break
            dropped.append(index)
    for index in dropped:
        condition = step.conditions[index]
        step.conditions[index] = condition.model_copy(update={"op": _NEGATE[condition.op]})


_OR_BETWEEN = re.compile(
    r"\s*(?:の|で)?\s*(?:行|もの|データ|明細|取引|人|方|社員)?\s*[、,]?\s*"
    r"(?:または|又は|もしくは|若しくは|あるいは|或いは|か(?=\s*[、,]|\s*「|\s*[^\s]{1,12}が)|OR\b|or\b)"
)
_SCOPE_OF_APPROVAL = re.compile(
    r"[^。、]{0,12}?(?:は|には|なら|であれば|の場合は?|のときは?)\s*[^。]{0,12}?"
    r"(?:承認|決裁|稟議|了承)"
)
_TREATED_AS = re.compile(
    r"[^。、]{0,12}?(?:は|を)\s*[^。]{0,16}?"
    r"(?:として扱|扱い|扱う|扱って|とみなし|みなして|に置き換|に変換|に読み替|に直し)"
)
_CALENDAR_WORDS = re.compile(r"土日|平日|週末|土曜|日曜|祝日|祝祭日|休日|月末|月初|営業日|曜日")
_VAGUE_VALUE = re.compile(r"(?:前後|くらい|ぐらい|程度|ほど|近く|付近|あたり|位)$")


def _ratios_said_in_percent(reader: _Reader) -> None:
    """「原価÷売価の原価率列を追加し、原価率が35%を超える」: the column is 原価率 (「列」 is no
    part of its name), and a ratio computed by a division is a fraction: 35% is 0.35."""
    ratios: set[str] = set()
    for _, compute in reader.steps:
        if compute.kind != "compute":
            continue
        renamed = {}
        for name, expression in compute.expressions.items():
            bare = name[:-1] if name.endswith("列") and len(name) > 2 else name
            renamed[bare] = expression
            if "/" in expression and "100" not in expression:
                ratios.add(bare)
        compute.expressions = renamed
    step = reader.first_step("filter")
    if step is None or not ratios:
        return
    spans = reader.condition_spans[: len(step.conditions)]
    for index, (start, end) in enumerate(spans):
        condition = step.conditions[index]
        if (
            condition.column in ratios
            and isinstance(condition.value, int | float)
            and re.search(r"\d\s*%", reader.text[start:end])
        ):
            step.conditions[index] = condition.model_copy(update={"value": condition.value / 100})


def _formulas_of_totals(steps: list[StepSpec]) -> list[StepSpec]:
    """「売上合計と客数合計を出し、売上合計を客数合計で割った客単価の列を追加」: a formula
    over a total's name (売上合計, 客数の平均 said as 客数平均) runs after the aggregation."""
    aggregate = next((step for step in steps if step.kind == "aggregate"), None)
    if aggregate is None:
        return steps
    totals = {
        f"{column}{METRIC_WORDS[metric]}"
        for column, metrics in aggregate.metrics.items()
        if column != COUNT_ALL
        for metric in metrics
    }
    after = [
        step
        for step in steps
        if step.kind == "compute"
        and steps.index(step) < steps.index(aggregate)
        and any(
            m.group(0) in totals for e in step.expressions.values() for m in re.finditer(NOUN, e)
        )
    ]
    if not after:
        return steps
    rest = [step for step in steps if step not in after]
    place = rest.index(aggregate) + 1
    return rest[:place] + after + rest[place:]


def _differences_of_a_reconciliation(reader: _Reader) -> None:
    """「口座番号で突き合わせて、残高の差額が5万円以上のもの」: a condition on the difference a
    reconciliation finds cannot be built (its sign — grew or fell — is not said, and the
    block gives the difference as 金額差): named, never kept as a column nobody has."""
    if reader.first_step("reconcile") is None:
        return
    step = reader.first_step("filter")
    if step is None:
        return
    computed = {name for _, other in reader.steps for name in other.expressions}
    for condition in step.conditions:
        column = condition.column or ""
        if column not in computed and re.fullmatch(
            r"(?:.{1,10}の)?(?:差額|差|差異|金額差|ずれ|ズレ)", column
        ):
            reader.gaps.append(
                Gap(
                    kind="unsupported_action",
                    message=f"「{condition_text(condition)}」: 照合で見つかった差額で行を"
                    "絞り込む処理は作れません（増えた・減ったのどちらか決められないため）。照合結果の"
                    "「金額差」の列で確かめてください",
                    source=column,
                )
            )


def _conditions_not_filters(reader: _Reader) -> None:
    """Conditions read that no AND filter of column values can build, named instead of
    built: 「…以上または…以上」 (either), 「50万円を超えるものは部長承認」 (the rows an
    approval is for, not the rows kept), 「返品のものはマイナスとして扱い」 (rows changed, not
    kept), 「取引日が土日」 (a calendar word), 「5万円前後」 (no value)."""
    step = reader.first_step("filter")
    if step is None:
        return
    text = reader.text
    spans = reader.condition_spans[: len(step.conditions)]
    order = sorted(range(len(spans)), key=lambda index: spans[index])

    def name(start: int, end: int, message: str) -> None:
        clause = _clause(text, start, end)
        reader.gaps.append(
            Gap(kind="not_understood", message=f"「{clause}」{message}", source=clause)
        )

    for place, index in enumerate(order):
        start, end = spans[index]
        condition = step.conditions[index]
        after = text[end : text.find("。", end) if "。" in text[end:] else len(text)]
        dropped = ("!=", "not_in", "not_contains")
        if (
            place + 1 < len(order)
            and _OR_BETWEEN.match(text, end, spans[order[place + 1]][0])
            and not (condition.op in dropped and step.conditions[order[place + 1]].op in dropped)
        ):  # 「AまたはBを除いて」 drops both: kept as two conditions
            name(
                start,
                spans[order[place + 1]][1],
                "の「または」（どちらかに当てはまる行）は作れません。条件はすべてを満たす行"
                "（かつ）だけ絞り込めます。別々の絞り込みに分けて指示してください",
            )
        if _SCOPE_OF_APPROVAL.match(after) and reader.first_step("approval"):
            name(
                start,
                end,
                "は、承認が要る行の説明のように読めます。一部の行だけを承認に回す処理は作れません"
                "（承認は出力全体にかかります）。その行だけを出すなら「…の行だけ抽出して」と"
                "書いてください",
            )
        elif _TREATED_AS.match(after):
            name(
                start,
                end,
                "の行の値を変える処理は作れません（絞り込みは行を残すか除くかだけです）",
            )
        values = condition.value if isinstance(condition.value, list) else [condition.value]
        if condition.op in ("==", "!=", "in", "not_in") and any(
            isinstance(v, str) and _CALENDAR_WORDS.search(v) for v in values
        ):
            name(
                start,
                end,
                "の曜日・月末などでの絞り込みは作れません。日付の範囲"
                "（例: 「取引日が2025年4月1日〜4月30日」）で書いてください",
            )
        elif any(isinstance(v, str) and _VAGUE_VALUE.search(v) for v in values):
            name(
                start,
                end,
                "の値がはっきりしません。「5万円以上」のように、比べる値を書いてください",
            )
    for column in {c.column for c in step.conditions if c.column}:
        said = [i for i in order if step.conditions[i].column == column]
        if not _can_hold_together([step.conditions[i] for i in said]):
            name(
                spans[said[0]][0],
                spans[said[-1]][1],
                f"の「{column}」の条件は、同時に満たす行がありません（すべてを満たす行だけが"
                "残るため、結果が空になります）。どちらかに当てはまる行なら、別々に指示してください",
            )


def _can_hold_together(conditions: list[Condition]) -> bool:
    """False when no one value meets every condition on a column (「金額が3千円未満」 and
    「金額が3千円以上」; 「部門が営業部」 and 「部門が企画部」)."""
    equal = {repr(c.value) for c in conditions if c.op == "=="}
    if len(equal) > 1:
        return False

    def kind(value: Any) -> str:
        return "number" if isinstance(value, int | float) else type(value).__name__

    low: tuple[Any, bool] | None = None  # (bound, inclusive)
    high: tuple[Any, bool] | None = None
    for condition in conditions:
        value = condition.value
        if condition.op not in (">", ">=", "<", "<=") or isinstance(value, bool):
            continue
        if condition.op in (">", ">="):
            if low is None or kind(low[0]) != kind(value) or value > low[0]:
                low = (value, condition.op == ">=")
        elif high is None or kind(high[0]) != kind(value) or value < high[0]:
            high = (value, condition.op == "<=")
    if low is None or high is None or kind(low[0]) != kind(high[0]):
        return True
    return bool(low[0] < high[0] or (low[0] == high[0] and low[1] and high[1]))


def _names_a_file(reader: _Reader, noun: str) -> bool:
    """True when ``noun`` is how the instruction calls one of its files (売上データ)."""
    bare = re.sub(r"(?:データ|ファイル|ブック|シート)$", "", noun)
    if _FILE_NAME.fullmatch(noun):
        return True  # 「「教科書マスタ.xlsx」と「科目コード」で結合」: the file, no key
    return any(
        noun
        and (
            noun == item.holds
            or bare == item.holds
            or bare == re.sub(r"(?:データ|ファイル)$", "", item.holds)
        )
        for item in reader.inputs
    )


_COUNT_NAME = re.compile(
    rf"(?P<name>{NOUN}(?:件数|回数|人数|者数))\s*(?:\(\s*(?:行数|件数|レコード数)\s*\)\s*)?"
    r"(?:を|の)?\s*(?:数え|カウント|出|求め|集計|と(?=[^。]{0,30}?(?:合計|平均|最大|最小)))"
)
"""「訪問件数を数える」「夜勤回数を出して」: the instruction's name for the row count."""


_BETSU_NOUNS = frozenset(
    {"種別", "性別", "区別", "個別", "特別", "判別", "識別", "類別", "差別", "選別", "格別", "送別"}
)


def _suffix_betsu(words: str) -> bool:
    """True when the last 「別」 is the suffix 「…ごとに」 (車種別, 部門別), not a part of a
    noun (保険種別, 性別): told apart by Sudachi's shortest units."""
    from sudachipy import tokenizer

    units = [m.surface() for m in _tokenizer().tokenize(words, tokenizer.Tokenizer.SplitMode.A)]
    return bool(units) and (
        units[-1] == "別" or (units[-1].endswith("別") and units[-1] not in _BETSU_NOUNS)
    )  # 「月別」「年別」 are one unit and still 「…ごとに」


_METRIC_COLUMN_SAID = re.compile(
    rf"(?P<m>合計|平均|最大|最小)\s*(?:する列|の列|の対象)?\s*は\s*(?P<col>{QNOUN})\s*(?:の列|列)?\s*(?:で|を|に)"
)
"""「合計は税込金額でお願いします」: the column a total is taken of, said apart from it."""


def _metric_columns_said_apart(reader: _Reader) -> None:
    """The column of a metric said in its own sentence replaces the one read beside the
    metric (「金額を部門別に合計…。合計は税込金額で」); a grouping word read as a metric column
    (「部門別合計」) is no column; 「全店舗の平均」 (a figure over all groups) is asked."""
    aggregates = [step for _, step in reader.steps if step.kind == "aggregate"]
    if len(aggregates) != 1:
        return
    step = aggregates[0]
    for column in list(step.metrics):
        stem = re.sub(r"(?:別|ごと|毎)$", "", column)
        grouped = re.fullmatch(r"(?P<g>.+?)(?:別|ごと|毎)(?P<m>.+)", column)
        if stem != column and stem in step.group_by:
            del step.metrics[column]  # 「部門別合計」: the grouping said again
        elif grouped and grouped["g"] in step.group_by and grouped["m"] not in step.metrics:
            step.metrics[grouped["m"]] = step.metrics.pop(column)  # 「担当者別売上合計」
        elif column.startswith("全") and column != COUNT_ALL:
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{column}」の"
                    + "・".join(METRIC_WORDS[m] for m in step.metrics[column])
                    + "（グループをまたいだ全体の値）は、グループ別の集計と同じ表には作れません。"
                    "別の指示に分けてください",
                    source=step.source,
                )
            )
    for match in _METRIC_COLUMN_SAID.finditer(reader.text):
        if reader.overlaps(match.start("col"), match.end("col")):
            continue
        wanted = _METRIC_WORDS[match["m"]]
        measured = [c for c, ms in step.metrics.items() if c != COUNT_ALL and wanted in ms]
        if len(measured) == 1:
            step.metrics[_clean(match["col"])] = step.metrics.pop(measured[0])
            reader.use(match.start(), match.end())


def _share_a_word(first: str, second: str) -> bool:
    """True when two names share two characters in a row (営業担当 / 担当者): the same
    grouping said twice, not two groupings."""
    return any(first[i : i + 2] in second for i in range(len(first) - 1))


def _read_aggregate(reader: _Reader) -> None:  # noqa: C901 (groups, then each metric form)
    text = reader.text
    groups: list[str] = []
    positions: list[int] = []
    asides = [  # (「⇒ 集計（買受人名ごとに…）」: the step said in brackets after its name)
        (m.start(), m.end())
        for m in re.finditer(r"\([^()]*\)", text)
        if not re.search(r"(?:集計|合計|計算|処理|作業|手順)\s*$", text[: m.start()])
    ]
    by_sentence: dict[int, list[str]] = {}
    for match in _GROUP.finditer(text):
        if any(a < match.start() and match.end() <= b for a, b in asides):
            continue  # 「単価表.xlsx（品目コードごとのkg単価）」: a file described, no grouping
        refused = _NOT_WANTED.match(text, match.end())
        if refused:  # 「部署別とかは要りません」: the grouping not wanted
            reader.use(match.start(), refused.end())
            continue
        offset = match.start("cols")
        kept = [
            m.group(0)
            for m in re.finditer(QNOUN, match.group("cols"))
            if not reader.overlaps(offset + m.start(), offset + m.end())
        ]  # 「…の「4月」シート、外注先ごとに」: the sheet was read with its file
        stem = kept[-1] if kept else ""
        said = bool(stem) and re.search(rf"{re.escape(stem)}\s*(?:が|は|を)", text) is not None
        if match.group(0).endswith("別") and not said and not _suffix_betsu(match.group(0)):
            continue  # 「保険種別」「性別」: a column named so (「券種が…、券種別に」: a grouping)
        names = [
            n[:-1] if n.endswith("別") and _suffix_betsu(n) else n  # 「工事番号別・費目別」
            for n in _names("・".join(kept))
            if not _names_a_file(reader, n)
            and (
                n == "項目"  # 「項目ごと」
                or re.fullmatch(rf"[{_K}{_KATA}]{{2,}}(?:項目|結果|明細)", n)  # 「検査項目ごと」
                or (n not in GENERIC_NOUNS and not _GENERIC.search(n))
            )
            and not _NOT_A_COLUMN.fullmatch(n)  # 「毎月末、得意先ごとに」: a time, no group
        ]
        dotted = re.fullmatch(rf"\s*{QNOUN}(?:\s*・\s*{QNOUN})+\s*", match.group("cols"))
        if len(names) > 1 and not dotted:  # 「0のデータは除外、車両番号ごとに」: an action
            names = [n for n in names if n not in STEP_VERBS and n not in _GLUE_ACTIONS] or names
        opening = text[text.rfind("。", 0, match.start("cols")) + 1 : match.start("cols")]
        if (
            len(names) > 1
            and re.match(rf"\s*{re.escape(names[0])}\s*、", match.group("cols"))
            and opening.endswith("の")
            and not re.search(r"[をがはでにへと]|から|まで", opening)
            and not _FILE_NAME.search(opening)
            and re.search(  # …and a column named after it follows (出荷 → 出荷量)
                rf"{re.escape(names[0])}[{_K}{_KATA}]+", text[match.end() :]
            )
        ):  # 「8月の氷の出荷、船名ごとに出荷量の合計」: the topic said first, then the grouping
            names = names[1:]
        if not names or _DESCRIBES_GROUP.match(text, match.end()):
            continue  # 「支店ごとに管理している顧客リスト」: how the data is kept, no grouping
        described = re.compile(
            rf"\s*の\s*(?P<noun>{NOUN})\s*(?P<file>\([^()]*\.(?:csv|xlsx|xls|xlsm)\s*\))?"
        ).match(text, match.end())
        if (
            described
            and (
                described.group("file")
                or any(item.holds.endswith(described.group("noun")) for item in reader.inputs)
            )
            and not re.match(  # 「月 ごとの 売上 合計」: a total, not the file described
                r"\s*(?:の)?\s*(?:合計|平均|件数|集計|最大|最小|総額)", text[described.end() :]
            )
        ):
            continue  # 「現場ごとの資材発注一覧(Excel)」「教習生ごとの請求データ(請求.xlsx)」
        by_sentence.setdefault(text.count("。", 0, match.start()), []).extend(names)
        positions.append(match.start())
        reader.use(match.start(), match.end())
    if len(by_sentence) > 1:
        # 「営業担当別の粗利を出したい。…担当者ごとに粗利を合計」: a summary and the step say
        # the grouping twice; the sentence that totals a column says it (else: asked)
        totals = {
            text.count("。", 0, m.start())
            for m in _METRIC.finditer(text)
            if m.group("col") or m.group("cols")
        }
        chosen = [sentence for sentence in by_sentence if sentence in totals]
        widest = max(by_sentence.values(), key=len)
        if all(set(names) <= set(widest) for names in by_sentence.values()) and any(
            set(names) < set(widest) for names in by_sentence.values()
        ):  # 「営業店別の件数を集計したく…営業店・担当者ごとに何件あるか」: the summary is
            # a part of the grouping the step says in full
            chosen = [next(k for k, names in by_sentence.items() if names == widest)]
        fuller = [
            sentence
            for sentence, names in by_sentence.items()
            if all(
                any(other in name for name in names)
                for others in by_sentence.values()
                for other in others
            )
        ]  # 「コース別・月別の平均を見たい。…コース名と運行月でグループ化」: said in full once
        if len(fuller) == 1:
            chosen = fuller
        sentences = text.split("。")  # by_sentence is keyed by the count of 「。」 before
        unrelated = [
            sentence
            for sentence, names in by_sentence.items()
            if chosen
            and sentence not in chosen
            and not any(_share_a_word(n, c) for n in names for c in by_sentence[chosen[0]])
            and re.search(  # said as one more: 「…ごとにも分けて」「さらに…別に」
                r"(?:ごと|別|毎)\s*に?\s*も|分けて|加えて|さらに|追加で", sentences[sentence]
            )
        ]
        if len(chosen) == 1 and unrelated:
            # 「費目別に支出額を合計…。研究者番号ごとにも分けてください」: a grouping said in
            # a sentence of its own is one more grouping, never a restatement to drop
            by_sentence = {
                sentence: names
                for sentence, names in by_sentence.items()
                if sentence in chosen or sentence in unrelated
            }
        elif len(chosen) == 1:
            by_sentence = {chosen[0]: by_sentence[chosen[0]]}
        else:
            named = "・".join(dict.fromkeys(n for names in by_sentence.values() for n in names))
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"集計の単位（{named}）が別々の文に書かれています。"
                    "同じものを指すなら、どちらか一方の書き方にそろえてください",
                    source=named,
                )
            )
    for names in by_sentence.values():
        groups.extend(names)
    for keyed in _GROUP_KEYED_BY.finditer(text):
        worded, key = _clean(keyed.group("said")), _clean(keyed.group("key"))
        # 「買受人ごとに足す…買受人は買受人コードでまとめて」: the key column (「月は売上日で
        # 集計」 names a grain, not a key: left as it is)
        if worded in groups and worded in key:
            groups = [key if g == worded else g for g in groups]
            reader.use(keyed.start(), keyed.end())
    groups = [  # 「月次の部品別原価、…部品番号 別に」: 部品 restates 部品番号
        g for g in groups if not any(o != g and o.startswith(g) for o in groups)
    ]
    metrics: dict[str, list[str]] = {}
    missing: list[str] = []
    vague: list[tuple[int, int]] = []
    last: tuple[int, str] | None = None
    for match in re.finditer(
        r"\(\s*(?:sum|total|mean|median|nunique|avg|average|count|max|min)\s*\)", text
    ):
        reader.use(match.start(), match.end())  # 「合計(sum)」: the same metric twice
    for match in _METRIC_LIST.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue  # 「客単価の平均・最小・最大」: several metrics of one column
        listed = _names(match.group("col"))
        if len(listed) > 1 and any(n in _METRIC_WORDS for n in listed):
            continue  # 「客数の平均、売上の平均と最大」: a list of metrics, read one by one
        if len(listed) > 1:  # 「売上.csvと原価の…」 names a file, no column
            listed = [n for n in listed if not _names_a_file(reader, n)]
        for measured in listed:  # 「給油量と燃料代の合計・平均」: each metric of each column
            for word in re.findall(_LISTED_METRIC, match.group("ms")):
                metrics.setdefault(measured, []).append(str(_METRIC_WORDS[word]))
        positions.append(match.start())
        reader.use(match.start(), match.end())
    for match in _FIRST_LAST_DATE.finditer(text):
        if reader.overlaps(match.start(), match.end()) or not groups:
            continue  # 「…ごとに最初の教習日と最後の教習日」 (with no group: an order, no total)
        for word, column in ((match["w1"], match["c1"]), (match["w2"], match["c2"])):
            if word and column:
                function = "min" if re.match(r"最初|最古|一番早い|最も早い", word) else "max"
                metrics.setdefault(_clean(column), []).append(function)
        positions.append(match.start())
        reader.use(match.start(), match.end())
    for match in _PREFIX_METRIC.finditer(text):
        measured = _clean(match.group("col"))
        if (
            reader.overlaps(match.start(), match.end())
            or not is_amount_column(measured)
            or measured in ("額", "値", "点")  # 「最高額」「最大値」: one metric word
        ):
            continue  # 「平均仕入価格」「最低・最高の仕入価格」: the metric before its column
        for word in re.findall(r"平均|最大|最小|最高|最低|合計", match.group("ms")):
            metrics.setdefault(measured, []).append(str(_METRIC_WORDS[word]))
        positions.append(match.start())
        reader.use(match.start(), match.end())
    for match in _METRIC.finditer(text):
        if reader.overlaps(match.start("m"), match.end("m")):
            continue
        refused = _NOT_WANTED.match(text, match.end())
        if refused:  # 「税抜金額の合計は不要です」: the metric not wanted
            reader.use(match.start(), refused.end())
            continue
        word = match.group("m")
        glued = match.group("col") and match.group("join") is None and not match.group("cols")
        if glued and (
            _column_named_so(reader, match, groups)
            or f"{_clean(match.group('col'))}{word}"
            in metrics  # 「参加人数の多い順」 after its total
        ):
            continue  # 「見積総額の高い順」「諸掛合計が10万円を超える」: a column named so
        if word == "足し" and (
            not groups
            or not match.group("col")
            or re.search(r"(?:列|欄|カラム|項目)$", _clean(match.group("col")))
        ):
            continue  # 「列を足して」 adds a column; 「顧客ごとに売上足して」 totals 売上
        noun_word = _clean(match.group("col") or "")
        if (
            noun_word in ("人数", "件数", "社数")
            and _METRIC_WORDS[word] in ("sum", "mean", "max", "min")
            and match.group("join") in (None, "を")
        ):  # 「人数合計」: the column 人数 summed
            metrics.setdefault(noun_word, []).append(str(_METRIC_WORDS[word]))
            positions.append(match.start())
            reader.use(match.start(), match.end())
            continue
        if (
            noun_word in _METRIC_WORDS
            and _METRIC_WORDS[noun_word] == "count"
            and _METRIC_WORDS[word] in (None, "count")
        ):
            metrics.setdefault(COUNT_ALL, []).append(
                "count"
            )  # 「件数集計」 (「人数合計」 sums 人数)
            positions.append(match.start())
            reader.use(match.start(), match.end())
            continue
        if noun_word in _METRIC_WORDS and last is not None and _METRIC_WORDS[noun_word]:
            # 「単価 の 最小 最大 平均」: a metric word read as the column is one more metric
            metrics.setdefault(last[1], []).append(str(_METRIC_WORDS[noun_word]))
            last = (match.start("m"), last[1])
        metric = _METRIC_WORDS[word]
        if match.group("cols") and metric not in (None, "count"):
            # 「数量と金額を合計」: each listed column gets the metric
            listed = [n for n in _names(match.group("cols")) if not _names_a_file(reader, n)]
            in_formulas = {  # 「利用料 ＝ 人数 × 200 → 人数・利用料を合計」: 人数 is a column
                m.group(0)
                for _, other in reader.steps
                for expression in other.expressions.values()
                for m in re.finditer(NOUN, expression)
            }
            for name in listed:
                if (
                    name not in in_formulas
                    and name not in reader.declared_columns
                    and (
                        (name in _METRIC_WORDS and _METRIC_WORDS[name] == "count")
                        or re.search(r"(?<=.)(?:件数|回数)$", name)
                    )
                ):  # 「件数と金額の合計」「レンタル件数と月額料金の合計」: rows counted
                    metrics.setdefault(COUNT_ALL, []).append("count")
                elif (
                    name in in_formulas
                    or name in reader.declared_columns
                    or name not in _METRIC_WORDS
                ):
                    metrics.setdefault(name, []).append(str(metric))
            listed = [
                n
                for n in listed
                if n in in_formulas
                or n in reader.declared_columns
                or (n not in _METRIC_WORDS and not re.search(r"(?<=.)(?:件数|回数)$", n))
            ]
            if listed:
                last = (match.end(), listed[-1])
                positions.append(match.start())
                reader.use(match.start(), match.end())
                continue
        noun = match.group("col")
        column = _clean(noun) if noun and _clean(noun) not in _METRIC_WORDS else None
        if column in _WHOLE:
            column = None  # 「全体の合計」: of the whole table, the column said elsewhere
        if match.group("join") == "で" and column and not is_amount_column(column):
            column = None  # 「部署で合計」 is no column to total (「支給額 で合計」 is)
        if column is not None and (_names_a_file(reader, column) or column in groups):
            column = None
        if (
            column is None
            and last is not None
            and re.fullmatch(
                r"\s*(?:\(\s*[a-z]+\s*\))?\s*(?:と|・|、|や|及び|および|/|／|,)?\s*"
                r"(?:それから|あと)?\s*",
                text[last[0] : match.start("m")],
            )
        ):
            column = last[1]  # 「金額の合計と平均」: the metrics of one column
        if (
            metric == "count"
            and not groups
            and re.fullmatch(
                r"[^\s、。]*(?:人数|者数|回数)", text[match.start() : match.end("m")].strip()
            )
            and _SORT.match(text, match.start())
        ):
            continue  # 「人数 の多い順に並べ」「打合せ回数の多い順」, no group: a column sorted
        if metric == "count":  # 「申込件数」「金額の合計と件数」: rows; 「番号を数え」: the column
            column = (
                column
                if column
                and column not in ("件", "全体")
                and word not in ("人数", "社数", "件数", "回数", "者数")
                else None
            )
            metrics.setdefault(COUNT_ALL if column is None else column, []).append("count")
        elif metric is None or column is None:
            if (
                (metric is None and metrics)
                or _SORT.match(text, match.start("m"))
                or any(metric in wanted for wanted in metrics.values())
            ):  # 「集計」 of metrics read, 「合計の大きい順」, 「合計1行だけ」: said again
                reader.use(match.start("m"), match.end("m"))
                continue
            if metric is None and column and (is_amount_column(column) or _MEASURE.search(column)):
                metrics.setdefault(column, []).append("sum")  # 「発注金額を集計」: its total
                last = (match.end(), column)
                positions.append(match.start())
                reader.use(match.start(), match.end())
                continue
            if metric is None:  # 「集計」 alone (a title, 「集計対象は…」): decided at the end
                vague.append((match.start("m"), match.end("m")))
                continue
            topics = _topic_columns(reader, match.start("m"))
            sole = _sole_amount_column(reader)
            topics = topics or ([sole] if sole else [])
            if not topics:
                missing.append(f"metrics:{metric}")
            for topic in topics:
                metrics.setdefault(topic, []).append(metric)
                last = (match.end(), topic)
        else:
            metrics.setdefault(column, []).append(metric)
            last = (match.end(), column)
        positions.append(match.start())
        reader.use(match.start() if noun and column else match.start("m"), match.end())
    counting = re.search(r"何(?:件|人|名|社)(?!も)|数え|カウント", text)
    if (
        counting
        and (groups or metrics or counting.group(0).startswith("何"))
        and COUNT_ALL not in metrics
        and not reader.is_used(counting.start(), counting.end())
    ):
        metrics[COUNT_ALL] = ["count"]  # 「事業所ごとに数えて」「全部で何件」: rows (per group)
        reader.use(counting.start(), counting.end())
        positions.append(counting.start())
    for match in _ONLY_FIGURES.finditer(text):
        reader.use(match.start(), match.end())  # 「合計だけ」「何件あるかだけ」: only the figure
    if vague and metrics:
        for start, end in vague:
            reader.use(start, end)
    elif vague:
        missing.append("metrics:sum")
        positions.append(vague[0][0])
    measured_first = _TOPIC_MEASURED.search(text)
    if (
        measured_first
        and not re.fullmatch(  # 「営業部の交通費、…」 is a qualified topic: asked
            r"(?:[^、。\s]*\.(?:csv|xlsx|xlsm|xls)\s*の)?\s*",
            text[_clause_span(text, *measured_first.span("col"))[0] : measured_first.start("col")],
        )
    ):
        measured_first = None
    if measured_first and any(m.startswith("metrics:") for m in missing) and not metrics:
        measured = _clean(measured_first.group("col"))
        if is_amount_column(measured) or _MEASURE.search(measured) or measured.endswith("費"):
            function = _METRIC_WORDS.get(measured_first.group("m")) or "sum"
            metrics[measured] = [str(function)]
            groups = [g for g in groups if g != measured]
            missing = [m for m in missing if not m.startswith("metrics")]
            positions.append(measured_first.start())
            reader.use(measured_first.start("col"), measured_first.end("col"))
    computed = [
        name for _, step in reader.steps if step.kind == "compute" for name in step.expressions
    ]
    summed_back = _SUMMED_BACK.search(text)
    if computed and summed_back and not any(m for m in metrics if m != COUNT_ALL):
        metrics[computed[-1]] = ["sum"]  # 「金額を出して、それを買受人ごとに足す」: the new column
        missing = [m for m in missing if not m.startswith("metrics")]
        positions.append(summed_back.start())
        reader.use(summed_back.start("verb"), summed_back.end())
    missing = [  # 「物件ごとの平均作業時間…作業時間の平均」: the metric said twice, read once
        m
        for m in missing
        if not (m.startswith("metrics:") and any(m[8:] in wanted for wanted in metrics.values()))
    ]
    if not metrics and not missing and not groups:
        return
    if not metrics and not missing:
        missing.append("metrics:any")
    named_count = _COUNT_NAME.search(text) if COUNT_ALL in metrics else None
    step = StepSpec(
        id="",
        kind="aggregate",
        count_name=_clean(named_count.group("name")) if named_count else None,
        group_by=list(dict.fromkeys(groups)),
        metrics={k: list(dict.fromkeys(v)) for k, v in metrics.items()},  # type: ignore[arg-type]
        missing=list(dict.fromkeys(missing)),
        source=text[min(positions) : min(positions) + 40] if positions else "",
    )
    reader.add_step(min(positions) if positions else 0, step)


_GROUP_KEYED_BY = re.compile(
    rf"(?P<said>{NOUN})\s*は\s*(?P<key>{QNOUN})\s*で\s*(?:まとめ|集計|グループ化|区切|分け)"
)
"""「買受人は買受人コードでまとめてください」: the column a grouping said in words is keyed by."""
_LISTED_METRIC = (
    r"(?:平均値|平均点|平均|中央値|ユニーク数|最大値|最大額|最大|最小値|最小額|最小|最高点|最高額|最高値|最高"
    r"|最低点|最低額|最低|最安値|最安|合計|max|min|sum|mean|median|average)"
)
_METRIC_LIST = re.compile(
    rf"(?<![と・、{_K}{_KATA}A-Za-z])\s*(?P<col>{QNOUN}(?:\s*(?:と|・|、)\s*{QNOUN}){{0,5}})\s*の\s*(?P<ms>{_LISTED_METRIC}"
    rf"(?:\s*(?:・|、|と|/)\s*{_LISTED_METRIC}){{1,4}})(?![値点額])"
)
_TOPIC_MEASURED = re.compile(
    rf"(?P<col>{NOUN})\s*[、,]\s*[^。]{{0,24}}?(?P<m>合計|総額|総計|平均|最大|最小)"
)
"""「請求額、居室タイプ別に合計して」「交通費、総額だけ」: the measured column said first, as a
topic, then how it is totalled."""
_SUMMED_BACK = re.compile(
    r"(?:それ|これ|その結果|その金額)\s*を\s*[^、。]{0,16}?(?:ごと|別|毎)\s*に\s*"
    r"(?P<verb>足|合計|合算|集計|足し上げ)"
)
"""「…をかけて金額を出して、それを買受人ごとに足す」: the column just computed, totalled."""
_FIRST_LAST = r"最初|最後|最古|最新|一番早い|一番遅い|最も早い|最も遅い"
_FIRST_LAST_DATE = re.compile(
    rf"(?P<w1>{_FIRST_LAST})\s*の\s*(?P<c1>{NOUN}(?:日|日付|日時))"
    rf"(?:\s*(?:と|、|・)\s*(?P<w2>{_FIRST_LAST})\s*の\s*(?P<c2>{NOUN}(?:日|日付|日時)))?"
)
"""「教習生番号ごとに最初の教習日と最後の教習日」: per group, a date's earliest and latest."""
_PREFIX_METRIC = re.compile(
    r"(?P<ms>(?:平均|最大|最小|最高|最低)(?:\s*(?:・|と|、)\s*(?:平均|最大|最小|最高|最低)){0,4})"
    rf"\s*(?:の)?\s*(?P<col>{NOUN})"
)


def _column_named_so(reader: _Reader, match: re.Match[str], groups: list[str]) -> bool:
    """True when a noun glued to a metric word (見積総額, 諸掛合計) is itself a column: a
    column another step names (computed, compared), or the key of an order with no
    grouping said (a total of the whole table has no order)."""
    name = _clean(match.group(0))
    named = {n for _, step in reader.steps for n in _parameter_names(step)}
    if name in named:
        return True
    ordered = re.compile(r"\s*(?:の|が)\s*(?:高い|大きい|多い|少ない|低い|小さい|安い)\s*順")
    return not groups and bool(ordered.match(reader.text, match.end()))


_MEASURE = re.compile(
    r"(?<=.)(?:数量|(?<![件人回者社])数|量|時間|点数|日数|重量|距離|面積|容量|kg)$"
)
"""Nouns that name a quantity column (処方数量, 稼働時間): 「…を集計」 totals them."""
_WHOLE = frozenset({"全体", "全部", "すべて", "全て", "総", "トータル"})
_ONLY_FIGURES = re.compile(
    r"(?:合計|総合計|総額|合計額|総計|平均|件数|人数|最大|最小|何(?:件|人|名|社)[ぁ-ん]{0,6}|いくら[ぁ-ん]{0,8})"
    r"\s*(?:だけ|のみ)"
)
_TOPIC = re.compile(
    rf"(?P<cols>{NOUN}(?:\s*(?:と|・|、)\s*{NOUN}){{0,9}})\s*(?P<mark>列|欄)?\s*(?:、|は|について|を)"
)


def _topic_columns(reader: _Reader, before: int) -> list[str]:
    """The columns a bare metric totals when the sentence names them first as its topic:
    「交通費精算.csv の交通費、全部でいくらになるか合計だけ」「amount 列、全部足した合計」
    「支払金額 と 源泉税額 について、全体の合計」 (amount nouns or nouns called columns,
    not used by another rule)."""
    sentence_start = reader.text.rfind("。", 0, before) + 1
    found: tuple[re.Match[str], list[str]] | None = None
    for match in _TOPIC.finditer(reader.text, sentence_start, before):
        nouns = [n for n in _names(match.group("cols")) if not _names_a_file(reader, n)]
        if (
            not nouns
            or reader.overlaps(match.start("cols"), match.end("cols"))
            or any(n in GENERIC_NOUNS or n in _METRIC_WORDS for n in nouns)
            or not (match.group("mark") or all(is_amount_column(n) for n in nouns))
        ):
            continue
        found = (match, nouns)
    if found is None:
        return []
    reader.use(found[0].start("cols"), found[0].end("cols"))
    return found[1]


def _sole_amount_column(reader: _Reader) -> str | None:
    """The one amount column the other steps name (compared with a number, made numeric,
    computed): 「売上額 10万以下は除いて、顧客名 ごとの合計」 totals 売上額."""
    names: set[str] = set()
    for _, step in reader.steps:
        names.update(
            str(c.column)
            for c in step.conditions
            if c.column
            and isinstance(c.value, int | float)
            and not isinstance(c.value, bool)
            and is_amount_column(c.column)  # 「年齢が3歳以上」: compared, but no amount to total
        )
        if step.kind == "normalize":
            names.update(c for c in step.columns if is_amount_column(c))
        names.update(step.expressions)
    return names.pop() if len(names) == 1 else None


_WORDS_OF_JUN = re.compile(r".*(?:手|語|筆|打|道|席)\s*順")
"""Words that end in 順 and name no order of rows (「■手順」「語順」)."""


def _read_sort(reader: _Reader) -> None:
    for match in _SORT.finditer(reader.text):
        if reader.is_used(match.start(), match.end()):
            continue
        if match.group("col5") and _WORDS_OF_JUN.fullmatch(match.group(0).strip()):
            reader.use(match.start(), match.end())  # 「手順:」 heads the steps
            continue
        noun = (
            match.group("col")
            or match.group("col2")
            or match.group("col4")
            or match.group("col5")
            or match.group("col7")
            or match.group("col8")
            or match.group("col10")
            or match.group("col11")
            or match.group("col12")
        )
        word = (
            match.group("dir")
            or match.group("dir2")
            or match.group("dir3")
            or match.group("dir4")
            or match.group("dir5")
            or match.group("dir6")
            or (match.group("dir6b") or "").removesuffix("順")
            or match.group("dir7")
            or match.group("dir8")
            or match.group("dir9")
            or match.group("dir11")
            or match.group("dir12")
            or match.group("dir13")
            or "昇順"  # 「申請者順に並べる」
        )
        descending = word.lower() in (
            "大きい",
            "多い",
            "高い",
            "長い",
            "重い",
            "降順",
            "新しい",
            "遅い",
            "遠い",
            "desc",
            "descending",
        ) or bool(re.fullmatch(r"(?:新|大)\S*\s*(?:→|⇒|->)\s*\S+", word))  # 「(新→古)」
        by = [_clean(noun)] if noun else []
        owner = (
            re.search(rf"(?P<owner>{NOUN})\s*の\s*$", reader.text[: match.start()])
            if noun and _clean(noun) in _METRIC_WORDS and _METRIC_WORDS[_clean(noun)]
            else None
        )
        if owner and noun:  # 「月額料金の合計が大きい順」: the total of 月額料金
            function = _METRIC_WORDS[_clean(noun)]
            by = [
                owner.group("owner") if function == "sum" else f"{owner.group('owner')}_{function}"
            ]
        if match.group("cols6"):  # 「拠点→月 の順で」: several keys, the first first
            by = [  # 「…を抽出、バスコース→乗車順 の順で」: the step word is no key
                n
                for n in _names(re.sub(r"\s*(?:→|⇒|>)\s*", "・", match.group("cols6")))
                if n not in STEP_VERBS
            ]
        elif match.group("cols13"):  # 「作業日と物件コードで並べて（どちらも昇順）」
            by = _names(match.group("cols13"))
        elif match.group("col2"):  # 「取扱店・月の昇順」
            by = _names(match.group("col2"))
        step = StepSpec(id="", kind="sort", by=by, descending=descending, source=match.group(0))
        if not by:
            step.missing.append("by")
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())


_SAME_KEY = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の組み合わせ|の組合せ|の\s*(?:\d|[二三四五])\s*つ)?\s*が\s*"
    r"(?:両方|ともに|どちらも|いずれも)?\s*(?:同じ|重複|ダブ|だぶ|二重|かぶ|被)"
    rf"|(?P<cols2>{QNOUN})\s*(?:かぶ|ダブ|だぶ)(?:って|った|る)"
    rf"|同じ\s*(?P<col>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,9}})\s*(?:の)?\s*(?:行|データ|レコード)?\s*が\s*(?:複数|\d+\s*行以上|何行も|いくつも|2つ以上|重複)"
)
_KEEP_ONE = re.compile(
    r"(?:1|一)\s*(?:件|行|人|つ|回)\s*(?:に|として|だけ)|(?P<which>先頭|最初|先に出てくる|先に出る|上|一番上|いちばん上|古い|最後|後ろ|一番下|いちばん下|最新|新しい|後に出てくる)"
    r"[^。]{0,16}?残|(?:消|除|削除|落と|まとめ)"
)
"""After rows said to share a key: which one to keep (先頭の1件だけ残して) or that the
others go (消して, 除いて)."""


def _read_same_key(reader: _Reader) -> bool:
    """「会員番号が同じ行は先頭の1件だけ残して」「取引先コード がダブっている行は…消し」
    「同じ伝票番号が複数行あったら、最後の行を…残して」: a dedupe said by its rows."""
    text = reader.text
    for match in _SAME_KEY.finditer(text):
        sentence_end = text.find("。", match.end())
        sentence_end = len(text) if sentence_end < 0 else sentence_end
        keep = _KEEP_ONE.search(text, match.end(), sentence_end)
        if keep is None:
            continue
        listed = match.group("cols") or match.group("cols2") or match.group("col")
        keys = [k for k in _names(listed) if not _names_a_file(reader, k)]
        if not keys:
            continue
        if all(_WHOLE_ROW.fullmatch(k) for k in keys):
            keys = []  # 「重複行（全列が同じ）」: whole rows, no key column
        step = StepSpec(id="", kind="dedupe", keys=keys, source=text[match.start() : keep.end()])
        step.loose_match = _loosely_equal(reader, match.start())
        which = keep.group("which")
        kept = _KEPT.search(text)
        if which and re.match(r"最後|後ろ|一番下|いちばん下|最新|新しい|後に", which):
            step.keep = "last"
        elif kept:  # 「…行消して。最初の行残しでOK」
            step.keep = (
                "last"
                if re.search(r"最後|後ろ|最新|下|後に出|あとに出", kept.group(1))
                else "first"
            )
            reader.use(kept.start(), kept.end())
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())
        reader.use(keep.start(), keep.end())
        _use_rows_word(reader, match.end())
        return True
    return False


def _use_rows_word(reader: _Reader, end: int) -> None:
    """「電話番号が同じお客様は」: the rows' own word after a shared key names no column."""
    rows = re.compile(rf"\s*[おご]?(?:{NOUN})\s*(?=は|が|を|の|も)").match(reader.text, end)
    if rows:
        reader.use(rows.start(), rows.end())


def _points_back(text: str, end: int) -> bool:
    """True when the words before ``end`` point back at columns just named (その2列, 両方の列)."""
    return bool(
        re.search(
            r"(?:その\s*(?:\d+|二|両|2つ|二つ)\s*(?:列|項目|つ)|その両方|両方の\s*列|それらの\s*列)"
            r"\s*(?:で|を|の)?\s*$",
            text[max(0, end - 16) : end],
        )
    )


def _outside_file_names(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """The matches of ``pattern`` that do not start inside a file's name: the step words of
    「CSV（顧客リスト_重複除去.csv）」「仕入先一覧_正規化.xlsx」 ask for no step."""
    files = [m.span() for m in _FILE_NAME.finditer(text)]
    return [
        m
        for m in pattern.finditer(text)
        if not any(start <= m.start() < end for start, end in files)
    ]


def _read_dedupe(reader: _Reader) -> None:
    keyed = _outside_file_names(_DEDUPE_KEYED, reader.text) or _outside_file_names(
        _SAME_ROWS, reader.text
    )
    unkeyed = _outside_file_names(_DEDUPE, reader.text)
    if not keyed and not unkeyed and _read_same_key(reader):
        return
    for match in keyed or unkeyed:
        denied = re.match(
            r"[ぁ-ん]{0,3}?(?:ずに|ないで|なくて|ません|ない)", reader.text[match.end() :]
        )
        if denied:  # 「品番で重複を除かずに」: the duplicates stay
            reader.use(match.start(), match.end() + denied.end())
            continue
        keys = (
            [
                k
                for k in _names(match.group("cols"))
                if not _names_a_file(reader, k) and not _ROW_WORD.fullmatch(k)
            ]
            if keyed
            else []
        )  # 「受注データの重複除去をお願いします」: the file, no key; 「行の重複」: no key either
        if not keys:
            before = reader.text[max(0, match.start() - 30) : match.start() + 1]
            key = re.search(
                rf"(?P<keys>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:をキーに|をキーとして|で|が同じ)\s*$",
                before,
            )
            if key:
                keys = _names(key.group("keys"))
                reader.use(match.start() - (len(before) - key.start()) + 1, match.start())
        if _points_back(reader.text, match.start() + (len(match.group("cols")) if keyed else 0)):
            # 「氏名カナと生年月日を正規化してから、その2列で重複を削除」: the columns just named
            previous = [
                (position, step)
                for position, step in reader.steps
                if step.columns and position < match.start()
            ]
            keys = list(max(previous, key=lambda item: item[0])[1].columns) if previous else keys
        keys = keys or _keys_said_elsewhere(reader, match.start())
        per = _DEDUPE_PER.search(
            reader.text, reader.text.rfind("。", 0, match.start()) + 1, match.start()
        )
        if per and (not keys or all(k in _MANNER_NOUNS for k in keys)):
            keys = _names(per.group("cols"))  # 「会員番号ごとに最後の行を残す形で重複を削除」
            reader.use(per.start(), per.end())
        if keys and all(_WHOLE_ROW.fullmatch(k) for k in keys):
            keys = []  # 「重複行（全列が同じ）」: whole rows, no key column
        step = StepSpec(id="", kind="dedupe", keys=keys, source=match.group(0))
        step.duplicates_listed = _duplicates_listed(reader, match)
        step.loose_match = _loosely_equal(reader, match.start())
        _read_kept_row(reader, step)
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())


_LOOSE = re.compile(
    r"(?:全角|半角|大文字|小文字|表記|スペース|空白)[^。]{0,24}?"
    r"(?:同じ|区別しない|区別せず|無視|問わない|同一|一緒)(?:と|として)?\s*(?:みな|扱|見な)?[ぁ-ん]{0,6}"
)
"""「全角半角の違いは同じとみなす」「大文字小文字は区別しない」: loosely equal keys."""


def _loosely_equal(reader: _Reader, at: int) -> bool:
    """True when the sentence of a dedupe says keys differing only in how they are written
    are the same (the block's ``normalize``)."""
    start = reader.text.rfind("。", 0, at) + 1
    end = reader.text.find("。", at)
    said = _LOOSE.search(reader.text, start, len(reader.text) if end < 0 else end)
    if said:
        reader.use(said.start(), said.end())
    return said is not None


_WHOLE_ROW = re.compile(r"全列|全て?の列|すべての列|全項目|全カラム|全部")
"""Words for every column (「全列が同じ」): the whole row is the key."""
_DUPLICATES_LISTED = re.compile(
    r"重複(?:している|した|する)?\s*(?:行|もの|データ|明細|レコード|分)\s*(?:を|の|だけ)?\s*"
    r"(?:一覧|リスト|抽出|洗い出|出して|出力|見せ|確認|表示)"
)
"""「重複している行を一覧で出して」: the repeated rows are what is asked for."""


def _duplicates_listed(reader: _Reader, match: re.Match[str]) -> bool:
    """True when the sentence asks for the repeated rows (a check), not the table without
    them: 「重複をチェックして、重複している行を一覧で」 (「重複を削除」 removes them)."""
    start = reader.text.rfind("。", 0, match.start()) + 1
    end = reader.text.find("。", match.end())
    sentence = reader.text[start : len(reader.text) if end < 0 else end]
    if re.search(r"削除|除去|除い|除く|除外|取り除|消し|消す|まとめ|1行に|一行に|省", sentence):
        return False
    listed = _DUPLICATES_LISTED.search(sentence)
    if listed:
        reader.use(start + listed.start(), start + listed.end())
    checked = "verb" in match.re.groupindex and match.group("verb") == "チェック"
    return bool(listed) or checked  # 「重複をチェックして」: a check shows what repeats


_DEDUPE_PER = re.compile(rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,9}})\s*(?:ごと|毎)\s*に")
_MANNER_NOUNS = frozenset({"形", "感じ", "方法", "やり方", "形式", "方向", "方針"})
"""Nouns saying how something is done (「最後の行を残す形で」), never a key."""


def _said_keys(reader: _Reader, said: re.Match[str]) -> list[str]:
    reader.use(said.start(), said.end())
    listed = _names(said.group("cols") or said.group("cols2") or said.group("col"))
    return [k for k in listed if not _names_a_file(reader, k)]


def _keys_said_elsewhere(reader: _Reader, start: int) -> list[str]:
    """The keys of a dedupe word that names none (「重複を除いて」), said by the rows that
    share them: in its sentence, then in another sentence with the row kept, then as
    「取引先コードがダブって」, then as 「同じ伝票番号」."""
    text = reader.text
    sentence_start = text.rfind("。", 0, start) + 1
    said = _SAME_KEY.search(text, sentence_start, start)
    if said:  # 「申請番号が同じ行は最初の1件だけ残すかたちで重複を除いて」
        return _said_keys(reader, said)
    for said in _SAME_KEY.finditer(text):
        sentence_end = text.find("。", said.end()) % (len(text) + 1)
        if _KEEP_ONE.search(text, said.end(), sentence_end):
            _use_rows_word(reader, said.end())  # 「…の重複を消したいです。電話番号が同じ人は…」
            return _said_keys(reader, said)
    doubled = _DOUBLED.search(text)
    if doubled:
        reader.use(doubled.start(), doubled.end())
        return _names(doubled.group("cols"))
    same = list(re.finditer(rf"同じ\s*(?P<col>{NOUN})", text))
    for m in same:
        reader.use(m.start(), m.end())
    return list(dict.fromkeys(_clean(m.group("col")) for m in same))


_KEPT_BY_COLUMN = re.compile(
    rf"(?:(?P<high>最新|最も新しい|一番新しい|新しい|最大|一番大きい|大きい|最多|多い|最後)\s*の?"
    rf"|(?P<low>最古|最も古い|一番古い|古い|最小|一番小さい|小さい|少ない|最初)\s*の?)\s*"
    rf"(?P<col>{NOUN})\s*(?:の\s*(?:行|もの|データ|方|ほう))?\s*(?:だけ|のみ)?\s*を?\s*残"
    rf"|(?P<col2>{NOUN})\s*が\s*(?:最も|もっとも|一番|いちばん)?\s*"
    r"(?:(?P<high2>新しい|大きい|多い|遅い|後の)|(?P<low2>古い|小さい|少ない|早い|前の))"
    r"\s*(?:方|ほう|もの|行)\s*(?:だけ|のみ)?\s*を?\s*残"
)
"""「最新の接種日を残す」「金額が大きい方を残す」: the row kept is chosen by a column."""


def _kept_by_column(reader: _Reader, step: StepSpec) -> bool:
    """A dedupe whose kept row is chosen by a column: the rows are ordered by it first
    (``step.by``, ascending) and the last (newest, largest) or first row is kept."""
    for said in _KEPT_BY_COLUMN.finditer(reader.text):
        column = _clean(said.group("col") or said.group("col2"))
        if _ROW_WORD.fullmatch(column) or column in ("行", "方", "ほう") or column[0].isdigit():
            continue  # 「最初の1件だけ残す」: how many rows, no column
        step.by = [column]
        step.keep = "last" if said.group("high") or said.group("high2") else "first"
        reader.use(said.start(), said.end())
        return True
    return False


def _read_kept_row(reader: _Reader, step: StepSpec) -> None:
    """Which row of a key a dedupe keeps: 最後の行を残す, 最初の行残しでOK, 後から登録された行,
    最新の接種日を残す (by that column)."""
    if _kept_by_column(reader, step):
        return
    keep_last = re.search(
        r"(?:最後|後ろ|最新|新しい(?:方|ほう)?|一番下|いちばん下|(?<![前以今直午最])後(?:の(?:方|ほう))?"
        r"|(?<![前以今直午最])後に[^\s、。]{0,8}?た)の?(?:\(最新\))?の?(?:行|もの|データ|方|ほう)?"
        r"(?:\(最新\))?(?:だけ|のみ)?を?残[しすさせっ]?|残すのは(?:最後|後ろ|最新|新しい(?:方|ほう)?)",
        reader.text,
    )
    kept = _KEPT.search(reader.text)
    if keep_last:
        step.keep = "last"
        reader.use(keep_last.start(), keep_last.end())
    elif kept:  # 「最初の行残しでOK」「最後のカウントを採用」「一番最後の応募を残す」
        step.keep = (
            "last"
            if re.match(
                r"[^先最初上]*(?:最後|後ろ|最新|下|後から|あとから|後に出|あとに出)", kept.group(1)
            )
            else "first"
        )
        reader.use(kept.start(), kept.end())


_KEPT = re.compile(
    r"((?:一番|いちばん)?(?:最初|先頭|先に出てくる|後に出てくる|あとに出てくる|後から出てくる|最後|後ろ|最新"
    # (「上位10分類を残す」 keeps the first rows of a sort, read there; 「6歳以上12歳以下の子だけ
    # を残し」 is a condition)
    r"|(?<!以)下(?!位)|(?<!以)上(?!位))"
    r"|(?:後から|あとから|先に|前に)[^\s、。()「」]{0,8}?(?:され|し)た)\s*(?:\([^()]*\))?\s*の?\s*[^\s、。()「」]{0,10}?"
    r"\s*(?:\([^()]*\))?\s*(?:だけ|のみ)?\s*を?\s*(?:残[しすさせ]?|採用)"
)
_EXPLICIT_KEY = re.compile(
    rf"キー\s*(?:は|を|:|=|として)\s*(?P<keys>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}(?![A-Za-z0-9_{_K}{_KATA}])(?!\s*(?:は|が|を|で)(?!\d))){{0,19}})"
)
"""「キーは 請求番号」: the key list ends before a new topic (「、金額は 入金額」)."""


_KEY_PHRASE = re.compile(
    rf"(?P<keys>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,9}})\s*(?:を\s*キー\s*(?:に|として)|が\s*共通)"
)
"""「作業番号をキーにして金額で照合」「案件番号が共通なのでそれで結合」: the key said outright."""


def _keys_near(reader: _Reader, start: int, end: int, *, later: bool = True) -> list[str]:
    """The keys said with a join or reconciliation (``later``: also in a clause after it,
    as 「…の消込チェックを。取引先コードでひも付けて」 says)."""
    sentence = _sentence_span(reader.text, start, end)
    phrase = _KEY_PHRASE.search(reader.text, *sentence)
    if phrase and not reader.overlaps(*phrase.span("keys")):
        reader.use(*phrase.span())
        return [k for k in _names(phrase.group("keys")) if not _names_a_file(reader, k)]
    explicit = _EXPLICIT_KEY.search(reader.text)
    if explicit:
        keys = _names(explicit.group("keys"))
        if len(keys) > 1 and re.match(
            r"\s*の?\s*(?:差|差額|ずれ|ズレ|誤差)", reader.text[explicit.end("keys") :]
        ):  # 「キーは送り状番号、運賃の差は100円まで」: 運賃 begins the next setting
            dropped = explicit.start("keys") + explicit.group("keys").rfind(keys[-1])
            keys = keys[:-1]
            reader.use(explicit.start(), dropped)
        else:
            reader.use(explicit.start(), explicit.end())
        return keys
    offset = max(0, start - 40)
    while offset > 0 and re.match(_NAME_CHAR, reader.text[offset - 1]):
        offset -= 1  # never start inside a word (「チェック」 is no key 「ック」)
    window = reader.text[offset : end + 30]
    nearest = sorted(
        _KEY.finditer(window), key=lambda m: abs(offset + m.end() - start)
    )  # 「…チェックです。A.csv と B.xlsx を 発注番号 で照合」: the key said with the verb
    for match in nearest:
        if (
            not later
            and offset + match.start() >= end
            and re.search(r"[、。,]", reader.text[end : offset + match.start()])
        ):
            continue  # 「…を結合して、車台番号で重複を消して」: the key of another step
        keys = [
            k
            for k in _names(match.group("keys"))
            if not _names_a_file(reader, k)
            and not _GENERIC.search(k)
            and k not in STEP_VERBS
            and k not in _GLUE_ACTIONS
        ]
        if keys and not re.fullmatch(r"\d+", keys[0]):
            reader.use(offset + match.start(), offset + match.end())
            return keys
    return []


_BROUGHT = re.compile(
    rf"(?<![=÷×*/+−\-A-Za-z0-9_{_K}{_KATA}])(?<![=÷×*/+−\-]\s)(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})\s*(?:の\s*(?:情報|データ|項目|列))?\s*を\s*"
    rf"(?:{QNOUN}\s*(?:で|をキーに)\s*)?"
    r"(?:横に|右に|隣に|列として)?\s*(?:付け|付与|追加|持って[くき]|引いて[くき]|くっつけ|引っ張|取得)"
)
"""The master's columns a join brings (「業者名と振込口座を横に付けて」「口座の情報を付け」)."""


_SOURCE_ITEM = rf"(?:\d{{4}}\s*年度?|\d{{1,2}}\s*月分?|{NOUN})"
_SOURCE_ITEMS = (
    rf"(?P<items>{_SOURCE_ITEM}(?:\s*(?:・|と|、|,|及び|および)\s*{_SOURCE_ITEM}){{1,11}})"
)
_SOURCES_BEFORE = re.compile(
    rf"{_SOURCE_ITEMS}\s*(?:から来た|から届いた|から受け取った|分の|の)\s*(?P<kind>{NOUN})?"
    r"\s*(?:\([^()]{0,12})?$"
)
_SOURCES_AFTER = re.compile(rf"^\s*\(\s*{_SOURCE_ITEMS}\s*\)")
_SOURCES_INSIDE = re.compile(
    rf"(?P<kind>{NOUN})\s*\(\s*{_SOURCE_ITEMS}\s*(?:の\s*)?(?:\d+\s*(?:ファイル|つ))?\s*"
    r"(?:[、,]\s*(?:いずれも|どれも|すべて|全て|どちらも))?\s*$"
)
"""「各店のPOSデータ（本店・駅前店・モール店の3ファイル、いずれもCSV）」."""
_FILE_COUNT = re.compile(
    r"(?P<n>\d+)\s*(?:ファイル|社分|店舗分|店分|拠点分|部署分|か月分|ヶ月分|カ月分|年度分|年分)"
)
_FILES_GATHERED = re.compile(
    rf"(?<=\.csv|xlsx|xlsm|\.xls)[」)]?\s*(?:の\s*(?:{NOUN}|\d\s*(?:つ|本|ファイル))\s*)?"
    r"(?:\([^()]{0,20}\)\s*)?を\s*(?:まとめ|合わせ|一緒にし|一つにし|ひとつにし|つなげ|繋げ|つない|繋い|合体|くっつけ)",
    re.I,
)
"""「本館_売上.csv と 別館_売上.csv をまとめて」: the files themselves gathered."""
_ALL_GATHERED = re.compile(
    r"(?:両方|全部|すべて|全て|それら|これら|\d\s*(?:つ|本|ファイル))\s*を?\s*"
    r"(?:まとめ|合わせ|一緒にし|一つにし|ひとつにし|1つにし)"
)
"""「両方をまとめて」「3つを1つにして」 said of files of one format and no master."""


def _enumerated_inputs(reader: _Reader) -> None:
    """「新宿店・渋谷店・池袋店から来た販売日報CSV」, 「社員名簿CSV（本社分と子会社分）」,
    「2023年度と2024年度の受注案件一覧（どちらもExcel）」: one file of each, unnamed. Read
    only before stacking, and only when a stated file count (「3ファイル」) agrees."""
    if len(reader.inputs) != 1 or _FILE_NAME.fullmatch(reader.inputs[0].source):
        return
    text = reader.text
    (item,) = reader.inputs
    start = reader.input_positions[item.id]
    fmt_end = start + len(item.source)
    fmt = re.search(rf"(?:{_FORMAT_WORD})(?:ファイル|ブック|データ)?$", item.source)
    fmt_start = fmt_end - (len(fmt.group(0)) if fmt else 0)
    clause_start = max(text.rfind(mark, 0, start) for mark in ("。", "\n", "!", "?")) + 1
    clause_start = max([clause_start, *(m.end() for m in re.finditer(r"[①-⑳]", text[:start]))])
    before = _SOURCES_BEFORE.search(text, clause_start, fmt_start) or _SOURCES_INSIDE.search(
        text, clause_start, fmt_start
    )
    after = _SOURCES_AFTER.match(text[fmt_end:])
    found = before or after
    if not found:
        return
    items = [name for name in re.split(r"\s*(?:・|と|、|,|及び|および)\s*", found["items"]) if name]
    stated = _FILE_COUNT.search(text, clause_start, text.find("。", fmt_end) % (len(text) + 1))
    if len(items) < 2 or (stated and int(stated["n"]) != len(items)):
        return
    kind = (before["kind"] if before and before["kind"] else "") or item.holds
    if kind in ("CSV", "Excel") or _GENERIC.fullmatch(kind):
        kind = ""
    reader.inputs = [
        InputSpec(
            id=f"in{number}",
            format=item.format,
            holds=f"{name}の{kind}" if kind else name,
            source=name,
        )
        for number, name in enumerate(items, start=1)
    ]
    reader.input_positions = {spec.id: start for spec in reader.inputs}
    prefix = re.search(rf"[A-Za-z0-9{_K}{_KATA}・の]*$", text[clause_start : found.start()])
    first = clause_start + (prefix.start() if prefix and before else found.start() - clause_start)
    reader.use(first if before else min(first, start), fmt_end + (after.end() if after else 0))


def _read_task(reader: _Reader) -> None:
    """An accounting job one block does (「入金消込をして」, 「総合振込のファイルを作って」):
    its files (the ones the instruction names take the block's file inputs; one it does
    not name is still asked), its parameters as given, and the words its outputs cover.
    Read after the two-table steps: a reconciliation on keys the instruction names is
    that, and a reconciliation without keys is the task's."""
    text = reader.text
    for task in TASKS:
        named = task.named_in(text)
        if named is None or any(
            step.kind in ("join", "reconcile", "concat")
            and any(not task.names_a_file(key) for key in step.keys)
            for _, step in reader.steps
        ):  # 「通帳.csv と予定表.xlsx を取引先名で照合」: two tables on a key, as said
            continue
        reader.steps = [item for item in reader.steps if item[1].kind != "reconcile"]
        reader.use(named.start(), named.end())
        step = StepSpec(id="", kind="task", block=task.block, source=named.group(0).strip())
        others = list(reader.inputs)
        files = []
        for task_file in task.files:
            read = next((item for item in others if re.search(task_file.words, item.holds)), None)
            mention = next(
                (
                    found
                    for found in re.finditer(task_file.words, text)
                    if found.group(0).strip() and not reader.overlaps(found.start(), found.end())
                ),
                None,
            )
            if read is not None:
                others.remove(read)
                holds, source = read.holds, read.source
            elif mention is not None:
                reader.use(mention.start(), mention.end())
                holds, source = _clean(mention.group(0)), mention.group(0).strip()
            else:
                holds, source = task_file.label, ""
            files.append(InputSpec(id=task_file.port, format="file", holds=holds, source=source))
        reader.inputs = [*files, *others]
        for parameter in task.parameters:
            given = re.search(parameter.pattern, text) if parameter.pattern else None
            if given is None:
                if not parameter.optional:
                    step.missing.append(parameter.port)
                continue
            value = given.group("value")
            step.values[parameter.port] = _date_iso(value) if parameter.kind == "date" else value
            reader.use(given.start(), given.end())
        for covered in re.finditer(task.covers or r"(?!)", text):
            reader.use(covered.start(), covered.end())
        if task.file_output and not any(item.format == "file" for item in reader.outputs):
            reader.outputs.append(OutputSpec(format="file"))  # what the task is for
        if not any(item.format != "file" for item in reader.outputs):
            reader.outputs.append(OutputSpec(format="excel"))  # its tables, one sheet each
        reader.add_step(named.start(), step)
        return


def _task_alone(reader: _Reader, steps: list[StepSpec]) -> None:
    """A task's block makes its own tables; a table step read beside it (a filter, a
    total) would have no table of the instruction's to work on: said, not guessed."""
    task = next((step for step in steps if step.kind == "task"), None)
    if task is None:
        return
    title = step_text(StepSpec(id="", kind="task", block=task.block))
    for step in steps:
        if step.kind not in ("task", "approval"):
            reader.gaps.append(
                Gap(
                    kind="unsupported_action",
                    message=f"「{step.source}」は{title}と一緒には組み立てられません"
                    f"（{title}の結果のファイルを開いて、別の指示で行ってください）",
                    source=step.source,
                )
            )


def _first_unread(reader: _Reader, pattern: re.Pattern[str]) -> re.Match[str] | None:
    """The first mention outside a title (「精算の突合手順」 heads the steps below it) and not
    telling what is done today (「毎月、目視で突き合わせており」)."""
    return next(
        (
            m
            for m in pattern.finditer(reader.text)
            if not reader.is_used(*m.span()) and not _PRACTICE_AFTER.match(reader.text, m.end())
        ),
        None,
    )


_PRACTICE_AFTER = re.compile(
    r"[ぁ-ん]{0,3}?[てで](?:おり|いる|います|いました|いた(?!だ)|おります)"
    r"(?=\s*(?:[、。,]|$|が|けど|けれど|ので|ため))"
)
"""After a step word: what is done today (突き合わせており), not what is asked."""


def _add_join(reader: _Reader, join: re.Match[str]) -> None:
    text = reader.text
    step = StepSpec(id="", kind="join", source=join.group(0))
    step.keys = _keys_near(reader, join.start(), join.end(), later=False)
    sentence_start = text.rfind("。", 0, join.start()) + 1
    sentence_end = text.find("。", join.end())
    brought = _BROUGHT.search(text, sentence_start, len(text) if sentence_end < 0 else sentence_end)
    if brought:  # 「部品区分 を付け」: the master's columns brought over (shown, not checked)
        step.fields = [
            n
            for n in _names(brought.group("cols"))
            if not _names_a_file(reader, n) and not _REFERENCE.match(n)
        ]
        if step.fields:  # 「「請求額」という列を追加」 adds a computed column, no field
            reader.use(brought.start(), brought.end("cols"))
    if not step.keys:
        step.missing.append("keys")
    base = _JOIN_BASE.search(text)
    said = base and _clean(base.group("base") or base.group("target"))
    based = next((item for item in reader.inputs if said in (item.holds, f"{item.holds}側")), None)
    if base and based:  # 「（注文側を基準に左結合）」「顧客名を注文に付けて」
        step.input = based.id
        if base.group("base"):
            reader.use(base.start(), base.end())
    step.keys = [
        k for k in step.keys if not _JOIN_KIND.fullmatch(k)
    ]  # 「キー：申込番号、内部結合」
    outer = re.search(
        r"(?<!左)(?<!右)外部結合|完全外部|full\s*(?:outer\s*)?join|outer\s*join", text, re.I
    )
    if outer:  # the join block keeps the left table's rows (or both tables' matches) only
        reader.refuse(
            "unsupported_action",
            f"「{_clause(text, outer.start(), outer.end())}」: 両方の表の行をすべて残す結合"
            "（完全外部結合）は作れません。片方にしかない行を見たいなら「照合」で、"
            "「〇〇にあって△△にない行」のように書いてください",
            outer,
        )
    inner = _INNER_JOIN.search(text)
    if inner:  # 「内部結合」「両方にあるものだけ」
        step.how = "inner"
        reader.use(inner.start(), inner.end())
    left = re.search(r"左(?:外部)?結合|left\s*join", text, re.I)
    if left:  # 「会員マスタ.xlsxと会費入金.csvを会員番号で左結合」: the first file is the left
        reader.use(left.start(), left.end())
        if step.input is None and reader.inputs:
            step.input = min(reader.inputs, key=lambda i: reader.input_positions[i.id]).id
    reader.add_step(join.start(), step)
    reader.use(join.start(), join.end())


_JOIN_BASE = re.compile(
    rf"(?P<base>{NOUN})\s*(?:側|の方)?\s*(?:を|が)\s*(?:基準|ベース|主|左)\s*(?:に|と|として)?"
    rf"|を\s*(?P<target>{NOUN})\s*(?:側|の方)?\s*に\s*(?:付け|付与|追加|くっつけ|持って)"
)
"""「注文側を基準に」「売上をベースに」「顧客名を注文に付けて」: the table whose rows a join
keeps (its left)."""
_INNER_JOIN = re.compile(
    r"内部結合|inner\s*join|(?:両方|双方)\s*に\s*(?:ある|存在する|あった)\s*(?:もの|行|データ)\s*(?:だけ|のみ)",
    re.I,
)
"""A join that keeps only rows found in both tables."""


def _files_gathered(reader: _Reader, *, master: bool) -> re.Match[str] | None:
    """The files themselves gathered, with no join or reconciliation said (「a.csv と b.csv を
    まとめて」; 「（申込_A社.csv、申込_B社.csv、列は同じ）。両方をまとめて」 of one format)."""
    if len(reader.inputs) < 2:
        return None
    gathered = _FILES_GATHERED.search(reader.text)
    if gathered:
        return gathered
    if len(reader.inputs) >= 3:  # 「a.csv, b.csv, c.csv を結合」: three tables, no key: stacked
        joined = re.search(
            r"(?<=\.csv|xlsx|xlsm|\.xls)[」)]?\s*を\s*(?:結合|連結)(?!\s*キー)", reader.text, re.I
        )
        if joined:
            return joined
    if master or len({item.format for item in reader.inputs}) != 1:
        return None
    return _ALL_GATHERED.search(reader.text)


_LACKS = (
    r"(?:ない|無い|存在しない|見つからない|見つからなかった|載っていない|いない"
    r"|登録(?:されて)?いない)"
)
_JOIN_KIND = re.compile(r"(?:内部|外部|左外部|右外部|完全外部|左|右)?結合|inner|outer|left", re.I)
"""How a join keeps rows (「内部結合」), said beside its key: never a key column."""
_ONE_SIDE = re.compile(
    rf"(?P<has>{NOUN})\s*(?:(?:側|の方)?\s*(?:に|には)\s*"
    r"(?:ある|あって|あるのに|あるが|あるけど|いる|いて|いるのに|いるが|いるけど|載っていて|載っているのに)"
    r"|が\s*(?:あるのに|あって|あるが|あるけど))"  # 「請求があるのに入金のないもの」
    rf"\s*[、,]?\s*(?P<lacks>{NOUN})\s*(?:側|の方)?\s*(?:に|には|が|で|では|の)\s*{_LACKS}"
    # 「マスタにない仕入先コードの行」: the other table's rows the one named lacks
    rf"|(?<![{_K}{_KATA}A-Za-z0-9_])(?P<lacks_only>{NOUN})\s*(?:側|の方)?\s*(?:に|には)\s*{_LACKS}"
)
"""「報告にあって契約にない物件」「名簿にいるのに受講記録がない社員」: the rows of one table the
other lacks, alone."""


_IN_BOTH = re.compile(
    r"(?:両方|どちら|双方|2つ|二つ)\s*(?:の\s*(?:ファイル|表))?\s*(?:に|とも|にも)\s*(?:ある|いる|載っている|存在する)"
)
"""「両方にいる顧客」「どちらにもある商品」: the rows the two tables share."""


_EITHER_SIDE_ONLY = re.compile(
    r"(?:片方|一方|どちらか(?:一方|片方)?|どっちか)\s*(?:の\s*(?:ファイル|表))?\s*(?:に|だけに)?\s*"
    r"(?:しか|だけ)\s*(?:ない|無い|いない|存在しない|載っていない)"
)
"""「片方にしかないもの」: the rows of either table the other lacks."""
_MATCHED_NOT_WANTED = re.compile(
    r"一致(?:した|している|する)?\s*(?:もの|行|分|明細|データ)?\s*(?:は|を)\s*"
    r"(?:出さなくて|出さない|出力しない|出力しなくて|不要|いらない|要らない|要りません|いりません|除いて|外して)"
    r"|(?:差異|差額|差|ずれ|ズレ|不一致)\s*(?:が|の)\s*(?:ある|あった|出た|出ている|出てる)\s*"
    r"(?:もの|行|分|明細|データ|取引)?\s*(?:だけ|のみ)"
)
"""「一致したものは出さなくていいです」「差異があるものだけ」: every part of a reconciliation
but the matched rows."""


def _one_side_wanted(reader: _Reader, step: StepSpec) -> None:
    """A reconciliation asked for one side only (「銀行明細にあって会計データにない取引」): that
    part alone is the result (the first table read is the left one)."""
    either = _EITHER_SIDE_ONLY.search(reader.text)
    if either and not step.parts:  # 「1円でも違うもの・片方にしかないもの」: those parts
        step.parts = ["unmatched_left", "unmatched_right"]
        reader.use(either.start(), either.end())
        sentence = _sentence_span(reader.text, either.start(), either.end())
        if (step.amount_column or step.tolerance is not None) and _DIFFERENCES_WANTED.search(
            reader.text, *sentence
        ):
            step.parts.insert(0, "differences")
    not_matched = _MATCHED_NOT_WANTED.search(reader.text)
    if not_matched and not step.parts:
        step.parts = ["differences", "unmatched_left", "unmatched_right"]
        reader.use(not_matched.start(), not_matched.end())
    both = _IN_BOTH.search(reader.text)
    if both and len(reader.inputs) == 2 and not _ONE_SIDE.search(reader.text):
        step.parts = ["matched"]  # 「両方にいる顧客を出して」: the rows found in both tables
        reader.use(both.start(), both.end())
        return
    said = _ONE_SIDE.search(reader.text)
    if said is None or len(reader.inputs) != 2:
        return
    holds = [item.holds for item in reader.inputs]

    def sides(word: str) -> list[int]:  # 「報告」 of 清掃業務報告
        return [i for i, held in enumerate(holds) if word in held or held in word]

    if said.group("lacks_only"):
        lacks = sides(_clean(said.group("lacks_only")))
        has = [1 - lacks[0]] if len(lacks) == 1 else []
    else:
        has, lacks = sides(_clean(said.group("has"))), sides(_clean(said.group("lacks")))
    other = next((m for m in _ONE_SIDE.finditer(reader.text, said.end()) if m.group("has")), None)
    if other is not None and not said.group("lacks_only") and len(has) == 1:
        other_has = sides(_clean(other.group("has")))
        if other_has == [1 - has[0]]:  # 「AにあるのにBに無い本と、BにあるのにAに無い本の両方」
            reader.use(said.start(), said.end())
            reader.use(other.start(), other.end())
            step.parts = ["unmatched_left", "unmatched_right"]
            return
    reader.use(said.start(), said.end())
    if len(has) != 1 or len(lacks) != 1 or has == lacks:
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{said.group(0)}」が、どちらのファイルにだけある行のことか読み取れません"
                "でした（「請求.xlsx にあって 入金.csv にない行」のように、ファイルの名前で書いて"
                "ください）",
                source=said.group(0),
            )
        )
        return
    step.parts = ["unmatched_left" if has[0] == 0 else "unmatched_right"]
    stop = reader.text.find("。", said.end())
    stop = len(reader.text) if stop < 0 else stop
    also = _DIFFERENCES_WANTED.search(reader.text, said.end(), stop)
    if also and step.amount_column:  # 「…入金のないもの、金額が一致しないもの」: both parts
        step.parts.append("differences")
        reader.use(also.start(), also.end())


def _amount_not_a_key(reader: _Reader, step: StepSpec, source: str) -> None:
    """「日付と金額で照合（金額の差は10円まで）」: an amount compared with a tolerance cannot
    also be a key (rows that differ never pair): asked, never built."""
    compared = step.amount_column or "金額"
    if step.tolerance and compared in step.keys:
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{compared}」を突き合わせのキーにすると、金額に差のある行は組に"
                "なりません（許容差が使われません）。キー（請求番号など）と、比べる金額の列を"
                "分けて書いてください",
                source=source,
            )
        )


def _add_reconcile(reader: _Reader, reconcile: re.Match[str]) -> None:
    step = StepSpec(id="", kind="reconcile", source=reconcile.group(0))
    step.keys = next(
        (
            keys
            for mention in [reconcile, *_RECONCILE.finditer(reader.text)]
            if (keys := _keys_near(reader, mention.start(), mention.end()))
        ),
        [],
    )  # 「入金消込の件です。A.csv と B.xlsx を取引先名で照合」: the key said with a later word
    if not step.keys:
        step.missing.append("keys")
    _amount_compare(reader, step)
    _date_compare(reader, step)
    _amount_not_a_key(reader, step, reconcile.group(0))
    _one_side_wanted(reader, step)
    _which_rows_unsaid(reader, step, reconcile)
    _differences_with_nothing_compared(reader, step)
    reader.add_step(reconcile.start(), step)
    reader.use(reconcile.start(), reconcile.end())


_SOME_ROWS_PICKED = re.compile(
    rf"(?P<rows>{NOUN}|もの|人|方)\s*を\s*"
    r"(?:抽出|洗い出|抜き出|ピックアップ|リストアップ|拾い出|探し出|出して|出力して|一覧に)"
)


def _which_rows_unsaid(reader: _Reader, step: StepSpec, reconcile: re.Match[str]) -> None:
    """A reconciliation asked to pick some rows (「…で突き合わせて、先月配達がゼロだった利用者を
    抽出」) with neither an amount compared nor a side named: which rows is asked, since every
    part written would look like the answer."""
    if step.parts or step.amount_column:
        return
    picked = _SOME_ROWS_PICKED.search(reader.text, reconcile.end())
    if picked is None or re.search(r"差異|差額|不一致|違い|結果|ズレ|ずれ", picked.group("rows")):
        return
    clause = _clause(reader.text, picked.start(), picked.end())
    if re.search(r"片方|どちらか|一方|両方|合わない|違う|一致しない", clause):
        return  # 「どちらか片方にしかない品番を洗い出したい」: the parts it names
    reader.gaps.append(
        Gap(
            kind="not_understood",
            message=f"「{clause}」で、照合結果のどの行を出すか読み取れませんでした"
            "（「入金にない請求の行」「金額が合わない行」のように書いてください）",
            source=clause,
        )
    )


_DIFFERENCES_WANTED = re.compile(
    r"差異|不一致|合わない|合っていない|一致しない|食い違|違いのある|違う|異なる|ずれ"
)
"""Words for the key-matched rows whose values differ (a reconciliation's ``differences``)."""


def _differences_with_nothing_compared(reader: _Reader, step: StepSpec) -> None:
    """「商品コードで照合して、差異のあるものをシート「差異」に」: the differing rows are asked
    for in the one sheet named, but no column is compared (no amount, no date), so that sheet
    would always be empty: which column to compare is asked. (With no sheet named every part
    is written, each on its own sheet.)"""
    if (
        not any(output.sheet for output in reader.outputs)
        or step.amount_column
        or step.tolerance is not None
        or step.date_column
        or step.date_window_days is not None
        or (step.parts and "differences" not in step.parts)
        or "amount_column" in step.missing
    ):
        return
    if _DIFFERENCES_WANTED.search(reader.text):
        step.missing.append("amount_column")


def _joined_after_matching(
    text: str, reconcile: re.Match[str] | None, join: re.Match[str] | None
) -> bool:
    """「突き合わせて結合し」: the two words of one join, not a reconciliation and a join."""
    return bool(
        reconcile
        and join
        and re.fullmatch(r"[ぁ-ん]{0,4}\s*[、,]?\s*", text[reconcile.end() : join.start()])
        and re.fullmatch(r"結合|連結", join.group(0))
    )


def _keys_said(reader: _Reader) -> bool:
    """Whether a key for joining is said (「…で結合」「キーは…」)."""
    return bool(
        re.search(
            r"(?:で|をキーに(?:して)?|をキーとして)\s*(?:結合|連結|紐|つな)|キー", reader.text
        )
    )


_SAME_LAYOUT = re.compile(
    r"(?:同一|同じ)\s*(?:レイアウト|形式|様式|書式|フォーマット|列構成)|(?:レイアウト|形式|様式|列構成|列)\s*(?:は|が)\s*同じ"
)
"""「（同一レイアウト）」「列は同じです」: files said to be alike, so joining them stacks them."""


def _stacked_by_layout(reader: _Reader, join: re.Match[str]) -> bool:
    """Whether a 「結合」 is said of files of one layout (「結合（同一レイアウト）」): a stack."""
    text = reader.text
    said = _clause(text, join.start(), join.end()) + text[join.end() : join.end() + 16]
    return bool(re.fullmatch(r"結合|連結", join.group(0)) and _SAME_LAYOUT.search(said))


def _read_two_tables(reader: _Reader) -> None:
    text = reader.text
    reconcile = _first_unread(reader, _RECONCILE)
    join = _first_unread(reader, _JOIN)
    concat = _first_unread(reader, _CONCAT)
    if join and not concat and _stacked_by_layout(reader, join):
        concat = join  # 「① a.csv と b.csv を結合（同一レイアウト）② 会員番号で…を付与」
        join = next(
            (m for m in _JOIN.finditer(text, concat.end()) if not reader.is_used(*m.span())), None
        )
    if concat or (join and re.fullmatch(r"結合|連結", join.group(0))):
        _enumerated_inputs(reader)
    if _joined_after_matching(text, reconcile, join):
        reconcile = None  # 「従業員番号で突き合わせて結合し」: a join said with both words
    if concat and join and concat.start() <= join.start() < concat.end():
        join = None  # 「縦に結合」: stacked, not joined
    if join and re.search(r"縦に?\s*$", text[: join.start()]):
        join = None  # 「1つの表に縦結合」
    master = any(_MASTER_WORDS.search(item.holds) for item in reader.inputs)
    brings = re.search(
        rf"を\s*(?:{NOUN}\s*に\s*)?(?:付け|付与|追加|持ってく|引いてく|くっつけ|引っ張|付け加え)",
        text,
    )  # 「営業所を台帳に付ける」
    compares = _TOLERANCE.search(text) or _WINDOW.search(text) or _COMPARED.search(text)
    kinds = {re.sub(r"^.*の", "", item.holds) for item in reader.inputs}
    if (
        join
        and not concat
        and re.fullmatch(r"結合|連結", join.group(0))
        and len(reader.inputs) >= 2
        and (len(kinds) == 1 or (len(reader.inputs) >= 3 and not _keys_said(reader)))
    ):  # 「本庁分の債権者登録.csvと支所分の債権者登録.csvを結合」「a.csv, b.csv, c.csv を結合」
        concat, join = join, None  # tables of one kind, or three with no key: stacked
    if not join and reconcile and brings and master:
        join, reconcile = reconcile, None  # 「マスタを担当者コードで突き合わせて、営業所を付ける」
    if join and (
        not reconcile or brings or (master and join.start() <= reconcile.start() and not compares)
    ):
        reconcile = None  # adding a master's columns (付けて, 紐付け) is a join
    brought = _BROUGHT.search(text)
    if not (join or reconcile or concat) and brought and len(reader.inputs) >= 2:
        join = brought  # 「社員マスタ.csvの店舗名と雇用区分を社員番号で付けて」: a join
    if not (join or reconcile or concat):
        concat = _files_gathered(reader, master=master)
    if reconcile and not reader.is_used(reconcile.start(), reconcile.end()):
        _add_reconcile(reader, reconcile)
    elif join and not reader.is_used(join.start(), join.end()):
        _add_join(reader, join)
    if concat:
        _add_concat(reader, concat)


def _add_concat(reader: _Reader, concat: re.Match[str]) -> None:
    """The stack of the files named, or what is missing when only one file is."""
    text = reader.text
    if len(reader.inputs) < 2 and not reader.overlaps(concat.start(), concat.end()):
        reader.refuse(  # 「A園とB園の給食材料費.csv（2ファイル）を1つにまとめて」
            "missing_source",
            f"「{_clause(text, concat.start(), concat.end())}」でつなぐファイルが"
            "1つしか読み取れませんでした。つなぐファイルの名前をそれぞれ書いてください"
            "（例: 「A.csv と B.csv を縦につなげて」）",
            concat,
        )
    if len(reader.inputs) >= 2 and not reader.overlaps(concat.start(), concat.end()):
        reader.add_step(concat.start(), StepSpec(id="", kind="concat", source=concat.group(0)))
        reader.use(concat.start(), concat.end())
        for said in re.finditer(
            r"縦に?\s*(?:結合|連結|つな[いげぐ]|繋[いげぐ]|積[みん](?:上げ|重ね)?)", text
        ):
            reader.use(*said.span())  # 「1つの表に縦結合」: the same stacking said twice


_AMOUNT_PAIR = re.compile(
    rf"(?P<a>{NOUN})\s*と\s*(?P<b>{NOUN})\s*(?:を\s*(?=比|照|突)|の\s*(?:差|差額|ずれ|ズレ)|が\s*(?:合わ|一致|違))"
)
"""Two amount columns compared, one in each table (「請求額と入金額の差」)."""


def _amount_compare(reader: _Reader, step: StepSpec) -> None:
    """A reconciliation's amount column and tolerance (差額1,000円以内, 許容差なし,
    「金額」列, 数量が合わない)."""
    text = reader.text
    pair = _AMOUNT_PAIR.search(text)
    if (
        pair
        and step.amount_column is None
        and is_amount_column(pair.group("a"))
        and is_amount_column(pair.group("b"))
    ):  # 「請求額と入金額の差が1,000円以内」
        step.amount_column, step.right_amount_column = (
            _clean(pair.group("a")),
            _clean(pair.group("b")),
        )
        reader.use(pair.start(), pair.end())
    _compared_columns_named(reader, step)  # said outright, before any guess from a topic
    tolerance = _TOLERANCE.search(text)
    if tolerance:
        number = (
            tolerance.group("num")
            or tolerance.group("num2")
            or tolerance.group("num3")
            or tolerance.group("num4")
        )
        step.tolerance = float(amount_value(number))
        reader.use(tolerance.start(), tolerance.end())
        named = re.search(
            rf"(?P<col>{QNOUN})\s*の\s*(?:差|差額|ずれ|ズレ|誤差)\s*(?:が|は)?\s*$",
            text[: tolerance.start("num") if tolerance.group("num") else tolerance.start()],
        )
        if (
            named
            and (named.group("col").startswith("「") or is_amount_column(named.group("col")))
            and step.amount_column is None
        ):  # 「「金額」のずれは10円まで」
            step.amount_column = _clean(named.group("col"))
            reader.use(named.start(), named.end("col"))
        sentence = text[text.rfind("。", 0, tolerance.start()) + 1 : tolerance.start()]
        topic = re.match(rf"\s*(?P<col>{NOUN})\s*(?:は|の|が)", sentence)
        if step.amount_column is None and topic and is_amount_column(topic.group("col")):
            step.amount_column = _clean(topic.group("col"))  # 「税込金額 は…1円までの差は許容」
    no_tolerance = re.search(
        r"(?:許容差|誤差|差額の許容|差の許容)\s*(?:は|が)?\s*(?:なし|無し|ゼロ|0円?|認めない"
        r"|(?:一切)?\s*(?:認めない|認めません|許容しない|許容しません))",
        text,
    )
    if no_tolerance is None:
        no_tolerance = re.search(
            r"(?:1|一)\s*円\s*でも\s*(?:ずれ|ズレ|違|異な|差|あれ|出れ|出たら)"
            r"|(?:ぴったり|完全|きっちり)\s*一致\s*(?:のみ|だけ)"
            rf"|(?:金額|{NOUN}\s*の\s*(?:差|差額|ずれ)|(?<![^\s、。,])(?:差|差額|ずれ))\s*(?:は|が)\s*"
            r"(?:完全一致(?:のみ|だけ)?|0\s*円?)"
            r"(?:\s*\(\s*(?:完全一致|許容差\s*なし)\s*\))?",
            text,
        )  # 「金額は完全一致（許容差なし）」「数量の差は0（完全一致）」
    if no_tolerance and step.tolerance is None:
        step.tolerance = 0.0
        reader.use(no_tolerance.start(), no_tolerance.end())
        said = re.search(
            rf"(?:(?P<owner>{QNOUN})\s*の\s*)?(?P<col>{QNOUN})\s*(?:が|は)\s*$",
            text[: no_tolerance.start()],
        )
        column = said and _clean(said.group("col"))
        if said and column in ("差額", "差", "誤差", "ずれ", "ズレ"):  # 「金額の差額が1円でも」
            column = _clean(said.group("owner") or "")
        if said and column and step.amount_column is None and is_amount_column(column):
            step.amount_column = column  # 「請求額が1円でも違うもの」
            reader.use(said.start(), said.end("col"))


def _quoted_amount(reader: _Reader, step: StepSpec) -> None:
    """「「金額」(どちらも同じ列名です)が1円でも違う」「「金額」の差が500円を超える」: the amount
    compared, named in brackets beside the words of a difference."""
    quoted = re.search(
        r"「(?P<col>[^」]{1,20})」\s*(?:\([^()]{0,30}\))?\s*(?:列)?\s*(?:は|が|の)\s*"
        r"(?=[^。]{0,24}?(?:違う|違い|差|同じ列名|比べ|一致|ずれ|ズレ))",
        reader.text,
    )
    if quoted and step.amount_column is None and quoted.group("col") not in step.keys:
        step.amount_column = quoted.group("col")
        reader.use(quoted.start(), quoted.end())


def _compared_columns_named(reader: _Reader, step: StepSpec) -> None:
    """A reconciliation's amount and date columns said by their role (「金額は 入金額 で
    比べて」), as both tables' columns (「どちらのファイルにも…の列があります」), as the
    thing compared (「手数料額を比較」「数量が合わない」) or as a quoted column (「金額」列)."""
    text = reader.text
    by_role = re.search(
        rf"(?P<role>金額|日付)\s*(?:の\s*(?:比較|照合|突合|突き合わせ))?\s*(?:は|を)\s*(?:(?:両方|双方|どちら|両ファイル)\s*(?:に|にも|の)\s*(?:ある\s*)?)?(?P<col>{QNOUN})\s*(?:の?\s*列\s*で|同士\s*で|で\s*(?=比|照|突|見|チェック|判定|[、。,]|$))"
        rf"|(?P<role2>金額|日付)\s*\(\s*[^()]{{0,10}}?列名\s*(?:は|が)\s*(?P<col2>{QNOUN})"
        rf"|(?P<role3>金額|日付)\s*(?:の)?\s*(?:列名|列)\s*(?:は|が)\s*(?:どちらも|両方とも|いずれも|共通で)?\s*(?P<col3>{QNOUN})"
        r"|(?P<role4>金額|日付)\s*(?:は|:)\s*(?P<col4>「[^」]+」)\s*(?:列)?\s*(?:を使[いう]|で)?\s*(?=[、,。→]|$)",
        text,
    )
    if by_role:  # 「金額は賃料の列で比較」「金額は 入金額 で比べて」「金額(列名は 金額)」
        role = (
            by_role.group("role")
            or by_role.group("role2")
            or by_role.group("role3")
            or by_role.group("role4")
        )
        field = "amount_column" if role == "金額" else "date_column"
        said_how = re.fullmatch(  # 「金額は完全一致で照合」: how they compare, no column
            r"完全一致|一致|不一致|完全|同じ|ぴったり|同額|そのまま|許容なし|差なし",
            _clean(
                by_role.group("col")
                or by_role.group("col2")
                or by_role.group("col3")
                or by_role.group("col4")
                or ""
            ),
        )
        if getattr(step, field) is None and not said_how:
            role_column = _clean(
                by_role.group("col")
                or by_role.group("col2")
                or by_role.group("col3")
                or by_role.group("col4")
            )
            setattr(step, field, re.sub(r"(?<=.)同士$", "", role_column))  # 「請求額同士で」
            reader.use(by_role.start(), by_role.end())
    named_compared = re.search(
        rf"(?:比較|比べる|照合|突合|突き合わせ)\s*(?:する|対象の?)?\s*金額\s*(?:は|を|:)\s*(?P<col>{QNOUN})"
        rf"|(?:比較|比べる)\s*(?:する|対象)?\s*の\s*は\s*(?P<col3>{QNOUN})\s*(?=で|です|。|、)"
        rf"|(?P<col2>{QNOUN})\s*(?:の?\s*列)?\s*(?:を|で)\s*(?:比較|比べ)"
        # 「発注番号をキーに請求金額で照合」: the key said, then the amount compared
        rf"|(?:を|が)\s*キー\s*(?:に|で)[、,]?\s*(?P<col4>{QNOUN})\s*(?:の?\s*列)?\s*で\s*"
        r"(?:照合|突合|突き合わせ|照らし合わせ)",
        text,
    )
    if named_compared and step.amount_column is None:  # 「手数料額を比較して」「比較する金額は X」
        said = named_compared.group("col") or named_compared.group("col3")
        column = _clean(said or named_compared.group("col2") or named_compared.group("col4"))
        quoted = (named_compared.group("col2") or named_compared.group("col4") or "").startswith(
            "「"
        )
        if said or quoted or is_amount_column(column):  # 「「外注費」の列を比べて」: said so
            step.amount_column = column
            reader.use(named_compared.start(), named_compared.end())
    present = re.search(
        rf"(?:どちらの|両方の|双方の|いずれの)\s*(?:ファイル|表|データ|一覧)?\s*(?:に|にも)\s*"
        rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,9}})\s*(?:の)?\s*(?:列|項目)?\s*(?:が|は)\s*"
        r"(?:あり|ある|入って)[ぁ-ん]*"
        rf"|(?P<role>金額|日付)\s*の\s*(?:列|項目)\s*(?:名)?\s*は\s*[^、。]{{0,16}}?(?:どちらも|両方とも|いずれも|共通で)\s*(?P<col>{QNOUN})\s*(?:です|だ|になって)?"
        rf"|(?:どちらの|両方の|双方の|いずれの)\s*(?:ファイル|表|データ|一覧)?\s*も\s*(?P<role2>金額|日付)\s*の\s*(?:列|項目)\s*(?:名)?\s*(?:は|が)\s*(?P<col2>{QNOUN})\s*(?:です|だ|になって)?",
        text,
    )
    if (
        present
    ):  # 「どちらのファイルにも販売店コード・金額・日付の列があります」: both tables' columns
        role = present.group("role") or present.group("role2")
        for name in _names(present.group("cols") or present.group("col") or present.group("col2")):
            if role == "日付" or (not role and re.search(r"(日|日付)$", name)):
                step.date_column = step.date_column or name
            elif role == "金額" or is_amount_column(name):
                step.amount_column = step.amount_column or name
        reader.use(present.start(), present.end())
    checked = re.search(
        rf"(?P<col>{NOUN})\s*の\s*(?:差異|差|違い|ズレ|ずれ)\s*を\s*(?:チェック|確認|比較|見)"
        rf"|(?P<col2>{NOUN})\s*の\s*(?:不一致|食い違い|相違)"  # 「数量の不一致を…に出力」
        rf"|(?<![{_K}{_KATA}])(?P<col3>[{_K}{_KATA}]{{0,8}}?(?:金額|数量|単価|件数|残高))"
        r"(?:差異|差額|の差)\s*(?:を|が|の)"  # 「金額差異を出して」
        rf"|(?P<col4>{NOUN})\s*が\s*(?:変わった|変わっている|変化した|増減した)",
        text,
    )
    if checked and step.amount_column is None:  # 「数量の差異をチェックして」
        named = next(name for name in ("col", "col2", "col3", "col4") if checked.group(name))
        step.amount_column = _clean(checked.group(named))
        reader.use(checked.start(), checked.end(named))
    compared = _COMPARED.search(text)
    if compared and step.amount_column is None:  # 「数量が合わない」「売上金額に差異がある」
        step.amount_column = _clean(compared.group("col") or compared.group("col2"))
        if compared.group("left"):  # 「発注数と入荷数が違う」: a column of each table
            step.amount_column = _clean(compared.group("left"))
            step.right_amount_column = _clean(compared.group("col"))
        reader.use(compared.start(), compared.end())
    _quoted_amount(reader, step)
    for mention in re.finditer(r"「(?P<col>[^」]+)」\s*列", text):
        column = mention.group("col").strip()
        if is_amount_column(column) and step.amount_column is None:
            step.amount_column = column
        elif re.search(r"(日|日付)$", column) and step.date_column is None:
            step.date_column = column
        else:
            continue
        reader.use(mention.start(), mention.end())
    _amount_said_as_kingaku(reader, step)


def _amount_said_as_kingaku(reader: _Reader, step: StepSpec) -> None:
    """「金額は完全一致」「金額の差は100円まで」 with no other amount column said: the column
    金額, as written (a file without it stops at the run with the column named)."""
    literal = re.search(
        rf"(?<![{_K}{_KATA}A-Za-z])金額\s*(?=(?:は|の差|差|の誤差|の違い)\s*(?:完全|[0-9０-９一-九]|1円)"
        r"|\s*で\s*(?:照合|突合|突き合わせ|比較|比べ)|\s*を\s*(?:比較|比べ))",
        reader.text,
    )
    if literal and step.amount_column is None and "amount_column" not in step.missing:
        step.amount_column = "金額"
        reader.use(literal.start(), literal.end())
    both = re.search(  # 「請求番号をキーに両方の「金額」を突き合わせる」: that column of each
        r"(?:両方|双方|両ファイル|2つ|二つ)\s*の\s*「(?P<col>[^」]+)」\s*(?:列|欄)?\s*(?:を|で)\s*"
        r"(?:突き合わせ|照合|比較|比べ|突合)",
        reader.text,
    )
    if both and step.amount_column is None and "amount_column" not in step.missing:
        step.amount_column = both.group("col").strip()
        reader.use(both.start(), both.end())


_DATE_PAIR = re.compile(
    rf"(?P<a>{NOUN}(?:日|日付))\s*と\s*(?P<b>{NOUN}(?:日|日付))\s*(?:の|は|が)\s*(?:日付の)?\s*(?:差|ずれ|ズレ)"
    rf"|(?P<a2>{NOUN}(?:日|日付))\s*(?:は|が)\s*(?P<b2>{NOUN}(?:日|日付))\s*(?:から|と)"
)
"""Two date columns compared, one in each table (「請求日と入金日のズレ」)."""


def _date_compare(reader: _Reader, step: StepSpec) -> None:
    """A reconciliation's date window and column (日付は前後3日まで)."""
    window = _WINDOW.search(reader.text)
    if not window:
        exact = re.search(
            r"(?:日付|日)\s*の?\s*(?:ずれ|ズレ|差)\s*(?:は|が)?\s*"
            r"(?:認めません|認めない|なし|無し|不可|許容しない|許容しません)(?:\s*\(\s*0\s*日\s*\))?",
            reader.text,
        )
        if exact:  # 「日付のずれは認めません（0日）」
            step.date_window_days = 0
            reader.use(exact.start(), exact.end())
        none = re.search(r"日付\s*の\s*条件\s*は\s*(?:なし|無し|不要)", reader.text)
        if none:  # 「日付の条件はなしで大丈夫です」: no date compared
            reader.use(none.start(), none.end())
        return
    step.date_window_days = int(window.group("num") or window.group("num2") or window.group("num3"))
    reader.use(window.start(), window.end())
    sentence = reader.text[reader.text.rfind("。", 0, window.start()) + 1 : window.end()]
    pair = _DATE_PAIR.search(sentence)
    if pair and step.date_column is None:  # 「入金日と予定日のズレは前後3日まで」
        step.date_column = _clean(pair.group("a") or pair.group("a2"))
        step.right_date_column = _clean(pair.group("b") or pair.group("b2"))

    named = re.search(
        rf"(?P<col>{NOUN})\s*(?:は|の|が)\s*(?:差|ずれ)?\s*(?:が|は)?\s*(?:前後)?\s*$",
        reader.text[: window.start("num" if window.group("num") else "num2")],
    )
    column = _clean(named.group("col")) if named else ""
    if column and re.search(r"(日|日付)$", column) and step.date_column is None:
        step.date_column = column


def _expression(text: str) -> str:
    expression = (
        text.replace("×", " * ")
        .replace("÷", " / ")
        .replace("＋", " + ")
        .replace("－", " - ")
        .replace("−", " - ")
    )
    expression = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", expression)  # 「3,000」 is 3000
    expression = re.sub(r"(?<=[^\s])([*/+\-])(?=[^\s])", r" \1 ", expression)
    expression = re.sub(r"(?<=\s)[xX](?=\s)|(?<=[^\s])[xX](?=\d)", " * ", expression)
    return re.sub(r"\s+", " ", expression).strip()


def _balanced(expression: str) -> str:
    """The formula without the parenthesis of the sentence around it (「（税込 = 金額 * 1.1）」),
    or "" when its parentheses do not pair."""
    while expression.count(")") > expression.count("(") and expression.endswith(")"):
        expression = expression[:-1].rstrip()
    while expression.count("(") > expression.count(")") and expression.startswith("("):
        expression = expression[1:].lstrip()
    depth = 0
    for char in expression:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return ""
    if depth:
        return ""
    return _unwrapped(expression)


def _unwrapped(expression: str) -> str:
    """「(参加費 - 原価)」: one pair of parentheses around the whole formula says nothing."""
    if not (expression.startswith("(") and expression.endswith(")")):
        return expression
    depth = 0
    for index, char in enumerate(expression):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and index < len(expression) - 1:
            return expression  # 「(A + B) * (C + D)」: two groups, kept
    return _unwrapped(expression[1:-1].strip())


def _read_noun_formulas(reader: _Reader) -> None:
    """「基本給と手当の合計を「総支給額」として計算」: a named column of two others."""
    for match in _NOUN_COMPUTE.finditer(reader.text):
        if reader.overlaps(match.start(), match.end()):
            continue
        operator = {"合計": "+", "和": "+", "差": "-", "差額": "-", "積": "*"}[match["what"]]
        step = StepSpec(
            id="",
            kind="compute",
            expressions={
                _clean(match["new"]): f"{_clean(match['a'])} {operator} {_clean(match['b'])}"
            },
            source=match.group(0),
        )
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())


_NAMED_AFTER = re.compile(
    rf"\s*(?:で|を)\s*(?P<name>{QNOUN})\s*(?:という|って|として)\s*(?:名前の)?\s*(?:列|項目|カラム)"
)
"""「…で「源泉税額」という列に」: the name a formula's column is given after it."""


def _formula_name(reader: _Reader, match: re.Match[str], new: str) -> str:
    """The column a formula makes: the one named after it (「源泉徴収額は 出演料 × 0.1021 で
    「源泉税額」という列に」: 源泉税額), else ``new``."""
    named = _NAMED_AFTER.match(reader.text, match.end())
    if named is None:
        return new
    reader.use(match.end(), named.end())
    return named.group("name")


def _no_formula(reader: _Reader, match: re.Match[str], new: str, expression: str) -> bool:
    """Whether a formula's reading names no column: 「列を追加（A − B）」 (追加 is no column),
    「出力は 番号／氏名／所属 の3列」 (columns listed with slashes, no division)."""
    return (
        not expression
        or new in STEP_VERBS
        or bool(_REFERENCE.match(new))
        or bool(re.fullmatch(r"出力|出す列|残す列|出力列|列|項目|対象|結果", new))
        or bool(
            re.fullmatch(r"[^*+\-\d]+", expression)
            and re.match(r"\s*の\s*\d+\s*(?:列|項目)", reader.text[match.end() :])
        )
    )


def _read_compute(reader: _Reader) -> None:
    for match in _COMPUTE.finditer(reader.text):
        if reader.overlaps(match.start(), match.end()):
            continue
        groups = match.groupdict()
        if groups.get("new5"):
            rate = 1 + float(groups["pct"].replace(",", "")) / 100
            new, expression = groups["new5"], f"{groups['col5']} * {rate:g}"
        elif groups.get("new3"):
            new, expression = groups["new3"], f"{groups['col']} * {groups['num']}"
        elif groups.get("new4"):
            new, expression = groups["new4"], f"{groups['a']} - {groups['b']}"
        elif groups.get("new10"):
            new, expression = groups["new10"], f"{groups['m1']} * {groups['m2']}"
        elif groups.get("new15"):
            sign = "*" if groups["how15"] == "に" else "/"
            new, expression = groups["new15"], f"{groups['m15']} {sign} {groups['n15']}"
        elif groups.get("new9"):
            new, expression = groups["new9"], f"{groups['a9']} - {groups['b9']}"
        else:
            new = (
                groups.get("new")
                or groups.get("new2")
                or groups.get("new6")
                or groups.get("new7")
                or groups.get("new11")
                or groups.get("new12")
                or groups.get("new13")
                or groups.get("new14")
                or groups["new8"]
            )
            expression = _expression(
                groups.get("expr")
                or groups.get("expr2")
                or groups.get("expr6")
                or groups.get("expr7")
                or groups.get("expr11")
                or groups.get("expr12")
                or groups.get("expr13")
                or groups.get("expr14")
                or groups["expr8"]
            )
        expression = _balanced(expression)
        if _no_formula(reader, match, _clean(new), expression):
            continue
        new = _formula_name(reader, match, new)
        step = StepSpec(
            id="", kind="compute", expressions={_clean(new): expression}, source=match.group(0)
        )
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())
    for match in _FORMULA_SAID_APART.finditer(reader.text):
        if reader.overlaps(match.start("expr"), match.end("expr")):
            continue
        added = [
            m
            for m in _COLUMN_ADDED.finditer(reader.text, 0, match.start())
            if not reader.overlaps(m.start("new"), m.end("new"))
        ]
        expression = _balanced(_expression(match.group("expr")))
        if not added or not expression:
            continue
        new = _clean(added[-1].group("new"))
        step = StepSpec(id="", kind="compute", expressions={new: expression}, source=match.group(0))
        reader.add_step(added[-1].start(), step)
        reader.use(added[-1].start(), added[-1].end())
        reader.use(match.start(), match.end())
    _read_noun_formulas(reader)
    for match in _VERBAL_COMPUTE.finditer(reader.text):
        formula = _verbal_expression(match)
        if formula is None or reader.overlaps(match.start(), match.end()):
            continue
        step = StepSpec(
            id="",
            kind="compute",
            expressions={_clean(match["new"]): formula},
            source=match.group(0),
        )
        reader.add_step(match.start(), step)
        reader.use(match.start(), match.end())


_MIXED = re.compile(
    rf"(?P<cols>{QNOUN}(?:\s*{LIST_SEP}\s*{QNOUN}){{0,19}})"
    r"(?:\s*の\s*「(?P<inner>[^」]{1,30})」)?"  # 「両ファイルの「仕入先名」に表記ゆれ」
    r"\s*(?:の)?\s*(?:欄|列)?\s*(?:に|が|は|の|も|で|、)\s*"
    # 「船名と氏名のカナが全角半角まざってる」: what of the columns is mixed
    r"(?:(?<=の)[\u30a1-\u30fa\u30fc\u4e00-\u9fff]{1,6}\s*が\s*(?=全角|半角|表記|書式|書き方))?"
    r"(?:「[^」]*」|[^。、「」がは]){0,40}?"
    r"(?:(?:書式|書き方|表記|形式|全角[・と]?半角|文字|文字列|数字|スペース|空白)\s*(?:が|は|で)?\s*"
    r"(?:「[^」]*」|[^。、「」がは]){0,20}?)?"
    r"(?:混在|バラバラ|ばらばら|ぐちゃぐちゃ|ごちゃまぜ|ごちゃ混ぜ|ごちゃごちゃ|まちまち|不揃い|ぶれ|ブレ"
    r"|混ざ|混じ|まざ|まじ|揺れ|ゆれ|不統一|統一されていない|統一されてない"
    r"|そろっていない|揃っていない|(?:文字|文字列|テキスト)(?:で|に|として)\s*(?:入|なっ))"
)
"""Columns said to be written in mixed ways (「返品日 が「2024/5/1」「令和6年…」などバラバラ」,
「顧客名 と フリガナ に全角・半角が混在」): what lies between names no other column."""
_NORMALIZE_VERB = re.compile(
    r"(?:(?:日付|数値|数字|表記|書式|形式|書き方)\s*(?:を|に|の形式に)?\s*)?"
    r"(?:統一|揃え|そろえ|直し|直して|正規化|整え)"
)


_REFERENCE = re.compile(
    r"^(?:\d*\s*(?:列|項目|カラム|欄|つ|個)|これ|それ|これら|それら|両方|全部|すべて|全て)$"
)
"""Words that point back at columns named elsewhere (「この2列」「両方」), never a name."""


def _read_normalize(reader: _Reader) -> None:
    for match in _outside_file_names(_NORMALIZE, reader.text):
        columns = [c for c in _names(match.group("cols")) if not _COMPANY_FORM_WORD.fullmatch(c)]
        said = re.search(  # 「「仕入先名」が、（株）と株式会社、全角と半角がバラバラ」: that column
            r"「(?P<col>[^」]{1,30})」\s*(?:列|欄)?\s*(?:が|は|の)[^。]*$",
            reader.text[: match.start()],
        )
        if not columns and said:
            columns = [said.group("col")]
        before = reader.text[: match.start()]
        owner = re.search(  # 「「仕入先名」に全角・半角やスペースの表記ゆれ」: that column
            rf"(?P<col>{QNOUN})\s*(?:列|欄)?\s*に\s*$", before
        ) or re.search(rf"(?P<col>{NOUN})\s*(?:列|欄)?\s*の\s*[^、。\s]{{0,12}}$", before)
        if (
            columns
            and all(_NOTATION_WORDS.search(c) or _SCRIPT_WORDS.fullmatch(c) for c in columns)
            and owner
        ):
            columns = [_column_name(_clean(owner.group("col")))]  # 「金額列の△表記を数値に」
        if columns and all(_REFERENCE.match(c) for c in columns):
            columns = _mixed_columns(reader) or columns  # 「この2列を正規化」: the ones said mixed
        reader.add_step(
            match.start(), StepSpec(id="", kind="normalize", columns=columns, source=match.group(0))
        )
        reader.use(match.start(), match.end())
    _read_mixed(reader)  # 「金額欄が…文字で入ってるので数値に直して、作業日も…揃えて」: both
    wide = re.search(
        r"全角\s*(?:の)?\s*(?:スペース|空白|数字|英数字?|英字|アルファベット)\s*(?:に|へ)\s*"
        r"(?:統一|揃え|そろえ|変換|直)",
        reader.text,
    )
    if wide and reader.first_step("normalize") is not None:  # the block makes them half-width
        reader.refuse(
            "unsupported_action",
            f"「{wide.group(0)}」: 数字・英字・スペースを全角にそろえる統一は作れません"
            "（表記の統一では数字・英字・スペースは半角、カタカナは全角にそろえます）",
            wide,
        )


_COMPANY_FORM_WORD = re.compile(r"株式会社|有限会社|合同会社|\(株\)|\(有\)")
"""A company's legal form, never a column (「（株）と株式会社がバラバラ」)."""
_NOTATION_WORDS = re.compile(
    r"全角|半角|表記|書式|書き方|形式|大文字|小文字|スペース|空白|ハイフン"
    r"|^前後$|入り方|入れ方|付け方|つけ方|ばらつき|バラつき"
)
"""Words for how values are written (「大文字小文字が混在」), never a column."""
_SCRIPT_WORDS = re.compile(r"カナ|カタカナ|かな|ひらがな|英数字|英字|数字|記号")
"""Kinds of characters in a value (「乗客氏名のカナを正規化」: the kana of 乗客氏名)."""


def _mixed_columns(reader: _Reader) -> list[str]:
    """The columns the instruction says are written in mixed ways (without reading a
    step): 「取引日 が…バラバラで、金額 も…文字で入っています」 names both."""
    found: list[str] = []
    for match in _MIXED.finditer(reader.text):
        said = match.group("inner") or match.group("cols")
        columns = [c for c in _names(said) if not _names_a_file(reader, c)]
        columns = [c for c in columns if c not in GENERIC_NOUNS and not _NOTATION_WORDS.search(c)]
        if columns:
            reader.use(match.start(), match.end())
            found.extend(c for c in columns if c not in found)
    return found


def _only_quoted_values(listed: str) -> bool:
    """True when a list names only quoted values and notation words (「「株式会社」と
    「(株)」、全角」): examples of how values are written, no column among them."""
    return bool(re.search(r"「[^」]+」", listed)) and all(
        _NOTATION_WORDS.search(name) or f"「{name}」" in listed for name in _names(listed)
    )


def _read_mixed(reader: _Reader) -> None:
    """「顧客名 と フリガナ に全角・半角が混在しています。これを統一したあとで」: the
    columns said to be written in mixed ways, made uniform by a later verb."""
    text = reader.text
    for match in _MIXED.finditer(text):
        if reader.overlaps(match.start("cols"), match.end("cols")):
            continue
        side = re.match(rf"\s*の\s*(?P<col>{NOUN})", text[match.end("cols") :])
        holder = re.search(
            rf"(?P<col>{NOUN})\s*(?:欄|列)?\s*(?:に|で|には|では)\s*$", text[: match.start()]
        )
        if match.group("cols").endswith("側") and side:  # 「受注明細側の得意先名にゆれ」
            columns = [_clean(side.group("col"))]
            reader.use(match.end("cols"), match.end("cols") + side.end())
        elif holder and _only_quoted_values(match.group("cols")):
            # 「得意先名に「株式会社」と「(株)」、全角と半角が混ざって」: quoted values said to
            # be mixed in the column before them, never columns themselves
            columns = [_column_name(holder.group("col"))]
            reader.use(match.start() - len(holder.group(0)), match.start())
        else:  # (「両ファイルの「仕入先名」に表記ゆれ」: the quoted column of the files named)
            said_columns = match.group("inner") or match.group("cols")
            columns = [c for c in _names(said_columns) if not _names_a_file(reader, c)]
        columns = [c for c in columns if c not in GENERIC_NOUNS and not _NOTATION_WORDS.search(c)]
        if columns and all(_COMPANY_FORM_WORD.fullmatch(c) for c in columns):
            said = re.search(  # 「「仕入先名」が、（株）と株式会社、全角と半角がバラバラ」
                r"「(?P<col>[^」]{1,30})」\s*(?:列|欄)?\s*(?:が|は|の|に)[^。]*$",
                text[: match.start()],
            )
            columns = [said.group("col")] if said else []
        if not columns:
            continue
        stop = text.find("。", match.end())  # the verb: in this sentence or the next
        after = -1 if stop < 0 else text.find("。", stop + 1)
        verb = _NORMALIZE_VERB.search(text, match.end(), len(text) if after < 0 else after)
        if verb is None:
            continue
        reader.add_step(
            match.start(),
            StepSpec(
                id="",
                kind="normalize",
                columns=columns,
                source=text[match.start() : verb.end()],
                # 「（株）と株式会社、全角と半角がバラバラ」: company forms written out too
                company_forms=bool(_COMPANY_FORM_WORD.search(text[match.start() : verb.end()])),
            ),
        )
        reader.use(match.start(), match.end())
        reader.use(verb.start(), verb.end())


_LISTED_ONLY = re.compile(
    rf"(?<![がはをにで{_K}{_KATA}A-Za-z0-9_])(?P<cols>{QNOUN}(?:\s*(?:・|、|,)\s*{QNOUN}){{2,19}})"
    r"\s*(?:だけ|のみ)\s*(?=[。→>]|$)"
)
"""「教習生番号・氏名・入所日・車種だけ。」: a list of three or more names, on its own."""


def _listed_columns_kept(reader: _Reader) -> None:
    """A list alone (no verb) of names, one of which the instruction also uses as a
    column elsewhere (「入所日順」), keeps those columns; values of one column are never
    named elsewhere as a column."""
    text = reader.text
    for match in _LISTED_ONLY.finditer(text):
        if reader.overlaps(match.start(), match.end()):
            continue
        columns = _names(match.group("cols"))
        elsewhere = text[: match.start()] + " " + text[match.end() :]
        if not any(
            re.search(rf"{re.escape(c)}\s*(?:が|は|を|で|の順|順|ごと|別|の昇順|の降順)", elsewhere)
            for c in columns
        ):
            continue
        reader.add_step(
            match.start(), StepSpec(id="", kind="select", columns=columns, source=match.group(0))
        )
        reader.use(match.start(), match.end())


def _read_select(reader: _Reader) -> None:
    _listed_columns_kept(reader)
    for match in _SELECT.finditer(reader.text):
        named = match.group("cols") or match.group("cols3") or match.group("cols5")
        tail = (
            match.end(next(g for g in ("cols", "cols3", "cols5") if match.group(g)))
            if named
            else None
        )
        listed_only = next(  # 「…をCSVで出力」: the output words were read with the format
            (g for g in ("cols8", "cols10", "cols12", "cols15") if match.group(g)), None
        )
        if listed_only:
            if reader.overlaps(match.start(listed_only), match.end(listed_only)):
                continue
        elif (reader.overlaps(match.start(), match.end()) and tail is None) or (
            tail is not None and reader.overlaps(tail, match.end())
        ):
            continue  # 「港名で結合し、港コード・港名の列だけ残して」: 港名 read twice is fine
        listed = (
            match.group("cols")
            or match.group("cols7")
            or match.group("cols2")
            or match.group("cols3")
            or match.group("cols5")
            or match.group("cols8")
            or match.group("cols4")
            or match.group("cols9")
            or match.group("cols10")
            or match.group("cols11")
            or match.group("cols12")
            or match.group("cols15")
        )
        columns = [  # 「…を抽出、報告日と機械番号と担当者だけ残して」: the step word is no column
            c
            for c in _names(re.sub(r"\s*[/／]\s*", "・", listed))  # 「受講者名／クラス名」
            if not re.fullmatch(r"抽出|集計|照合|結合|突合|出力|保存|並べ替え|ソート|計算|統一", c)
        ]
        while columns and re.fullmatch(r"人|方|もの|者|分|件|行|やつ|データ", columns[0]):
            columns = columns[1:]  # 「…30日以上の人、病棟・患者ID…」: the rows, then the columns
        if (match.group("cols8") or match.group("cols12")) and any(
            _ENDS_WITH_METRIC.search(c)
            or c in _METRIC_WORDS
            or (match.group("cols8") and _names_a_file(reader, c))
            for c in columns
        ):
            continue  # 「部門・件数・合計を出して」: figures of an aggregation, not columns kept
        reader.add_step(
            match.start(), StepSpec(id="", kind="select", columns=columns, source=match.group(0))
        )
        reader.use(match.start(), match.end())


_LIMIT_WORD = re.compile(r"上位|先頭|上から|トップ|TOP|Top|top|ベスト|ワースト|最初の|頭から")
_LIMIT = re.compile(
    rf"(?:{_LIMIT_WORD.pattern})\s*(?P<n>\d{{1,5}})\s*"
    r"(?:件|行|位|社|名|人|個|つ|品目|品|店舗|店|台|枚|冊|軒|校|分類|部門|商品|銘柄|科目|区分|拠点|顧客"
    r"|取引先)?(?:まで)?(?:\s*(?:だけ|のみ))?"
    r"|(?P<m>\d{1,5})\s*位\s*まで"
    r"|(?<=順)\s*(?:→|⇒|->|に|で|、)?\s*(?P<k>\d{1,5})\s*(?:件|行|社|名|人|個|品|店|台|枚|冊|軒|戸|校|園"
    r"|施設|農家|分類|部門|商品|銘柄|科目|区分|拠点|顧客|取引先)\s*"
    r"(?:だけ|のみ|まで|(?=\s*(?:[。、→⇒]|$)))"
)
_COLUMN_LIMIT = re.compile(
    rf"(?P<col>{NOUN})\s*(?:の|が)?\s*(?:(?P<dir>多い|大きい|高い|少ない|小さい|低い)\s*)?"
    r"(?P<word>上位|下位|ワースト)\s*(?P<n>\d{1,5})\s*"
    r"(?:件|行|社|名|人|個|つ|品目?|店舗?|商品|位)?"
)
"""「売上上位10商品」「在庫金額の下位5件」: an order by a column said with how many rows."""
"""「上位10件」「先頭100行」「上から3件だけ」「平均の低い順 → 3件だけ」: the first rows after
the sort, no value."""


def _only_total(reader: _Reader) -> str | None:
    """The one total an aggregation makes (「商品名ごとに数量を合計」: 数量; 「件数」), if one."""
    aggregates = [step for _, step in reader.steps if step.kind == "aggregate"]
    if len(aggregates) != 1:
        return None
    metrics = [(column, m) for column, ms in aggregates[0].metrics.items() for m in ms]
    if len(metrics) != 1:
        return None
    column, metric = metrics[0]
    return "件数" if column == COUNT_ALL else column if metric == "sum" else None


def _read_limit(reader: _Reader) -> None:
    """A count of rows to keep after the sort (上位 N 件): the sort's limit; with no order
    said, which order is asked (never a guessed column)."""
    if not any(step.kind == "sort" for _, step in reader.steps):
        said = _COLUMN_LIMIT.search(reader.text)
        if said and not reader.overlaps(said.start(), said.end()):
            column = _column_name(said.group("col"))
            reader.add_step(  # 「…を合計 → 売上上位10商品」: its order and its count
                said.start(),
                StepSpec(
                    id="",
                    kind="sort",
                    by=[column],
                    descending=(said.group("dir") or "多い") in ("多い", "大きい", "高い")
                    and said.group("word") != "下位",
                    limit=int(said.group("n")),
                    source=said.group(0),
                ),
            )
            reader.use(said.start(), said.end())
    for match in _LIMIT.finditer(reader.text):
        if reader.overlaps(match.start(), match.end()):
            continue
        sorts = [step for _, step in reader.steps if step.kind == "sort"]
        count = int(match.group("n") or match.group("m") or match.group("k"))
        reader.use(match.start(), match.end())
        if len(sorts) == 1 and count >= 1 and sorts[0].limit in (None, count):
            sorts[0].limit = count
            continue
        total = _only_total(reader)
        if not sorts and total and re.match(r"上位|トップ|TOP|Top|top|ベスト", match.group(0)):
            reader.add_step(  # 「商品名ごと数量合計 上位10件」: the groups of the largest totals
                match.start(),
                StepSpec(
                    id="",
                    kind="sort",
                    by=[total],
                    descending=True,
                    limit=count,
                    source=match.group(0),
                ),
            )
            continue
        clause = _clause(reader.text, match.start(), match.end())
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」の「{match.group(0).strip()}」を、どの列の順に数えるか"
                "読み取れませんでした（例: 「金額の大きい順に上位10件」）",
                source=clause,
            )
        )


_AFTER_APPROVAL = re.compile(
    r"\s*(?:を|が)?\s*(?:受けて|もらって|いただいて|得て|取って|とって|回して|経て|通して|もらえて|出て|下りて|おりて)"
    r"\s*(?:から|後に?|のうえ|の上で?)"
)


_SOME_AND_ALL = re.compile(
    r"[^、。]{1,20}?\s*(?:が|は)\s*[^、。]{1,12}?\s*の\s*(?:件数|数|人数)\s*(?:と|、|,|および|及び)\s*"
    r"(?:全体|全部|総|全て|すべて|合計)\s*の?\s*(?:件数|数|人数)"
    r"|(?:全体|全部|総|全て|すべて)\s*の?\s*(?:件数|数|人数)\s*(?:と|、|,)\s*"
    r"[^、。]{1,20}?\s*(?:が|は)\s*[^、。]{1,12}?\s*の\s*(?:件数|数|人数)"
)
"""「遅延フラグが1の件数と全体の件数」: a count of some rows beside a count of all."""


_COLUMNS_COMPARED = re.compile(
    rf"(?P<a>{NOUN})\s*が\s*(?P<b>{NOUN})\s*(?:を|より)\s*"
    r"(?:下回|上回|超え|超過|割り込|割っ|満たな|切っ|越え)"
    # 「ショット数が保証ショット数の90%を超えている」: a share of another column
    rf"|(?P<a2>{NOUN})\s*が\s*(?P<b2>{NOUN})\s*の\s*\d+(?:\.\d+)?\s*(?:%|割|倍)\s*(?:を|より)?\s*"
    r"(?:超|以上|以下|未満|下回|上回|越え)"
)
"""「在庫数が発注点を下回っている行」: one column compared with another."""


def _columns_compared(reader: _Reader) -> None:
    """A condition comparing two columns (「在庫数が発注点を下回っている」) is refused:
    table.filter compares a column with a value only."""
    for match in _COLUMNS_COMPARED.finditer(reader.text):
        if not match.group("b2") and (
            re.fullmatch(rf"{AMOUNT}|{_DATE}", match.group("b"))
            or re.search(r"\d", match.group("b"))
            or re.search(
                r"(?:基準|上限|下限|限度|規定|目安|閾値|しきい値|ライン)(?:額|値)?$",
                match.group("b"),
            )
        ):
            continue  # 「金額が5万円を超える」「金額が基準を超える」: a value said or pointed at

        said = match.group(0)
        reader.refuse(
            "unsupported_action",
            f"「{said}」のような列どうしの比較で行を絞り込むことはできません"
            "（「在庫数が10以下」のように、数や日付と比べる条件で書いてください）",
            match,
        )


_RELATIVE_DATE = re.compile(
    r"(?:今日|本日|当日|現在|今)\s*(?:の\s*日付)?\s*(?:より|以前|以降|まで|から(?!\s*(?:お願い|担当|やって|頼|の作業))"
    r"|時点|を過ぎ|を超え)"
)
"""「返却期限が今日より前」: a date that changes with the day the Plan runs."""


_TWO_TOTALS = re.compile(
    rf"(?P<a>{NOUN})\s*(?:ごと|別)\s*の?[^。]{{0,24}}?(?:と|、|,)\s*(?P<b>{NOUN})\s*(?:ごと|別)\s*の?"
    r"[^。]{0,24}?(?:2つ|二つ|別々|別の表|それぞれ別|両方)"
)
"""「品種ごとの収穫量合計と、圃場ごとの合計、2つ作って」: two totals, each of its own."""


_COMPANY_FORMS = re.compile(
    r"(?:\(株\)|株式会社|\(有\)|有限会社)[^。]{0,40}?(?:揃え|そろえ|統一|整え|直し|直す)"
    # 「表記を揃え（(株)と株式会社など）」: the forms said after the verb
    r"|(?:揃え|そろえ|統一|整え)[ぁ-ん]{0,2}\s*\([^()]{0,20}?(?:\(株\)|株式会社|\(有\)|有限会社)"
)
"""「得意先名の表記ゆれ（㈱／株式会社、全角スペース）を揃える」: company forms unified."""
_VALUES_MAPPED = re.compile(
    r"\([^()]{0,60}?(?:→|⇒|->)[^()]{0,60}\)(?=[^。]{0,30}?(?:統一|揃え|そろえ|整え|直し|直す|まとめ))"
    r"|(?:表記|書き方|表記ゆれ|表記揺れ)[^。()]{0,12}\((?:[^()]|\([^()]{0,4}\)){0,60}?(?:→|⇒|->)[^()]{0,60}\)"
)
"""「配送業者名の表記（ヤマト/ｸﾛﾈｺﾔﾏﾄ → ヤマト運輸）を統一」: values mapped to other values."""
_VALUES_REWRITTEN = re.compile(
    r"(?:「[^」]{1,20}」(?:\s*[、・,/]?\s*「[^」]{1,20}」)+\s*(?:を|は)?\s*(?:→|⇒|->)?|を)\s*"
    r"「[^」]{1,20}」\s*(?:に|へ)\s*(?:統一|揃え|そろえ|置き換え|置換|変換|直|まとめ)"
)
"""「「総務」「総務部」を「総務課」に統一」: values rewritten to one value."""


_EITHER_CONDITION = re.compile(
    rf"(?P<col>{NOUN})\s*が\s*(?:空欄|空白|未入力|ブランク)\s*(?:か|または|もしくは|or)\s*(?:0|ゼロ|０)"
    rf"|(?P<col2>{NOUN})\s*が\s*(?:0|ゼロ|０)\s*(?:か|または|もしくは|or)\s*(?:空欄|空白|未入力|ブランク)"
)
"""「金額が空欄か0の行」: rows meeting either of two conditions."""
_PER_UNIT = re.compile(
    rf"(?:\d+|一)\s*(?:人|件|台|個|回|日|泊|名|席|本)\s*(?:あたり|当たり)\s*(?:の)?\s*(?P<y>{NOUN})"
    r"\s*(?:を|も)?\s*(?:出|計算|求め|算出|追加|足)"
)
"""「来園者1人あたり売上を出して」: a figure per unit, with no formula said."""
_TWO_COMPARED = re.compile(
    rf"(?P<a>{NOUN})\s*が\s*(?:違う|合わない|一致しない|異なる)\s*(?:もの|行)?\s*[・、,と]\s*"
    rf"(?P<b>{NOUN})\s*が\s*(?:違う|合わない|一致しない|異なる)"
)
"""「数量が違うもの・単価が違うもの」: two columns compared in one reconciliation."""


_REFUSED_SHAPES: tuple[
    tuple[re.Pattern[str], GapKind, Callable[[re.Match[str], str], str]], ...
] = (
    (  # table.filter keeps rows meeting every condition: 「A か B」 of two conditions is none
        _EITHER_CONDITION,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0)}」のように、どちらかに当てはまる行を残す処理は作れません"
            "（「空欄の行」と「0の行」を別々に指示してください）"
        ),
    ),
    (
        _PER_UNIT,
        "not_understood",
        lambda match, clause: (
            f"「{clause}」の「{match.group('y')}」の計算式が読み取れませんでした"
            "（「客単価＝売上÷来園者数」のように、作る列の名前と式を書いてください）"
        ),
    ),
    (  # table.reconcile compares one amount column
        _TWO_COMPARED,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0)}」のように2つの列を比べる照合は作れません（照合で比べられる列は"
            "1つです。列ごとに別々に指示してください）"
        ),
    ),
    (
        _VALUES_MAPPED,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0)}」のように値を別の値に書き換える処理は作れません"
            "（表記の統一でそろえられるのは全角・半角やスペース、(株)と株式会社の違いです）"
        ),
    ),
    (
        _VALUES_REWRITTEN,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0)}」のように値を別の値に書き換える処理は作れません"
            "（表記の統一でそろえられるのは全角・半角やスペースの違いです）"
        ),
    ),
    (  # the Plan runs on many days: a rule read from 「今日」 would silently drop it
        _RELATIVE_DATE,
        "not_understood",
        lambda match, clause: (
            f"「{clause}」の「今日」は実行する日によって変わるため、条件にできません"
            "（「返却期限が2025年4月1日より前」のように日付で書いてください）"
        ),
    ),
    (  # one Plan writes one table: one grouping by both would look like the answer
        _TWO_TOTALS,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0)}」のように、別々の集計を2つ作る処理は1つの手順"
            f"では作れません（「{match.group('a')}ごと」と「{match.group('b')}ごと」を別々に"
            "指示してください）"
        ),
    ),
    (  # two counts over different rows: a filter would leave the second one wrong
        _SOME_AND_ALL,
        "unsupported_action",
        lambda match, clause: (
            f"「{match.group(0).strip()}」のように、条件に合う行の件数と全体の"
            "件数を並べて出す処理は作れません（条件に合う行だけの件数と、全体の件数を別々に"
            "指示してください）"
        ),
    ),
)
"""Requests no step can build as said, refused rather than built as something that looks
like the answer: each pattern, the kind of gap and its message."""


def _company_forms(reader: _Reader) -> None:
    """「表記ゆれ（㈱／株式会社、全角半角）を揃える」: the normalisation writes company forms out
    too (text.normalize's ``company`` kind); with no normalisation read, it is asked."""
    step = reader.first_step("normalize")
    for match in _COMPANY_FORMS.finditer(reader.text):
        if step is None:
            clause = _clause(reader.text, match.start(), match.end())
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{clause}」で、どの列の「(株)」と「株式会社」をそろえるか"
                    "読み取れませんでした（「取引先名の(株)と株式会社をそろえて」のように書いてください）",
                    source=clause,
                )
            )
            continue
        step.company_forms = True
        reader.use(match.start(), match.end())


def _refused_shapes(reader: _Reader) -> None:
    for pattern, kind, message in _REFUSED_SHAPES:
        for match in pattern.finditer(reader.text):
            clause = _clause(reader.text, match.start(), match.end())
            reader.refuse(kind, message(match, clause), match)


_APPROVER = (
    rf"(?:[{_K}{_KATA}]{{0,6}}(?:長|上司|主任|支配人|責任者|マネージャー|マネジャー|リーダー|管理者"
    r"|承認者|役員|理事|監事|監査役|税理士|会計士|弁護士|先生|オーナー)"
    rf"|[{_K}{_KATA}]{{1,5}}\s*(?:さん|様|さま|氏))"
)
"""Someone other than the person asking (上長, 経理課長, 田中さん): an approver."""


def _approver(text: str, said: re.Match[str]) -> str | None:
    """Who approves, when the approval names someone else (「上長の承認を得てから」「課長に
    確認してもらってから」); None when nobody is named or the requester checks themselves
    (「私に確認させて」「担当者が確認してから」)."""
    before = text[: said.start()]
    if re.search(r"私|自分|わたし|僕|当方|担当者", before[-12:] + said.group(0)):
        return None
    aside = r"(?:\s*\([^()]{0,30}\))?"  # 「鈴木さん（ログイン名 suzuki）の承認」
    who = re.search(
        rf"(?P<who>{_APPROVER}){aside}\s*(?:の|に|から|が)\s*(?:[^\s、。]{{0,6}}?を\s*)?$", before
    ) or re.search(rf"(?P<who>{_APPROVER}){aside}\s*(?:の|に|から|が)", said.group(0))
    return who.group("who") if who else None


def _read_approval(reader: _Reader) -> None:
    match = next(
        (m for m in _APPROVAL.finditer(reader.text) if not reader.is_used(m.start(), m.end())),
        None,
    )  # 「「…は理事長の承認を要する」と定めています」: a rule quoted, no approval asked
    if match:
        step = StepSpec(id="", kind="approval", source=match.group(0))
        reader.add_step(match.start(), step)
        for said in _APPROVAL.finditer(reader.text, match.start()):
            if reader.is_used(*said.span()):
                continue  # 「承認を挟みたい。…ただし出力は課長がOKしてから」: one gate, said twice
            reader.use(said.start(), said.end())
            step.approver = step.approver or _approver(reader.text, said)
            after = _AFTER_APPROVAL.match(reader.text, said.end())
            if after:  # 「承認を受けてから」「承認を回してから」: when the output may be written
                reader.use(*after.span())
            approver = re.search(rf"{NOUN}\s*(?:の|に|から|が)\s*$", reader.text[: said.start()])
            if approver:  # 「担当弁護士の確認を挟んで」: the approver, no column
                reader.use(approver.start(), said.start())
        for before in re.finditer(
            r"(?:出力|保存|書き出し|提出|作成)\s*前\s*に|"
            r"(?:[^\s、。]{1,12}?\s*を\s*)?(?:作る|作成する|出す|出力する|保存する|提出する|渡す|確定する)"
            r"\s*前に|[^\s、。]{1,12}?\s*に\s*回(?:す\s*前に|さない\s*(?:よう|ように))",
            reader.text,
        ):
            reader.use(*before.span())  # 「精算表を作る前に課長の承認を」: the output, gated
        for pause in re.finditer(
            r"(?:一旦|いったん|一度|そこで)\s*(?:止め|とめ|ストップ|待っ|まっ)[ぁ-ん]{0,8}"
            r"|(?:承認|確認)待ち\s*(?:に|で)\s*(?:して|し|止め|とめ)[ぁ-ん]{0,8}"
            r"|(?:は)?\s*(?:保存|出力)\s*(?:せず|しないで)\s*(?:に)?\s*(?:止め|とめ|待っ|まっ)[ぁ-ん]{0,8}",
            reader.text,
        ):
            reader.use(*pause.span())  # 「承認をもらいたいので、一旦止めてください」: the gate


def _read_llm_steps(reader: _Reader) -> None:
    documents = [item for item in reader.inputs if item.format in ("pdf", "zip")]
    text = reader.text
    if documents:
        match = _EXTRACT.search(text)
        if match and not reader.overlaps(match.end() - 2, match.end()):
            fields = [
                f for f in _names(re.sub(r"^.*(?:から|より)", "", match.group("fields"))) if f
            ]
            reader.add_step(
                match.start(), StepSpec(id="", kind="extract", fields=fields, source=match.group(0))
            )
            reader.use(match.start(), match.end())
    quoted_spans = [(m.start(), m.end()) for m in re.finditer(r"「[^」]*」", text)]
    classify = next(
        (
            m
            for m in _CLASSIFY.finditer(text)
            if not any(a < m.start() < b for a, b in quoted_spans)  # 「推定漏水量」: a name
        ),
        None,
    )
    if classify and not reader.overlaps(classify.start(), classify.end()):
        listed = re.search(  # 「要望／苦情／感謝のどれかを」: the labels said as a list
            r"(?:[^\s、。/「」]+/){1,}[^\s、。/「」]+?(?=\s*(?:の\s*(?:どれか|いずれか)|で|に))",
            text[: (text.find("。", classify.end()) + 1 or len(text) + 1) - 1],
        )
        labels = (
            [_clean(label) for label in listed.group(0).split("/")]
            if listed
            else [
                _clean(q)
                for q in re.findall(r"「[^」]+」", text)
                if not reader.overlaps(*_span(text, q))
            ]
        )
        target = re.search(
            rf"(?P<col>{NOUN})\s*(?:を|に)\s*[^、。]{{0,6}}$", text[: classify.start()]
        )
        step = StepSpec(id="", kind="classify", labels=labels, source=classify.group(0))
        if target:
            step.columns = [_clean(target.group("col"))]
        reader.add_step(classify.start(), step)
        reader.use(classify.start(), classify.end())
        for quoted in re.finditer(r"「[^」]+」", text):
            if _clean(quoted.group(0)) in labels:
                reader.use(quoted.start(), quoted.end())


def _span(text: str, needle: str) -> tuple[int, int]:
    start = text.find(needle)
    return (start, start + len(needle)) if start >= 0 else (0, 0)


# --------------------------------------------------------------------------- documents


def _threshold_from_documents(reader: _Reader, documents: Sequence[str]) -> None:
    step = reader.first_step("filter")
    if step is None:
        return
    names = {str(c.value) for c in step.conditions if c.op == "==" and isinstance(c.value, str)}
    if not names:
        return
    has_amount = any(c.op in (">", ">=", "<", "<=") for c in step.conditions)
    if has_amount:
        return
    for document in documents:
        text = normalize(document)
        for name in names:
            for match in _FILTER_NUM.finditer(text):
                sentence_start = (
                    max(text.rfind("。", 0, match.start()), text.rfind("\n", 0, match.start())) + 1
                )
                if name not in text[sentence_start : match.end()]:
                    continue
                op = _op_of(match.group("op"))
                value = amount_value(match.group("num"))
                step.conditions.append(Condition(column=None, op=op, value=value))  # type: ignore[arg-type]
                step.missing.append(f"conditions.{len(step.conditions) - 1}.column")
                step.source += f" / 参考資料: {text[sentence_start : match.end()].strip()}"
                return


_POLICY_REFERENCE = re.compile(
    rf"(?:(?P<col>{QNOUN})\s*(?:が|の|で)\s*)?(?:この|その|上記の|同条の|同規程の|当該規程の|前記の)?\s*"
    r"(?:社内規程|規程|規定|規約|ルール|ポリシー)?の?\s*"
    r"(?P<ref>基準額|基準|上限額|上限|限度額|限度|(?<=の)額|(?<=の)金額|これ|それ"
    r"|(?<!どれかに|ずれかに|ちらかに)該当)\s*(?P<op>"
    + "|".join(f"(?:{words})" for words, _ in _OP_WORDS[:4])
    + r"|を超え(?:る|た|て)?|に該当|に当たる|に当てはまる|する)"
)


def _policy_sentences(reader: _Reader, documents: Sequence[str]) -> list[tuple[str, int, int]]:
    """Sentences that state a rule with an amount: 「…」 quotes of the instruction (their
    span), then the reference documents' sentences (span -1)."""
    found: list[tuple[str, int, int]] = []
    for match in re.finditer(r"「([^」]{6,})」", reader.text):
        if re.search(AMOUNT_WITH_UNIT, match.group(1)):
            found.append((match.group(1), match.start(), match.end()))
    for document in documents:
        for sentence in re.split(r"[。\n]", normalize(document)):
            if re.search(AMOUNT_WITH_UNIT, sentence):
                found.append((sentence.strip(), -1, -1))
    return found


AMOUNT_WITH_UNIT = rf"{NUM}\s*(?:万|千)?\s*円"


def _amounts(sentence: str) -> list[int | float]:
    """The yen amounts of a rule, per-unit words (1件あたり) left out."""
    return [
        amount_value(m.group(0))
        for m in re.finditer(AMOUNT_WITH_UNIT, sentence)
        if not re.match(r"\s*(?:あたり|当たり|につき)", sentence[m.end() :])
    ]


def _read_policy_reference(reader: _Reader, documents: Sequence[str]) -> None:
    """「税込金額が基準を超える」: the amount comes from a rule quoted in the instruction or
    written in a reference document (「1件あたり5,000円を超える会議費は…」)."""
    match = _POLICY_REFERENCE.search(reader.text)
    if match is None or reader.overlaps(match.start("ref"), match.end("ref")):
        return
    if match.group("ref") == "該当" and re.search(
        r"(?:「[^」]{1,15}」\s*[、・,]?\s*)+に\s*$", reader.text[: match.start("ref")]
    ):
        return  # 「仕入区分 が「小麦粉」「バター」に該当する行」: values listed, no rule's amount
    from sudachipy import tokenizer

    column = _column(match.group("col"))
    sentences = _policy_sentences(reader, documents)
    nouns = {
        reader.text[a:b] for a, b in _compound_nouns(reader.text, tokenizer) if b - a >= 2
    } - GENERIC_NOUNS
    scored = sorted(
        ((sum(1 for noun in nouns if noun in sentence[0]), -index, sentence)
         for index, sentence in enumerate(sentences)),
        reverse=True,
    )  # fmt: skip
    if (
        len(scored) > 1
        and scored[0][0] == scored[1][0]
        and _amounts(scored[0][2][0]) != _amounts(scored[1][2][0])
    ):
        reader.refuse(
            "not_understood",
            f"「{match.group(0)}」の基準に当たりそうな規程が複数あります"
            f"（「{scored[0][2][0]}」「{scored[1][2][0]}」）。金額を指示に書いてください",
            match,
        )
        return
    chosen = scored[0][2] if scored else None
    if chosen is None:
        reader.refuse(
            "not_understood",
            f"「{match.group(0)}」の基準の金額が、指示にも参考資料にもありません"
            "（「5,000円を超える」のように書くか、規程を参考資料として添付してください）",
            match,
        )
        return
    sentence, start, end = chosen
    if start >= 0:
        reader.use(start, end)
    amounts = _amounts(sentence)
    if not amounts:
        return
    rule_word = match.group("op") in ("に該当", "に当たる", "に当てはまる", "する")
    op = "==" if rule_word else _op_of(match.group("op"))
    if op == "==":  # 「これに該当する」: the rule's own comparison
        rule = re.search(
            rf"{AMOUNT_WITH_UNIT}\s*(?P<op>" + "|".join(f"(?:{w})" for w, _ in _OP_WORDS[:4]) + ")",
            sentence,
        )
        op = _op_of(rule.group("op")) if rule else ">"
    _condition(reader, column, op, amounts[0], match.start(), match.end(), match.group(0))
    reader.first_step("filter").source += f" / 規程: {sentence}"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- honesty


@lru_cache(maxsize=1)
def _dictionary() -> Any:
    from sudachipy import dictionary

    return dictionary.Dictionary()


_THREAD = threading.local()


def _tokenizer() -> Any:
    """A Sudachi tokenizer of this thread: they are not thread-safe (the API designs in
    worker threads), the dictionary is shared."""
    tokenizer = getattr(_THREAD, "tokenizer", None)
    if tokenizer is None:
        tokenizer = _THREAD.tokenizer = _dictionary().tokenizer()
    return tokenizer


def _action_words(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, base form) of each action word: a verb, or a サ変 noun before する."""
    from sudachipy import tokenizer

    morphemes = list(_tokenizer().tokenize(text, tokenizer.Tokenizer.SplitMode.C))
    for index, morpheme in enumerate(morphemes):
        pos = morpheme.part_of_speech()
        following = morphemes[index + 1].dictionary_form() if index + 1 < len(morphemes) else ""
        verb = pos[0] == "動詞" and (
            pos[1] != "非自立可能"
            or morpheme.dictionary_form() in STEP_VERBS
            or morpheme.dictionary_form() in _PRODUCE_VERBS
        )
        if verb or (
            pos[0] == "名詞"
            and (pos[2] == "サ変可能" or pos[1] == "普通名詞")  # 正規化する, 電子申請する
            and following in ("する", "できる", "願う")
        ):
            yield morpheme.begin(), morpheme.end(), morpheme.dictionary_form()
        elif pos[0] == "名詞" and _verbal_noun(morphemes, index):
            # 「…のものを抽出、」「担当者で並べ替え（昇順）」: a step said as a noun ends a clause
            base = morpheme.dictionary_form()
            if base in STEP_VERBS or base + "る" in STEP_VERBS:
                yield morpheme.begin(), morpheme.end(), base if base in STEP_VERBS else base + "る"
            else:  # 「…から重要そうな意見をピックアップ。」: an action no step is named by
                yield morpheme.begin(), morpheme.end(), base + "する"
        elif (
            morpheme.surface() == "化"
            and index > 0
            and following in ("する", "できる")
            and morphemes[index - 1].part_of_speech()[0] == "名詞"
        ):  # 「正規化したうえで」: a noun + 化 + する is one action
            previous = morphemes[index - 1]
            yield previous.begin(), morpheme.end(), previous.surface() + "化"


_READING_NOUNS = frozenset(
    {"使用", "利用", "参照", "読込", "読み込み", "取込", "取り込み", "入力"}
    | {"チェック", "確認", "点検", "検証", "把握", "精査"}
    | {"許容", "採用"}  # 「差は1,000円までを許容。」: a parameter of the step said with it
)
"""Nouns for reading a file (「謝金支払予定.csv を使用。」) or looking at what the steps give
(「数量の差異をチェック。」): no step of their own."""


def _verbal_noun(morphemes: Sequence[Any], index: int) -> bool:
    """True when a noun naming a step (抽出, 並べ替え) follows を/で and ends its clause."""
    base = morphemes[index].dictionary_form()
    before = morphemes[index - 1].surface() if index > 0 else ""
    after = morphemes[index + 1].surface() if index + 1 < len(morphemes) else "。"
    if base not in STEP_VERBS and base + "る" not in STEP_VERBS:
        # any サ変 noun after を that ends a line (「…意見をピックアップ。」) is an action too
        return (
            morphemes[index].part_of_speech()[2] == "サ変可能"
            and base not in _READING_NOUNS
            and base not in _PRODUCE_VERBS
            and before == "を"
            and after[:1] in "。"
        )
    return before in ("を", "で") and after[:1] in "、。,(（→>⇒"


_POTENTIAL_ENDINGS = {
    "れ": "る",
    "せ": "す",
    "け": "く",
    "げ": "ぐ",
    "て": "つ",
    "め": "む",
    "べ": "ぶ",
    "ね": "ぬ",
    "え": "う",
}


def _plain_verb(base: str) -> str:
    """A step verb said in its potential form (絞れる, 抜き出せる, 並べられる) as the verb."""
    if base in STEP_VERBS or not base.endswith("る"):
        return base
    candidates = [base[:-3] + "る"] if base.endswith("られる") else []
    if len(base) >= 3 and base[-2] in _POTENTIAL_ENDINGS:
        candidates.append(base[:-2] + _POTENTIAL_ENDINGS[base[-2]])
    return next((c for c in candidates if c in STEP_VERBS), base)


_CLAUSE_MARK = re.compile(r"[、。→⇒>?!]|,(?!\d{3})|[①-⑳]")


@lru_cache(maxsize=16)
def _clause_marks(text: str) -> tuple[int, ...]:
    """Where the clauses of ``text`` end, in order (a mark inside an aside ends none:
    「（全角・半角、ハイフンの違いなど）を統一」 is one clause). Kept per text: every rule asks."""
    asides = [(m.start(), m.end()) for m in re.finditer(r"\([^()]*\)", text)]
    return tuple(
        m.start()
        for m in _CLAUSE_MARK.finditer(text)
        if m.group(0) in "。" or not any(a < m.start() < b for a, b in asides)
    )


def _sentence_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding ``text[start:end]`` begins and ends (at 「。」 or the text's
    ends)."""
    stop = text.find("。", end)
    return text.rfind("。", 0, start) + 1, len(text) if stop < 0 else stop


def _clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    marks = _clause_marks(text)
    before = bisect.bisect_left(marks, start)
    left = marks[before - 1] + 1 if before else 0
    after = bisect.bisect_left(marks, end)
    return left, marks[after] if after < len(marks) else len(text)


def _clause(text: str, start: int, end: int) -> str:
    left, right = _clause_span(text, start, end)
    return text[left:right].strip()


def _explained(reader: _Reader, kinds: frozenset[str], start: int, end: int) -> bool:
    """True when a step of one of ``kinds`` was read from the clause of ``start..end``
    (a step word such as 抽出 or 合計 is explained only by its own clause)."""
    if reader.is_used(start, end):
        return True
    left, right = _clause_span(reader.text, start, end)
    clause = reader.text[left:right]
    pointing = re.search(  # 「以下の条件で抽出」「上記条件で抽出」: the lines below or above
        r"(?:以下|次|下記)\s*(?:の|を|に)|(?:上記|前記|上)\s*の?\s*(?:\d+\s*つ?の?\s*)?(?:条件|内容|とおり|通り)"
        r"|(?:上記|前記)\s*で"  # 「※…のため①で除外」 (①: 上記): the step above
        r"|^\s*(?:で|の条件で|これらで|以上で)\s*(?=絞|抽出|抜き出|取り出)",  # 「・…。で絞って」
        clause,
    )
    after = re.match(
        r"[ぁ-ん]{0,3}?(?:あと|後|うえで|上で|てから)|た\s*(?:もの|結果|データ|行|一覧|リスト|表)",
        reader.text[end:],
    )
    sentence = _sentence_span(reader.text, start, end)
    wish = re.search(r"たい(?:です|と思います|と思っています|のですが)?\s*$", clause)
    if re.search(r"(?:以下|下記|次)\s*の\s*(?:とおり|通り)", clause) and any(
        position > right for position, _ in reader.steps
    ):
        return True  # 「以下の通り抽出願います。①…」: it heads the steps below, whatever they are
    for position, step in reader.steps:
        if step.kind not in kinds:
            continue
        if pointing or (after and position < start):
            return True  # 「絞ったあと…」: the step said before, referred back to
        if wish and position > right:
            return True  # 「リコール対象を抽出したいです。・最終来院日が…」: the lines below
        if step.kind == "filter" and sentence[0] <= position < start:
            return True  # 「金額500千円以上だけ見たいので、一覧.xlsxから絞り込んで」
        if step.kind in ("reconcile", "join", "concat", "approval"):
            return True  # their results are described in clauses of their own
        if any(name and name in clause for name in _parameter_names(step)):
            return True
        for piece in step.source.split(" / "):
            piece = piece.strip()
            position = reader.text.find(piece, max(0, left - len(piece))) if piece else -1
            if 0 <= position < right and position + len(piece) > left:
                return True
    return False


def _parameter_names(step: StepSpec) -> list[str]:
    return [
        *(str(c.column) for c in step.conditions if c.column),
        *step.group_by,
        *(k for k in step.metrics if k != COUNT_ALL),
        *step.by,
        *step.columns,
        *step.keys,
        *step.expressions,
        *(name for name in (step.date_column, step.right_date_column) if name),
    ]


RESTRICTION_WORDS = re.compile(r"(?<![るたてうだい])(?:だけ(?!れ?ど)|のみ)|に限る|に限定|に絞")
"""Words that restrict the rows: explained only by a filter / select read from the clause."""


GENERIC_NOUNS = frozenset(
    [
        "あり",  # 「得意先名にゆれあり」: a remark on the data
        "列追加",  # 「…を計算して列追加」: the computed column
        "限定",
        "うえ",
        "上で",
        "とき",
        "こと",
        "やつ",
        "規程",
        "社内規程",
        "規定",
        "ルール",
        "いくつ",
        "いくら",
        "ほう",
        "方",
        "全部",
        "全件",
        "それぞれ",
        "各々",
        "並び順",
        "並び",
        "順番",
        "少額",
        "高額",
        "流れ",
        "かたち",
        "形",
        "OK",
        "ＯＫ",
        "あと",
        "後",
        "先",
        "前",
        "次",
        "最初",
        "まず",
        "数値",
        "全角",
        "半角",
        "表記",
        "書式",
        "書き方",
        "形式",
        "文字列",
        "文字",
        "文言",
        "言葉",
        "単語",
        "本",
        "行",
        "列",
        "明細",
        "データ",
        "一覧",
        "リスト",
        "表",
        "ファイル",
        "結果",
        "件",
        "分",
        "もの",
        "今月",
        "今回",
        "前回",
        "先月",
        "今期",
        "前月",
        "月次",
        "毎月",
        "確認",
        "用",
        "各",
        "全体",
        "全件",
        "内容",
        "情報",
        "形式",
        "名前",
        "項目",
        "値",
        "条件",
        "対象",
        "以下",
        "以上",
        "未満",
        "超",
        "順",
        "別",
        "ごと",
        "毎",
        "とき",
        "場合",
        "際",
        "それ",
        "これ",
        "その",
        "この",
        "方",
        "ため",
        "上",
        "中",
        "後",
        "前",
        "時",
        "形",
        "方法",
        "手順",
        "処理",
        "作業",
        "お願い",
        "資料",
        "元データ",
        "元",
        "シート",
        "ブック",
        "名",
        "名称",
        "集計表",
        "一覧表",
        "表示",
        "出力",
        "入力",
        "読込",
        "読み込み",
        "取込",
        "帳票",
        "CSV",
        "Excel",
        "エクセル",
        "xlsx",
        "csv",
        "xlsm",
        "UTF",
        "SJIS",
        "Shift_JIS",
        "JIS",
        "文字コード",
        "全角",
        "半角",
        "スペース",
        "揺れ",
        "ゆれ",
        "ブレ",
        "カナ",
        "表記",
        "書き方",
        "ゆれ",
        "バラバラ",
        "大きい",
        "多い",
        "小さい",
        "少ない",
        "高い",
        "低い",
        "新しい",
        "古い",
        "早い",
        "遅い",
        "降順",
        "昇順",
        "レコード",
        "件数",
        "人数",
        "合計",
        "平均",
        "最大",
        "最小",
        "いずれ",
        "どれ",
        "はい",
        "いいえ",
        "種類",
        "セル",
        "枠",
        "列名",
        "見出し",
        "中身",
        "本文",
        "部分",
        "全て",
        "すべて",
        "全部",
        "ほか",
        "他",
        "残り",
        "うち",
        "もと",
        "最初",
        "最後",
        "複数",
        "片方",
        "両方",
        "必要",
        "不要",
        "一部",
        "本日",
        "当月",
        "翌月",
        "前年",
        "期末",
        "期首",
        "年度",
        "上期",
        "下期",
        "四半期",
        "たび",
        "都度",
        "まま",
        "そのまま",
        "同士",
        "同様",
        "通り",
        "次",
        "以降",
        "以前",
        "合計額",
        "総額",
        "単位",
        "ぶん",
        "程度",
        "分析",
        "検討",
    ]
)
"""Nouns that name rows, files, the steps or their wording: never a parameter on their own."""


def _names_rows(reader: _Reader, start: int, end: int) -> bool:
    """「45時間を超えた社員を抽出」: the noun right after a condition names the rows it keeps."""
    head = re.sub(r"\s*\([^()]*\)\s*$", "", reader.text[:start])  # 「入っている（空欄でない）人」
    before = head[-4:]
    after = reader.text[end : end + 8]
    touches = any(b <= len(head) and len(head) - b <= 4 for _, b in reader.used)
    return (
        touches
        and bool(re.search(r"(?:た|の|い|[うくぐすつぬぶむる])\s*$", before))  # 「…を含む生徒」
        and bool(
            re.match(
                r"\s*(?:さん|様|さま|たち)?\s*(?:を|だけ|のみ|は|が|に|の\s*(?:行|もの|分|データ))",
                after,
            )
        )
    )


def _compound_nouns(text: str, tokenizer: Any) -> Iterator[tuple[int, int]]:
    """Spans of compound nouns: consecutive noun morphemes (外注 + 先 → 外注先), numbers
    and counters left out."""
    start = end = -1
    for morpheme in _tokenizer().tokenize(text, tokenizer.Tokenizer.SplitMode.C):
        pos = morpheme.part_of_speech()
        noun = pos[0] == "名詞" and pos[1] != "数詞" and pos[2] != "助数詞可能"
        if noun and morpheme.begin() == end:
            end = morpheme.end()
            continue
        if start >= 0:
            yield start, end
        start, end = (morpheme.begin(), morpheme.end()) if noun else (-1, -1)
    if start >= 0:
        yield start, end


_RECONCILE_RESULTS = frozenset(
    {
        "未入金",
        "入金漏れ",
        "金額違い",
        "差異",
        "不一致",
        "過不足",
        "過入金",
        "未消込",
        "差額",
        "一致",
        "請求漏れ",
        "過大請求",
        "過少請求",
        "未請求",
        "二重請求",
        "支払漏れ",
        "金額差異",
        "差額あり",
        "片方だけ",
        "片方のみ",
        "差異一覧",
        "差異リスト",
        "差異チェック",
        "突合結果",
        "照合結果",
    }
)


def _known_words(reader: _Reader) -> set[str]:
    """The words the reading used: generic and step words, files, parameters, outputs."""
    words: set[str] = set(GENERIC_NOUNS) | set(STEP_VERBS) | set(_GLUE_ACTIONS)
    for item in reader.inputs:
        words.update((item.holds, item.sheet or ""))
    for _, step in reader.steps:
        words.update(_parameter_names(step))
        words.update(name for name in (step.amount_column, step.right_amount_column) if name)
        words.update(str(c.value) for c in step.conditions if c.value is not None)
        words.update(step.labels + step.fields)
        for expression in step.expressions.values():  # 「単価 と 数量 から 小計(単価 × 数量)」
            words.update(m.group(0) for m in re.finditer(NOUN, expression))
        if COUNT_ALL in step.metrics:  # 「夜勤回数を出して」: the count's own name
            words.update(
                m.group(0) for m in re.finditer(rf"{NOUN}(?:回数|件数|人数|者数)", reader.text)
            )
        if step.kind == "reconcile":  # what a reconciliation shows (its sheets)
            words.update(_RECONCILE_RESULTS)
        if step.kind == "approval":  # 「課長の承認を入れて」: the person who approves
            words.update(m.group(0) for m in _PERSON.finditer(reader.text))
    return {word for word in words if word}


def _file_words(reader: _Reader) -> set[str]:
    """The names of the files read and written, and each part of them (「売上_2024」: 売上): a
    noun said only as a part of a name (単価 of 高単価部品.xlsx) is no word the reading used."""
    names = [item.holds for item in reader.inputs] + [item.sheet or "" for item in reader.inputs]
    for output in reader.outputs:
        names += [output.file_name or "", output.sheet or ""]
        names.append(re.sub(r"\.[A-Za-z]+$", "", output.file_name or ""))
    return {part for name in names for part in (name, *re.split(r"[_\-\s]", name)) if part}


_PRODUCE_VERBS = frozenset(
    {"出す", "求める", "作る", "作成", "出力", "書き出す", "まとめる", "教える", "知る"}
)
"""Verbs that ask for a result: 「予算との差異も出して」 names what it wants by its nouns."""


_DESCRIBES = re.compile(
    r"\s*(?:し)?(?:た(?![いら])|ている|てる|てある)\s*[^\s、。てでに]|\s*(?:し)?ます(?!か|ので)"
)
"""「会計ソフトから出力した預金元帳.csv」「別々に出しているCSV」: a verb that describes a
noun (past or ongoing, before it) asks for nothing."""


_CHAIN_ARROW = re.compile(r"[→⇒>]")


def _chain_step(text: str, start: int, end: int) -> bool:
    """True when ``start..end`` is a whole step of an arrow chain (「名簿.xlsx → 地域が関東 →
    CSV」): an arrow before or after its clause, nothing else in it."""
    left, right = _clause_span(text, start, end)
    before = text[:left].rstrip()
    after = text[right:]
    lead = _FILE_NAME.sub("", text[left:start]).strip()  # 「受注.csv 納期が… かつ 種別が…」
    return (
        (not lead or bool(re.search(r"(?:かつ|且つ)$", lead)))
        and not text[end:right].strip()
        and (bool(_CHAIN_ARROW.search(before[-1:])) or bool(_CHAIN_ARROW.match(after)))
    )


_BARE_VALUE = r"(?:「[^」]{1,30}」|[A-Za-z0-9\u4e00-\u9fff\u30a1-\u30faー._\-]{1,20})"
"""A value said with no particle or verb (「O型」「犬」「「完了」」)."""


def _working_clauses(text: str) -> set[tuple[int, int]]:
    """Clauses that ask for a step (a step word, a restriction, 別 / ごと / 順), and a
    clause that goes on into one (「資産区分 が 工具器具備品 で、取得価額 が…を抽出」)."""
    working = {
        _clause_span(text, start, end)
        for start, end, base in _action_words(text)
        if base in STEP_VERBS or (base in _PRODUCE_VERBS and not _DESCRIBES.match(text, end))
    }
    for match in re.finditer(
        rf"{RESTRICTION_WORDS.pattern}|{_ASKS_IN_ASIDE.pattern}"
        r"|(?<![個特区差判識])別(?!々|途)|ごと|毎|順|の列|列を|列は|列で|項目は|項目を"
        r"|どれくらい|どのくらい|どれぐらい|何件|何人|何社|いくつ",  # 「…ってどれくらいある？」
        text,
    ):
        if _in_file_only(text, match.start()):
            continue
        working.add(_clause_span(text, match.start(), match.end()))
    for clause in re.finditer(
        r"[^、。]+", text
    ):  # 「…の人だけ、血液型がO型かA型。」: a bare condition
        if re.fullmatch(
            rf"\s*{QNOUN}\s*が\s*{_BARE_VALUE}(?:\s*(?:か|または|もしくは)\s*{_BARE_VALUE})*\s*",
            clause.group(0),
        ) and not re.search(r"(?:です|ます|でした|ました|ない|ある|いる)\s*$", clause.group(0)):
            working.add(_clause_span(text, clause.start(), clause.end() - 1))
    settings = [
        (clause, setting)
        for clause in re.finditer(r"[^。]+", text)
        if (setting := _SETTING.match(clause.group(0)))
    ]
    for clause, setting in settings:  # each line of a settings block asks for something
        if _NOT_CONDITION_HEADS.match(setting.group("key").strip()) or _FILE_NAME.search(
            setting.group("value")  # 「上期分: 経費_上期.csv」
        ):
            continue
        for piece in re.finditer(r"[^、]+", clause.group(0)):
            at = clause.start() + piece.start()
            working.add(_clause_span(text, at, at + len(piece.group(0)) - 1))
    for arrow in _CHAIN_ARROW.finditer(text):  # each step of 「A → B → C」 asks for something
        if not text[: arrow.start()].rstrip().endswith("。"):  # (a line opening with → is not)
            working.add(_clause_span(text, arrow.start() - 1, arrow.start() - 1))
        if arrow.end() < len(text):
            working.add(_clause_span(text, arrow.end(), arrow.end()))
    for left, _right in sorted(working, reverse=True):
        if left > 1 and text[left - 1] == "、":
            before = _clause_span(text, left - 2, left - 1)
            said = text[before[0] : before[1]]
            joined = re.match(r"\s*(?:かつ|且つ|および|及び|または|又は|もしくは)", text[left:])
            if (
                joined
                or re.search(r"(?:で|かつ|且つ)\s*$", said)
                or (
                    re.search(r"(?:について|に関して|のうち|の中で)\s*$", said)
                    and not _FILE_NAME.search(said)  # 「売上一覧.csvについて」: the file
                    and not re.search(
                        r"(?:各|全|すべての|全ての)\s*[^、。]{1,12}(?:について|に関して)$", said
                    )
                )
            ):
                working.add(before)  # 「営業部の交通費について、社員別に…」: the rows it is about
    return working


_FROM_WHERE = re.compile(
    r"\s*(?:\d{1,2}\s*(?:社|店舗?|拠点|か所|箇所|校|園))?\s*(?:から|より|で|が|に)\s*[^、。\s]{0,8}?"
    r"(?:[っいきしれ]た|て(?:き|い|あ)[たる]|て(?:い|おり)ます)"
    r"(?![いら])\s*(?=[^\s、。てでにをがは])|\s*からの\s*(?=[^\s、。])"
)
"""「仕入先から届いた請求明細」「会計ソフトから出力した元帳」: a noun in a clause that
says where a file came from, not a parameter."""


_DESCRIBING_VERB = re.compile(
    r"\s*(?:し|さ)(?:た|ている|てる|ております|ておる|てある|れた|れている)(?![ぁ-ん])\s*"
    rf"(?P<what>{NOUN}(?:\.[A-Za-z]+)?)"
)
_FILE_WORD = re.compile(
    r"(?:データ|明細|一覧|台帳|リスト|名簿|ファイル|記録|帳|表|CSV|Excel|xlsx|csv)$"
)


def _describes_a_file(reader: _Reader, end: int) -> bool:
    """「銀行からダウンロードした入金明細」「こちらで管理している 発注台帳.xlsx」: a verbal
    noun describing the file that follows, no column (「最近入塾した生徒」 describes rows: it
    stays a question)."""
    described = _DESCRIBING_VERB.match(reader.text, end)
    return described is not None and bool(_FILE_WORD.search(described["what"]))


_ASKS_IN_ASIDE = re.compile(r"除[いくき外]|外し|外す|抜いて|だけ|のみ|含めない|対象外")
_FILE_ONLY = re.compile(
    r"(?:データ|ファイル|一覧|リスト|表)\s*(?:だけ|のみ)\s*で\s*(?:大丈夫|いい|OK|結構|構いません|十分)"
)
"""「データだけで大丈夫です」: the file is all that is wanted; no rows are kept or dropped."""


def _in_file_only(text: str, at: int) -> bool:
    return any(m.start() <= at < m.end() for m in _FILE_ONLY.finditer(text))


"""An aside in parentheses that asks to drop or keep rows (「(退所の人は除いて)」)."""


_ASIDE_SETTING = re.compile(r"[^\s:=()、,]{1,12}\s*[:=]\s*[^\s:=()]")
"""「（行：チェックイン月、値：宿泊売上の合計）」: an aside of keys and values gives parameters."""


def _remark_spans(aside: re.Match[str]) -> list[tuple[int, int]]:
    """The parts of an aside that are remarks: all of it, but for its pieces of keys and
    values (「（行：チェックイン月、値：宿泊売上の合計）」), which give parameters."""
    if not _ASIDE_SETTING.search(aside.group(0)):
        return [aside.span()]
    return [
        (aside.start() + piece.start(), aside.start() + piece.end())
        for piece in re.finditer(r"[^、,/]+", aside.group(0))
        if not _ASIDE_SETTING.search(piece.group(0))
    ]


def _aside_asks_unread(reader: _Reader, aside: re.Match[str]) -> bool:
    """True when an aside asks to drop or keep rows and no condition was read in it or right
    before it (「(OBの方は対象外に)」 is checked word by word; 「冷凍・冷蔵のもの(常温は除く)」
    and 「(…は 在籍区分 が「退所」なので、それは除いて)」 were read)."""
    if not _ASKS_IN_ASIDE.search(_FILE_ONLY.sub("", aside.group(0))):
        return False
    return not any(
        aside.start() <= start < aside.end() or 0 <= aside.start() - end <= 6
        for start, end in reader.condition_spans
    )


_LATIN_STEP_WORDS = frozenset(
    {"sort", "join", "filter", "output", "desc", "asc", "group", "sum", "count", "by", "csv"}
)


def _in_a_known_latin_name(text: str, start: int, end: int, words: set[str]) -> bool:
    """「vendor_name と payment_terms を vendor_code で join」: a part of a Latin name a rule
    read (the tokenizer splits it at _), or an English step word, is no column of its own."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", text[start:end]):
        return False
    left = start
    while left > 0 and re.match(r"[A-Za-z0-9_]", text[left - 1]):
        left -= 1
    right = end
    while right < len(text) and re.match(r"[A-Za-z0-9_]", text[right]):
        right += 1
    token = text[left:right]
    return token in words or token.lower() in _LATIN_STEP_WORDS


def _unused_nouns(reader: _Reader, named: set[str]) -> None:
    """A content noun no rule used, in a clause that asks for a step, is named: a column
    or value the rules missed must not be dropped silently. Remarks, purposes, reasons
    (…なので) and asides in parentheses are not read."""
    from sudachipy import tokenizer

    text = reader.text
    words = _known_words(reader)
    files = _file_words(reader)
    normalized = reader.first_step("normalize") is not None  # 「空白ゆれ」 says what it unifies
    working = _working_clauses(text)
    for first, last in reader.numbered_lines:  # a numbered step of which nothing was read
        if reader.overlaps(first, last):
            continue
        for piece in re.finditer(r"[^、。]+", text[first:last]):
            at = first + piece.start()
            working.add(_clause_span(text, at, at + len(piece.group(0)) - 1))
    parentheses = [
        span
        for m in re.finditer(r"\([^()]*\)", text)
        if not _aside_asks_unread(reader, m)
        for span in _remark_spans(m)
    ]
    unused: dict[str, list[str]] = {}
    for start, end in _compound_nouns(text, tokenizer):
        surface = text[start:end].strip()
        clause = _clause(text, start, end)
        if (
            len(surface) < 2
            or _clause_span(text, start, end) not in working
            or re.search(r"(?:ので|ため|たくて)\s*$", clause)  # 「…をつかみたくて」: why
            # 「店舗ごとの状況を把握したいです」: what the result is for
            or re.search(
                r"(?:把握|検討)\s*したい\s*(?:です|と思います|と思っています)?\s*$", clause
            )
            or re.search(  # 「シフトを組むのに使います」: what the result is for
                r"(?:のに|ために|の\s*ため\s*に|用に)\s*使(?:う|います|いたい|います)\s*$", clause
            )
            or any(a <= start and end <= b for a, b in parentheses)
            or _names_rows(reader, start, end)
            or reader.overlaps(start, end)
            or any(surface in word for word in words)
            or surface in files
            or (normalized and (_NOTATION_WORDS.search(surface) or re.search("ゆれ|揺れ", surface)))
            or (any(surface in name for name in files) and _DOCUMENT_WORDS.search(surface))
            or _GENERIC.search(surface)
            or _in_a_known_latin_name(text, start, end, words)
            or _FROM_WHERE.match(text, end)
            or re.search(r"(?:用|向け)$", surface)
            # 「【依頼内容】…」「【納品形式】Excel」: a form's field label, no column
            or (
                re.match(r"\s*:", text[end:])
                and re.fullmatch(
                    r"(?:依頼|納品|希望|提出|作業|処理|対象)?(?:内容|形式|区分|部署|納期|期限|担当|備考"
                    r"|目的|件名|宛先|依頼者|提出先|用途|種別|方法|部門)",
                    surface,
                )
            )
            # 「貴社の「売掛金残高.csv」」「当院の…」: whose data it is, no column
            or re.fullmatch(
                r"(?:貴|当|弊|御|本)(?:社|院|店|園|校|所|事務所|法人|会|組合|館|行)", surface
            )
            # 「敷金精算の件で」「監事監査の準備で」「…のチェック用」: what the request is about
            or re.match(
                r"\s*の\s*(?:件|準備|関係|都合)\s*(?:で|です|ですが|なのですが|につき)", text[end:]
            )
            or (  # 「決算準備で、…」: the occasion, said as one word before a comma
                re.search(r"(?:準備|対策|対応)$", surface)
                and re.match(r"\s*(?:で|なので|のため)\s*[、,]", text[end:])
            )
            or re.match(
                r"\s*(?:の\s*)?締め", text[end:]
            )  # 「月末(の)締めで」: when the books close
            or re.match(r"\s*(?:な|だ)\s*(?:ので|から)", text[end:])  # 「同じ様式なので」: why
            or re.fullmatch(  # 「一回承認」「何回も申し込んでる」「最終的には」: no column
                r"(?:一|1)\s*(?:回|度)|一旦|今回|毎回|都度|何回|何度|最終的|直後|直前|要領|一致扱い"
                r"|ぜんぶ|全部|みんな|その後|そのあと|対応|転送",
                surface,
            )
            or re.match(  # 「点検の順番決めに使うから」「会議資料に貼るので」: a purpose
                r"\s*(?:の\s*[^\s、。をがは]{1,8}?\s*)?(?:に|で|へ)\s*"
                r"(?:使(?:う|います|いたい)|貼(?:る|ります|り付ける)|載せる|渡(?:す|します)|配(?:る|ります)"
                r"|提出(?:する|します)|報告(?:する|します)|共有(?:する|します)|掲示(?:する|します))"
                r"\s*(?:から|ので|ため|予定|つもり|。|$)",
                text[end:],
            )
            or _describes_a_file(reader, end)
        ):
            continue
        unused.setdefault(clause, []).append(surface)
    for start, end in _compound_nouns(text, tokenizer):
        surface = text[start:end].strip()
        chopped = [
            name
            for _, step in reader.steps
            for name in _parameter_names(step)
            if surface.endswith(name)
            and surface != name
            and re.search(rf"[{_K}][ぁ-ん]+$|[{_K}][ぁ-ん]+[{_K}]", surface[: -len(name)])
            and surface not in words
        ]
        if chopped:  # 「問い合わせ経路」 read as 「経路」: a column name cut short is asked
            clause = _clause(text, start, end)
            named.add(clause)
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{surface}」のうち「{chopped[0]}」だけを列名として読みました。"
                    f"列名が「{surface}」なら、かぎかっこで「{surface}」と書いてください",
                    source=clause,
                )
            )
    for clause, nouns in unused.items():
        if clause in named:
            continue
        named.add(clause)
        shown = "」「".join(dict.fromkeys(nouns))
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」の「{shown}」をどう使うか読み取れませんでした"
                "（列名なら「〇〇が」「〇〇別に」のように、何をするかと一緒に書いてください）",
                source=clause,
            )
        )


_PERSON = re.compile(
    r"(?:課長|部長|上長|上司|承認者|責任者|社長|所長|院長|店長|理事長|マネージャー|管理者"
    r"|[\u4e00-\u9fff]{1,4}長(?![\u4e00-\u9fff])|[\u30a1-\u30fa\u30fc]*(?:マネージャー|リーダー))"
    r"(?!\s*(?:名|番号|ID|コード|区分|欄))"  # 「チームリーダー名」: a column
)
"""People who approve: named in an instruction, they are there for an approval."""


def _read_people(reader: _Reader, named: set[str]) -> None:
    """A person named with no approval read (「課長に見てもらってから」) is a gap: an
    approval asked for must never be dropped from the flow."""
    if reader.first_step("approval") is not None:
        return
    for match in _PERSON.finditer(reader.text):
        clause = _clause(reader.text, match.start(), match.end())
        if clause in named or reader.is_used(match.start(), match.end()):
            continue
        own_task = r"\s*(?:が|で)\s*(?:やり|やる|行い|行う|対応|入力|担当)"
        if re.match(own_task, reader.text[match.end() :]):
            continue  # 「（給与ソフトへの入力は教室長がやります）」: their own task, after the flow
        if re.search(r"(?:ので|ため|たく|たくて)\s*$", clause) and not re.search(
            r"見|確認|承認|チェック|OK|了承|決裁", clause
        ):
            continue  # 「これが組合長に上がる数字なので」「社長に報告したく」: why, no step
        if re.match(
            r"\s*(?:から|より)(?:[^。]{0,40}?(?:言われ|頼まれ|依頼され|指示され|相談され|聞かれ|求められ)"
            r"|(?:の)?\s*(?:ご?依頼|転送|ご?相談|ご?指示|メール|連絡))",
            reader.text[match.end() :],
        ):
            reader.use(match.start(), match.end())
            continue  # 「店長から…に使いたいと言われたので」: who asked, no step of theirs
        named.add(clause)
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」で{match.group(0)}に何をしてもらうか読み取れませんでした"
                "（承認なら「課長の承認を受けてから出力」のように書いてください）",
                source=clause,
            )
        )


_DESCRIBED = re.compile(
    r"\s*(?:さ(?:れ|せ)|され|されて|されてい|している|してる|してある|していま|した(?![いら])"
    r"|(?<=[^\s])(?:た|ている|てる|ています|てます|ておりま)(?![いら])|しま(?:した|す)"
    r"|(?:て|っ)(?:くる|きた|きて)\s*(?=[^\s、。てでにをがは])"
    r"|[ぁ-ん]{0,2}?てしまって(?:いて|いる|います|おり|いま)?"
    r"|[んっ]?[でて]いて(?![ぁ-ん]*(?:ください|下さい|ほしい|欲しい))"
    r"|[んっ]?でい(?:る|た|ます)(?![いらりろ])\s*(?=[^\s、。てでにをがは])"
    r"|[ぁ-ん]{1,4}?(?:た|ている|てる)(?![いらりろ])\s*(?=[^\s、。てでにをがは]))"
)
"""After an action word: a passive, a state or a past that describes the data."""


_SHAPES = (
    (r"(?:1|一)\s*(?:本|つ|枚|ファイル)\s*(?:に|の)", "concat"),  # 「1本のCSVにまとめて」
    (  # 「3店舗分の実績を連結」「3か月分のファイルを縦につなげる」「3店舗の問合せを1本に」
        r"\d+\s*(?:店舗|店|拠点|ファイル|支店|部署|営業所|施設|校|つ|か月|ヶ月|カ月|年|年度|期|四半期|週)"
        r"\s*(?:分|とも|の)",
        "concat",
    ),
    (r"(?:1|一)\s*(?:件|行|人|名)\s*(?:に|として|だけ)", "dedupe"),  # 「重複している人は1件に」
    (r"(?:1|一)\s*回\s*を?\s*挟", "approval"),  # 「部長の確認を1回挟む」
    (r"ランキング\s*(?:に|で|形式|表)?", "sort"),  # 「多い順にランキングにして」
    (r"\d+\s*(?:名|人|件|社|つ)\s*分", "filter"),  # 「田中・佐藤・鈴木 の3名分」
)
"""Numbers that say the shape of a step read elsewhere, consumed only with that step."""


def _number_of(text: str) -> float | None:
    try:
        return float(amount_value(text.strip()))
    except ValueError:
        return None


def _values_read(reader: _Reader) -> set[float]:
    """Every number a step took (condition values, tolerance, window, formula numbers)."""
    values: set[float] = set()
    for _, step in reader.steps:
        for condition in step.conditions:
            if isinstance(condition.value, int | float) and not isinstance(condition.value, bool):
                values.add(float(condition.value))
        if step.tolerance is not None:
            values.add(float(step.tolerance))
        if step.date_window_days is not None:
            values.add(float(step.date_window_days))
        for expression in step.expressions.values():
            values.update(float(n.replace(",", "")) for n in re.findall(NUM, expression))
    return values


_KEEPING_VERBS = frozenset({"含める", "入れる", "載せる", "残す", "出す", "出力", "表示"})
"""Verbs whose negation drops rows (「返品の行は含めないで」): never nothing asked."""


def _named_once(reader: _Reader, named: set[str], clause: str, message: str) -> None:
    """Name what ``clause`` says that could not be read, once per clause."""
    if clause not in named:
        named.add(clause)
        reader.gaps.append(Gap(kind="not_understood", message=message, source=clause))


def _read_leftovers(reader: _Reader) -> None:  # noqa: C901 (one rule per branch)
    text = reader.text
    named: set[str] = set()
    asides = [(m.start(), m.end()) for m in re.finditer(r"\([^()]*\)", text)]
    for start, end, base in _action_words(text):
        base = _plain_verb(base)
        if (
            reader.context_rules
            and _PRACTICE_AFTER.match(text, end)
            and not _REQUEST_FORM.search(_clause(text, start, end))
        ):
            reader.use(*_clause_span(text, start, end))  # 「毎月、目視で突き合わせており」
            reader.context_used = True
            continue
        if base in STEP_VERBS:
            if _explained(reader, STEP_VERBS[base], start, end):
                continue
            if (
                "normalize" in STEP_VERBS[base]
                and reader.first_step("normalize")
                and _NOTATION_WORDS.search(_clause(text, start, end))
            ):
                continue  # 「精算者の全角・半角、スペースのゆれを統一する」: the same step
            if (
                _LIMIT_WORD.search(_clause(text, start, end))
                and base in ("残す", "絞る", "抽出", "抜き出す")
                and any(step.kind == "sort" and step.limit for _, step in reader.steps)
            ):
                continue  # 「多い順に上位10分類を残す」: the rows the sort keeps
            if re.match(r"[ぁ-ん]{0,2}?\s*(?:前|まえ|あと|後)\s*(?:に|で|は)", text[end:]) and any(
                step.kind in STEP_VERBS[base] for _, step in reader.steps
            ):
                continue  # 「並べる前に…除いて」: when another step runs, the step read elsewhere
        elif base in _GLUE_ACTIONS or reader.is_used(start, end):
            continue
        if re.fullmatch(r"あわせ|併せ|合わせ", text[start:end]) and re.match(
            r"て(?![ぁ-ん])", text[end:]
        ):
            continue  # 「あわせて品名も直して」: also, no action
        if re.match(r"られ", text[end:]):  # 「社長から見直しを求められて」: asked of the writer
            reader.use(*_clause_span(text, start, end))
            continue
        if (
            re.match(r"[ぁ-ん]{0,3}?(?:なくて|ないで|なくても|なく|ず|ません|なかった)", text[end:])
            and base not in _KEEPING_VERBS
        ):  # 「列名は変えなくて大丈夫」「精算に入りません」: what is not done asks for nothing
            continue
        if re.match(
            r"[ぁ-ん]{0,6}?(?:[^\s、。]{1,8}?(?:が|も)\s*(?:いる|ある|いた|あった|多い|います|あります))?"
            r"\s*(?:ので|ため)(?![ぁ-ん])",
            text[end:],
        ):
            continue  # 「同じ子が何回も申し込んでるので」「申し込んでる人がいるので」: a reason
        if base not in STEP_VERBS and re.match(
            r"[ぁ-ん]{0,3}?ことに\s*(?:なり|なった|なって|なりまし)", text[end:]
        ):
            left, right = _clause_span(text, start, end)
            if not any(b in STEP_VERBS for _, _, b in _action_words(text[left:right])):
                reader.use(
                    left, right
                )  # 「来月から…回すことになり」 (「除外することになり」 is asked)
            continue
        if (
            re.search(  # 「除外条件は必ず守ってください」: the steps said, stressed
                r"(?:条件|手順|ルール|指示)\s*(?:は|を|も)\s*(?:必ず|きちんと|しっかり|絶対に?)?\s*$",
                text[max(0, start - 16) : start],
            )
            and base in ("守る", "厳守する", "徹底する")
        ):
            continue
        if (
            base not in STEP_VERBS
            and re.match(r"[ぁ-ん]{0,3}?ましょう", text[end:])
            and not re.search(r"[をに]", _clause(text, start, end))
        ):  # 「今度ご一緒しましょう」: a suggestion between people (「…に登録しましょう」 asks)
            continue
        if base in _KNOWING_VERBS and re.match(r"[ぁ-ん]{0,2}?たい", text[end:]):
            continue  # 「店舗ごとの状況を把握したいです」: what the result is for

        if base not in STEP_VERBS and _DESCRIBED.match(text, end):
            continue  # 「二重に登録されている」「ダウンロードした明細」: a state, not a request
        if base not in STEP_VERBS and re.match(
            r"[ぁ-ん]{0,3}?(?:予定|つもり|必要が\s*あ)|\s*を\s*(?:求められ|頼まれ|依頼され|指示され)"
            # 「来週の監査で提出する資料です」: what the result is, said of it
            r"|[ぁ-ん]{0,3}?\s*(?:資料|書類|もの|データ|ファイル)\s*(?:です|になります|となります)",
            text[end:],
        ):
            reader.use(*_clause_span(text, start, end))
            continue  # 「会議で共有する予定です」「顧客に提出する必要があり」: what happens after
        if any(a < start and end <= b for a, b in asides):
            continue  # an aside in parentheses (銀行からダウンロードしたもの)
        clause = _clause(text, start, end)
        if clause in named or re.search(r"(?:ので|ため)\s*$", clause):
            continue  # 「同じ番号で何回も応募してくる人がいるので」: a reason, no request
        named.add(clause)
        reader.gaps.append(
            Gap(
                kind="unsupported_action",
                message=f"「{clause}」の部分は、使えるブロック（読込・絞り込み・集計・並べ替え・"
                "重複除去・結合・照合・計算・表記の統一・承認・出力）では組み立てられません",
                source=clause,
            )
        )
    for match in re.finditer(
        rf"{AMOUNT}\s*(?:あたり|当たり|につき|でも)|\d+\s*(?:行|列|件|つ)\s*(?:だけ|のみ)"
        r"|(?<=[たる])\s*状態\s*で"  # 「列を付けた状態でExcelに」
        r"|(?<=[A-Za-z])\d+",
        text,
    ):
        reader.use(match.start(), match.end())  # 「1泊あたり」, 「合計1行だけ」: a unit or a shape
    for match in RESTRICTION_WORDS.finditer(text):
        if reader.is_used(match.start(), match.end()):
            continue
        if _in_file_only(text, match.start()):
            continue  # 「データだけで大丈夫です」: the file alone, no rows kept
        if reader.first_step("reconcile") and re.search(r"一致\s*$", text[: match.start()]):
            continue  # 「金額はぴったり一致のみOK」: the tolerance (0) of the reconciliation
        if _explained(
            reader, frozenset({"filter", "select", "dedupe", "extract"}), match.start(), match.end()
        ):
            continue
        clause = _clause(text, match.start(), match.end())
        _named_once(
            reader,
            named,
            clause,
            f"「{clause}」の、残す行（または列）の条件を読み取れませんでした"
            "（例: 「店舗コードが S012 の行だけ」「金額が5万円以上の行だけ」）",
        )
    for match in re.finditer(
        r"\([^()]*(?:など|のような|例|ので|ため|ことがあ|場合があ)[^()]*\)"
        r"|\(\s*\d{4}\s*年度?\s*(?:を|も)?\s*含(?:む|め|みます)\s*\)",  # 「（2015年を含む）」
        text,
    ):
        if not _aside_asks_unread(reader, match):
            reader.use(match.start(), match.end())
    for match in re.finditer(
        r"(?:「[^」]*」\s*){1,5}(?:のような|のように|など|といった|みたいな|みたいに|とか)"
        r"|[^、。()「」\s]+\s*(?:のような|のように|など|といった|みたいな|みたいに)",
        text,
    ):
        reader.use(match.start(), match.end())
    kinds = {step.kind for _, step in reader.steps}
    for pattern, kind in _SHAPES:
        if kind in kinds:
            for match in re.finditer(pattern, text):
                reader.use(match.start(), match.end())
    values = _values_read(reader)
    values_said = {
        str(value)
        for _, step in reader.steps
        for condition in step.conditions
        for value in (condition.value if isinstance(condition.value, list) else [condition.value])
    }
    for match in re.finditer(_DATE, text):
        if not reader.overlaps(match.start(), match.end()):
            with contextlib.suppress(_DateNotReadable):
                if _date_iso(match.group(0)) in values_said:
                    reader.use(match.start(), match.end())  # 「…3月31日の実績です。…3月31日まで」
    for match in re.finditer(AMOUNT, text):
        if not match.group(0).strip() or reader.overlaps(match.start(), match.end()):
            continue
        quote = next(
            (q for q in re.finditer(r"「([^」]*)」", text) if q.start() < match.start() < q.end()),
            None,
        )
        if quote and quote.group(1) in values_said:
            continue  # 「学年が「中3」」: a part of a value read
        if _number_of(match.group(0)) in values:
            continue  # 「1日ずれることがあるので、前後1日まで」: the same value, read once
        if re.fullmatch(
            r"\d{1,2}\s*(?:本|つ|枚|通|か月|ヶ月|カ月|日|週)?", match.group(0).strip()
        ) and re.match(
            r"\s*(?:経路|系統|ファイル|本|つ|枚|通|社|店舗?|拠点|か所|箇所|カ所|校|園|間)?\s*(?:分)?\s*"
            r"(?:あり|ある|に分かれ|に分け|です|届い|から(?:来|届|送|上が))",
            text[match.end() :],
        ):
            continue  # 「…の3本あります」「予約が3経路に分かれてる」「2社から来ています」: how many
        if re.fullmatch(r"\d{1,2}\s*点", match.group(0).strip()) and re.match(
            r"\s*(?:お願い|ご相談|相談|質問|ご確認|確認|ご連絡|連絡|だけ)", text[match.end() :]
        ):
            continue  # 「1点お願いです」: how many things the mail asks, no value
        listed = re.search(
            r"(?:「[^」]+」\s*(?:[、,・と]\s*)?){2,}\s*の\s*$", text[: match.start()]
        )
        if listed and len(re.findall(r"「[^」]+」", listed.group(0))) == _number_of(match.group(0)):
            continue  # 「「ひよこ」「うさぎ」「きりん」の3クラス」: how many values were listed
        if re.fullmatch(r"(?:1|一)\s*(?:件|行|つ)", match.group(0).strip()) and re.match(
            r"\s*ずつ", text[match.end() :]
        ):
            continue  # 「1件ずつにして」: one row each, no value
        if (
            re.fullmatch(r"\d{1,4}", match.group(0).strip())
            and re.match(
                r"^\s*(?:月|年|期|つ|か月|ヶ月|行|列|項目|四半期|ファイル|枚|通|シート|条|項|号|点|本|学期|号館"
                r"|棟|階|年生|次)",
                text[match.end() :],
            )
            and not re.match(  # 「4月以降」: a date compared, never dropped silently
                r"\s*(?:月|年)\s*(?:\d{1,2}\s*日)?\s*(?:以降|以前|以後|より前|より後|から|まで)",
                text[match.end() :],
            )
        ):
            continue
        if re.search(
            r"(?:内線|TEL|Tel|tel|電話|FAX|Fax|ext\.?)\s*[:.]?\s*$",
            text[max(0, match.start() - 6) : match.start()],
        ):
            continue  # 「内線 2214」: a signature, no value
        if re.fullmatch(r"\d{1,4}\s*年", match.group(0).strip()) and (
            re.search(
                r"(?:令和|平成|昭和|R|H)\s*$", text[max(0, match.start() - 3) : match.start()]
            )
            or re.match(r"\s*度?\s*(?:\d{1,2}\s*月)?\s*(?:度|分|の)", text[match.end() :])
        ):
            continue  # 「令和7年3月分の共益費入金.csv」: which data a file holds, no value
        clause = _clause(text, match.start(), match.end())
        _named_once(
            reader,
            named,
            clause,
            f"「{clause}」の数値 {match.group(0).strip()} を"
            "どう使うか読み取れませんでした"
            "（例: 「金額が5万円以上」のように、列と比べ方を書いてください）",
        )
    for match in re.finditer(r"≠|!=|<>", text):
        if reader.is_used(match.start(), match.end()):
            continue
        clause = _clause(text, match.start(), match.end())
        # 「勤務区分≠公休または有休」: a condition never dropped silently
        _named_once(
            reader,
            named,
            clause,
            f"「{clause}」の条件を読み取れませんでした"
            "（「勤務区分が公休以外」のように、列と値を一つずつ書いてください）",
        )
    for match in re.finditer(rf"{NOUN}\s*(?P<op>[×÷*])\s*(?:{NOUN}|{NUM})", text):
        if reader.is_used(match.start("op"), match.end("op")):
            continue
        clause = _clause(text, match.start(), match.end())
        # a formula nobody used: never a Plan without the column asked for
        _named_once(
            reader,
            named,
            clause,
            f"「{clause}」の計算式 {match.group(0)} で"
            "何の列を作るか読み取れませんでした（「粗利＝売上−原価」のように、作る列の名前と式を書いてください）",
        )
    known = _known_words(reader)
    for match in re.finditer(r"「[^」]+」", text):
        if reader.overlaps(match.start(), match.end()) or _clean(match.group(0)) in known:
            continue  # 「「税込金額」列を足して。税込金額＝金額×1.1」: named by a step
        clause = _clause(text, match.start(), match.end())
        _named_once(
            reader,
            named,
            clause,
            f"「{clause}」の {match.group(0)} をどう使うか読み取れませんでした",
        )


_VAGUE_TIME = re.compile(r"最近|直近|近頃|このところ|ここ最近|新しめ|古め")


def _vague_times(reader: _Reader) -> None:
    """「最近入塾した生徒」: rows of a period nobody stated are asked, never all rows."""
    for match in _VAGUE_TIME.finditer(reader.text):
        if reader.is_used(match.start(), match.end()):
            continue
        reader.refuse(
            "not_understood",
            f"「{_clause(reader.text, match.start(), match.end())}」の「{match.group(0)}」が"
            "いつからいつまでか指示にありません（「入塾日が2024年4月1日以降」のように、"
            "列と日付で書いてください）",
            match,
        )


_VAGUE_COMPARISON = re.compile(
    rf"(?P<col>{NOUN})\s*(?:が|は|:)\s*(?P<said>高め|安め|低め|多め|少なめ|大きめ|小さめ|長め|短め|古め"
    r"|高い|安い|低い|多い|少ない|大きい|小さい)\s*(?:の|な)?\s*"
    r"(?=もの|行|方|人|品目|商品|部品|取引|明細|案件|だけ|のみ|[。、]|$)"
)
"""「単価が高めのもの」「単価: 高めのもの」: rows above a line nobody drew."""


def _vague_comparisons(reader: _Reader) -> None:
    """A comparison with no number (「単価が高めのもの」) is asked, never dropped: which rows
    are 「高め」 is the user's to say."""
    for match in _VAGUE_COMPARISON.finditer(reader.text):
        if reader.overlaps(match.start("said"), match.end("said")):
            continue
        reader.refuse(
            "not_understood",
            f"「{_clause(reader.text, match.start(), match.end())}」の「{match.group('said')}」の"
            f"基準が指示にありません（「{_clean(match.group('col'))}が10,000以上」のように、"
            "数値で書いてください）",
            match,
        )


_VAGUE_MANNER = re.compile(
    r"いい感じ|良い感じ|よい感じ|いい具合|良い具合|適当に|適宜|よしなに|うまいこと|いい塩梅|ほどほどに"
    r"|それっぽく|なんとなく|それなりに"
)
"""「基準はいい感じに」「適当に選んで」: a way of choosing nobody stated."""


_EXCLUSION_SAID = re.compile(
    r"(?P<what>[^、。「」()]{1,24}?)\s*(?:は|を|も)\s*"
    r"(?:含めな[いく]|含めず|含めません|入れな[いく]|入れず|入れません|除外|除く|除いて|除き|外して|外す"
    r"|対象外)"
)
"""「解約済みの契約は含めなくていいです」「キャンセル分は入れないで」: rows said to be left out."""


def _unread_exclusions(reader: _Reader) -> None:
    """Rows said to be left out whose condition no rule read (no column, no value it
    compares: 「解約済みの契約は含めなくていいです」) are asked, never dropped: keeping them
    would be the opposite of what was asked."""
    text = reader.text
    for said in _EXCLUSION_SAID.finditer(text):
        what = said.group("what").strip()
        sentence = _sentence_span(text, said.start(), said.end())
        if (
            reader.overlaps(said.start("what"), said.end())
            or not re.search(rf"{NOUN}", what)
            or re.search(r"列|項目|重複|明細|内訳|比較|当てはまる|該当|上記|以下|これ|それ", what)
            or any(sentence[0] <= a < sentence[1] for a, _ in reader.condition_spans)
        ):  # (a condition read in its sentence says which: 「…は含めないので、…でない回だけ」)
            continue
        clause = _clause(reader.text, said.start(), said.end())
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」で除く行の条件（どの列がどの値か）を読み取れませんでした"
                "（「状態が「解約済み」の行は除く」のように書いてください）",
                source=clause,
            )
        )
        reader.use(said.start(), said.end())


def _vague_manners(reader: _Reader) -> None:
    """A step left to the product's judgement (「基準はいい感じに」) is refused, never guessed:
    how to choose is the user's to say."""
    for match in _VAGUE_MANNER.finditer(reader.text):
        if reader.is_used(match.start(), match.end()):
            continue
        reader.refuse(
            "not_understood",
            f"「{_clause(reader.text, match.start(), match.end())}」の基準が指示にありません"
            "（「満足度が2以下」のように、どの列をどう比べるかを書いてください）",
            match,
        )


def _unread_orders(reader: _Reader) -> None:
    """「作業時間の手早い順」: an order no sort rule read is named, never dropped."""
    for match in re.finditer(r"[\u4e00-\u9fffぁ-ん]{1,4}い\s*順", reader.text):
        if reader.overlaps(match.start(), match.end()):
            continue
        reader.refuse(
            "not_understood",
            f"「{_clause(reader.text, match.start(), match.end())}」の並べ替えの向き"
            f"（{match.group(0)}）を読み取れませんでした（「金額の大きい順」「日付の古い順」"
            "のように書いてください）",
            match,
        )


def _unread_order_words(reader: _Reader) -> None:
    """「入所日順(古→新)」 that no sort rule read: an order is named, never dropped."""
    for match in re.finditer(
        r"(?<![手語道昇降び不])(?<!以下の)(?<!次の)(?<!この)(?<!上記の)(?<!下記の)順(?![番調位次序路当])",
        reader.text,
    ):
        if reader.overlaps(match.start(), match.end()):
            continue
        left, right = _clause_span(reader.text, match.start(), match.end())
        if any(step.kind == "sort" and left <= position < right for position, step in reader.steps):
            continue  # 「使用期限 の順で並べる(どちらも昇順)」: the order was read
        clause = reader.text[left:right].strip()
        reader.refuse(
            "not_understood",
            f"「{clause}」の並べ替え（どの列を、どちらの向きに）を読み取れませんでした"
            "（「金額の大きい順」「日付の古い順」のように書いてください）",
            match,
        )


def _names_more_than_the_file(sentence: str) -> bool:
    """True when a sentence names something besides its file, the narrowing and the output
    (「発注明細.xlsxを絞り込んでCSVで出してください」 names nothing else)."""
    rest = re.sub(
        r"絞り込\w*|絞込\w*|フィルタ\w*|CSV|csv|Excel|エクセル|出力|保存|出し|下さい|お願い",
        "",
        _FILE_NAME.sub("", sentence),
    )
    return re.search(rf"[{_K}{_KATA}A-Za-z]{{2,}}", rest) is not None


def _unread_narrowings(reader: _Reader) -> None:
    """Each 「絞り込み」 said in a sentence where no condition was read (「⇒ 絞り込み（…）」
    beside other filters): its condition was not understood, so it is asked, never dropped."""
    text = reader.text
    for said in re.finditer(r"絞り込|絞込|フィルタ", text):
        start, end = _sentence_span(text, said.start(), said.end())
        if any(start <= a < end for a, _ in reader.condition_spans) or re.search(
            r"(?:以下|次|下記|上記|前記)\s*(?:の|条件)|(?:これ|それ|この|その)", text[start:end]
        ):
            continue
        if reader.condition_spans and not _names_more_than_the_file(text[start:end]):
            # 「a.xlsxを絞り込んでCSVで。（条件：区分＝外注）」: the conditions said beside it
            verb = re.match(r"[ぁ-ん]*", text[said.end() :])
            reader.use(said.start(), said.end() + (verb.end() if verb else 0))
            continue
        clause = _clause(text, said.start(), said.end())
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」の絞り込みの条件（どの列が、何以上・何と等しいか）を"
                "読み取れませんでした。「金額が5万円以上」のように書いてください",
                source=clause,
            )
        )


_DUPLICATES_REMOVED = re.compile(
    r"(?:重複|二重|ダブ)[^。]{0,16}?(?:消し|消す|消去|削除|除い|除く|除去|まとめ|1行に|一行に|1件に|一件に)"
)


_KNOWING_VERBS = frozenset({"把握", "知る", "見る", "検討", "見直す", "つかむ", "掴む"})
"""Verbs of the user's own understanding: 「…を把握したい」 says why, not what to build."""


_ROUNDING = {
    "四捨五入": "round",
    "切り捨て": "floor",
    "切捨て": "floor",
    "切り上げ": "ceil",
    "切上げ": "ceil",
}


def _read_rounding(reader: _Reader) -> None:
    """「税込金額＝税抜金額×1.1（小数点以下四捨五入）」: the one formula of the sentence is
    rounded to a whole number (half up, as 四捨五入 means); a rounding no formula takes is
    asked, never dropped."""
    text = reader.text
    for match in re.finditer("|".join(_ROUNDING), text):
        if reader.is_used(match.start(), match.end()):
            continue
        start, end = _sentence_span(text, match.start(), match.end())
        formulas = [
            (step, column)
            for _, step in reader.steps
            if step.kind == "compute"
            for column in step.expressions
            if step.source and start <= text.find(step.source, max(0, start - 40)) < end
        ]
        if len(formulas) == 1:
            step, column = formulas[0]
            function = _ROUNDING[match.group(0)]
            expression = step.expressions[column]
            step.expressions[column] = (
                f"round({expression}, 0)" if function == "round" else f"{function}({expression})"
            )
            reader.use(match.start(), match.end())
            continue
        clause = _clause(text, match.start(), match.end())
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{clause}」の{match.group(0)}をどの計算に使うか読み取れませんでした"
                "（「税込金額＝税抜金額×1.1（小数点以下四捨五入）」のように、式と同じ文に書いて"
                "ください）",
                source=clause,
            )
        )
        reader.use(match.start(), match.end())


def _inside_quotes(text: str, at: int) -> bool:
    """True when ``at`` is inside 「…」 (a value or a name quoted, never a step word)."""
    return text.rfind("「", 0, at) > text.rfind("」", 0, at)


def _unread_dedupe(reader: _Reader) -> None:
    """「重複してる行を消して」 with no dedupe read: which rows are the same is asked, never
    a Plan that copies the file as it is."""
    text = reader.text
    said = next(  # 「解約理由が「重複登録」の行は除いて」: a value quoted, no duplicates
        (m for m in _DUPLICATES_REMOVED.finditer(text) if not _inside_quotes(text, m.start())),
        None,
    )
    if said is None or reader.first_step("dedupe") is not None:
        return
    clause = _clause(reader.text, said.start(), said.end())
    reader.gaps.append(
        Gap(
            kind="not_understood",
            message=f"「{clause}」の重複の除去で、どの列が同じ行を重複とみなすか読み取れませんでした"
            "（「社員番号が同じ行は1行に」のように書いてください）",
            source=clause,
        )
    )


def _read_filter_verbs(reader: _Reader) -> None:
    """A 抽出 / 絞り込み with no condition found: the condition is not in the instruction."""
    match = _FILTER_VERBS.search(reader.text)
    if match is not None and reader.first_step("filter") is not None:
        _unread_narrowings(reader)
    if match is None or reader.first_step("filter") is not None:
        return
    if any(step.kind in ("extract", "dedupe", "select", "reconcile") for _, step in reader.steps):
        return
    clause = _clause(reader.text, match.start(), match.end())
    if re.search(r"(?:以下|下記|次)\s*の\s*(?:とおり|通り)", clause) and any(
        position > match.end() for position, _ in reader.steps
    ):
        return  # 「以下の通り抽出願います。①…」: heads the steps below, which say what is kept
    reader.gaps.append(
        Gap(
            kind="not_understood",
            message=f"「{clause}」の抽出の条件（どの列が、何以上・何と等しいか）が指示にありません。"
            "「金額が5万円以上」のように書いてください",
            source=clause,
        )
    )


def _two_table_sources(reader: _Reader) -> None:
    for _, step in reader.steps:
        if step.kind in ("join", "reconcile") and len(reader.inputs) < 2:
            nouns = [
                _clean(m.group(0))
                for m in re.finditer(
                    QNOUN,
                    reader.text[
                        max(0, reader.text.find(step.source) - 25) : reader.text.find(step.source)
                    ],
                )
            ]
            other = next(
                (n for n in reversed(nouns) if not _names_a_file(reader, n)), "照合・結合の相手"
            )
            reader.gaps.append(
                Gap(
                    kind="missing_source",
                    message=f"「{other}」の読み込み元が指示にありません"
                    "（「〇〇.xlsx と突き合わせて」のように、2つ目のファイルを書いてください）",
                    source=step.source,
                )
            )


_FETCH = re.compile(
    r"(?P<place>(?:[^、。\s]{0,12}?(?:システム|サイト|ホームページ|HP|ウェブ|Web|web|WEB|ネット|クラウド|サーバー?"
    r"|ポータル|データベース|DB|基幹|会計ソフト|e-Stat|API|管理画面|画面|アプリ|POS|レジ)))\s*(?:上|内)?\s*"
    r"(?:から|より)\s*[^、。]{0,30}?"
    r"(?:落とし|ダウンロードし|取得し|取り込ん|取っ|持っ|引っ張っ|抜い|出し|拾っ|集め)\s*て\s*"
    r"(?:きて|来て|ください|下さい|ほしい|欲しい|もらえ|もらいたい|いただけ|いただき|頂け|おいて|おく"
    r"|(?=\s*[、,]))"  # 「管理画面から今月の口コミ落として、評価の低い順に」
)
"""「基幹システムから先月分の購買データを落としてきて」: the data is to be fetched from a system
or a site the Plan cannot reach (a file exported by the user is named, not fetched)."""


_EFFECT_REQUEST = re.compile(
    r"(?:振込|振り込み|振込み|支払い?|送金|送付|郵送|発送|印刷|メール送信|送信|入金処理|決済|登録|仕訳登録|投稿"
    r"|反映)"
    r"\s*(?:まで|を|も)?\s*(?:済ませて(?:おいて|ください|もらえ|ほし)|済ませといて|すませて(?:おいて|ください)"
    r"|やって(?:おいて|ください|もらえ|ほし)|やっといて|して(?:おいて|ください|もらえ|ほし)|しといて"
    r"|お願い(?:します|したい|できますか|いたします)(?!\s*(?:る|する)?\s*前)|実行して|完了させて|かけて(?:ください|おいて))"
)
"""「そのまま振込まで済ませておいて」: an effect outside the tables, which no step does."""


_EFFECT_NOUN = re.compile(
    r"(?:メール|SMS|LINE|FAX|ファックス)?\s*(?:一斉|自動)?\s*(?:送信|配信|郵送|発送|印刷|送付)"
    r"(?=\s*(?:。|$))"
)
"""「更新案内メール 一斉送信」: an effect said as a noun ending the request (a memo's style)."""


def _effect_requests(reader: _Reader) -> None:
    said = [*_EFFECT_REQUEST.finditer(reader.text), *_EFFECT_NOUN.finditer(reader.text)]
    for match in said:
        if reader.is_used(match.start(), match.end()):
            continue
        clause = _clause(reader.text, match.start(), match.end())
        reader.refuse(
            "unsupported_action",
            f"「{clause}」の部分は、使えるブロック（読込・絞り込み・集計・並べ替え・重複除去・"
            "結合・照合・計算・表記の統一・承認・出力）では組み立てられません"
            "（振込・送付・印刷などは、出力したファイルを使って別に行ってください）",
            match,
        )


_USUAL_SOURCE = re.compile(
    rf"(?:いつもの|例の|前回の|先月の|先週の|この前の|あの)\s*(?:{NOUN})?\s*(?:データ|ファイル|やつ|表|一覧|台帳|シート)"
)
"""「いつもの観覧者データ」「例のファイル」: a table known to the writer, never named."""


def _usual_sources(reader: _Reader) -> None:
    """A table said to be the usual one (「対象：いつもの観覧者データ」) with no file named
    anywhere: which file it is cannot be known, so it is asked, never replaced by whatever
    table is uploaded."""
    if any(item.source for item in reader.inputs):
        return
    for match in _USUAL_SOURCE.finditer(reader.text):
        reader.refuse(
            "missing_source",
            f"「{match.group(0)}」がどのファイルか指示にありません。"
            "ファイル名（「観覧者_2024年11月.csv」のように）を書いてください",
            match,
        )


def _fetch_requests(reader: _Reader) -> None:
    for match in _FETCH.finditer(reader.text):
        clause = _clause(reader.text, match.start(), match.end())
        reader.refuse(
            "missing_source",
            f"「{clause}」: {match.group('place')}からデータを取ってくることはできません。"
            "書き出したファイル（CSV や Excel）を添付して、そのファイル名を指示に書いてください",
            match,
        )


def _unused_inputs(reader: _Reader) -> None:
    """A file the steps do not use is a part not understood (the chain reads the first
    file; a join / reconcile the first two; a concat every file)."""
    kinds = {step.kind for _, step in reader.steps}
    if "task" in kinds:  # the task's files come first; it takes no other
        used = sum(item.format == "file" for item in reader.inputs)
    else:
        used = (
            len(reader.inputs) if "concat" in kinds else 2 if kinds & {"join", "reconcile"} else 1
        )
    for item in reader.inputs[used:]:
        reader.gaps.append(
            Gap(
                kind="not_understood",
                message=f"「{item.source}」をどう使うか読み取れませんでした"
                "（2つの表なら「〇〇で結合」「〇〇で照合」、複数の表なら「縦につなげて」と書いてください）",
                source=item.source,
            )
        )


def _merged_outputs(outputs: list[OutputSpec], gaps: list[Gap]) -> list[OutputSpec]:
    """One output: 「Excelで出力… ファイル名は「X.xlsx」」 names the same Excel output.
    Two formats read (an Excel and a CSV) are asked, never one dropped silently. The file
    a task makes is an output of its own."""
    made = [item for item in outputs if item.format == "file"][:1]
    outputs = [item for item in outputs if item.format != "file"]
    if not outputs:
        return made
    first = outputs[0]
    for other in outputs[1:]:
        if other.format == first.format:
            first.file_name = first.file_name or other.file_name
            first.sheet = first.sheet or other.sheet
        else:
            gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"出力の形式が2つ読み取れました（「{first.source}」と「{other.source}」）。"
                    "Excel か CSV のどちらか一方にしてください",
                    source=other.source,
                )
            )
    return [*made, first]


_ORDER_REVERSED = re.compile(
    r"(?:並び|並べ方|並び順|順番|ソート|順序)\s*(?:は|を|も)?\s*(?:やっぱり|やはり)?\s*(?:逆|反対)"
)
"""「さっきの、並びは逆で（少ない順）」: a later message turns the order said before round."""


def _merged_sorts(steps: list[StepSpec], gaps: list[Gap], text: str = "") -> list[StepSpec]:
    """「部門 昇順、その中で 計上日 昇順」: sorts one after another are one sort by several
    keys, the first named first (a later sort alone would undo the earlier order). Keys
    in different directions are named as a gap (the sort step takes one direction)."""
    merged: list[StepSpec] = []
    for step in steps:
        previous = merged[-1] if merged else None
        if step.kind == "sort" and previous is not None and previous.kind == "sort":
            reversed_later = (
                step.descending != previous.descending
                and _ORDER_REVERSED.search(text)
                and (not step.by or not previous.by or step.by == previous.by)
            )
            if reversed_later:  # the order said last is the one wanted
                previous.descending = step.descending
                previous.by = previous.by or step.by
                previous.source = f"{previous.source} / {step.source}"
                continue
            if step.descending != previous.descending:
                gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{previous.source}」と「{step.source}」で並べ替えの向きが違います。"
                        "複数の列で並べ替えるときは同じ向き（昇順か降順）にしてください",
                        source=step.source,
                    )
                )
            previous.by = [*previous.by, *(c for c in step.by if c not in previous.by)]
            previous.source = f"{previous.source} / {step.source}"
            continue
        merged.append(step)
    return merged


def _filters_of_totals(reader: _Reader, steps: list[StepSpec]) -> list[StepSpec]:
    """「番組名別に制作費を合計 → 合計が50万円超のものだけ残す」: a condition on a total
    (合計, 平均, 件数 compared with a number) keeps the groups after the aggregation, in
    the total's column."""
    aggregate = next((step for step in steps if step.kind == "aggregate"), None)
    keep = next((step for step in steps if step.kind == "filter"), None)
    if aggregate is None or keep is None:
        return steps
    later: list[Condition] = []
    kept: list[Condition] = []
    conditions = list(keep.conditions)
    index = 0
    while index < len(conditions):
        word = conditions[index]
        span = reader.condition_spans[index] if index < len(reader.condition_spans) else None
        if (
            span is not None
            and word.column in aggregate.metrics
            and re.search(
                r"(?:合計|集計|合算|平均)(?:した|後の|した後の)\s*$", reader.text[: span[0]]
            )
        ):  # 「合計した実働時間が160時間以上の人だけ」: the total, after the aggregation
            later.append(
                word.model_copy(
                    update={"column": _result_name(word.column, aggregate, aggregate.metrics)}
                )
            )
            index += 1
            continue
        totals = {  # 「売上金額合計が3万円未満の区分」: a total said as its column and metric
            f"{column}{METRIC_WORDS[metric]}": f"{column}_{metric}"
            for column, metrics in aggregate.metrics.items()
            for metric in metrics
            if column != COUNT_ALL
        }
        if word.column in totals and isinstance(word.value, int | float):
            later.append(word.model_copy(update={"column": totals[word.column]}))
            index += 1
            continue
        following = conditions[index + 1] if index + 1 < len(conditions) else None
        totalled_at = next((at for at, step in reader.steps if step is aggregate), None)
        said_in_an_earlier_step = (  # 「3. 人数 が 50 以上の案件だけ残す 4. …ごとに合計」
            span is not None
            and totalled_at is not None
            and any(span[0] < join < totalled_at for join in reader.numbered_joins)
        )
        if (
            word.column in _METRIC_WORDS
            and _METRIC_WORDS[word.column]
            and isinstance(word.value, int | float)
            and not said_in_an_earlier_step
        ):  # 「件数が3件以上の取引先」: the count of each group
            later.append(
                word.model_copy(
                    update={"column": _result_name(word.column, aggregate, aggregate.metrics)}
                )
            )
            index += 1
            continue
        function = _METRIC_WORDS.get(str(word.value)) if word.column is None else None
        if (
            function
            and word.op == "=="
            and word.value in reader.value_or_column
            and following is not None
            and following.column is None
            and isinstance(following.value, int | float)
        ):
            column = _result_name(str(word.value), aggregate, aggregate.metrics)
            if column != word.value or function == "count":
                later.append(following.model_copy(update={"column": column}))
                index += 2
                continue
        if (
            span is not None
            and totalled_at is not None
            and span[0] > totalled_at
            and word.column in aggregate.metrics
            and isinstance(word.value, int | float)
            and not re.search(
                r"(?:合計|集計|合算|平均|総額)\s*(?:の|で|した|後の)?\s*$", reader.text[: span[0]]
            )
            and not re.search(  # 「合計する前に 未収額 が0より大きい行だけに」: the rows
                r"(?:合計|集計|合算)\s*(?:する|の)\s*(?:前|まえ)\s*に[^。]*$",
                reader.text[: span[0]],
            )
        ):  # 「店舗ごとに換金額を合計、換金額が10万円未満の店は除く」: rows or totals?
            said = reader.text[span[0] : span[1]]
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{said}」は、合計したあとの「{word.column}」の条件ですか、"
                    "合計する前の明細の条件ですか。合計の条件なら「"
                    f"{word.column}の合計が…」、明細の条件なら合計より前に書いてください",
                    source=said,
                )
            )
        kept.append(word)
        index += 1
    if not later:
        return steps
    having = StepSpec(id="", kind="filter", conditions=later, source=keep.source)
    keep.conditions = kept
    keep.missing = [f"conditions.{i}.column" for i, c in enumerate(kept) if c.column is None]
    ordered = [step for step in steps if step is not keep or kept]
    position = ordered.index(aggregate) + 1
    return [*ordered[:position], having, *ordered[position:]]


def _position(reader: _Reader, step: StepSpec) -> int | None:
    """Where ``step`` was read in the instruction (``None`` for a step made afterwards)."""
    return next((at for at, read in reader.steps if read is step), None)


def _filters_in_numbered_order(
    reader: _Reader,
    steps: list[StepSpec],
    keep: StepSpec | None,
    said: Sequence[tuple[Condition, int]],
) -> list[StepSpec]:
    """「1. 承認状況が「差戻」の行を除く 2. 要員IDごとに稼働時間を合計 … 5. 超過時間が0より大きい
    要員のみ残す」: conditions said in numbered steps with other steps between them keep rows
    where they were said (one filter per numbered step), not all at the place of one."""
    if keep is None or keep not in steps or not reader.numbered_joins:
        return steps
    others = [_position(reader, s) for s in steps if s.kind != "filter"]
    placed = [a for a in others if a is not None]
    if len(placed) != len(others) or placed != sorted(placed):
        return steps  # the steps do not run in the order they were said: left as read
    joins = sorted(reader.numbered_joins)
    found = [next((a for c, a in said if c is condition), None) for condition in keep.conditions]
    at = [a for a in found if a is not None]
    if len(at) != len(found):
        return steps
    # a condition said outside the numbered steps (「※ 申告区分が「輸入(予備)」のものは含めません」
    # after them) keeps rows with the first condition of the steps
    segments = [
        sum(1 for j in joins if j < a)
        if any(b <= a < e for b, e in reader.numbered_lines)
        else None
        for a in at
    ]
    earliest = min((n for n in segments if n is not None), default=0)
    groups: dict[int, list[Condition]] = {}
    in_steps: dict[int, list[int]] = {}  # where each group's conditions said in a step are
    for condition, a, segment in zip(keep.conditions, at, segments, strict=True):
        groups.setdefault(earliest if segment is None else segment, []).append(condition)
        if segment is not None:
            in_steps.setdefault(segment, []).append(a)
    if len(groups) < 2:
        return steps
    firsts = {group: min(in_steps.get(group, [0])) for group in groups}
    result = [s for s in steps if s is not keep]
    for segment in sorted(groups, reverse=True):
        step = keep.model_copy(
            update={
                "conditions": groups[segment],
                "missing": [
                    f"conditions.{i}.column"
                    for i, c in enumerate(groups[segment])
                    if c.column is None
                ],
            }
        )
        index = next(
            (
                i
                for i, s in enumerate(result)
                if s.kind != "filter" and (_position(reader, s) or -1) > firsts[segment]
            ),
            len(result),
        )
        result.insert(index, step)
    return result


def _computed_columns_kept(reader: _Reader, steps: list[StepSpec]) -> None:
    """「倉庫・品目コード・在庫数・単価の列だけ残し、在庫金額＝在庫数×単価 の列を追加して」: a
    column added after the columns to keep were said is kept too (the select runs last)."""
    for select in (s for s in steps if s.kind == "select" and s.columns):
        said = _position(reader, select)
        for compute in (s for s in steps if s.kind == "compute"):
            if said is not None and (_position(reader, compute) or -1) > said:
                select.columns += [c for c in compute.expressions if c not in select.columns]


def _merged_normalize(steps: list[StepSpec]) -> list[StepSpec]:
    """「金額を数値に直して、作業日も日付に揃えて」: one normalisation of every column named."""
    first = next((step for step in steps if step.kind == "normalize"), None)
    merged: list[StepSpec] = []
    for step in steps:
        if step.kind == "normalize" and first is not None and step is not first:
            first.columns = [*first.columns, *(c for c in step.columns if c not in first.columns)]
            first.source = f"{first.source} / {step.source}"
            continue
        merged.append(step)
    return merged


def _sort_after_aggregate(steps: list[StepSpec]) -> None:
    """A sort after an aggregation names its result by a metric word or a part of the
    column: 「合計の大きい順」「平均が高い順」 (the one metric column with that metric),
    「金額の大きい順」 after 見積金額 (the one metric column ending with it), and
    「降順に並べて」 alone after one result column."""
    aggregate: StepSpec | None = None
    for step in steps:
        if step.kind == "aggregate":
            aggregate = step
        if step.kind != "sort" or aggregate is None:
            continue
        metrics = {c: v for c, v in aggregate.metrics.items() if c != COUNT_ALL}
        if not step.by:
            columns = list(metrics) or (["件数"] if aggregate.metrics else [])
            if len(columns) == 1 and len(aggregate.metrics) == 1:
                step.by = columns
                step.missing = [m for m in step.missing if m != "by"]
            continue
        step.by = [_result_name(column, aggregate, metrics) for column in step.by]


def _result_name(column: str, aggregate: StepSpec, metrics: Mapping[str, Sequence[str]]) -> str:
    if column in aggregate.group_by or column in metrics:
        return column
    function = _METRIC_WORDS.get(column)
    if COUNT_ALL in aggregate.metrics and (
        function == "count" or re.search(r"(?:件数|回数|人数|者数)$", column)
    ):  # 「訪問件数の多い順」 after 「訪問件数を数える」: the count under its name
        return aggregate.count_name or "件数"
    if function:
        having = [c for c, wanted in metrics.items() if function in wanted]
        if len(having) != 1:
            return column
        # the result column of that metric (売上高_max) when the column has several
        return having[0] if len(metrics[having[0]]) == 1 else f"{having[0]}_{function}"
    bare = re.sub(r"^(?:合計|総)|(?:の?合計|合計額|総額)$", "", column) or column
    ending = [c for c in metrics if c.endswith(bare)]
    return ending[0] if len(ending) == 1 else column


def _columns_named_elsewhere(reader: _Reader, steps: list[StepSpec]) -> None:
    """「小計 が3万円以上」 after 「小計 列を作って」: a noun another step names as a
    column (computed, totalled, sorted, selected) is the column the amount is compared in."""
    for step in steps:
        if step.kind != "filter":
            continue
        others = {name for other in steps if other is not step for name in _parameter_names(other)}
        merged: list[Condition] = []
        for condition in step.conditions:
            previous = merged[-1] if merged else None
            if (
                previous is not None
                and previous.column is None
                and previous.op == "=="
                and previous.value in reader.value_or_column
                and previous.value in others
                and condition.column is None
                and isinstance(condition.value, int | float)
            ):
                merged[-1] = condition.model_copy(update={"column": previous.value})
                continue
            merged.append(condition)
        if len(merged) != len(step.conditions):
            step.conditions = merged
            step.missing = [m for m in step.missing if not m.startswith("conditions.")] + [
                f"conditions.{i}.column" for i, c in enumerate(merged) if c.column is None
            ]


def _keys_said_short(steps: list[StepSpec], gaps: list[Gap]) -> None:
    """「認定有効期間終了日が…以前の人を、終了日の早い順に」: an order, group or normalised
    column that is the tail of exactly one column another step names (or that tail with 名:
    「エリア名」 of 配達エリア) may be that column said short, or a column of its own (部門 /
    上位部門): asked, never guessed."""
    for step in steps:
        keys = (
            step.by
            if step.kind == "sort"
            else step.group_by
            if step.kind == "aggregate"
            else step.columns
            if step.kind == "normalize"
            else []
        )
        others = {
            name
            for other in steps
            if other is not step
            for name in [*_parameter_names(other), *(other.fields if other.kind == "join" else [])]
        }
        for key in keys:
            longer = [  # 「…終了日」 of 認定有効期間終了日; 「部署」 of 部署名
                n
                for n in others
                if n != key
                and (
                    (len(key) >= 2 and n.endswith(key))
                    or n in (f"{key}名", f"{key}名称")
                    or (len(key) >= 3 and key.endswith("名") and n.endswith(key[:-1]))
                )  # 「エリア名」 of 配達エリア
            ]
            if key not in others and len(longer) == 1:
                gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{key}」は「{longer[0]}」と同じ列ですか。同じ列なら"
                        f"「{longer[0]}」にそろえて、別の列ならそのまま書き直してください",
                        source=key,
                    )
                )


def _references_left(steps: list[StepSpec], gaps: list[Gap]) -> None:
    """A parameter that only points back (「この2列」「両方」) names no column: asked."""
    for step in steps:
        for name in _parameter_names(step):
            if _REFERENCE.match(name):
                gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{step.source}」の「{name}」がどの列のことか読み取れませんでした"
                        "（列名をそのまま書いてください）",
                        source=step.source,
                    )
                )


_RETRACTED = re.compile(
    r"[^、。]{1,40}?(?:…|\.{2,}|‥)?\s*(?:じゃなくて|じゃなく|ではなくて)(?=\s*[^、。])"
)
"""「加工費合計の大きい順…じゃなくて 部品番号 順」: what is taken back asks for nothing."""
_RULE_QUOTE = re.compile(
    r"(?:規程|規定|規約|ルール|マニュアル|条)[^「」。]{0,12}?(?P<rule>「[^」]{6,}」)"
    r"|(?P<rule2>「[^」]{6,}」)(?=\s*(?:と|って)\s*(?:あり|定め|され|なって|書い|決ま))"
)
"""A rule quoted in the instruction (「規程第12条に「1件10万円以上の…」とあります」): its
conditions and verbs are the rule's, not steps; a step that refers to it (「これに該当」)
takes its amount (``_read_policy_reference``)."""


_REQUEST_FORM = re.compile(
    r"ください|下さい|お願い|願います|ほしい|欲しい|たい|もらえ|いただけ|頂け|ちょうだい|ますか|でしょうか"
)
_DESCRIPTIVE_END = re.compile(
    r"(?:ております|ています|ていました|ておりました|てきました|あります|ありました|でした|です)\s*$"
)


_NOTE = re.compile(r"(?:^|(?<=。))\s*(?:※+|注意|注|備考|補足|メモ|NB)\s*[:：)]?\s*")
_STATE_END = re.compile(
    r"(?:てあります|ております|ています|てある|済み(?:です)?|済んでいる前提です|前提です|不要です|正常です"
    r"|ありません|いません|です|ます)\s*$"
)
_KEEPS_ROWS = re.compile(r"除|以外|のみ|だけ|含め|含ま|限り|限定|対象外|外して|抜いて")


def _notes(reader: _Reader) -> None:
    """A note (「注意：金額は税抜で入力済みのため、税計算は不要です」「※ 手順1は済んでいる前提です」
    「注意：…手順5でまとめるのを忘れないこと」) that states how things are, or points at a
    numbered step, is context. A note that keeps or drops rows (「※ 返品は含めません」) is
    read like any sentence."""
    text = reader.text
    for note in _NOTE.finditer(text):
        end = text.find("。", note.end())
        end = len(text) if end < 0 else end
        sentence = text[note.end() : end]
        if any(note.end() <= at < end for at, _ in reader.steps) or any(
            note.end() <= a < end for a, _ in reader.condition_spans
        ):
            continue
        stated = _STATE_END.search(sentence) and not _REQUEST_FORM.search(sentence)
        kept = _KEEPS_ROWS.search(sentence) and not re.search(
            r"(?:除|外)(?:いて|して)?(?:あり|い|おり)ます|済み", sentence
        )
        if (
            (stated and not kept)
            or re.search(r"手順\s*\d", sentence)
            or re.search(r"保存先|保管場所|保存場所|フォルダ|最新版", sentence)
        ):
            reader.use(note.start(), end)


def _master_stacked(reader: _Reader) -> None:
    """Files stacked (concat) beside a master (「担当チームマスタ.csv」) that no join or
    reconciliation uses: the master's rows would be stacked with the data; asked."""
    kinds = {step.kind for _, step in reader.steps}
    if "concat" not in kinds or kinds & {"join", "reconcile"}:
        return
    masters = [item for item in reader.inputs if _MASTER_WORDS.search(item.holds)]
    if masters and len(masters) < len(reader.inputs):
        for item in masters:
            reader.gaps.append(
                Gap(
                    kind="not_understood",
                    message=f"「{item.source}」をどう使うか読み取れませんでした（ほかのファイルと"
                    "縦につなげるのか、キーで結合するのか、「〇〇で結合して△△を付ける」のように"
                    "書いてください）",
                    source=item.source,
                )
            )


def _background_sentences(reader: _Reader) -> None:
    """「今年は天候不順で出荷量が例年より少なく、部会でも話題になっております。」: a sentence
    before the first file is named that states how things are (nothing read from it, no
    request, no step read from it, no number or quoted value) is background."""
    first_file = min(reader.input_positions.values(), default=len(reader.text))
    start = 0
    for sentence in reader.text.split("。"):
        end = start + len(sentence)
        if (
            end <= first_file
            and sentence.strip()
            and not any(start <= position < end for position, _ in reader.steps)
            and not any(start <= a < end for a, _ in reader.condition_spans)
            and not _REQUEST_FORM.search(sentence)
            and _DESCRIPTIVE_END.search(sentence)
            and not re.search(r"\d|「", sentence)
        ) or _news_with_numbers(reader, sentence, start, end):
            reader.use(start, end)
        start = end + 1


_NEWS_END = re.compile(r"(?:でした|です|ます|ました|予定です|見込みです|見込み|予定)\s*[!！]?\s*$")
_ROWS_SAID = re.compile(
    r"以上|以下|未満|超|以降|以前|以内|より前|より後|対象|分|行|もの|だけ|のみ|限|除|外|抽出|絞|集計|合計"
    r"|件数|平均|並|重複|結合|照合|突合|計算|出力|保存|ファイル|シート|列|項目"
)


def _news_with_numbers(reader: _Reader, sentence: str, start: int, end: int) -> bool:
    """「花見は4月5日の予定です」「機材スタッフは12名増員の予定です」: a sentence of news in a
    mail around the request, with dates and numbers that are no conditions. Only a
    statement (no request, no step, no file, no word of rows, no column a step uses) whose
    every number is a date, a time or a count of people or things (「支店コードは101です」
    and 「予算は5万円です」 stay questions)."""
    if (
        not sentence.strip()
        or not re.search(r"\d", sentence)
        or re.search(
            r"\d(?![\d.,]*\s*(?:年|月|日|時|名|人|枚|本|組|頭|部|回|か所|箇所|%|トン))", sentence
        )
        or _REQUEST_FORM.search(sentence)
        or not _NEWS_END.search(sentence)
        or _FILE_NAME.search(sentence)
        or "「" in sentence
        or _ROWS_SAID.search(sentence)
        or any(start <= position < end for position, _ in reader.steps)
        or any(start <= a < end for a, _ in reader.condition_spans)
    ):
        return False
    columns = {name for _, step in reader.steps for name in _parameter_names(step) if name}
    return not any(column in sentence for column in columns)


_PRACTICE_END = re.compile(
    r"(?:ております|ています|ていました|ておりました)\s*$"
    r"|(?:たく|たいので|たいため)\s*[、,]?\s*(?:ご相談|相談|ご依頼|依頼|お願い)"
    r"(?:です|させてください|させて下さい|いたします|があります)\s*$"
)
_WISH_STATED = re.compile(r"たいと\s*(?:考え|思っ|存じ)\s*て\s*(?:おり|い)ます$")
"""「…を把握したいと考えています」: a wish told as context, not the request itself."""


_WISH_END = re.compile(
    r"たい\s*(?:です|と思います|と思っています|と考えています|のですが|んですが|んだけど)?\s*[!！]?\s*$"
    r"|ことに\s*(?:しました|なりました)\s*$|(?:の件|準備|確認|チェック|手順)\s*です\s*$"
    r"|(?:の件|の準備)\s*で(?=\s*[、,])"
)
"""The end of a sentence telling what the steps are for (「…のリストを作りたいです」「…作ることに
しました」「…の確認手順です」)."""
_DOCUMENT_WORDS = re.compile(
    r"(?:リスト|一覧|表|資料|状況|実績|件|準備|監査|集計|確認|手順|対象|データ|ランキング|推移"
    r"|まとめ|分析|チェック|管理|作業|報告|見直し|検討|整理|調査|申告|会議|用|抽出|作成|出力)$"
)
"""Nouns that name what is made or why (a list, a check), not the data's columns or values."""


def _only_said_again_or_documents(reader: _Reader, start: int, end: int) -> bool:
    """Whether each noun of ``reader.text[start:end]`` is said again after it (each of its
    words, so read there) or names a document, a purpose or a step (「…の宛名リスト」「監事監査の
    準備」「抽出」). A noun said only here (「営業部の交通費をまとめたいです」) may be a condition:
    the sentence is then read."""
    from sudachipy import tokenizer

    text, rest = reader.text, reader.text[end:]
    for a, b in _compound_nouns(text[start:end], tokenizer):
        noun = text[start + a : start + b].strip()
        words = [
            m.surface()
            for m in _tokenizer().tokenize(noun, tokenizer.Tokenizer.SplitMode.C)
            if len(m.surface()) >= 2
        ]
        if not all(
            word in rest or _DOCUMENT_WORDS.search(word) or _GENERIC.search(word)
            for word in words or [noun]
        ):
            return False
    return True


_REPORTED_REQUEST = re.compile(
    r"と\s*[^。「」]{0,12}?(?:から|より)\s*(?:ご?依頼|ご?相談|ご?要望|ご?指示)\s*が\s*(?:ありました|あった)\s*$"
    r"|(?:との|という)\s*(?:ご?依頼|ご?相談|ご?要望|ご?指示|話)\s*が\s*(?:ありました|あった|来ました|きました)\s*$"
    r"|と\s*(?:言われ|頼まれ|依頼され|指示され)(?:ました|た)\s*$"
)
"""「…一覧を作ってほしいとの依頼がありました」: the request told as news; the sentences after
it say what to do."""
_PAST_REASON = re.compile(
    r"(?:^|(?<=。))[^。]{4,80}?(?:ました|でした|あった|しまった|しまい|いた)\s*(?:ので|ため|から)\s*[、,]"
)
"""「先月、予防注射が未確認のワンちゃんをお預かりしてしまったケースがありましたので、」: a past
event given as the reason for the request, not a condition on the rows."""


def _practice_before_request(reader: _Reader) -> None:
    """「毎月、利用者ごとの介護報酬の合計を確認しています。添付の実績.csv について、利用者番号
    ごとに…合計し…作っていただけますか」: a sentence before the first file that tells what
    the writer usually does (no request, no number, no quoted value), followed by the
    request itself, is context: its words are not read as steps (the request says them)."""
    if not reader.context_rules:
        return
    first_file = min(reader.input_positions.values(), default=0)
    for past in _PAST_REASON.finditer(reader.text):
        if past.end() <= first_file and not re.search(r"\d|「", past.group(0)):
            reader.use(past.start(), past.end())  # 「先月…ケースがありましたので、」: what happened
            reader.context_used = True
    start = 0
    sentences = reader.text.split("。")
    for index, sentence in enumerate(sentences):
        end = start + len(sentence)
        asked_after = any(_REQUEST_FORM.search(later) for later in sentences[index + 1 :])
        practice = (
            end <= first_file
            and sentence.strip()
            and _PRACTICE_END.search(sentence)
            and not _REQUEST_FORM.search(_PRACTICE_END.sub("", _WISH_STATED.sub("", sentence)))
            and not re.search(r"\d|「", sentence)
        )
        told_as_news = (  # 「…を作ってほしいとの依頼がありました。…」
            _REPORTED_REQUEST.search(sentence)
            and not re.search(r"「", sentence)
            and _FILE_NAME.search(reader.text, end)
        )
        if asked_after and (practice or told_as_news):
            reader.use(start, end)
            reader.context_used = True
        elif (
            end <= first_file
            and _WISH_END.search(sentence)
            and not re.search(r"\d|「", sentence)
            and _FILE_NAME.search(reader.text, end)
            and _only_said_again_or_documents(reader, start, end)
        ):  # 「全店共通の取扱商品リストを作りたいです。在庫_新宿.csv …」: what the steps make
            reader.use(start, end)
            reader.context_used = True
        elif end <= first_file:
            for clause in re.finditer(
                r"[^、。]+?[てで](?:おり|おります|います|いました|おりました|いた)(?:が)?(?=[、。]|$)",
                sentence,
            ):
                if not re.search(r"\d|「", clause.group(0)):  # 「毎月末、目視で突き合わせており、」
                    reader.use(start + clause.start(), start + clause.end())
                    reader.context_used = True
        start = end + 1


_SIGNATURE_ROLE = (
    r"(?:事務長|院長|園長|店長|所長|社長|部長|課長|係長|主任|室長|支配人|担当|経理|総務|事務|受付)"
)


def _signature(instruction: str) -> str:
    """The last line of a mail when it only names its writer (「給水課　係長　田村」): words
    with no particle or verb, after a request of several lines."""
    lines = [line.strip() for line in instruction.splitlines() if line.strip()]
    if len(lines) < 3:
        return ""
    last = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", lines[-1]))
    if len(last) <= 24 and re.fullmatch(rf"[{_K}{_KATA}A-Za-z ・]+", last):
        return last
    if len(
        last
    ) <= 36 and re.fullmatch(  # 「さえき眼科クリニック 事務長 佐伯」: a role, then a name
        rf"[^\s、。をにがはで]{{1,20}}(?:\s+[^\s、。]{{1,12}})*?\s+{_SIGNATURE_ROLE}"
        rf"\s*[{_K}{_KATA}ぁ-ん ]{{1,10}}",
        last,
    ):
        return last
    return ""


def _heading(instruction: str) -> str:
    """The first line of a request of several lines when it is a title (「仕入先別の発注額
    集計」「【月次】修繕費の集計」): a noun phrase with no file, verb or case particle."""
    lines = [line for line in instruction.splitlines() if line.strip()]
    if len(lines) < 2:
        return ""
    first = normalize(lines[0])
    if (
        len(first) > 40
        or _FILE_NAME.search(first)
        or re.search(r"[をにがはで]|から|まで", re.sub(r"^[^。]*。", "", first))
        or any(True for _ in _action_words(first))
    ):
        return ""
    return first


_SETTING = re.compile(
    r"^\s*(?P<key>[^\s:=。()]{1,8}(?:\s*\([^()]{1,10}\))?)\s*[:=]\s*(?P<value>[^。]+?)\s*$"
)
_SETTING_WORDS: tuple[tuple[str, str], ...] = (
    (r"集計(?:単位|キー|の単位|軸)|グループ(?:化)?(?:キー)?|集計する単位", "{names}ごとに集計"),
    (r"集計(?:値|項目|内容|する値|する項目|方法|の仕方)|まとめ方", "{value}を集計"),
    (r"除外(?:条件|対象)?|除く(?:もの)?", "{value}は除外して"),
    (r"(?:抽出|絞り込み|絞込)(?:条件)?|条件", "{value}の行だけ"),
    (r"並び順|並べ替え|並べ順|ソート(?:順)?|並び|順番|並び方|表示順", "{value}に並べる"),
    (r"出力形式|形式", "{value}で出力"),
    (r"列|出力列|残す列|出力項目|出す列|出す項目", "{names}の列だけ残す"),
    (r"金額(?:の)?列|比較(?:する)?列|比較対象", "金額は{value}で比べる"),
    (r"(?:金額の)?許容差|誤差|差額(?:の許容)?", "許容差は{value}{within}"),
    (r"重複(?:削除|除去|チェック)?|重複行", "{names}で重複を削除"),
    (r"日付(?:の)?(?:ずれ|ズレ|許容|差)", "日付のずれは{value}{within}"),
    (r"承認(?:者)?|決裁(?:者)?|確認者", "{value}の承認を入れる"),
)
"""Lines of a settings block (「集計単位：得意先コード、商品コード」「除外：返品理由が「期限切れ」
のもの」) said as the sentence they stand for; other keys are left as written."""


_SETTING_HEADS = (
    r"(?:入力|元)?(?:ファイル|データ)(?:名)?\s*(?:\d{1,2}|[A-Za-z])?|出力(?:先|ファイル)?(?:名)?"
    r"|保存(?:先|名|ファイル名?)?|シート(?:名)?|集計|(?:照合|突合|結合)?キー"
)
"""Keys of a settings block that are said as they are (「入力ファイル = 出荷.xlsx」)."""


def _settings_said_as_sentences(text: str) -> str:
    clauses = []
    for clause in text.split(
        "。"
    ):  # 「キー：取引先コード、許容差：0円、日付のずれ：3日」: one each
        if clause.count(":") >= 2:
            clauses.extend(re.split(r"\s*[、,]\s*(?=[^\s、,:。]{1,8}\s*:)", clause))
        else:
            clauses.append(clause)
    settings = [m for clause in clauses if (m := _SETTING.match(clause))]
    known = [
        m
        for m in settings
        if any(re.fullmatch(w, m.group("key")) for w, _ in _SETTING_WORDS)
        or re.fullmatch(_SETTING_HEADS, m.group("key"))
    ]
    if len(settings) < 2 or not known:
        return text  # a settings block has several lines; one 「X:Y」 is read as written
    said: list[str] = []
    for clause in clauses:
        setting = _SETTING.match(clause)
        sentence = _setting_said(setting, said) if setting else clause
        if sentence is not None:
            said.append(sentence)
    return "。".join(said)


def _setting_said(setting: re.Match[str], said: list[str]) -> str | None:
    """One line of a settings block as the sentence it stands for; ``None`` when it says
    nothing or was folded into the line before (a sheet of the file above)."""
    clause, key, value = setting.group(0), setting.group("key"), setting.group("value")
    if re.fullmatch(
        r"(?:特に)?(?:なし|無し|不要|指定なし)|(?:見|使わ|比べ|考慮し)(?:ない|なくて\s*(?:よい|いい|良い|OK|大丈夫)"
        r"(?:です)?)|無視(?:する|して)?",
        value,
    ):
        return None  # 「条件：なし」「日付 = 見ない」: nothing asked
    if _VAGUE_TIME.search(value) or re.search(r"(?:直近|過去)\s*\d", value):
        return clause  # 「条件：直近3か月」: a period nobody dated is asked as written
    if re.fullmatch(
        r"前処理|後処理|処理|加工|作業|手順|計算(?:列|項目|式)?|追加列|表記統一|表記の統一", key
    ) or (re.fullmatch(r"対象[^\s:]{1,6}", key) and re.search(r"が|に「|を含", value)):
        return (
            value  # 「前処理：書名 の全角半角をそろえる」「対象店舗：店舗コード が S01」: the step
        )
    period = re.fullmatch(rf"(?P<range>.+?)\s*\(\s*(?P<col>{NOUN})\s*\)", value)
    if re.fullmatch(r"(?:対象)?期間", key) and period:  # 「対象期間:4月1日〜9月30日(返品日)」
        return f"{period.group('col')}が{period.group('range')}"
    keyed = re.fullmatch(rf"(?:対象)?期間\s*\(\s*(?P<col>{NOUN})\s*\)", key)
    if keyed:  # 「期間(水揚日): 2024-06-01 〜 2024-08-31」
        return f"{keyed.group('col')}が{value}"
    if re.fullmatch(r"(?:入力|元)?(?:ファイル|データ)?\s*(?:\d{1,2}|[A-Za-z])", key) and (
        _FILE_NAME.search(value)
    ):
        key = "入力ファイル"  # 「ファイル1 = 見積一覧.xlsx」「入力2: 支払予定.csv」: a file read
    key = re.sub(r"(?<=[^\d\s])\s*\d{1,2}$", "", key)  # 「条件1: …」「条件2: …」: one each
    previous = _SETTING.match(said[-1]) if said else None
    if (
        re.fullmatch(r"(?:入力)?シート(?:名)?", key)
        and previous
        and re.fullmatch(
            r"(?:入力|元)(?:ファイル|データ)?(?:名)?|ファイル(?:名)?|データ", previous.group("key")
        )
        and _FILE_NAME.search(previous.group("value"))
    ):  # 「入力ファイル = 生乳出荷.xlsx / シート = 集計用」: the sheet read
        said[-1] = f"{said[-1]}(シート: {value})"
        return None
    form = next((f for words, f in _SETTING_WORDS if re.fullmatch(words, key)), None)
    if (
        re.fullmatch(r"出力|出力内容|出す", key)
        and len(re.split(r"\s*[、,・]\s*", value)) >= 2
        and not _FILE_NAME.search(value)
        and not re.search(_FORMAT_WORD, value)
    ):
        return "・".join(re.split(r"\s*[、,・]\s*", value)) + "の列だけ残す"  # 「出力：氏名、部署」
    if re.fullmatch(
        r"(?:データ)?(?:抽出|集計|突合|照合|突き合わせ|名寄せ|並べ替え|重複削除|加工|変換)(?:作業|依頼)?",
        value,
    ):
        return None  # 「【依頼種別】データ抽出」: what kind of request the form is, no step
    if form is None:
        condition = _condition_setting(key, value)
        if condition is not None:
            return condition
        # 「出力 = 差異.xlsx」 → 「出力: 差異.xlsx」; 「粗利 = 売上 - 原価」 stays
        arithmetic = re.search(r"[-+*/×÷−]\s*[^\s]", value) and "=" in clause
        return clause if arithmetic else f"{key}: {value}"
    return _setting_in_words(form, value)


def _setting_in_words(form: str, value: str) -> str:
    """A known settings line (its sentence ``form``) said with its ``value``."""
    if form == "{value}の承認を入れる" and re.search(r"承認|確認|チェック|決裁", value):
        return f"{value}を入れる"  # 「承認：出力前に店長確認」: the approval said whole
    if form == "{value}を集計" and re.search(r"つなげ|繋げ|連結|結合|縦に|まとめる$", value):
        return value  # 「まとめ方＝縦につなげる」: the files stacked, no total
    if form == "{value}を集計" and re.search(r"合計|平均|件数|最大|最小|最高|最低|総額|数$", value):
        form = "{value}"  # 「集計値：売上の平均」: the metric is said
    if form == "{value}に並べる" and re.search(r"順\s*[、,]\s*(?:上位|先頭|トップ)", value):
        value = re.sub(r"順\s*[、,]\s*", "順に並べて", value, count=1)
        form = "{value}"  # 「順番：数量の多い順、上位10件」: the order, then how many
    if form == "{names}で重複を削除":  # 「重複 | 会員番号で1件に」: the key
        value = re.sub(
            r"\s*(?:で|が同じ)?\s*(?:(?:1|一)\s*(?:件|行)に.*|重複.*|を?削除.*)$", "", value
        )
    if form in ("{value}の行だけ", "{value}は除外して"):
        value = re.sub(  # 「部門 = 精肉, 鮮魚」: one list of values (「50,000円」 is one number)
            r"\s*,\s*(?!\d{3}(?!\d))", "・", value
        )
        parts = re.split(r"\s*(?:、\s*)?(?:かつ|且つ|および|及び)\s*", value)
        if form == "{value}の行だけ" and len(parts) > 1:  # 「工程=研磨 かつ 作業時間>=120」
            return "。".join(form.format(value=part) for part in parts)
    names = "・".join(re.split(r"\s*(?:、|,|・|/|×)\s*", value))  # 「船名 × 魚種」
    within = "" if re.search(r"以内|まで|以下|なし|無し|認め", value) else "以内"
    return form.format(value=value, names=names, within=within)


_SETTING_VALUE = r"(?:「[^」]{1,40}」|[^、,・/\s()「」:=。]{1,20})"
"""One value of a settings line (「品目: いちご」「魚種: スルメイカ、マアジ」); a value must
also be a noun (``_one_noun``), so 「分類ごとに合計」「見ない」 are no values."""


def _one_noun(value: str) -> bool:
    """Whether ``value`` is a noun (in any script: 「いちご」「お供え」「第2ハウス」), not a phrase
    or a verb."""
    from sudachipy import tokenizer

    if value.startswith("「"):
        return True
    morphemes = list(_tokenizer().tokenize(value, tokenizer.Tokenizer.SplitMode.C))
    return all(
        m.part_of_speech()[0] in ("名詞", "接頭辞", "接尾辞")
        or (  # 「お供え」「ご予約」: a verb's stem after お / ご is a noun
            index > 0
            and morphemes[index - 1].part_of_speech()[0] == "接頭辞"
            and m.part_of_speech()[5].startswith("連用形")
        )
        for index, m in enumerate(morphemes)
    )


def _condition_setting(key: str, value: str) -> str | None:
    """A line naming a column and what to keep (「精米歩合 = 50以下」「魚種: スルメイカ、マアジ、
    サバ の3つ」) as the condition it states; ``None`` for other keys (「突合キー: 案件番号」)."""
    if not re.fullmatch(NOUN, key) or _NOT_CONDITION_HEADS.match(key):
        return None
    compared = re.fullmatch(
        rf"{AMOUNT}\s*(?:" + "|".join(w for w, op in _OP_WORDS if op in ORDERING_OPS) + ")",
        value,
    )
    if compared:
        return f"{key}が{value}"
    ranged = re.fullmatch(rf"(?P<low>{AMOUNT})\s*(?:〜|~|～)\s*(?P<high>{AMOUNT})", value)
    if ranged:  # 「塗装面積(㎡): 150 〜 300」: both ends kept
        return f"{key}が{ranged['low']}以上、{key}が{ranged['high']}以下"
    listed = re.fullmatch(
        rf"(?P<values>{_SETTING_VALUE}(?:\s*[、,・/]\s*{_SETTING_VALUE}){{0,19}})"
        rf"\s*(?:の\s*\d{{1,2}}\s*(?:つ|種類?|品目))?",
        value,
    )
    if (
        listed is None
        or not all(_one_noun(v) for v in re.split(r"\s*[、,・/]\s*", listed.group("values")))
        or re.search(  # 「突合キー: 案件番号」「金額列: 請求額」: a setting, no rows
            r"(?:キー|列|項目|単位|順|形式|ファイル|名|先|条件|期間|方法|目的|備考|メモ|用途|注意|補足|参考"
            r"|理由|件名|差|ずれ|ズレ|者|日|時|軸|値)$",
            key,
        )
        or _FILE_NAME.search(value)
        or re.fullmatch(_FORMAT_WORD, value)
    ):
        return None
    values = [_clean(v) for v in re.split(r"\s*[、,・/]\s*", listed.group("values"))]
    return f"{key}が" + "か".join(f"「{v}」" for v in values) + "の行だけ"


_PHONE = re.compile(
    r"(?:(?:TEL|Tel|tel|FAX|Fax|fax|電話(?:番号)?|携帯|内線)\s*[:.]?\s*)?"
    r"(?<![\d-])\(?0\d{1,4}\)?\s*-\s*\d{1,4}\s*-\s*\d{3,4}(?![\d-])"
    r"|内線\s*[:.]?\s*\d{2,6}(?:\s*(?:まで|へ|に))?"  # 「不明点あれば内線2145まで」
)
"""A phone number (「TEL 0465-22-3187」「03-5821-4471」): never a value to compare."""
_FORM_FIELD = re.compile(
    r"(?:^|(?<=。))\s*(?P<key>件名|表題|目的|使用目的|用途|背景|経緯|期限|提出期限|締切|締め切り|〆切"
    r"|納期|希望納期|依頼者|依頼者名|依頼元|依頼部署|依頼部門|依頼日|起票者|起票日|差出人)\s*:"
)
"""A field of a request form or a mail's header (「目的：…」「期限：12月10日」「依頼者：フロント
山本」): who asks, why and by when, never a step (the form's 処理内容 says the steps). A key
that may also name a column (用途, 目的) is a field only when its value is a phrase, not one
noun (「用途: お供え」 keeps rows)."""
_COMPARING = re.compile(r"以前|以降|以後|より|未満|以上|以下|超|前|後")
_DAY = (
    r"(?:(?:\d{4}\s*年\s*)?\d{1,2}\s*月\s*\d{1,2}\s*日|\d{1,2}/\d{1,2}|今月末|来月末|月末|週末|明日"
    r"|明後日|(?:来週|今週)\s*の?\s*[月火水木金土日](?:曜日?)?|[月火水木金土日]曜日?)"
)
_DAY_SAID = rf"{_DAY}\s*(?:\(\s*[月火水木金土日]\s*\))?"
_WITHIN_PERIOD = r"(?:今月中|今週中|来週中|本日中|今日中|月内|年内|年度内)"
_GIVEN = (
    r"(?:いただけ(?:ると|れば|ますか|ます(?:でしょうか)?)|いただきたく|いただきたい|頂け(?:ると|れば|ますか)"
    r"|ください|下さい|お願い|もらえ(?:ると|ますか|る)|助かり|構いません|大丈夫|結構|ほしい|欲しい)"
)
_DEADLINE = re.compile(
    rf"\(\s*(?:期限|締切|締め切り|〆切|納期)\s*(?:は|:)?\s*{_DAY_SAID}\s*(?:まで)?\s*\)"
    rf"|\(\s*{_DAY_SAID}\s*(?:開催|実施|予定|の予定)\s*\)"  # 「蔵元会議(11月20日開催)」
    rf"|(?:(?<=会議)|(?<=定例)|(?<=監査)|(?<=面談)|(?<=説明会)|(?<=展示会)|(?<=報告会))\s*\(\s*{_DAY}\s*\)"
    rf"|(?:期限|締切|締め切り|〆切|納期)\s*(?:は|:)\s*{_DAY_SAID}\s*(?:です|まで(?:に|で)?\s*(?:{_GIVEN}[ぁ-ん]*)?)?"
    rf"|(?:{_DAY_SAID}\s*(?:まで|迄)\s*(?:に|で)?|{_WITHIN_PERIOD}\s*(?:に|で)?)\s*(?:は\s*)?{_GIVEN}[^。、]*"
    r"|(?:お?急ぎ(?:では|じゃ)\s*(?:ありません|ない)(?:が|けど|ので)|急ぎません(?:が|ので))"
)
"""When the result is wanted (「11月15日までにいただけると助かります」「期限は10月11日(金)です」
「（締切：12月6日）」「今月中にお願いします」) or a meeting is held (「会議(11/14)」): no date
a row is compared with."""


def _form_fields(reader: _Reader, lines: Sequence[tuple[int, int]]) -> None:
    """Mark the fields of a request form (to the end of their line, ``lines`` being where each
    line is) and the deadline of a request as read (context)."""
    text = reader.text
    for said in _FORM_FIELD.finditer(text):
        end = next((b for a, b in lines if a <= said.start() < b), -1)
        end = end if end >= 0 else text.find("。", said.end())
        end = len(text) if end < 0 else end
        value = text[said.end() : end].strip()
        key = said.group("key")
        if key in ("期限", "提出期限", "締切", "締め切り", "〆切", "納期", "希望納期") and (
            _COMPARING.search(value)
        ):
            continue  # 「期限：12月31日以前」: a condition said as a line of settings
        if key in ("目的", "用途") and value and _one_noun(value):
            if not reader.is_used(said.start(), end):  # 「用途: お供え」: rows, or what for?
                reader.gaps.append(
                    Gap(
                        kind="not_understood",
                        message=f"「{key}: {value}」は、{key}が「{value}」の行だけを残す"
                        "条件ですか、この作業の目的の説明ですか。条件なら「"
                        f"{key}が「{value}」の行だけ」のように書いてください",
                        source=text[said.start() : end].strip(),
                    )
                )
                reader.use(said.start(), end)
            continue
        reader.use(said.start(), end)
    for closing in re.finditer(r"\d{1,2}/\d{1,2}\s*〆|\d{1,2}月\d{1,2}日\s*〆", text):
        reader.use(closing.start(), closing.end())  # 「1/15〆の出荷」: the day the books close
    for deadline in _DEADLINE.finditer(text):
        reader.use(deadline.start(), deadline.end())


def _line_spans(text: str, lines: Sequence[tuple[str, bool]]) -> list[tuple[int, int, bool] | None]:
    """Where each line of the instruction is in ``text`` (start, end, numbered), in order;
    ``None`` for a line a settings rule said again as another sentence (not found)."""
    spans: list[tuple[int, int, bool] | None] = []
    cursor = 0
    for line, numbered in lines:
        at = text.find(line, cursor)
        if at < 0:
            spans.append(None)
            continue
        spans.append((at, at + len(line), numbered))
        cursor = at + len(line)
    return spans


def _numbered_joins_moved(spans: Sequence[tuple[int, int, bool] | None], text: str) -> set[int]:
    """Where one numbered step ends and the next begins in ``text``, the instruction said again
    with its settings lines as sentences (「処理内容： 1. … 2. …」 of a request form): the 。
    between two numbered lines found one after the other."""
    return {
        span[0] - 1
        for previous, span in itertools.pairwise(spans)
        if previous and span and previous[2] and span[2] and text[span[0] - 1 : span[0]] == "。"
    }


def read_procedure(instruction: str, documents: Sequence[str] = ()) -> Procedure:
    """The requirement model of ``instruction`` by rules (see the module docstring)."""
    try:
        procedure, context_used = _read(instruction, documents, context_rules=True)
        if context_used and not procedure.steps:  # the context was the request (「同様に」)
            procedure, _ = _read(instruction, documents, context_rules=False)
    except _DateNotReadable as error:  # 「2025/2/30以降」: named, never a traceback
        gap = Gap(kind="not_understood", message=str(error), source="")
        return Procedure(inputs=[], steps=[], outputs=[], gaps=[gap])
    return procedure


def _read(
    instruction: str, documents: Sequence[str], *, context_rules: bool
) -> tuple[Procedure, bool]:
    text, joins = _normalized(instruction)
    reader = _Reader(_settings_said_as_sentences(text), context_rules=context_rules)
    spans = _line_spans(reader.text, _lines(_fold(instruction)))
    reader.numbered_lines = [(span[0], span[1]) for span in spans if span and span[2]]
    reader.numbered_joins = (
        joins if reader.text == text else _numbered_joins_moved(spans, reader.text)
    )
    for retracted in _RETRACTED.finditer(reader.text):
        reader.use(retracted.start(), retracted.end())  # said, then taken back
    for declared in _DECLARED_COLUMNS.finditer(reader.text):
        reader.use(declared.start(), declared.end())  # 「列は …, count」: names, no step
    _english_instruction(reader)
    heading = _heading(instruction)
    if heading and reader.text.startswith(heading):
        reader.use(0, len(heading))  # a title says what the steps below do; it is no step
    signature = _signature(instruction)
    if signature and reader.text.endswith(signature):
        reader.use(len(reader.text) - len(signature), len(reader.text))  # 「給水課 係長 田村」
    subject = re.match(r"\s*(?:件名|Subject|subject|Re|RE|Fw|FW)\s*:[^。]*", reader.text)
    if subject:
        reader.use(subject.start(), subject.end())  # 「件名:…の集計について」: a mail's subject
    _form_fields(reader, [(span[0], span[1]) for span in spans if span])
    for reason in re.finditer(r"\([^()]{1,60}?(?:ので|ため|から|為)\s*\)", reader.text):
        reader.use(*reason.span())  # 「（点検記録には単価が入っていないので）」: why, no step
    for phone in _PHONE.finditer(reader.text):
        reader.use(phone.start(), phone.end())  # 「TEL 0465-22-3187」: a signature's number
    for mention in re.finditer(r"@[^\s、。,]{1,20}", reader.text):
        reader.use(mention.start(), mention.end())  # 「@佐藤さん」: whom a chat message is for
    for quote in _RULE_QUOTE.finditer(reader.text):
        group = "rule" if quote.group("rule") else "rule2"
        reader.use(quote.start(group), quote.end(group))  # a rule quoted: read as a rule only
    _read_files(reader)
    _output_named_without_extension(reader)
    _csv_encoding(reader)
    _practice_before_request(reader)
    _read_llm_steps(reader)
    _read_normalize(reader)
    _read_dedupe(reader)
    _read_two_tables(reader)
    _read_task(reader)
    _read_compute(reader)
    _read_rounding(reader)
    _computed_over_itself(reader)
    _read_select(reader)
    _read_policy_reference(reader, documents)
    _company_forms(reader)
    _refused_shapes(reader)
    _columns_compared(reader)
    _read_filters(reader)
    _read_condition_lines(reader)
    _read_aggregate(reader)
    _metric_columns_said_apart(reader)
    _read_sort(reader)
    _read_limit(reader)
    _read_approval(reader)
    _included_too(reader)
    _negate_excluded(reader)
    _said_twice(reader)
    _conditions_not_filters(reader)
    _differences_of_a_reconciliation(reader)
    _ratios_said_in_percent(reader)
    _read_filter_verbs(reader)
    _unread_dedupe(reader)
    _vague_times(reader)
    _vague_comparisons(reader)
    _vague_manners(reader)
    _unread_exclusions(reader)
    _unread_orders(reader)
    _unread_order_words(reader)
    _threshold_from_documents(reader, documents)
    _two_table_sources(reader)
    _fetch_requests(reader)
    _usual_sources(reader)
    _effect_requests(reader)
    _unused_inputs(reader)
    _master_stacked(reader)
    _background_sentences(reader)
    _notes(reader)
    _read_leftovers(reader)
    _read_people(reader, {gap.source for gap in reader.gaps})
    _unused_nouns(reader, {gap.source for gap in reader.gaps})
    ordered = _said_in_sequence(reader, sorted(reader.steps, key=lambda item: _order_key(item)))
    ordered = _merged_sorts(ordered, reader.gaps, reader.text)
    ordered = _merged_normalize(ordered)
    for step in ordered:
        if step.count_name and not any(
            step.count_name in _parameter_names(other)
            or any(step.count_name in formula for formula in other.expressions.values())
            for other in ordered
            if other is not step
        ):  # (「空き枠 = 定員 − 申込件数」 uses the count under its name)
            step.count_name = None  # 「受付件数を出して、件数の多い順」: the plain 件数 column
    first_filter = reader.first_step("filter")
    said = (  # where each condition was said (_filters_of_totals moves some of them)
        [
            (c, span[0])
            for c, span in zip(first_filter.conditions, reader.condition_spans, strict=False)
        ]
        if first_filter
        else []
    )
    ordered = _filters_of_totals(reader, ordered)
    ordered = _filters_in_numbered_order(reader, ordered, first_filter, said)
    ordered = _formulas_of_totals(ordered)
    _computed_columns_kept(reader, ordered)
    _sort_after_aggregate(ordered)
    _columns_named_elsewhere(reader, ordered)
    _keys_said_short(ordered, reader.gaps)
    _references_left(ordered, reader.gaps)
    _task_alone(reader, ordered)
    if _DEDUPE_FIRST.search(reader.text):  # 「抽出の前に重複は削除しておいて」
        ordered = _dedupe_before_filters(ordered)
    for number, step in enumerate(ordered, start=1):
        step.id = f"s{number}"
    if not reader.inputs and ordered:
        reader.inputs.append(InputSpec(id="in1", format="table", holds="表", source=""))
    procedure = Procedure(
        inputs=reader.inputs,
        steps=ordered,
        outputs=_merged_outputs(reader.outputs, reader.gaps),
        gaps=reader.gaps,
    )
    return procedure, reader.context_used


_DEDUPE_FIRST = re.compile(
    r"(?:抽出|絞り込み|絞込|フィルタ)\s*(?:の|する)?\s*前に"
    r"|(?:重複|ダブ)[^。]{0,24}?(?:削除|除去|除い|消し|まとめ)[^。]{0,6}?(?:あと|後)で?[^。]{0,16}?(?:抽出|絞)"
)
"""「抽出の前に会員番号の重複は削除して」: the dedupe runs first although said second."""


def _dedupe_before_filters(steps: list[StepSpec]) -> list[StepSpec]:
    dedupes = [s for s in steps if s.kind == "dedupe"]
    rest = [s for s in steps if s.kind != "dedupe"]
    first_filter = next((i for i, s in enumerate(rest) if s.kind == "filter"), len(rest))
    return rest[:first_filter] + dedupes + rest[first_filter:]


_STAGE = {
    "extract": 0,
    "classify": 1,
    "normalize": 2,
    "concat": 2,
    "compute": 3,
    "join": 3,
    "reconcile": 3,
    "dedupe": 5,
    "filter": 5,
    "select": 7,
    "aggregate": 6,
    "sort": 8,
    "task": 3,
    "approval": 9,
}


_THEN = re.compile(
    r"てから|でから|た\s*(?:あと|後)|[たで]\s*(?:うえ|上)\s*で|その\s*(?:あと|後)|それから|次に|→|⇒"
)
"""Words that put one step after another (「重複除去してから照合」)."""


def _said_in_sequence(reader: _Reader, staged: list[tuple[int, StepSpec]]) -> list[StepSpec]:
    """The natural order, except where the instruction says a step comes first (「請求番号で
    重複除去してから、入金.csvと照合」「取引日の新しい順に並べて…その後重複を除いて」): a
    step said before a sequence word runs before the step said after it."""
    order = list(staged)
    for _ in range(len(order) ** 2):
        moved = False
        for i, (later_position, later) in enumerate(order):
            for j in range(i + 1, len(order)):
                earlier_position, earlier = order[j]
                between = reader.text[earlier_position:later_position]
                stops = {earlier_position + m.start() for m in re.finditer("。", between)}
                if (
                    earlier_position < later_position
                    and (  # one sentence: 「ファイル→…。…に限定」 is no sequence
                        ("。" not in between and _THEN.search(between))
                        or (stops and stops <= reader.numbered_joins)  # 「1) … 2) …」
                    )
                    and later.kind != "approval"
                    and (earlier.kind, later.kind) != ("aggregate", "filter")  # totals: below
                ):
                    order.insert(i, order.pop(j))  # said first, with 「…てから」 between
                    moved = True
                    break
            if moved:
                break
        if not moved:
            break
    return [step for _, step in order]


def _order_key(item: tuple[int, StepSpec]) -> tuple[int, int]:
    """Steps run in the data's natural order (read → clean → combine → filter and dedupe →
    total → sort → approve); steps of one stage keep the instruction's order (a dedupe before
    or after a filter keeps different rows, so the instruction says which)."""
    position, step = item
    return (_STAGE[step.kind], position)
