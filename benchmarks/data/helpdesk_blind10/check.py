#!/usr/bin/env python3
# ruff: noqa  (blind-set data written by a helper who never read the rules; kept as written)
"""Verify helpdesk_blind10: document shapes, every label, counts, "only in" claims and probe words.

Exits non-zero (printing every problem) when anything is wrong.
"""

import json
import os
import re
import sys
import unicodedata
import zipfile

import openpyxl
from docx import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
MANUAL = "sekinavi_manual_v3.1.docx"
FAQ = "faq.xlsx"
RN = "release_notes.md"
VENDOR = "株式会社青嵐ワークテック"
FIXED_CORE = "2025-09-01 09:00:00"
ZIP_DT = (2025, 9, 1, 9, 0, 0)

PROBLEMS = []


def err(msg):
    PROBLEMS.append(msg)


def norm(s):
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


def low(s):
    return norm(s).lower()


# ---------------------------------------------------------------------------------------------
# Facts asserted by the README
# ---------------------------------------------------------------------------------------------
# (manual section holding the old value, old value, release-note version, new value)
SUPERSEDED = [
    ("3.1 フロアマップから座席を予約する", "14日先", "3.4", "21日先"),
    ("3.2 チェックインとチェックアウト", "30分以内", "3.5", "20分以内"),
    ("4.2 繰り返し予約", "6か月先", "3.3", "12か月先"),
    ("4.4 備品とケータリングの申込", "2営業日前の15:00", "3.4", "前営業日の12:00"),
    ("5.3 利用ルールと無断キャンセル", "7日間", "3.5", "3日間"),
    ("8.1 料金プラン", "400円", "3.5", "450円"),
    ("8.2 データの保存期間", "2年", "3.4", "3年"),
    ("1.3 動作環境", "iOS 16", "3.3", "iOS 17"),
    ("8.4 サポート窓口", "9:00〜17:00", "3.3", "9:00〜18:00"),
    ("4.1 会議室を検索して予約する", "60日先", "3.4", "90日先"),
    ("7.1 ユーザーを登録する", "2,000行", "3.2", "5,000行"),
]
# old values that also stand in 付録A
SUPERSEDED_IN_APPENDIX = ["14日先", "60日先", "6か月先", "2,000行"]

# facts that occur in the manual only inside table cells (and nowhere in the FAQ / release notes)
ONLY_TABLE = [
    "下位部署を含まない",
    "第9世代以降",
    "開始時刻の10分後",
    "前日の18:00",
    "1回2時間まで",
    "1回90分まで",
    "利用開始の1時間前まで",
    "前営業日の17:00まで",
    "承認待ちの仮予約",
    "1〜100名",
    "連続予約",
    "VPN",
    "03-5210-7788",
    "空欄の場合は利用者のみ",
    "拠点1つまで",
    "毎日 5:00",
]
# facts that occur only in ※ notes
ONLY_NOTE = [
    "次回ログイン時から反映",
    "Firefox",
    "送信から60分",
    "過去3回",
    "自動キャンセルのお知らせは、オフにできません",
    "手入力",
    "当日の開放はできません",
    "代わりに変更・キャンセル",
    "申込期限を過ぎてから取り消した場合",
    "予約者以外の参加者",
    "今すぐ使う",
    "合計60分まで",
    "飲み物のみ",
    "将来の予約はすべてキャンセル",
    "変更後に作成された予約から",
    "48時間",
    "有効期限は7日間",
    "前日17:00",
    "緊急用",
    "30日以内",
    "1台につき月額1,500円",
    "前月の25日まで",
    "第2日曜日",
]
# facts that occur only in 付録A
ONLY_APPENDIX = [
    "自動ログアウト",
    "3時間",
    "200名",
    "50文字",
    "50フロア",
    "500席",
    "6階層",
    "30件",
    "13か月",
]

# facts that occur only in the FAQ (answers of the FAQ-only questions)
FAQ_ONLY = ["3台", "交換する機能はありません", "最大5分", "無料トライアル", "50ユーザー"]

# probe words: none of them may occur in any of the three documents
PROBES_UNANSWERABLE = {
    "q49": ["写真", "撮影", "画像を保存"],
    "q50": ["温度", "冷房", "暖房", "エアコン"],
    "q51": ["暗証番号", "解錠", "鍵"],
    "q52": ["ライセンス", "Webexのアカウント", "Webexの契約"],
    "q53": ["HDMI", "USB-C", "ケーブル", "変換アダプタ"],
    "q54": ["API", "Webhook", "BIツール"],
    "q55": ["CO2", "電気代", "省エネ", "削減効果"],
    "q56": ["Slack", "チャットツール"],
    "q57": ["タイムゾーン", "時差", "海外", "シンガポール"],
    "q58": ["SLA", "返金", "稼働率保証", "uptime", "稼働保証"],
    "q59": ["Apple Watch", "スマートウォッチ", "ウェアラブル"],
    "q60": ["オフライン", "電波", "圏外"],
}
PROBES_PARTS = {
    "q37": [["防音", "遮音"]],
    "q38": [["アレルギー", "ベジタリアン", "ハラール", "食材"]],
    "q39": [["SCIM", "プロビジョニング", "自動同期"]],
    "q40": [["出社率", "グラフ", "部署別"]],
    "q41": [["YubiKey", "セキュリティキー", "FIDO", "ハードウェア"]],
    "q42": [["議事録", "文字起こし", "録音"]],
    "q43": [["年払い", "割引", "年額"]],
    "q44": [["通報", "報告する"]],
    "q45": [["Excel", "エクセル", "xlsx"]],
    "q46": [["Linux", "Ubuntu"]],
    "q47": [["PDF"]],
    "q48": [["定期配信", "自動送信", "スケジュール配信"]],
}
PROBES_RESEARCH = {
    "r09": ["出社率", "部署ごとの稼働率"],
    "r10": ["投資対効果", "費用対効果", "試算"],
    "r11": ["ISMS", "SOC2", "ISO", "認証を取得", "Pマーク"],
    "r12": ["騒音", "照明", "明るさ"],
}
# unanswerable questions about something the documents mention only in passing: topic word must occur
PASSING = {
    "q49": "ホワイトボード",
    "q50": "空調",
    "q51": "ロッカー",
    "q52": "Webex",
    "q53": "モニター",
}

ENGLISH = {"q06", "q17", "q26", "q33", "q41", "q46", "q54", "q58"}
RN_QUESTIONS = [f"q{i:02d}" for i in range(4, 15)]
FAQ_ONLY_QUESTIONS = ["q31", "q32", "q33", "q34"]
RESEARCH_KINDS = {"procedure": 2, "deadline": 2, "list": 2, "comparison": 1, "fact": 1}


# ---------------------------------------------------------------------------------------------
# DOCX
# ---------------------------------------------------------------------------------------------
def load_manual(path):
    doc = Document(path)
    blocks = []  # dicts with kind: h1 h2 p note step table
    for child in doc.element.body.iterchildren():
        if child.tag == qn("w:p"):
            par = Paragraph(child, doc)
            text = par.text
            style = par.style.name if par.style is not None else ""
            if style == "Heading 1":
                kind = "h1"
            elif style == "Heading 2":
                kind = "h2"
            elif text.startswith("※"):
                kind = "note"
            elif re.match(r"^\d+\. ", text):
                kind = "step"
            else:
                kind = "p"
            blocks.append({"kind": kind, "text": text, "style": style})
        elif child.tag == qn("w:tbl"):
            tbl = Table(child, doc)
            rows = [[c.text for c in r.cells] for r in tbl.rows]
            blocks.append(
                {"kind": "table", "rows": rows, "text": "\n".join(" | ".join(r) for r in rows)}
            )
    return doc, blocks


def block_text(b):
    return b["text"]


def check_manual(path):
    doc, blocks = load_manual(path)
    cp = doc.core_properties
    for name in ("created", "modified", "last_printed"):
        v = getattr(cp, name)
        if v is None or v.strftime("%Y-%m-%d %H:%M:%S") != FIXED_CORE:
            err(f"DOCX core property {name} is {v}, expected {FIXED_CORE}")

    first_h = next(i for i, b in enumerate(blocks) if b["kind"] in ("h1", "h2"))
    pre = blocks[:first_h]
    try:
        toc_i = next(i for i, b in enumerate(pre) if b["text"] == "目次")
    except StopIteration:
        err("no 目次 paragraph before the first heading")
        toc_i = len(pre)
    title = norm(" ".join(b["text"] for b in pre[:toc_i]))
    for w in [
        "セキナビ",
        "操作マニュアル",
        "第3.1版",
        "Ver.3.1",
        "発行日",
        VENDOR,
        "会議室・座席予約クラウド",
    ]:
        if norm(w) not in title:
            err(f"title block lacks {w!r}")
    toc = [b["text"] for b in pre[toc_i + 1 :] if b["text"].strip()]
    headings = [b["text"] for b in blocks if b["kind"] in ("h1", "h2")]
    if toc != headings:
        err(f"目次 does not list the headings in order:\n  toc={toc}\n  headings={headings}")
    if len(set(headings)) != len(headings):
        err("duplicate heading")

    # numbering
    chap = 0
    sec = 0
    seen_app = False
    for b in blocks:
        if b["kind"] == "h1":
            m = re.match(r"^第(\d+)章 \S", b["text"])
            if m:
                if seen_app:
                    err(f"chapter after 付録A: {b['text']}")
                chap += 1
                sec = 0
                if int(m.group(1)) != chap:
                    err(f"chapter numbering: {b['text']}")
            elif b["text"].startswith("付録A "):
                seen_app = True
            else:
                err(f"bad Heading 1 text: {b['text']}")
        elif b["kind"] == "h2":
            m = re.match(r"^(\d+)\.(\d+) \S", b["text"])
            sec += 1
            if not m or int(m.group(1)) != chap or int(m.group(2)) != sec or seen_app:
                err(f"section numbering: {b['text']}")
    if chap < 6:
        err(f"only {chap} chapters")
    if not seen_app:
        err("no 付録A heading")

    # sections (heading -> blocks up to next heading)
    sections = {}
    order = []
    cur = None
    for b in blocks[first_h:]:
        if b["kind"] in ("h1", "h2"):
            cur = b["text"]
            sections[cur] = [b]
            order.append(cur)
        else:
            sections[cur].append(b)

    body = blocks[first_h:]
    n_tables = sum(1 for b in body if b["kind"] == "table")
    n_notes = sum(1 for b in body if b["kind"] == "note")
    n_lists = 0
    expect = 1
    for b in body:
        if b["kind"] == "step":
            n = int(b["text"].split(".")[0])
            if n == 1:
                n_lists += 1
            elif n != expect:
                err(f"step numbering broken at: {b['text']}")
            expect = n + 1
        else:
            expect = 1
    chars = sum(len(norm(b["text"])) for b in body)
    if n_tables < 12:
        err(f"only {n_tables} tables")
    if n_notes < 20:
        err(f"only {n_notes} ※ notes")
    if n_lists < 8:
        err(f"only {n_lists} numbered step lists")
    if chars < 12000:
        err(f"manual body has only {chars} characters")
    app = [h for h in order if h.startswith("付録A")]
    if not app or not any(b["kind"] == "table" for b in sections[app[0]]):
        err("付録A has no table")

    # zip timestamps
    with zipfile.ZipFile(path) as z:
        for zi in z.infolist():
            if zi.date_time != ZIP_DT:
                err(f"DOCX member {zi.filename} has timestamp {zi.date_time}")

    stats = {
        "headings": len(headings),
        "tables": n_tables,
        "notes": n_notes,
        "step_lists": n_lists,
        "chars": chars,
    }
    return blocks[first_h:], sections, stats


def section_text(sections, h):
    return norm("\n".join(b["text"] for b in sections[h]))


# ---------------------------------------------------------------------------------------------
# Release notes / FAQ
# ---------------------------------------------------------------------------------------------
def parse_rn(text):
    parts = re.split(r"^## ", text, flags=re.M)
    out = []
    for part in parts[1:]:
        head = part.splitlines()[0]
        m = re.match(r"^Ver\.(\d+)\.(\d+)（(\d{4})年(\d{1,2})月(\d{1,2})日）$", head)
        if not m:
            err(f"bad release heading: {head}")
            continue
        ver = f"{m.group(1)}.{m.group(2)}"
        out.append(
            (
                ver,
                (int(m.group(1)), int(m.group(2))),
                (int(m.group(3)), int(m.group(4)), int(m.group(5))),
                part,
            )
        )
    for a, b in zip(out, out[1:]):
        if not (a[1] > b[1] and a[2] > b[2]):
            err(f"release notes not newest first: {a[0]} before {b[0]}")
    return out


def load_faq(path):
    wb = openpyxl.load_workbook(path)
    ws = wb.worksheets[0]
    rows = [[c for c in r] for r in ws.iter_rows(values_only=True)]
    if rows[0] != ("No", "分類", "質問", "回答") and list(rows[0]) != [
        "No",
        "分類",
        "質問",
        "回答",
    ]:
        err(f"FAQ header is {rows[0]}")
    data = rows[1:]
    if len(data) != 30:
        err(f"FAQ has {len(data)} data rows")
    for i, r in enumerate(data, 1):
        if r[0] != i:
            err(f"FAQ row {i} has No {r[0]}")
        if len(r) != 4 or any(c is None or str(c).strip() == "" for c in r):
            err(f"FAQ row {i} has an empty cell")
    if (
        wb.properties.created is None
        or wb.properties.created.strftime("%Y-%m-%d %H:%M:%S") != FIXED_CORE
    ):
        err(f"XLSX created is {wb.properties.created}")
    if (
        wb.properties.modified is None
        or wb.properties.modified.strftime("%Y-%m-%d %H:%M:%S") != FIXED_CORE
    ):
        err(f"XLSX modified is {wb.properties.modified}")
    with zipfile.ZipFile(path) as z:
        for zi in z.infolist():
            if zi.date_time != ZIP_DT:
                err(f"XLSX member {zi.filename} has timestamp {zi.date_time}")
    return ["".join(str(c) for c in r) for r in data]


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------
def main():
    files = sorted(os.listdir(DOCS))
    if files != sorted([MANUAL, FAQ, RN]):
        err(f"docs/ holds {files}")
    body, sections, stats = check_manual(os.path.join(DOCS, MANUAL))
    with open(os.path.join(DOCS, RN), encoding="utf-8") as f:
        rn_raw = f.read()
    rn_blocks = parse_rn(rn_raw)
    rn_norm = norm(rn_raw)
    faq_rows = load_faq(os.path.join(DOCS, FAQ))
    faq_norm = [norm(r) for r in faq_rows]
    faq_all = "".join(faq_norm)
    manual_all = norm("\n".join(b["text"] for b in body))
    all_docs_low = (manual_all + faq_all + rn_norm).lower()

    # superseded facts
    rn_by_ver = {v: norm(part) for v, _, _, part in rn_blocks}
    for sec, old, ver, new in SUPERSEDED:
        if sec not in sections:
            err(f"superseded: no section {sec}")
            continue
        if norm(old) not in section_text(sections, sec):
            err(f"superseded: old value {old!r} not in {sec}")
        if ver not in rn_by_ver or norm(new) not in rn_by_ver[ver]:
            err(f"superseded: new value {new!r} not in Ver.{ver}")
        if norm(old) not in rn_by_ver.get(ver, ""):
            err(f"superseded: Ver.{ver} does not mention the old value {old!r}")
    app_h = [h for h in sections if h.startswith("付録A")][0]
    for old in SUPERSEDED_IN_APPENDIX:
        if norm(old) not in section_text(sections, app_h):
            err(f"old value {old!r} not in 付録A")

    # only-in claims
    def where(phrase):
        ph = norm(phrase)
        kinds = set()
        for b in body:
            if ph in norm(b["text"]):
                kinds.add(b["kind"])
        return kinds

    for ph in ONLY_TABLE:
        k = where(ph)
        if k != {"table"}:
            err(f"table-only fact {ph!r} found in {k or 'nothing'}")
    for ph in ONLY_NOTE:
        k = where(ph)
        if k != {"note"}:
            err(f"note-only fact {ph!r} found in {k or 'nothing'}")
    for ph in ONLY_APPENDIX:
        ph_n = norm(ph)
        inside = ph_n in section_text(sections, app_h)
        outside = any(ph_n in section_text(sections, h) for h in sections if h != app_h)
        if not inside or outside:
            err(f"付録A-only fact {ph!r}: inside={inside} outside={outside}")
    for ph in ONLY_TABLE + ONLY_NOTE + ONLY_APPENDIX:
        if norm(ph) in faq_all or norm(ph) in rn_norm:
            err(f"'only' fact {ph!r} also occurs in the FAQ or the release notes")
    for ph in FAQ_ONLY:
        if norm(ph) not in faq_all:
            err(f"FAQ-only fact {ph!r} not in the FAQ")
        if norm(ph) in manual_all or norm(ph) in rn_norm:
            err(f"FAQ-only fact {ph!r} occurs in the manual or the release notes")

    # labels ---------------------------------------------------------------------------------
    def check_entry(where_, e, field):
        doc_ = e.get("document")
        if doc_ == MANUAL:
            keys = {"document", "page", "row", "section", field}
        else:
            keys = {"document", "page", "row", field}
        if set(e) != keys:
            err(f"{where_}: entry keys {sorted(e)}")
            return
        if e["page"] is not None:
            err(f"{where_}: page must be null")
        phrases = e[field] if field == "key_phrases" else [e[field]]
        if field == "key_phrases" and not (1 <= len(phrases) <= 2):
            err(f"{where_}: {len(phrases)} key phrases")
        if doc_ == MANUAL:
            if e["row"] is not None:
                err(f"{where_}: row must be null")
            if e["section"] not in sections:
                err(f"{where_}: unknown section {e['section']!r}")
                return
            hay = section_text(sections, e["section"])
        elif doc_ == FAQ:
            if not isinstance(e["row"], int) or not 1 <= e["row"] <= len(faq_norm):
                err(f"{where_}: bad FAQ row {e['row']}")
                return
            hay = faq_norm[e["row"] - 1]
        elif doc_ == RN:
            if e["row"] is not None:
                err(f"{where_}: row must be null")
            hay = rn_norm
        else:
            err(f"{where_}: unknown document {doc_}")
            return
        for ph in phrases:
            if not ph or norm(ph) not in hay:
                err(
                    f"{where_}: {ph!r} not found in {doc_} {e.get('section') or e.get('row') or ''}"
                )

    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        qs = [json.loads(line) for line in f if line.strip()]
    ids = [q["id"] for q in qs]
    if ids != [f"q{i:02d}" for i in range(1, 61)]:
        err(f"question ids not q01..q60 in order: {ids}")
    groups = {"answerable": [], "partial": [], "unanswerable": []}
    jp = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    for q in qs:
        qid = q["id"]
        if q["answerable"] and "unanswerable_parts" in q:
            g = "partial"
            keys = {"id", "question", "answerable", "expected", "unanswerable_parts", "parts"}
        elif q["answerable"]:
            g = "answerable"
            keys = {"id", "question", "answerable", "expected"}
        else:
            g = "unanswerable"
            keys = {"id", "question", "answerable", "expected"}
        groups[g].append(qid)
        if set(q) != keys:
            err(f"{qid}: keys {sorted(q)}")
        is_en = jp.search(q["question"]) is None
        if is_en != (qid in ENGLISH):
            err(f"{qid}: English={is_en} but listed={qid in ENGLISH}")
        if g == "unanswerable":
            if q["expected"] != []:
                err(f"{qid}: unanswerable with expected")
            if qid not in PROBES_UNANSWERABLE:
                err(f"{qid}: no probe words")
        else:
            if not q["expected"]:
                err(f"{qid}: no expected entries")
            for j, e in enumerate(q["expected"]):
                check_entry(f"{qid}[{j}]", e, "key_phrases")
        if g == "partial":
            up = q["unanswerable_parts"]
            if not up or not all(isinstance(x, str) and x for x in up):
                err(f"{qid}: bad unanswerable_parts")
            if not isinstance(q["parts"], int) or q["parts"] < len(up) + 1:
                err(f"{qid}: parts={q['parts']} with {len(up)} uncovered parts")
            if len(PROBES_PARTS.get(qid, [])) != len(up):
                err(f"{qid}: probe lists do not match unanswerable_parts")
    want = {
        "answerable": [f"q{i:02d}" for i in range(1, 37)],
        "partial": [f"q{i:02d}" for i in range(37, 49)],
        "unanswerable": [f"q{i:02d}" for i in range(49, 61)],
    }
    if groups != want:
        err(f"groups (answerable / partial / unanswerable) are {groups}")
    for g, members in want.items():
        if not ENGLISH & set(members):
            err(f"no English question in group {g}")
    if len(ENGLISH) != 8:
        err("ENGLISH must list 8 questions")
    qmap = {q["id"]: q for q in qs}
    for qid in RN_QUESTIONS:
        docs_ = {e["document"] for e in qmap[qid]["expected"]}
        if MANUAL not in docs_ or RN not in docs_:
            err(f"{qid}: release-note question must label the manual and the release notes")
    for q in qs:
        if q["id"] not in RN_QUESTIONS and any(e["document"] == RN for e in q["expected"]):
            err(f"{q['id']}: labels the release notes but is not listed as a release-note question")
    for qid in FAQ_ONLY_QUESTIONS:
        docs_ = {e["document"] for e in qmap[qid]["expected"]}
        if docs_ != {FAQ}:
            err(f"{qid}: FAQ-only question labels {docs_}")

    # probes
    def probe(label, words):
        for w in words:
            if low(w) in all_docs_low:
                err(f"{label}: probe word {w!r} occurs in the documents")

    for qid, words in PROBES_UNANSWERABLE.items():
        probe(qid, words)
    for qid, lists in PROBES_PARTS.items():
        for words in lists:
            probe(qid, words)
    for rid, words in PROBES_RESEARCH.items():
        probe(rid, words)
    for qid, topic in PASSING.items():
        if qid not in groups["unanswerable"]:
            err(f"{qid}: passing-mention question is not unanswerable")
        if low(topic) not in all_docs_low:
            err(f"{qid}: topic word {topic!r} does not occur in the documents")
    if len(PASSING) < 4:
        err("fewer than four passing-mention questions")

    # research ---------------------------------------------------------------------------------
    with open(os.path.join(HERE, "research_questions.jsonl"), encoding="utf-8") as f:
        rs = [json.loads(line) for line in f if line.strip()]
    if [r["id"] for r in rs] != [f"r{i:02d}" for i in range(1, 13)]:
        err("research ids not r01..r12 in order")
    kinds = {}
    for r in rs:
        rid = r["id"]
        if not r["question"].endswith("を資料から整理してください。"):
            err(f"{rid}: question does not end with 「…を資料から整理してください。」")
        if r["answerable"]:
            if set(r) != {"id", "question", "answerable", "kind", "support"}:
                err(f"{rid}: keys {sorted(r)}")
            kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
            if not 2 <= len(r["support"]) <= 4:
                err(f"{rid}: {len(r['support'])} support passages")
            for j, e in enumerate(r["support"]):
                check_entry(f"{rid}[{j}]", e, "contains")
        else:
            if set(r) != {"id", "question", "answerable", "support"} or r["support"] != []:
                err(f"{rid}: bad not-answerable record")
            if rid not in PROBES_RESEARCH:
                err(f"{rid}: no probe words")
    if kinds != RESEARCH_KINDS:
        err(f"research kinds {kinds}")
    if sum(1 for r in rs if r["answerable"]) != 8:
        err("need 8 answerable research requests")

    if PROBLEMS:
        for p_ in PROBLEMS:
            print("PROBLEM:", p_)
        print(f"{len(PROBLEMS)} problem(s)")
        sys.exit(1)
    print(
        "check.py: OK —",
        ", ".join(f"{k}={v}" for k, v in stats.items()),
        f"| questions {len(want['answerable'])}/{len(want['partial'])}/{len(want['unanswerable'])},"
        f" English {len(ENGLISH)}, research {len(rs)}",
    )


if __name__ == "__main__":
    main()
