#!/usr/bin/env python3
# ruff: noqa
"""Verify helpdesk_blind6: document shapes and every label.  Exits 1 on any problem.

check.py          check
check.py --dump   also print the text of every DOCX section (as used for matching)
"""

import json
import math
import os
import re
import sys
import unicodedata

from docx import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from openpyxl import load_workbook

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
MANUAL = "guestgate_manual_v2.0.docx"
RN = "release_notes.md"
FAQ = "faq.xlsx"
ALL_DOCS = {MANUAL, RN, FAQ}

ERRORS = []


def err(msg):
    ERRORS.append(msg)


def norm(s):
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


# ---------------------------------------------------------------------------
# Probe words: none of these may occur in any document (NFKC, whitespace removed,
# case-insensitive).  Unanswerable questions and research requests: one list each.
# Partly answerable questions: one list per unanswerable part, in order.
# ---------------------------------------------------------------------------
PROBES_UNANSWERABLE = {
    "f49": ["タクシー", "配車", "ハイヤー"],
    "f50": ["名刺", "OCR", "スキャン"],
    "f51": ["子ども", "子供", "年齢", "未成年", "家族", "歳"],
    "f52": ["按分", "部署別", "部門別", "部署ごと", "請求書の分割", "請求先"],
    "f53": ["ロッカー", "貸し出し", "貸出"],
    "f54": ["シンガポール", "現地通貨", "外貨", "米ドル", "海外"],
    "f55": ["Apple Watch", "スマートウォッチ", "ウェアラブル", "watchOS"],
    "f56": ["アンケート", "満足度", "フィードバック"],
    "f57": ["マイナンバー", "本人確認", "身分証", "免許証"],
    "f58": ["動画", "サイネージ", "広告", "スライドショー"],
    "f59": ["非営利", "NPO", "学校", "教育機関", "アカデミック", "non-profit", "nonprofit"],
    "f60": ["警備", "セキュリティ会社"],
    "s09": ["検温", "体温", "マスク", "感染", "消毒"],
    "s10": ["SLA", "稼働率", "返金", "補償", "99."],
    "s11": ["身分証", "本人確認", "免許証", "パスポート", "マイナンバー"],
    "s12": ["タクシー", "社用車", "配車", "ハイヤー"],
}
PROBES_PARTS = {
    "f37": [["返金", "払い戻", "払戻", "返還"]],
    "f38": [["駐車料金", "駐車場料金", "駐車代", "有料"]],
    "f39": [["顔認証", "顔照合", "顔認識"]],
    "f40": [["Slack", "スラック"]],
    "f41": [["ロゴ"]],
    "f42": [["ISMS", "ISO", "27001", "Pマーク", "プライバシーマーク", "認証を取得"]],
    "f43": [["Webhook", "ウェブフック", "Webフック"]],
    "f44": [["チャット", "chat"]],
    "f45": [["帳票", "PDF出力", "PDFで出力", "PDF形式"]],
    "f46": [["Wi-Fi", "WiFi", "無線LAN", "ゲストネットワーク"]],
    "f47": [["sandbox", "サンドボックス", "テスト環境", "検証環境", "ステージング"]],
    "f48": [["検温", "体温", "サーモ"]],
}

# Manual facts superseded by the release notes: (manual section, old value, release-note value)
SUPERSEDED = [
    ("3.1 来訪予約を登録する", "最大10名", "10名から30名"),
    ("3.4 CSVで一括登録する", "200行", "200行から1,000行"),
    ("3.4 CSVで一括登録する", "2MBまで", "2MBから5MB"),
    ("5.1 来客用駐車場を予約する", "前営業日15:00", "前営業日15:00から前営業日17:00"),
    ("3.1 来訪予約を登録する", "60日前から", "60日前から90日前"),
    ("2.2 料金プラン", "15,000円", "15,000円から18,000円"),
    ("6.3 来訪者の個人情報の保存期間", "30日〜365日", "30日〜365日から30日〜730日"),
    ("1.2 動作環境", "日本語、英語", "中国語（簡体字）"),
    ("3.5 繰り返し予約", "最大12回", "12回から24回"),
    ("4.5 入館エリアと事前承認", "3営業日前", "3営業日前から2営業日前"),
    ("1.2 動作環境", "Android 12以降", "Android 13 以降"),
]

EN_IDS = {"f07", "f15", "f22", "f29", "f34", "f44", "f47", "f59"}


# ---------------------------------------------------------------------------
# DOCX
# ---------------------------------------------------------------------------
def iter_blocks(doc):
    for child in doc.element.body.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, doc)
        elif child.tag == qn("w:tbl"):
            yield Table(child, doc)


def has_page_break(p):
    if p.paragraph_format.page_break_before:
        return True
    for br in p._p.iter(qn("w:br")):
        if br.get(qn("w:type")) == "page":
            return True
    return False


def dwidth(s):
    return sum(1.0 if unicodedata.east_asian_width(ch) in ("W", "F", "A") else 0.55 for ch in s)


def load_manual():
    path = os.path.join(DOCS, MANUAL)
    doc = Document(path)
    sections = {}  # heading text -> list of text pieces
    headings = []  # (level, text)
    front = []  # paragraphs before the first heading
    paras, tables, notes, steps = [], 0, 0, []
    current = None
    # page estimate (A4, 25 mm margins -> 160 x 247 mm body)
    body_h, used, pages = 247.0, 0.0, 1

    def place(h):
        nonlocal used, pages
        if used + h > body_h and used > 0:
            pages += 1
            used = 0.0
        while h > body_h:
            pages += 1
            h -= body_h
        used += h

    for blk in iter_blocks(doc):
        if isinstance(blk, Paragraph):
            text = blk.text
            style = blk.style.name if blk.style is not None else ""
            if has_page_break(blk):
                if not (used == 0.0):
                    pages += 1
                    used = 0.0
            if style.startswith("Heading"):
                level = int(style.split()[-1])
                headings.append((level, text))
                current = text
                sections.setdefault(text, [])
                place(16.0 if level == 1 else 13.0)
                continue
            if current is None:
                front.append(text)
            else:
                sections[current].append(text)
                paras.append(text)
                if text.startswith("※"):
                    notes += 1
                m = re.match(r"^(\d+)\. ", text)
                if m:
                    steps.append(int(m.group(1)))
            size = 9.5 if text.startswith("※") else 10.5
            cpl = (160.0 - (4 if text.startswith("※") else 0)) / (size * 0.3528)
            lines = max(1, math.ceil(dwidth(text) / cpl)) if text.strip() else 1
            lh = blk.paragraph_format.line_spacing or blk.style.paragraph_format.line_spacing
            lh_mm = lh.pt * 0.3528 if hasattr(lh, "pt") else size * 0.3528 * 1.5
            place(lines * lh_mm + 1.4)
        else:
            tables += 1
            ncols = len(blk.columns)
            cw = 160.0 / ncols - 2.0
            cpl = cw / (9.5 * 0.3528)
            for row in blk.rows:
                cells = [c.text for c in row.cells]
                lines = max(max(1, math.ceil(dwidth(c) / cpl)) for c in cells)
                place(lines * 13 * 0.3528 + 1.8)
                if current is not None:
                    sections[current].append(" | ".join(cells))
                else:
                    front.append(" | ".join(cells))
    hdr = " ".join(p.text for p in doc.sections[0].header.paragraphs)
    ftr_xml = doc.sections[0].footer._element.xml
    ftr = " ".join(p.text for p in doc.sections[0].footer.paragraphs)
    return {
        "sections": {k: "\n".join(v) for k, v in sections.items()},
        "headings": headings,
        "front": front,
        "tables": tables,
        "notes": notes,
        "steps": steps,
        "header": hdr,
        "footer": ftr,
        "footer_xml": ftr_xml,
        "pages": pages,
        "first_page_distinct": doc.sections[0].different_first_page_header_footer,
        "all": "\n".join(
            front + [f"{h}\n{t}" for h, t in ((h, "\n".join(v)) for h, v in sections.items())]
        )
        + "\n"
        + hdr
        + "\n"
        + ftr,
    }


def check_manual(m):
    front = [t for t in m["front"] if t.strip()]
    if "目次" not in front:
        err("manual: no 目次 paragraph")
        return
    i = front.index("目次")
    cover, toc = front[:i], front[i + 1 :]
    cover_n = norm(" ".join(cover))
    for w in (
        "GuestGate",
        "操作マニュアル",
        "第2.0版",
        "発行日",
        "株式会社朝凪ファシリティシステムズ",
    ):
        if norm(w) not in cover_n:
            err(f"manual cover lacks {w!r}")
    heads = [t for _, t in m["headings"]]
    if toc != heads:
        err(f"manual: 目次 entries differ from headings:\n  toc={toc}\n  heads={heads}")
    if len(set(heads)) != len(heads):
        err("manual: duplicate heading text")
    chap = None
    expect_sec = 0
    n_ch = 0
    for level, text in m["headings"]:
        if level == 1:
            mm = re.match(r"^第(\d+)章 \S", text)
            if mm:
                n_ch += 1
                chap = int(mm.group(1))
                if chap != n_ch:
                    err(f"manual: chapter number out of order: {text}")
            elif re.match(r"^付録[A-Z] \S", text):
                chap = None
            else:
                err(f"manual: bad chapter heading {text!r}")
            expect_sec = 1
        elif level == 2:
            mm = re.match(r"^(\d+)\.(\d+) \S", text)
            if not mm or chap is None or int(mm.group(1)) != chap or int(mm.group(2)) != expect_sec:
                err(
                    f"manual: bad section heading {text!r} (chapter {chap}, expected .{expect_sec})"
                )
            expect_sec += 1
        else:
            err(f"manual: unexpected heading level {level}: {text}")
    if n_ch < 7:
        err(f"manual: only {n_ch} chapters")
    if m["tables"] < 15:
        err(f"manual: only {m['tables']} tables")
    if m["notes"] < 20:
        err(f"manual: only {m['notes']} ※ notes")
    if m["steps"].count(1) < 10:
        err(f"manual: only {m['steps'].count(1)} numbered step lists")
    if "GuestGate" not in m["header"] or "第2.0版" not in m["header"]:
        err("manual: running header missing")
    if "朝凪ファシリティシステムズ" not in m["footer"] or 'w:instr="PAGE"' not in m["footer_xml"]:
        err("manual: footer (vendor + PAGE field) missing")
    if not m["first_page_distinct"]:
        err("manual: cover page should have no header/footer")
    if not 12 <= m["pages"] <= 18:
        err(f"manual: estimated {m['pages']} pages, want 12-18")


# ---------------------------------------------------------------------------
# Release notes / FAQ
# ---------------------------------------------------------------------------
def load_rn():
    with open(os.path.join(DOCS, RN), encoding="utf-8") as f:
        return f.read()


def check_rn(text):
    vers = re.findall(r"^## Ver\.(\d+)\.(\d+)（(\d{4})年(\d{1,2})月(\d{1,2})日）$", text, re.M)
    if len(vers) < 4:
        err(f"release notes: only {len(vers)} version headings")
    keys = [((int(a), int(b)), (int(y), int(mo), int(d))) for a, b, y, mo, d in vers]
    for (v1, d1), (v2, d2) in zip(keys, keys[1:]):
        if not (v1 > v2 and d1 > d2):
            err(f"release notes not newest first: {v1}/{d1} before {v2}/{d2}")
    if len(re.findall(r"^## ", text, re.M)) != len(vers):
        err("release notes: malformed version heading")


def load_faq():
    wb = load_workbook(os.path.join(DOCS, FAQ))
    ws = wb.worksheets[0]
    rows = [[("" if c is None else str(c)) for c in r] for r in ws.iter_rows(values_only=True)]
    return rows


def check_faq(rows):
    if rows[0] != ["No", "分類", "質問", "回答"]:
        err(f"faq header is {rows[0]}")
    data = rows[1:]
    if len(data) != 30:
        err(f"faq has {len(data)} data rows, want 30")
    for i, r in enumerate(data, 1):
        if r[0] != str(i):
            err(f"faq row {i}: No is {r[0]!r}")
        if any(not c.strip() for c in r):
            err(f"faq row {i}: empty cell")


# ---------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------
def read_jsonl(name):
    out = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    err(f"{name}:{n}: bad JSON ({e})")
    return out


def place_text(entry, where, manual, rn, faq_rows):
    doc = entry.get("document")
    if doc not in ALL_DOCS:
        err(f"{where}: unknown document {doc!r}")
        return None
    if entry.get("page", "missing") is not None:
        err(f"{where}: page must be null")
    if doc == MANUAL:
        if set(entry) - {"key_phrases", "contains"} != {"document", "page", "row", "section"}:
            err(f"{where}: DOCX entry keys {sorted(entry)}")
        if entry.get("row", "missing") is not None:
            err(f"{where}: row must be null for DOCX")
        sec = entry.get("section")
        if sec not in manual["sections"]:
            err(f"{where}: section {sec!r} is not a heading of the manual")
            return None
        return manual["sections"][sec]
    if "section" in entry:
        err(f"{where}: 'section' only allowed for the DOCX")
    if set(entry) - {"key_phrases", "contains"} != {"document", "page", "row"}:
        err(f"{where}: entry keys {sorted(entry)}")
    if doc == RN:
        if entry.get("row", "missing") is not None:
            err(f"{where}: row must be null for release notes")
        return rn
    row = entry.get("row")
    if not isinstance(row, int) or not 1 <= row <= len(faq_rows) - 1:
        err(f"{where}: bad FAQ row {row!r}")
        return None
    return " ".join(faq_rows[row])


def is_english(q):
    return not re.search(r"[\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]", q)


def check_probes(pid, words, corpus_n):
    if not words:
        err(f"{pid}: empty probe list")
    for w in words:
        if norm(w).casefold() in corpus_n:
            err(f"{pid}: probe word {w!r} occurs in the documents")


def check_questions(qs, manual, rn, faq_rows, corpus_n):
    ids = [q.get("id") for q in qs]
    if len(ids) != len(set(ids)):
        err("questions: duplicate ids")
    if ids != [f"f{i:02d}" for i in range(1, 61)]:
        err("questions: ids are not f01..f60 in order")
    full, partly, none_ = [], [], []
    for q in qs:
        qid = q.get("id")
        keys = set(q)
        if q.get("answerable") is True and "unanswerable_parts" in q:
            partly.append(qid)
            if keys != {"id", "question", "answerable", "expected", "unanswerable_parts", "parts"}:
                err(f"{qid}: keys {sorted(keys)}")
            up = q.get("unanswerable_parts")
            if not isinstance(up, list) or not up or not all(isinstance(x, str) and x for x in up):
                err(f"{qid}: bad unanswerable_parts")
                up = []
            if not isinstance(q.get("parts"), int) or q["parts"] < len(up) + 1:
                err(f"{qid}: parts must count covered + uncovered asks")
            plist = PROBES_PARTS.get(qid)
            if plist is None or len(plist) != len(up):
                err(f"{qid}: need one probe list per unanswerable part")
            else:
                for words in plist:
                    check_probes(qid, words, corpus_n)
        elif q.get("answerable") is True:
            full.append(qid)
            if keys != {"id", "question", "answerable", "expected"}:
                err(f"{qid}: keys {sorted(keys)}")
        elif q.get("answerable") is False:
            none_.append(qid)
            if keys != {"id", "question", "answerable", "expected"} or q.get("expected") != []:
                err(f"{qid}: unanswerable must have expected []")
            if qid not in PROBES_UNANSWERABLE:
                err(f"{qid}: no probe words")
            else:
                check_probes(qid, PROBES_UNANSWERABLE[qid], corpus_n)
            continue
        else:
            err(f"{qid}: answerable must be true/false")
            continue
        exp = q.get("expected")
        if not isinstance(exp, list) or not exp:
            err(f"{qid}: expected must be a non-empty list")
            continue
        for k, e in enumerate(exp):
            where = f"{qid}.expected[{k}]"
            if "key_phrases" not in e:
                err(f"{where}: no key_phrases")
                continue
            text = place_text(e, where, manual, rn, faq_rows)
            kp = e["key_phrases"]
            if not isinstance(kp, list) or not 1 <= len(kp) <= 2:
                err(f"{where}: need 1-2 key phrases")
                continue
            if text is None:
                continue
            tn = norm(text)
            for p in kp:
                if not p or norm(p) not in tn:
                    err(
                        f"{where}: key phrase {p!r} not in {e.get('document')} {e.get('section') or e.get('row') or ''}"
                    )
    if (len(full), len(partly), len(none_)) != (36, 12, 12):
        err(f"questions: counts {len(full)}/{len(partly)}/{len(none_)}, want 36/12/12")
    en = {q["id"] for q in qs if is_english(q.get("question", ""))}
    if en != EN_IDS:
        err(f"questions: English ids {sorted(en)} != {sorted(EN_IDS)}")
    extra = (set(PROBES_PARTS) - set(partly)) | (
        {k for k in PROBES_UNANSWERABLE if k.startswith("f")} - set(none_)
    )
    if extra:
        err(f"probe lists for ids that are not unanswerable/partly: {sorted(extra)}")
    return len(full), len(partly), len(none_), len(en)


def check_research(rs, manual, rn, faq_rows, corpus_n):
    ids = [r.get("id") for r in rs]
    if ids != [f"s{i:02d}" for i in range(1, 13)]:
        err("research: ids are not s01..s12 in order")
    kinds = {}
    n_yes = n_no = 0
    for r in rs:
        rid = r.get("id")
        q = r.get("question", "")
        if "資料から整理してください" not in q:
            err(f"{rid}: question must be a 「…を資料から整理してください」 request")
        if r.get("answerable") is True:
            n_yes += 1
            if set(r) != {"id", "question", "answerable", "kind", "support"}:
                err(f"{rid}: keys {sorted(r)}")
            kinds[r.get("kind")] = kinds.get(r.get("kind"), 0) + 1
            sup = r.get("support")
            if not isinstance(sup, list) or not 2 <= len(sup) <= 4:
                err(f"{rid}: need 2-4 support passages")
                continue
            for k, s in enumerate(sup):
                where = f"{rid}.support[{k}]"
                if not s.get("contains"):
                    err(f"{where}: no contains")
                    continue
                text = place_text(s, where, manual, rn, faq_rows)
                if text is not None and norm(s["contains"]) not in norm(text):
                    err(
                        f"{where}: {s['contains']!r} not in {s.get('document')} {s.get('section') or s.get('row') or ''}"
                    )
        elif r.get("answerable") is False:
            n_no += 1
            if set(r) != {"id", "question", "answerable", "support"} or r.get("support") != []:
                err(f"{rid}: not-answerable request must have support [] and no kind")
            if rid not in PROBES_UNANSWERABLE:
                err(f"{rid}: no probe words")
            else:
                check_probes(rid, PROBES_UNANSWERABLE[rid], corpus_n)
        else:
            err(f"{rid}: answerable must be true/false")
    want = {"procedure": 2, "deadline": 2, "list": 2, "comparison": 1, "fact": 1}
    if kinds != want:
        err(f"research kinds {kinds} != {want}")
    if (n_yes, n_no) != (8, 4):
        err(f"research counts {n_yes}/{n_no}, want 8/4")
    return n_yes, n_no


def main():
    manual = load_manual()
    rn = load_rn()
    faq_rows = load_faq()
    if "--dump" in sys.argv:
        for h, t in manual["sections"].items():
            print(f"=== {h}\n{t}\n")
    check_manual(manual)
    check_rn(rn)
    check_faq(faq_rows)
    for sec, old, new in SUPERSEDED:
        if norm(old) not in norm(manual["sections"].get(sec, "")):
            err(f"superseded: {old!r} not in manual {sec}")
        if norm(new) not in norm(rn):
            err(f"superseded: {new!r} not in release notes")
    corpus_n = norm(
        manual["all"] + "\n" + rn + "\n" + "\n".join(" ".join(r) for r in faq_rows)
    ).casefold()
    qs = read_jsonl("questions.jsonl")
    rs = read_jsonl("research_questions.jsonl")
    counts = check_questions(qs, manual, rn, faq_rows, corpus_n)
    rcounts = check_research(rs, manual, rn, faq_rows, corpus_n)
    if ERRORS:
        for e in ERRORS:
            print("ERROR:", e)
        print(f"{len(ERRORS)} problem(s)")
        return 1
    print(
        f"OK: manual ~{manual['pages']} pages (estimate), {len(manual['headings'])} headings, "
        f"{manual['tables']} tables, {manual['notes']} notes; release notes; FAQ 30 rows; "
        f"questions {counts[0]}/{counts[1]}/{counts[2]} (EN {counts[3]}); research {rcounts[0]}/{rcounts[1]}; "
        f"{len(SUPERSEDED)} superseded facts"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
