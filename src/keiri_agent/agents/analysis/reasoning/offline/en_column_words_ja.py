"""Japanese words for the words of English column names, as data.

Exports from accounting and business systems often carry English headers
(``approved_limit``, ``collateral_held``, ``due_date``) while the team asks in
Japanese: 「承認限度額の合計」「担保ありの件数」「支払期日が3月の請求」. ``TOKEN_JA`` says,
for a word of an English column name (``parser.name_tokens``), the Japanese a request
may use; ``japanese_readings`` joins them into readings of the whole name
(approved_limit → 承認限度額, 承認限度, 承認枠). A name with a word outside the table
has no reading: nothing is guessed. Words that only mark a state or a unit
(``is``, ``held``, ``flag``, ``jpy``) are left out of the reading.
"""

from __future__ import annotations

import itertools

from keiri_agent.agents.analysis.reasoning.offline.en_japanese_glossary import GLOSSARY

# A word of an English column name → Japanese words for it (the usual one first).
TOKEN_JA: dict[str, tuple[str, ...]] = {
    # money
    "amount": ("金額", "額"),
    "amt": ("金額", "額"),
    "price": ("価格", "単価"),
    "cost": ("費用", "コスト", "原価"),
    "fee": ("手数料", "料金"),
    "charge": ("料金", "請求額"),
    "tax": ("税額", "税"),
    "balance": ("残高",),
    "limit": ("限度額", "限度", "枠"),
    "budget": ("予算",),
    "revenue": ("売上", "収益"),
    "sales": ("売上",),
    "salary": ("給与",),
    "bonus": ("賞与", "ボーナス"),
    "discount": ("値引", "割引"),
    "total": ("合計", "総額"),
    "net": ("差引", "正味"),
    "gross": ("総", "額面"),
    "value": ("金額", "価額"),
    "face": ("額面",),
    "payment": ("支払", "支払い"),
    "paid": ("支払", "支払済"),
    "invoice": ("請求書", "請求", "インボイス"),
    "billing": ("請求",),
    "billed": ("請求額", "請求"),
    "invoiced": ("請求額", "請求"),
    "quoted": ("見積", "見積金額"),
    "requesting": ("依頼",),
    "deposit": ("入金", "預り金"),
    "refund": ("返金",),
    "credit": ("与信", "信用"),
    "score": ("スコア", "点数"),
    "rate": ("率",),
    "ratio": ("比率",),
    # actions and states
    "approved": ("承認", "承認済"),
    "approval": ("承認",),
    "requested": ("申請", "依頼"),
    "request": ("申請", "依頼"),
    "applied": ("申請",),
    "application": ("申請",),
    "received": ("受領", "入金"),
    "issued": ("発行",),
    "signed": ("締結", "署名"),
    "current": ("現在", "現行"),
    "overdue": ("延滞", "期限超過"),
    "collateral": ("担保",),
    "reporting": ("報告",),
    "status": ("ステータス", "状態"),
    "decision": ("決定", "判定"),
    "review": ("審査", "レビュー"),
    "reviewer": ("審査担当", "審査者"),
    "rating": ("格付", "評価"),
    # people and organisations
    "customer": ("顧客", "取引先"),
    "client": ("顧客", "クライアント"),
    "vendor": ("仕入先", "取引先", "ベンダー"),
    "supplier": ("仕入先",),
    "counterparty": ("取引先", "相手先"),
    "employee": ("社員", "従業員"),
    "staff": ("担当者", "スタッフ"),
    "owner": ("担当者", "担当"),
    "manager": ("管理者", "マネージャー"),
    "department": ("部署", "部門"),
    "dept": ("部署", "部門"),
    "division": ("事業部",),
    "branch": ("支店",),
    "region": ("地域", "エリア"),
    "industry": ("業種",),
    "agency": ("機関", "代理店"),
    "program": ("制度", "プログラム"),
    "project": ("プロジェクト", "案件"),
    "contract": ("契約",),
    "item": ("品目", "明細"),
    "category": ("カテゴリ", "区分", "分類"),
    "type": ("種別", "区分", "種類", "種"),
    "method": ("方法",),
    "account": ("勘定科目", "口座"),
    "currency": ("通貨",),
    "quantity": ("数量",),
    "qty": ("数量",),
    "count": ("件数", "数"),
    "data": ("データ",),
    "destination": ("仕向", "輸出先", "仕向け"),
    "country": ("国",),
    "freight": ("運賃",),
    "forwarder": ("フォワーダー",),
    "weight": ("重量", "重さ"),
    "duties": ("関税",),
    "duty": ("関税",),
    "insurance": ("保険料", "保険"),
    "transport": ("輸送",),
    "mode": ("手段", "モード"),
    "compensation": ("補償額", "補償"),
    "handler": ("担当者", "対応者"),
    "product": ("商品", "製品"),
    "channel": ("チャネル", "チャンネル", "経路"),
    "member": ("会員",),
    "tier": ("ランク", "区分"),
    "vehicle": ("車両", "車"),
    "accident": ("事故",),
    "repair": ("修理",),
    "annual": ("年額", "年間"),
    "license": ("ライセンス",),
    "licence": ("ライセンス",),
    "seats": ("席数", "ライセンス数"),
    "unit": ("単位", "単価"),
    "maintenance": ("保守",),
    "renewal": ("更新",),
    "used": ("使用量", "使用"),
    "usage": ("使用量", "利用量"),
    "minutes": ("分数", "時間"),
    "days": ("日数",),
    "hours": ("時間",),
    "notes": ("備考", "メモ"),
    "memo": ("摘要", "メモ"),
    # dates
    "date": ("日", "日付"),
    "due": ("期日", "期限"),
    "start": ("開始",),
    "end": ("終了",),
    "month": ("月",),
    "year": ("年", "年度"),
}
TOKEN_JA = {**GLOSSARY, **TOKEN_JA}  # the words above win over the glossary's
# Words that only mark a state or a unit: left out of a reading (collateral_held → 担保).
SILENT: frozenset[str] = frozenset(
    {
        "is",
        "has",
        "held",
        "flag",
        "required",
        "yn",
        "jpy",
        "yen",
        "usd",
        "pct",
        "percent",
        "gb",
        "kg",
    }
)
_MAX_READINGS = 24


def japanese_readings(words: list[str]) -> list[str]:
    """Japanese readings of an English name's words (approved, limit → 承認限度額, 承認限度,
    承認枠 …); none when a word has no Japanese or only silent words are left."""
    kept = _compounds([w for w in words if w not in SILENT])
    if not kept or any(w not in TOKEN_JA for w in kept):
        return []
    readings = ["".join(parts) for parts in itertools.product(*(TOKEN_JA[w] for w in kept))]
    if len(kept) >= 2:  # travel_cost → 旅費, 出張費; registration_fee → 登録料
        heads = {short for long in TOKEN_JA[kept[-1]] for short in _SHORT_HEADS.get(long, ())}
        for parts in itertools.product(*(TOKEN_JA[w] for w in kept[:-1])):
            body = "".join(parts)
            for head in heads:
                readings.append(body if body.endswith(head) else body + head)
    return list(itertools.islice(dict.fromkeys(readings), _MAX_READINGS))


def _compounds(words: list[str]) -> list[str]:
    """Two words of a name that are one word written apart (WrittenOff: "written", "off" →
    "writtenoff"; Pay Roll → "payroll"), joined when only the joined word has Japanese."""
    joined: list[str] = []
    for word in words:
        if joined and joined[-1] + word in TOKEN_JA and word not in TOKEN_JA:
            joined[-1] += word
        else:
            joined.append(word)
    return joined


# The one-character head a Japanese compound ends in for a money word said in full:
# 旅費 (travel + 費用), 登録料 and 参加費 (registration + 料金), 請求額 (billed + 金額).
_SHORT_HEADS: dict[str, tuple[str, ...]] = {
    "費用": ("費",),
    "コスト": ("費",),
    "料金": ("料", "費"),
    "手数料": ("料",),
    "金額": ("額",),
}
