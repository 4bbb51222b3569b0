#!/usr/bin/env python3
# ruff: noqa
"""Check helpdesk_blind8: document shapes and every label.  Exits non-zero on any problem.

.venv/bin/python benchmarks/data/helpdesk_blind8/check.py           # check
.venv/bin/python benchmarks/data/helpdesk_blind8/check.py --dump    # also print DOCX sections
"""

from __future__ import annotations

import json
import math
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

from docx import Document
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from openpyxl import load_workbook

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
MANUAL = "kashidas_manual_v3.0.docx"
FAQ = "faq.xlsx"
RN = "release_notes.md"
DOC_NAMES = (MANUAL, FAQ, RN)

ENGLISH = {"q07", "q16", "q24", "q33", "q42", "q44", "q57", "q58"}
RESEARCH_KINDS = Counter({"procedure": 2, "deadline": 2, "list": 2, "comparison": 1, "fact": 1})

# (manual section, old value there, new value in the release notes)
SUPERSEDED = [
    ("1.2 動作環境", "Android 12 以降", "Android 13 以降"),
    ("3.1 車両予約を登録する", "利用日の45日前から", "利用日の60日前"),
    ("3.1 車両予約を登録する", "最長3日間（72時間）", "5日間（120時間）"),
    ("3.3 承認が必要な予約", "24時間以内に処理しない", "12時間"),
    ("4.1 キーロッカーから鍵を受け取る", "利用開始の15分前", "利用開始の30分前"),
    ("5.1 運転日報を入力する", "翌営業日12:00", "翌営業日17:00"),
    ("5.3 給油カードを使う", "給油日から3営業日以内", "給油日から5営業日以内"),
    ("6.2 事故報告を提出する", "最大10枚", "最大20枚"),
    ("7.2 備品カテゴリと貸出条件", "標準の最長貸出期間は7日", "10日"),
    ("8.1 車両・備品を登録する", "1ファイル300行", "1ファイル1,000行"),
    ("9.1 料金プラン", "2,200円", "2,500円"),
]

# Probe words: any of them appearing in a document would (at least partly) answer the ask.
PROBES = {
    "q49": ["反則金", "駐車違反", "駐禁", "放置違反", "違反金"],
    "q50": ["免責", "自己負担", "負担額", "本人負担"],
    "q51": ["スタッドレス", "冬タイヤ", "冬用タイヤ", "雪"],
    "q52": ["残量", "充電率", "満充電", "%", "バッテリー"],
    "q53": ["ドライブレコーダー", "ドラレコ", "映像", "動画", "録画"],
    "q54": ["喫煙", "禁煙", "タバコ", "たばこ", "煙草"],
    "q55": ["Slack", "Teams", "チャット", "Webhook"],
    "q56": ["GPS", "位置情報", "現在地", "現在位置", "テレマティクス", "走行ルート"],
    "q57": ["高齢", "70歳", "歳", "年齢"],
    "q58": ["タイムズ", "Times", "カーシェア", "car share"],
    "q59": ["レンタカー", "レンタル車両", "外部車両"],
    "q60": ["API", "SCIM", "自動同期", "人事システム"],
    "r09": ["私用", "私的", "通勤", "個人利用", "個人的な利用"],
    "r10": ["CO2", "排出量", "燃費", "環境レポート"],
    "r11": ["違反", "違反点", "反則点"],
    "r12": ["社外", "取引先", "外部への貸出", "社外貸出"],
}
PART_PROBES = {  # one probe list per unanswerable part, in order
    "q37": [["高速代", "高速料金", "通行料"]],
    "q38": [["マイナ", "マイナンバー"]],
    "q39": [["音声"]],
    "q40": [["USB-C", "Type-C", "アダプタ", "アダプター"]],
    "q41": [["英語", "English", "多言語", "表示言語", "言語設定"]],
    "q42": [["ルーフ", "roof", "キャリア", "carrier"]],
    "q43": [["工事", "設置作業", "取付", "取り付け"]],
    "q44": [["テンプレート", "template", "サンプル", "sample", "ひな形", "雛形"]],
    "q45": [["NPO", "公益", "非営利", "割引", "ディスカウント"]],
    "q46": [["フルサービス", "セルフ", "有人"]],
    "q47": [["停止の解除", "停止を解除", "早期解除", "解除申請", "解除を依頼", "解除してもら"]],
    "q48": [["請求書を分", "拠点ごとの請求", "拠点別", "請求先", "分割請求"]],
}
# Unanswerable questions whose topic word does occur in the documents, in an unrelated context.
PASSING_MENTIONS = {"q49": "駐車", "q50": "保険", "q51": "タイヤ", "q52": "充電"}

errors: list[str] = []


def err(msg: str) -> None:
    errors.append(msg)


def norm(s: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


# ---------------------------------------------------------------------------
# DOCX reading
# ---------------------------------------------------------------------------
def body_blocks(doc):
    for child in doc.element.body.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, doc)
        elif child.tag == qn("w:tbl"):
            yield Table(child, doc)


def row_text(row) -> str:
    return " | ".join(c.text for c in row.cells)


def heading_level(p: Paragraph) -> int:
    name = p.style.name if p.style is not None else ""
    if name == "Heading 1":
        return 1
    if name == "Heading 2":
        return 2
    return 0


def docx_sections(doc):
    """[(heading, level, [texts])] in document order; text before the first heading is skipped."""
    sections = []
    for block in body_blocks(doc):
        if isinstance(block, Paragraph):
            lvl = heading_level(block)
            if lvl:
                sections.append((block.text, lvl, []))
            elif sections and block.text.strip():
                sections[-1][2].append(block.text)
        elif sections:
            for row in block.rows:
                sections[-1][2].append(row_text(row))
    return sections


def docx_all_text(doc) -> str:
    parts = []
    for block in body_blocks(doc):
        if isinstance(block, Paragraph):
            parts.append(block.text)
        else:
            parts.extend(row_text(r) for r in block.rows)
    for sec in doc.sections:
        for hf in (sec.header, sec.footer, sec.first_page_header, sec.first_page_footer):
            parts.extend(p.text for p in hf.paragraphs)
    return "\n".join(parts)


def width(text: str) -> float:
    return sum(1.0 if unicodedata.east_asian_width(ch) in "WFA" else 0.5 for ch in text)


def estimate_pages(doc) -> float:
    """Rough A4 layout estimate from the file's own page size, margins and line spacing."""
    sec = doc.sections[0]
    normal = doc.styles["Normal"]
    size = normal.font.size.pt
    spacing = normal.paragraph_format.line_spacing.pt
    cpl = (sec.page_width - sec.left_margin - sec.right_margin) / 12700 / size
    lpp = (sec.page_height - sec.top_margin - sec.bottom_margin) / 12700 / spacing
    pages, lines = 1, 0.0

    def new_page():
        nonlocal pages, lines
        if lines > 0:
            pages += 1
            lines = 0.0

    def add(n):
        nonlocal pages, lines
        lines += n
        while lines > lpp:
            pages += 1
            lines -= lpp

    for block in body_blocks(doc):
        if isinstance(block, Paragraph):
            if block.paragraph_format.page_break_before:
                new_page()
            lvl = heading_level(block)
            if lvl == 1:
                add(3.0)
            elif lvl == 2:
                add(2.2)
            else:
                add(max(1, math.ceil(width(block.text) / cpl)) + 0.25)
            if block._p.xpath('.//w:br[@w:type="page"]'):
                new_page()
        else:
            ncols = len(block.columns)
            cell_cpl = max(4.0, cpl / ncols - 1)
            for row in block.rows:
                add(max(math.ceil(max(width(c.text), 1) / cell_cpl) for c in row.cells) + 0.3)
    return pages + lines / lpp


def check_docx(path: Path, dump: bool):
    doc = Document(str(path))
    paras = [b for b in body_blocks(doc)]
    # cover: paragraphs before 目次
    cover, toc, i = [], [], 0
    while i < len(paras) and not (
        isinstance(paras[i], Paragraph) and paras[i].text.strip() == "目次"
    ):
        if isinstance(paras[i], Paragraph):
            cover.append(paras[i].text)
        i += 1
    cover_text = "\n".join(cover)
    for needle in (
        "カシダス",
        "第3.0版",
        "発行日",
        "株式会社青葉モビリティワークス",
        "操作マニュアル",
    ):
        if needle not in cover_text:
            err(f"docx cover lacks {needle!r}")
    i += 1
    while i < len(paras) and isinstance(paras[i], Paragraph) and not heading_level(paras[i]):
        if paras[i].text.strip():
            toc.append(paras[i].text.strip())
        i += 1
    sections = docx_sections(doc)
    headings = [h for h, _, _ in sections]
    if toc != headings:
        err(f"docx 目次 does not list the headings in order: {toc} vs {headings}")
    # numbering
    chap, sub = 0, 0
    appendix_seen = False
    for h, lvl, _ in sections:
        if lvl == 1:
            m = re.fullmatch(r"第(\d+)章 .+", h)
            if m:
                if appendix_seen or int(m.group(1)) != chap + 1:
                    err(f"chapter numbering broken at {h!r}")
                chap, sub = int(m.group(1)), 0
            elif re.fullmatch(r"付録[A-Z] .+", h):
                appendix_seen = True
            else:
                err(f"bad Heading 1 {h!r}")
        else:
            m = re.fullmatch(r"(\d+)\.(\d+) .+", h)
            if not m or int(m.group(1)) != chap or int(m.group(2)) != sub + 1:
                err(f"section numbering broken at {h!r}")
            else:
                sub += 1
    if len(set(headings)) != len(headings):
        err("duplicate headings")
    # tables, notes, step lists
    n_tables = len(doc.tables)
    if n_tables < 15:
        err(f"docx has {n_tables} tables (< 15)")
    body_paras = [b for b in paras if isinstance(b, Paragraph)]
    notes = [p for p in body_paras if p.text.startswith("※")]
    if len(notes) < 20:
        err(f"docx has {len(notes)} ※ notes (< 20)")
    step_lists, prev = 0, 0
    for p in body_paras:
        m = re.match(r"(\d+)\. ", p.text)
        n = int(m.group(1)) if m else 0
        if n == 1:
            step_lists += 1
        elif n and n != prev + 1:
            err(f"step numbering broken at {p.text[:30]!r}")
        prev = n
    if step_lists < 10:
        err(f"docx has {step_lists} numbered step lists (< 10)")
    # header / footer
    sec = doc.sections[0]
    if not sec.different_first_page_header_footer:
        err("docx cover page should have no header/footer (titlePg)")
    if "カシダス" not in "".join(p.text for p in sec.header.paragraphs):
        err("docx header lacks the product name")
    footer_xml = sec.footer._element.xml
    if "PAGE" not in footer_xml:
        err("docx footer lacks a PAGE field")
    pages = estimate_pages(doc)
    if not 12 <= pages <= 18:
        err(f"docx estimated {pages:.1f} pages (not 12-18)")
    section_map = {h: norm("\n".join(texts)) for h, _, texts in sections}
    if dump:
        for h, lvl, texts in sections:
            print(("# " if lvl == 1 else "## ") + h)
            for t in texts:
                print("    " + t)
        print(
            f"[estimated pages: {pages:.1f}; tables {n_tables}; notes {len(notes)}; step lists {step_lists}]"
        )
    stats = {"pages": pages, "tables": n_tables, "notes": len(notes), "steps": step_lists}
    return section_map, docx_all_text(doc), stats


def check_faq(path: Path):
    wb = load_workbook(str(path))
    if len(wb.sheetnames) != 1:
        err(f"faq.xlsx has {len(wb.sheetnames)} sheets")
    ws = wb.worksheets[0]
    rows = [list(r) for r in ws.iter_rows(values_only=True)]
    if rows[0] != ["No", "分類", "質問", "回答"]:
        err(f"faq header is {rows[0]}")
    data = rows[1:]
    if len(data) != 30:
        err(f"faq has {len(data)} data rows")
    for i, r in enumerate(data, 1):
        if r[0] != i:
            err(f"faq row {i} has No {r[0]}")
        if not all(isinstance(v, str) and v.strip() for v in r[1:]):
            err(f"faq row {i} has an empty cell")
    row_map = {i: norm(" ".join(str(v) for v in r)) for i, r in enumerate(data, 1)}
    all_text = "\n".join(" ".join(str(v) for v in r if v is not None) for r in rows)
    return row_map, all_text


def check_rn(path: Path):
    text = path.read_text(encoding="utf-8")
    heads = re.findall(r"^## Ver\.(\d+)\.(\d+)（(\d{4})年(\d{1,2})月(\d{1,2})日）$", text, re.M)
    if len(heads) < 3:
        err("release notes: fewer than 3 versions")
    keys = [((int(a), int(b)), (int(y), int(m), int(d))) for a, b, y, m, d in heads]
    for (v1, d1), (v2, d2) in zip(keys, keys[1:]):
        if not (v1 > v2 and d1 > d2):
            err(f"release notes not newest first: {v1} {d1} before {v2} {d2}")
    if len(re.findall(r"^## ", text, re.M)) != len(heads):
        err("release notes: a version heading does not match 'Ver.X.Y（YYYY年M月D日）'")
    return norm(text), text


# ---------------------------------------------------------------------------
# Labels
# ---------------------------------------------------------------------------
def load_jsonl(path: Path):
    recs = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            recs.append(json.loads(line))
        except json.JSONDecodeError as e:
            err(f"{path.name}:{n}: bad JSON ({e})")
    return recs


def passage_text(entry, where, sections, faq_rows, rn_norm):
    doc = entry.get("document")
    if doc == MANUAL:
        sec = entry.get("section")
        if sec not in sections:
            err(f"{where}: unknown section {sec!r}")
            return None
        return sections[sec]
    if doc == FAQ:
        row = entry.get("row")
        if row not in faq_rows:
            err(f"{where}: bad faq row {row!r}")
            return None
        return faq_rows[row]
    if doc == RN:
        return rn_norm
    err(f"{where}: unknown document {doc!r}")
    return None


def entry_keys_ok(entry, where, last_key):
    doc = entry.get("document")
    expected = {"document", "page", "row", last_key} | ({"section"} if doc == MANUAL else set())
    if set(entry) != expected:
        err(f"{where}: keys {sorted(entry)} != {sorted(expected)}")
    if entry.get("page") is not None:
        err(f"{where}: page must be null")
    if doc in (MANUAL, RN) and entry.get("row") is not None:
        err(f"{where}: row must be null")


def is_english(text: str) -> bool:
    return not re.search(r"[\u3040-\u30ff\u3400-\u9fff\uff00-\uffef]", text)


def probe_hits(words, all_docs_norm):
    return [w for w in words if norm(w).lower() in all_docs_norm]


def check_questions(sections, faq_rows, rn_norm, all_docs_norm):
    recs = load_jsonl(HERE / "questions.jsonl")
    ids = [r.get("id") for r in recs]
    if ids != [f"q{i:02d}" for i in range(1, 61)]:
        err(f"question ids not q01..q60 in order: {ids}")
    n_ans = n_part = n_un = 0
    english = set()
    for r in recs:
        qid = r.get("id")
        if is_english(r.get("question", "")):
            english.add(qid)
        base = {"id", "question", "answerable", "expected"}
        if r.get("answerable") is True and "unanswerable_parts" in r:
            n_part += 1
            if set(r) != base | {"unanswerable_parts", "parts"}:
                err(f"{qid}: keys {sorted(r)}")
            ups = r.get("unanswerable_parts") or []
            if not ups or not isinstance(r.get("parts"), int) or r["parts"] < len(ups) + 1:
                err(f"{qid}: bad unanswerable_parts/parts")
            plist = PART_PROBES.get(qid)
            if not plist or len(plist) != len(ups):
                err(f"{qid}: need one probe list per unanswerable part")
            else:
                for words in plist:
                    hits = probe_hits(words, all_docs_norm)
                    if hits:
                        err(
                            f"{qid}: probe words for an unanswerable part occur in the documents: {hits}"
                        )
        elif r.get("answerable") is True:
            n_ans += 1
            if set(r) != base:
                err(f"{qid}: keys {sorted(r)}")
        elif r.get("answerable") is False:
            n_un += 1
            if set(r) != base or r.get("expected") != []:
                err(f"{qid}: unanswerable record must have exactly {sorted(base)} and expected []")
            words = PROBES.get(qid)
            if not words:
                err(f"{qid}: no probe words")
            else:
                hits = probe_hits(words, all_docs_norm)
                if hits:
                    err(f"{qid}: probe words occur in the documents: {hits}")
            continue
        else:
            err(f"{qid}: answerable must be true/false")
            continue
        exp = r.get("expected") or []
        if not exp:
            err(f"{qid}: answerable question without expected passages")
        for j, e in enumerate(exp):
            where = f"{qid}.expected[{j}]"
            entry_keys_ok(e, where, "key_phrases")
            kps = e.get("key_phrases") or []
            if not 1 <= len(kps) <= 2:
                err(f"{where}: needs 1-2 key phrases")
            text = passage_text(e, where, sections, faq_rows, rn_norm)
            if text is None:
                continue
            for kp in kps:
                if norm(kp) not in text:
                    err(f"{where}: key phrase {kp!r} not in passage")
    if (n_ans, n_part, n_un) != (36, 12, 12):
        err(f"counts answerable/partly/unanswerable = {n_ans}/{n_part}/{n_un}, want 36/12/12")
    if english != ENGLISH:
        err(f"English questions {sorted(english)} != {sorted(ENGLISH)}")
    groups = [
        sum(1 for q in english if lo <= int(q[1:]) <= hi)
        for lo, hi in ((1, 36), (37, 48), (49, 60))
    ]
    if min(groups) == 0:
        err(f"English questions not spread over the three groups: {groups}")
    for qid, word in PASSING_MENTIONS.items():
        if norm(word).lower() not in all_docs_norm:
            err(f"{qid}: passing-mention word {word!r} should occur in the documents")
        rec = next((r for r in recs if r.get("id") == qid), None)
        if rec is None or rec.get("answerable") is not False:
            err(f"{qid}: passing-mention question must be unanswerable")
    if len(PASSING_MENTIONS) != 4:
        err("want exactly 4 passing-mention unanswerable questions")
    return n_ans, n_part, n_un, len(english)


def check_research(sections, faq_rows, rn_norm, all_docs_norm):
    recs = load_jsonl(HERE / "research_questions.jsonl")
    ids = [r.get("id") for r in recs]
    if ids != [f"r{i:02d}" for i in range(1, 13)]:
        err(f"research ids not r01..r12 in order: {ids}")
    kinds = Counter()
    n_ans = n_not = 0
    for r in recs:
        rid = r.get("id")
        if not r.get("question", "").endswith("を資料から整理してください。"):
            err(f"{rid}: request should end with 「を資料から整理してください。」")
        if r.get("answerable") is True:
            n_ans += 1
            if set(r) != {"id", "question", "answerable", "kind", "support"}:
                err(f"{rid}: keys {sorted(r)}")
            kinds[r.get("kind")] += 1
            sup = r.get("support") or []
            if not 2 <= len(sup) <= 4:
                err(f"{rid}: support must list 2-4 passages")
            for j, s in enumerate(sup):
                where = f"{rid}.support[{j}]"
                entry_keys_ok(s, where, "contains")
                text = passage_text(s, where, sections, faq_rows, rn_norm)
                if text is not None and norm(s.get("contains", "")) not in text:
                    err(f"{where}: contains {s.get('contains')!r} not in passage")
        elif r.get("answerable") is False:
            n_not += 1
            if set(r) != {"id", "question", "answerable", "support"} or r.get("support") != []:
                err(f"{rid}: not-answerable request must have support []")
            words = PROBES.get(rid)
            if not words:
                err(f"{rid}: no probe words")
            else:
                hits = probe_hits(words, all_docs_norm)
                if hits:
                    err(f"{rid}: probe words occur in the documents: {hits}")
        else:
            err(f"{rid}: answerable must be true/false")
    if (n_ans, n_not) != (8, 4):
        err(f"research counts {n_ans}/{n_not}, want 8/4")
    if kinds != RESEARCH_KINDS:
        err(f"research kinds {dict(kinds)} != {dict(RESEARCH_KINDS)}")
    return n_ans, n_not


def main() -> int:
    dump = "--dump" in sys.argv[1:]
    for name in DOC_NAMES:
        if not (DOCS / name).exists():
            print(f"missing docs/{name}")
            return 1
    if sorted(p.name for p in DOCS.iterdir()) != sorted(DOC_NAMES):
        err(f"docs/ should hold exactly {DOC_NAMES}")
    sections, docx_text, stats = check_docx(DOCS / MANUAL, dump)
    faq_rows, faq_text = check_faq(DOCS / FAQ)
    rn_norm, rn_text = check_rn(DOCS / RN)
    for sec, old, new in SUPERSEDED:
        if sec not in sections:
            err(f"superseded fact: unknown section {sec!r}")
        elif norm(old) not in sections[sec]:
            err(f"superseded fact: {old!r} not in {sec!r}")
        if norm(new) not in rn_norm:
            err(f"superseded fact: {new!r} not in the release notes")
        if norm(old) in rn_norm and norm(new) in sections.get(sec, ""):
            err(f"superseded fact: new value {new!r} already in the manual section {sec!r}")
    all_docs_norm = norm("\n".join((docx_text, faq_text, rn_text))).lower()
    counts = check_questions(sections, faq_rows, rn_norm, all_docs_norm)
    rcounts = check_research(sections, faq_rows, rn_norm, all_docs_norm)
    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"{len(errors)} problem(s)")
        return 1
    print(
        f"OK: docx ~{stats['pages']:.1f} pages, {stats['tables']} tables, {stats['notes']} ※ notes, "
        f"{stats['steps']} step lists; {len(SUPERSEDED)} superseded facts; "
        f"questions {counts[0]}/{counts[1]}/{counts[2]} (English {counts[3]}); "
        f"research {rcounts[0]}/{rcounts[1]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
