#!/usr/bin/env python
# ruff: noqa
"""Verify the helpdesk_blind7 documents and labels.  Exits non-zero on any problem.

Matching rule: NFKC normalisation and removal of all whitespace on both sides.  PDF text is what
pypdf extracts from a physical (1-based) page; a manual label's key phrases must occur on its page
AND inside the labelled section's stretch of that page.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "docs")
sys.path.insert(0, HERE)
import build  # noqa: E402  (document structure: headings, blocks, header/footer strings)

from pypdf import PdfReader  # noqa: E402

ERRORS: list[str] = []


def err(msg):
    ERRORS.append(msg)


def norm(s: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


MANUAL = build.MANUAL_FILE
RN = build.RN_FILE
FAQ = build.FAQ_FILE

# The superseded facts: (manual section, old value, new value, release-note version)
SUPERSEDED = [
    ("2.2 パスワードの条件とアカウントロック", "10文字以上", "12文字", "3.5"),
    ("4.3 再発行と書面での交付", "5営業日以内", "3営業日以内", "3.5"),
    ("7.3 操作ログ", "保存期間は1年", "1年から3年", "3.5"),
    ("1.5 プランと料金", "300円", "330円", "3.5"),
    ("6.2 明細データを取り込む（CSV取込）", "5,000行まで", "10,000行", "3.4"),
    ("6.1 申告書を承認する（承認者）", "1回あたり50件", "100件", "3.4"),
    ("6.3 明細の公開予約", "1時間前まで", "15分前", "3.4"),
    ("5.3 保険料控除申告書と控除証明書の添付", "5MBまで", "10MB", "3.3"),
    ("5.5 提出・提出取消・差戻し", "3営業日以内に再提出", "5営業日以内", "3.3"),
    ("9.2 お問い合わせ窓口", "9:00〜20:00", "9:00〜21:00", "3.3"),
    ("8.1 インストールと初回設定", "Android 12以降", "Android 13以降", "3.2"),
    ("1.2 動作環境", "Android 12以降", "Android 13以降", "3.2"),
    ("3.4 保存期間と退職後の閲覧", "180日間", "365日間", "3.2"),
]

ENGLISH = {"q07", "q15", "q20", "q36", "q39", "q44", "q52", "q57"}
RN_NEEDED = {"q04", "q05", "q06", "q07", "q08", "q09", "q10", "q11", "q12", "q13", "q14", "q48"}
FAQ_ONLY = {"q33", "q34", "q35", "q36"}

# Probe words that would answer each unanswerable ask; none may occur in any document.
PROBES = {
    "q37": ["転送", "自動送信"],
    "q38": ["共働き", "有利", "お得", "得です"],
    "q39": ["LINE"],
    "q40": ["退職証明", "在職証明"],
    "q41": ["オフライン", "圏外", "電波"],
    "q42": ["自動実行", "定期実行", "定期取込", "自動取込"],
    "q43": ["Excel", "xlsx", "エクセル"],
    "q44": ["Slack", "スラック"],
    "q45": ["端末一覧", "強制ログアウト", "リモート"],
    "q46": ["チャット"],
    "q47": ["繰上げ返済", "繰上返済", "繰り上げ返済", "一部返済"],
    "q48": ["非公開", "公開を取り消", "公開の取消", "公開の取り消"],
    "q49": ["マイナンバー", "個人番号"],
    "q50": ["振込口座", "振込先", "口座変更", "給与口座"],
    "q51": ["決定通知", "特別徴収"],
    "q52": ["ISMS", "27001", "ISO", "SOC", "プライバシーマーク", "Pマーク", "認証取得"],
    "q53": ["ドライブ", "Drive", "Dropbox", "OneDrive", "自動保存連携"],
    "q54": ["電子帳簿", "電帳法", "タイムスタンプ"],
    "q55": ["違約金", "解約金", "中途解約", "解約"],
    "q56": ["前払い", "前借り", "給与前払"],
    "q57": ["SLA", "99.9", "稼働率", "返金", "補償", "credit", "クレジット返還"],
    "q58": ["読み上げ", "スクリーンリーダー", "アクセシビリティ", "音声"],
    "q59": ["ダークモード", "配色", "テーマ"],
    "q60": ["非居住者", "海外赴任", "赴任"],
    "r09": ["暗号化", "AES", "鍵管理", "TLS"],
    "r10": ["初期費用", "導入支援", "初期設定代行", "導入費用"],
    "r11": ["決定通知", "特別徴収"],
    "r12": ["年払い", "年額", "割引", "違約金", "解約金"],
}


# ---------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------
def load_pdf():
    path = os.path.join(DOCS, MANUAL)
    if not os.path.exists(path):
        err("missing " + path)
        return []
    return [p.extract_text() or "" for p in PdfReader(path).pages]


raw_pages = load_pdf()
pages = [norm(t) for t in raw_pages]
NPAGES = len(pages)
if not 14 <= NPAGES <= 18:
    err(f"PDF has {NPAGES} pages, expected 14-18")

HDR1, HDR2, FTR = norm(build.RUNNING_HEADER), norm("給与明細・年末調整クラウド"), norm(build.VENDOR)

# cover
if pages:
    cover = pages[0]
    for s in ("SlipNest", "第3.1版", "発行日", "2025年7月1日", FTR, "利用者マニュアル"):
        if norm(s) not in cover:
            err(f"cover lacks {s!r}")
    if HDR1 in cover or "-1-" in cover:
        err("cover must not carry the running header / footer")

# running header / footer on every other page; build the body text with them stripped
body_pages = [""] * NPAGES
for i in range(1, NPAGES):
    t = pages[i]
    num = f"-{i + 1}-"
    for s in (HDR1, HDR2, FTR, num):
        if s not in t:
            err(f"page {i + 1}: running header/footer part {s!r} missing")
        else:
            t = t.replace(s, "", 1)
    body_pages[i] = t

# headings, 目次, numbering
headings = [(k, b[0]) for k, *b in build.MANUAL if k in ("h1", "h2")]
chap = 0
sec = 0
for kind, text in headings:
    if kind == "h1":
        m = re.match(r"第(\d+)章 ", text)
        if m:
            chap += 1
            sec = 0
            if int(m.group(1)) != chap:
                err(f"chapter numbering: {text}")
        elif not re.match(r"付録[A-Z] ", text):
            err(f"bad chapter heading {text}")
    else:
        m = re.match(r"(\d+)\.(\d+) ", text)
        sec += 1
        if not m or int(m.group(1)) != chap or int(m.group(2)) != sec:
            err(f"section numbering: {text}")

toc_text = body_pages[1] if NPAGES > 1 else ""
if not toc_text.startswith(norm("目次")):
    err("page 2 is not the 目次")
# each heading located in the body (pages 3..), in order
pos_index = []  # (page_index, offset) of each heading in body_pages
p_i, off = 2, 0
for kind, text in headings:
    h = norm(text)
    found = False
    while p_i < NPAGES:
        j = body_pages[p_i].find(h, off)
        if j >= 0:
            pos_index.append((p_i, j))
            off = j + len(h)
            found = True
            break
        p_i, off = p_i + 1, 0
    if not found:
        err(f"heading not found in body: {text}")
        pos_index.append((NPAGES, 0))
heading_page = {text: pi + 1 for (kind, text), (pi, _) in zip(headings, pos_index)}
# 目次: every heading, in order, followed by its page number
toff = 0
for kind, text in headings:
    h = norm(text)
    j = toc_text.find(h, toff)
    if j < 0:
        err(f"目次 lacks (or misorders) {text}")
        continue
    toff = j + len(h)
    want = str(heading_page.get(text))
    k = [t for _, t in headings].index(text)
    nxt = norm(headings[k + 1][1]) if k + 1 < len(headings) else ""
    if not toc_text[toff:].startswith(want + nxt):
        err(f"目次 page number for {text} is not {want}: {toc_text[toff : toff + 12]!r}")
new_page = {b[1] for b in build.MANUAL if b[0] == "h1" and len(b) == 2}
for kind, text in headings:
    if text in new_page and heading_page.get(text) and heading_page.get(text) > 2:
        # a chapter starts on a new page: nothing but the heading before it on that page
        pi, j = pos_index[[t for _, t in headings].index(text)]
        if j != 0:
            err(f"chapter {text} does not start a page")


def section_slices(section):
    """{page_number: text of that section on that page}"""
    names = [t for _, t in headings]
    if section not in names:
        return {}
    k = names.index(section)
    (sp, so) = pos_index[k]
    (ep, eo) = pos_index[k + 1] if k + 1 < len(names) else (NPAGES - 1, len(body_pages[-1]))
    if k + 1 == len(names):
        ep, eo = NPAGES - 1, len(body_pages[NPAGES - 1])
    out = {}
    for p in range(sp, min(ep, NPAGES - 1) + 1):
        a = so if p == sp else 0
        b = eo if p == ep else len(body_pages[p])
        out[p + 1] = body_pages[p][a:b]
    return out


def section_text(section):
    return "".join(section_slices(section).values())


# structure counts
kinds = [b[0] for b in build.MANUAL]
if kinds.count("table") < 15:
    err(f"only {kinds.count('table')} tables")
if kinds.count("note") < 20:
    err(f"only {kinds.count('note')} ※ notes")
if kinds.count("steps") < 10:
    err(f"only {kinds.count('steps')} numbered step lists")
body_all = "".join(body_pages[2:])
if body_all.count("※") < 20:
    err("fewer than 20 ※ in the PDF body text")
# every block's text is extracted faithfully (in order within the body)
for b in build.MANUAL:
    if b[0] in ("p", "note"):
        items = [b[1]]
    elif b[0] == "steps":
        items = [f"{i}. {s}" for i, s in enumerate(b[1], 1)]
    elif b[0] == "table":
        items = [c for row in b[1] for c in row]
    else:
        continue
    for it in items:
        if norm(it) not in body_all:
            err(f"text not extracted from PDF: {it[:40]}")
# paragraphs continuing across a page break
crossing = []
for b in build.MANUAL:
    if b[0] not in ("p", "note"):
        continue
    t = norm(b[1])
    if any(t in bp for bp in body_pages):
        continue
    for p in range(2, NPAGES - 1):
        a, nxt = body_pages[p], body_pages[p + 1]
        if any(a.endswith(t[:k]) and nxt.startswith(t[k:]) for k in range(1, len(t))):
            crossing.append((p + 1, b[1][:20]))
            break
if len(crossing) < 3:
    err(f"only {len(crossing)} paragraphs continue across a page break: {crossing}")

# ---------------------------------------------------------------------------
# Release notes, FAQ
# ---------------------------------------------------------------------------
rn_text = open(os.path.join(DOCS, RN), encoding="utf-8").read()
rn_norm = norm(rn_text)
vers = re.findall(r"^## Ver\.(\d+)\.(\d+)（(\d{4})年(\d{1,2})月(\d{1,2})日）$", rn_text, re.M)
if len(vers) < 3:
    err("release notes: too few version headings")
keys = [((int(a), int(b)), (int(y), int(m), int(d))) for a, b, y, m, d in vers]
for x, y in zip(keys, keys[1:]):
    if not (x[0] > y[0] and x[1] > y[1]):
        err(f"release notes not newest first: {x} then {y}")
rn_blocks = {}
for part in re.split(r"^## ", rn_text, flags=re.M)[1:]:
    m = re.match(r"Ver\.(\d+\.\d+)", part)
    rn_blocks[m.group(1)] = norm(part)

faq_raw = open(os.path.join(DOCS, FAQ), "rb").read()
if not faq_raw.startswith(b"\xef\xbb\xbf"):
    err("faq.csv lacks the UTF-8 BOM")
faq_rows = list(csv.reader(io.StringIO(faq_raw.decode("utf-8-sig"))))
if faq_rows[0] != ["No", "カテゴリ", "質問", "回答"]:
    err(f"faq header {faq_rows[0]}")
faq_data = faq_rows[1:]
if len(faq_data) != 30:
    err(f"faq has {len(faq_data)} rows")
for i, r in enumerate(faq_data, 1):
    if len(r) != 4 or r[0] != str(i):
        err(f"faq row {i} malformed: {r[:2]}")
faq_norm = [norm(" ".join(r)) for r in faq_data]

for section, old, new, ver in SUPERSEDED:
    if norm(old) not in section_text(section):
        err(f"superseded: old value {old!r} not in manual section {section}")
    if norm(new) not in rn_blocks.get(ver, ""):
        err(f"superseded: new value {new!r} not in release notes Ver.{ver}")


# ---------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------
def check_manual_passage(where, e, phrases):
    page, section = e.get("page"), e.get("section")
    if not isinstance(page, int) or not 1 <= page <= NPAGES:
        err(f"{where}: bad page {page}")
        return
    slices = section_slices(section)
    if not slices:
        err(f"{where}: unknown section {section!r}")
        return
    if page not in slices:
        err(f"{where}: section {section!r} is not on page {page} (pages {sorted(slices)})")
        return
    for ph in phrases:
        n = norm(ph)
        if n not in pages[page - 1]:
            err(f"{where}: {ph!r} not in text of page {page}")
        elif n not in slices[page]:
            err(f"{where}: {ph!r} on page {page} but outside section {section!r}")


def check_passage(where, e, phrases, support=False):
    doc = e.get("document")
    extra = "contains" if support else "key_phrases"
    if doc == MANUAL:
        want = {"document", "page", "row", "section", extra}
    else:
        want = {"document", "page", "row", extra}
    if set(e) != want:
        err(f"{where}: entry keys {sorted(e)} != {sorted(want)}")
    if doc == MANUAL:
        if e.get("row") is not None:
            err(f"{where}: manual entry with row")
        check_manual_passage(where, e, phrases)
    elif doc == RN:
        if e.get("page") is not None or e.get("row") is not None:
            err(f"{where}: release-note entry with page/row")
        for ph in phrases:
            if norm(ph) not in rn_norm:
                err(f"{where}: {ph!r} not in release notes")
    elif doc == FAQ:
        r = e.get("row")
        if e.get("page") is not None or not isinstance(r, int) or not 1 <= r <= len(faq_data):
            err(f"{where}: bad FAQ row {r}")
            return
        for ph in phrases:
            if norm(ph) not in faq_norm[r - 1]:
                err(f"{where}: {ph!r} not in FAQ row {r}")
    else:
        err(f"{where}: unknown document {doc}")


def is_english(s):
    letters = [c for c in s if not c.isspace()]
    return sum(c.isascii() for c in letters) / max(1, len(letters)) > 0.9


qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8")]
ids = [q["id"] for q in qs]
if ids != [f"q{i:02d}" for i in range(1, 61)]:
    err("question ids not q01..q60 in order")
groups = {"answerable": [], "partly": [], "unanswerable": []}
for q in qs:
    qid = q["id"]
    if "unanswerable_parts" in q:
        groups["partly"].append(qid)
        want = {"id", "question", "answerable", "expected", "unanswerable_parts", "parts"}
        if (
            not q["answerable"]
            or not q["expected"]
            or not q["unanswerable_parts"]
            or q["parts"] <= len(q["unanswerable_parts"])
        ):
            err(f"{qid}: partly-answerable shape")
    elif q["answerable"]:
        groups["answerable"].append(qid)
        want = {"id", "question", "answerable", "expected"}
        if not q["expected"]:
            err(f"{qid}: answerable without expected")
    else:
        groups["unanswerable"].append(qid)
        want = {"id", "question", "answerable", "expected"}
        if q["expected"]:
            err(f"{qid}: unanswerable with expected")
    if set(q) != want:
        err(f"{qid}: keys {sorted(q)}")
    for k, e in enumerate(q["expected"]):
        kp = e.get("key_phrases")
        if not isinstance(kp, list) or not 1 <= len(kp) <= 2:
            err(f"{qid}[{k}]: need 1-2 key phrases")
            continue
        check_passage(f"{qid}[{k}]", e, kp)
    eng = is_english(q["question"])
    if eng != (qid in ENGLISH):
        err(f"{qid}: English flag mismatch")
    if qid in RN_NEEDED:
        docs = [e["document"] for e in q["expected"]]
        if RN not in docs or MANUAL not in docs:
            err(f"{qid}: needs both a manual and a release-note passage")
    if qid in FAQ_ONLY and any(e["document"] != FAQ for e in q["expected"]):
        err(f"{qid}: should be FAQ-only")
    if (qid in PROBES) != (qid in groups["partly"] + groups["unanswerable"]):
        err(f"{qid}: probe list presence mismatch")

if [len(groups[g]) for g in ("answerable", "partly", "unanswerable")] != [36, 12, 12]:
    err(f"group sizes {[len(v) for v in groups.values()]}")
if groups["answerable"] != ids[:36] or groups["partly"] != ids[36:48]:
    err("groups not in id order")
if len(ENGLISH) != 8 or not all(ENGLISH & set(g) for g in groups.values()):
    err("English questions must be 8 and spread over the three groups")
if len(RN_NEEDED & set(groups["answerable"])) < 8:
    err("too few answerable release-note questions")

rs = [json.loads(l) for l in open(os.path.join(HERE, "research_questions.jsonl"), encoding="utf-8")]
if [r["id"] for r in rs] != [f"r{i:02d}" for i in range(1, 13)]:
    err("research ids not r01..r12")
kinds_seen = []
for r in rs:
    rid = r["id"]
    if "を資料から整理してください" not in r["question"]:
        err(f"{rid}: not a 「…を資料から整理してください」 request")
    if r["answerable"]:
        if set(r) != {"id", "question", "answerable", "kind", "support"}:
            err(f"{rid}: keys {sorted(r)}")
        kinds_seen.append(r["kind"])
        if not 2 <= len(r["support"]) <= 4:
            err(f"{rid}: support must list 2-4 passages")
        for k, e in enumerate(r["support"]):
            check_passage(f"{rid}[{k}]", e, [e.get("contains", "")], support=True)
    else:
        if set(r) != {"id", "question", "answerable", "support"} or r["support"]:
            err(f"{rid}: not-answerable shape")
        if rid not in PROBES:
            err(f"{rid}: no probe list")
if sorted(kinds_seen) != sorted(
    ["procedure", "procedure", "deadline", "deadline", "list", "list", "comparison", "fact"]
):
    err(f"research kinds {kinds_seen}")
if [r["answerable"] for r in rs] != [True] * 8 + [False] * 4:
    err("research: 8 answerable then 4 not answerable expected")

# probes: none in any document (case-insensitive)
all_docs = norm("".join(raw_pages) + rn_text + faq_raw.decode("utf-8-sig")).lower()
for qid, words in PROBES.items():
    for w in words:
        if norm(w).lower() in all_docs:
            err(f"{qid}: probe word {w!r} occurs in the documents")


def main():
    if ERRORS:
        for e in ERRORS:
            print("ERROR:", e)
        print(f"{len(ERRORS)} problem(s)")
        return 1
    print(
        f"OK: {NPAGES} PDF pages, {len(headings)} headings, {kinds.count('table')} tables, "
        f"{kinds.count('note')} ※ notes, {kinds.count('steps')} step lists, {len(crossing)} paragraphs "
        f"continued across a page break {crossing}; questions 36/12/12 (English {len(ENGLISH)}); "
        f"research 8+4"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
