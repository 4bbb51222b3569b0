# ruff: noqa
"""Verify the helpdesk_blind5 documents and labels.  Exits non-zero on any problem.

.venv/bin/python benchmarks/data/helpdesk_blind5/check.py
"""

import csv
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

from pypdf import PdfReader

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
MANUAL = "keiyakudock_manual_v3.0.pdf"
RELNOTES = "release_notes.md"
FAQ = "faq.csv"
PDF_PAGES = 15
FAQ_HEADER = ["No", "分類", "質問", "回答"]
FAQ_ROWS = 30
KINDS = {"procedure", "deadline", "list", "comparison", "fact"}

# Words that would answer the uncovered asks.  None may occur in any document
# (matched case-sensitively after NFKC + whitespace removal).
PROBES = {
    # partly answerable: the uncovered part
    "f37": ["SMS", "ショートメッセージ"],
    "f38": ["コピー", "グループ会社", "複製"],
    "f39": ["控え", "自動でメール", "完成した"],
    "f40": ["有料プランに", "自動で本契約", "自動的に本契約", "トライアル終了", "トライアルが終"],
    "f41": ["SIEM", "転送", "syslog"],
    "f42": ["納期", "仕上が", "所要日数"],
    "f43": ["検索条件を共有", "条件の共有", "検索条件の共有"],
    "f44": ["webhook", "Webhook", "WEBHOOK", "Webフック"],
    "f45": ["返金", "日割"],
    "f46": ["LINE"],
    "f47": ["レンタル", "貸出", "貸し出"],
    "f48": ["例外", "除外"],
    # unanswerable
    "f49": ["金額に応じ", "金額によって", "金額で", "条件分岐", "分岐"],
    "f50": ["Slack", "slack"],
    "f51": ["マイナンバー", "公的個人認証", "本人確認"],
    "f52": ["AI", "レビュー", "リスク"],
    "f53": ["差分", "比較", "新旧"],
    "f54": ["NPO", "非営利", "割引", "学割"],
    "f55": ["有効期間", "10年", "長期署名"],
    "f56": ["稼働", "ステータスページ", "障害"],
    "f57": ["ドライブ", "Drive", "Dropbox", "自動で取り込", "自動取込"],
    "f58": ["透かし", "ウォーターマーク", "印刷"],
    "f59": ["ISO", "ISMS", "27001", "認証を取得", "第三者認証"],
    "f60": ["オンプレミス", "on-premises", "自社サーバー", "オンプレ"],
    # research, not answerable
    "s09": ["AI", "レビュー"],
    "s10": ["SLA", "稼働率", "返金"],
    "s11": ["Salesforce", "商談"],
    "s12": ["ひな形", "雛形", "差し込", "差込"],
}

problems = []


def fail(msg):
    problems.append(msg)


def norm(s):
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


def has_cjk(s):
    return any("\u3040" <= ch <= "\u30ff" or "\u4e00" <= ch <= "\u9fff" for ch in s)


# ---------------------------------------------------------------- documents
pdf_path = DOCS / MANUAL
reader = PdfReader(pdf_path)
pdf_pages = [norm(pg.extract_text() or "") for pg in reader.pages]
if len(pdf_pages) != PDF_PAGES:
    fail(f"{MANUAL}: {len(pdf_pages)} pages, expected {PDF_PAGES}")
if not (
    "第3.0版" in pdf_pages[0]
    and "2024年10月1日" in pdf_pages[0]
    and "操作マニュアル" in pdf_pages[0]
):
    fail("cover page lacks title / edition / issue date")
if "目次" not in pdf_pages[1]:
    fail("page 2 is not the table of contents")
for i, text in enumerate(pdf_pages[1:], 2):
    if not ("KeiyakuDock操作マニュアル" in text and f"{i}/{PDF_PAGES}" in text):
        fail(f"page {i}: running header/footer missing")

# TOC entries point at the page that carries the heading
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True
import build  # noqa: E402  (only for TOC_ENTRIES; does not rebuild)

for level, title, page in build.TOC_ENTRIES:
    if norm(title) not in pdf_pages[page - 1]:
        fail(f"TOC: '{title}' not found on page {page}")

relnotes = (DOCS / RELNOTES).read_text(encoding="utf-8")
relnotes_n = norm(relnotes)
versions = re.findall(r"^## Ver\.(\d+)\.(\d+)", relnotes, flags=re.M)
vers = [(int(a), int(b)) for a, b in versions]
if len(vers) < 4:
    fail(f"{RELNOTES}: only {len(vers)} releases")
if vers != sorted(vers, reverse=True):
    fail(f"{RELNOTES}: releases not newest first: {vers}")

with (DOCS / FAQ).open(encoding="utf-8", newline="") as f:
    raw = (DOCS / FAQ).read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        fail(f"{FAQ}: has a BOM")
    rows = list(csv.reader(f))
if rows[0] != FAQ_HEADER:
    fail(f"{FAQ}: header {rows[0]!r}")
faq_rows = rows[1:]
if len(faq_rows) != FAQ_ROWS:
    fail(f"{FAQ}: {len(faq_rows)} data rows, expected {FAQ_ROWS}")
for i, r in enumerate(faq_rows, 1):
    if len(r) != 4 or r[0] != str(i) or not all(x.strip() for x in r):
        fail(f"{FAQ}: bad row {i}: {r!r}")
faq_n = [norm(" ".join(r[2:4])) for r in faq_rows]

all_docs_n = "".join(pdf_pages) + relnotes_n + "".join(norm(" ".join(r)) for r in faq_rows)


def passage(doc, page, row, where):
    """Return the normalised text of the labelled passage, or None."""
    if doc == MANUAL:
        if row is not None or not isinstance(page, int) or not 1 <= page <= len(pdf_pages):
            fail(f"{where}: bad page/row for PDF: page={page} row={row}")
            return None
        return pdf_pages[page - 1]
    if doc == RELNOTES:
        if page is not None or row is not None:
            fail(f"{where}: release notes need page=null,row=null")
            return None
        return relnotes_n
    if doc == FAQ:
        if page is not None or not isinstance(row, int) or not 1 <= row <= len(faq_rows):
            fail(f"{where}: bad FAQ row: page={page} row={row}")
            return None
        return faq_n[row - 1]
    fail(f"{where}: unknown document {doc!r}")
    return None


def check_probes(qid, where):
    for term in PROBES.get(qid, []):
        if norm(term) in all_docs_n:
            fail(
                f"{where}: probe term '{term}' occurs in the documents (question may be answerable)"
            )


# ---------------------------------------------------------------- questions
qs = [
    json.loads(line)
    for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
ids = [q.get("id") for q in qs]
if len(qs) != 60:
    fail(f"questions.jsonl: {len(qs)} lines, expected 60")
dups = [k for k, v in Counter(ids).items() if v > 1]
if dups:
    fail(f"questions.jsonl: duplicate ids {dups}")
kinds = Counter()
english = 0
for q in qs:
    qid = q.get("id")
    where = f"questions.jsonl {qid}"
    base_keys = {"id", "question", "answerable", "expected"}
    if not isinstance(q.get("question"), str) or not q["question"].strip():
        fail(f"{where}: empty question")
        continue
    if not has_cjk(q["question"]):
        english += 1
    if q.get("answerable") is True:
        partial = "unanswerable_parts" in q or "parts" in q
        if partial:
            kinds["partial"] += 1
            if set(q) != base_keys | {"unanswerable_parts", "parts"}:
                fail(f"{where}: keys {sorted(q)}")
            up = q.get("unanswerable_parts")
            if not isinstance(up, list) or not up or not all(isinstance(x, str) and x for x in up):
                fail(f"{where}: unanswerable_parts must be a non-empty list of strings")
            elif not isinstance(q.get("parts"), int) or q["parts"] < 2 or q["parts"] <= len(up):
                fail(
                    f"{where}: parts={q.get('parts')} inconsistent with {len(up)} unanswerable parts"
                )
            check_probes(qid, where)
        else:
            kinds["answerable"] += 1
            if set(q) != base_keys:
                fail(f"{where}: keys {sorted(q)}")
        exp = q.get("expected")
        if not isinstance(exp, list) or not exp:
            fail(f"{where}: answerable question without expected passages")
            continue
        for e in exp:
            if set(e) != {"document", "page", "row", "key_phrases"}:
                fail(f"{where}: expected keys {sorted(e)}")
                continue
            kp = e["key_phrases"]
            if not isinstance(kp, list) or not 1 <= len(kp) <= 2:
                fail(f"{where}: need 1-2 key phrases, got {kp!r}")
                continue
            text = passage(e["document"], e["page"], e["row"], where)
            if text is None:
                continue
            for k in kp:
                if not norm(k) or norm(k) not in text:
                    fail(
                        f"{where}: key phrase '{k}' not in {e['document']} page={e['page']} row={e['row']}"
                    )
    elif q.get("answerable") is False:
        kinds["unanswerable"] += 1
        if set(q) != base_keys or q.get("expected") != []:
            fail(f"{where}: unanswerable must have exactly {sorted(base_keys)} and expected=[]")
        check_probes(qid, where)
    else:
        fail(f"{where}: answerable must be true/false")
if dict(kinds) != {"answerable": 36, "partial": 12, "unanswerable": 12}:
    fail(f"questions.jsonl: counts {dict(kinds)}, expected 36/12/12")
if english != 8:
    fail(f"questions.jsonl: {english} English questions, expected 8")

# ---------------------------------------------------------------- research
rs = [
    json.loads(line)
    for line in (HERE / "research_questions.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
rids = [r.get("id") for r in rs]
if len(rs) != 12:
    fail(f"research_questions.jsonl: {len(rs)} lines, expected 12")
dups = [k for k, v in Counter(rids).items() if v > 1]
if dups:
    fail(f"research_questions.jsonl: duplicate ids {dups}")
rk = Counter()
for r in rs:
    rid = r.get("id")
    where = f"research_questions.jsonl {rid}"
    if not isinstance(r.get("question"), str) or not r["question"].strip():
        fail(f"{where}: empty question")
    if r.get("answerable") is True:
        rk["answerable"] += 1
        if set(r) != {"id", "question", "answerable", "kind", "support"}:
            fail(f"{where}: keys {sorted(r)}")
        if r.get("kind") not in KINDS:
            fail(f"{where}: kind {r.get('kind')!r}")
        sup = r.get("support")
        if not isinstance(sup, list) or not 2 <= len(sup) <= 4:
            fail(f"{where}: support must list 2-4 passages")
            continue
        for s in sup:
            if set(s) != {"document", "page", "row", "contains"}:
                fail(f"{where}: support keys {sorted(s)}")
                continue
            text = passage(s["document"], s["page"], s["row"], where)
            if text is not None and (not norm(s["contains"]) or norm(s["contains"]) not in text):
                fail(
                    f"{where}: '{s['contains']}' not in {s['document']} page={s['page']} row={s['row']}"
                )
    elif r.get("answerable") is False:
        rk["unanswerable"] += 1
        if (
            set(r) - {"kind"} != {"id", "question", "answerable", "support"}
            or r.get("support") != []
        ):
            fail(f"{where}: not-answerable must have support=[]")
        check_probes(rid, where)
    else:
        fail(f"{where}: answerable must be true/false")
if dict(rk) != {"answerable": 8, "unanswerable": 4}:
    fail(f"research_questions.jsonl: counts {dict(rk)}, expected 8/4")
for rid in PROBES:
    if rid not in ids and rid not in rids:
        fail(f"probe id {rid} matches no question")

# ---------------------------------------------------------------- report
print(
    f"{MANUAL}: {len(pdf_pages)} pages; {RELNOTES}: {len(vers)} releases; {FAQ}: {len(faq_rows)} rows"
)
print(
    f"questions.jsonl: {len(qs)} ({kinds['answerable']} answerable, {kinds['partial']} partly, "
    f"{kinds['unanswerable']} unanswerable, {english} English)"
)
print(
    f"research_questions.jsonl: {len(rs)} ({rk['answerable']} answerable, {rk['unanswerable']} not answerable; "
    f"kinds {dict(Counter(r.get('kind') for r in rs if r.get('answerable')))})"
)
if problems:
    print(f"FAILED: {len(problems)} problem(s)")
    for m in problems:
        print("  -", m)
    sys.exit(1)
print("OK: all checks passed")
