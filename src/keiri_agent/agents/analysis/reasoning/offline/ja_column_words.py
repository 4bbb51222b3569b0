"""Everyday Japanese words for the words of a column name, as data.

A back-office user rarely types a column's name as the file spells it: 「課ごと」 for
所属, 「減価償却費」 for 当期償却額, 「請求金額」 for 請求額（円）, 「部署別」 for 部門名.
``WORD_SYNONYMS`` says, for a word that may appear inside a Japanese column name, the
ordinary words a request may use instead (an accounting, HR and back-office
vocabulary); the parser (``parser.everyday_terms``) builds the terms from it and
keeps a term only when it names exactly one column of the dataset.

``GROUP_ONLY`` holds one-character words that name a column only as a grouping word
(「課ごと」「部別」): alone they are too short to be read anywhere else.
"""

from __future__ import annotations

# A word inside a column name → everyday words for it.
WORD_SYNONYMS: dict[str, tuple[str, ...]] = {
    # organisation
    "所属": ("部署", "部門", "部課", "課", "部", "チーム", "所属部署"),
    "部署": ("部門", "所属", "課", "部", "チーム"),
    "部門": ("部署", "所属", "課", "部", "チーム"),
    "拠点": ("事業所", "営業所", "支店", "支社"),
    "事業所": ("拠点", "営業所", "支店", "支社"),
    "店舗": ("店", "お店", "ショップ"),
    # people
    "社員": ("従業員", "職員", "スタッフ"),
    "従業員": ("社員", "職員", "スタッフ"),
    "担当者": ("担当", "担当社員"),
    "担当": ("担当者", "担当社員"),
    "氏名": ("名前", "社員名", "従業員名"),
    # counterparties
    "得意先": ("取引先", "顧客", "お客様", "客先"),
    "顧客": ("取引先", "得意先", "お客様", "客先"),
    "仕入先": ("取引先", "業者", "ベンダー", "購入先"),
    "取引先": ("相手先", "客先"),
    # money
    "額": ("金額", "代金"),
    "金額": ("額", "代金"),
    "価額": ("価格", "金額"),
    "単価": ("価格", "値段"),
    "給与": ("給料", "賃金", "月給"),
    "手当": ("手当て",),
    "税額": ("税金", "税"),
    "償却額": ("償却費", "減価償却費", "減価償却額", "減価償却"),
    "残高": ("バランス", "残額"),
    # work time
    "残業": ("時間外", "時間外労働", "時間外勤務"),
    "勤務時間": ("労働時間", "就業時間"),
    "労働時間": ("勤務時間", "就業時間"),
    "休暇": ("休み", "有休", "有給"),
    # dates and terms
    "終了": ("満了", "終わり"),
    "開始": ("始まり", "スタート"),
    "期日": ("期限", "締切", "締め切り"),
    "期限": ("期日", "締切", "締め切り"),
    # things and descriptions
    "品目": ("商品", "品名", "アイテム"),
    "摘要": ("内容", "説明", "メモ"),
    "備考": ("メモ", "コメント"),
    "数量": ("個数", "点数"),
    "重量": ("重さ",),
    "区分": ("種類", "種別", "タイプ"),
    "種別": ("種類", "区分", "タイプ"),
}

# One-character words read only before a grouping word (ごと, 別, 毎, 単位).
GROUP_ONLY: frozenset[str] = frozenset({"課", "部", "店", "税"})
