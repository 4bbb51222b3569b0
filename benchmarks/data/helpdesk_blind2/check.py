"""Label checker for helpdesk_blind2.

Extracts the text of the three documents (python-docx paragraphs + table
cells, openpyxl cells, the Markdown file as is) and verifies that
  * questions.jsonl has the required shape and counts,
  * every key phrase occurs in the cited document (for the FAQ: in the cited
    row's 質問+回答) after NFKC normalisation and removal of all whitespace,
  * research_questions.jsonl has the required shape, and every "contains"
    fragment occurs where it is labelled,
  * words that would answer the unanswerable questions do not occur in any
    document.

Run:  .venv/bin/python benchmarks/data/helpdesk_blind2/check.py
"""

# ruff: noqa: E501, C901, E741  (blind-set data: document text kept as written)

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path

from docx import Document
from openpyxl import load_workbook

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
MANUAL_FILE = "harumo_kintai_manual.docx"
RELEASE_FILE = "harumo_kintai_release_notes.md"
FAQ_FILE = "harumo_kintai_faq.xlsx"

# Terms whose presence in the documents would make an unanswerable question
# (or an unanswerable part) answerable.  Checked after normalisation.
ABSENT_TERMS = [
    "シフト",
    "iPad",
    "タブレット",
    "Teams",
    "SSO",
    "シングルサインオン",
    "割増",
    "障害情報",
    "ステータス",
    "レート",
    "リクエスト数",
    "産休",
    "育休",
    "産前",
    "育児休業",
    "斉一",
    "インポート",
    "取り込",
    "取込",
    "移行",
    "Wi-Fi",
    "WiFi",
    "アクセスポイント",
    "買い取",
    "買取",
    "サーバー",
    "データセンター",
    "国内",
    "交通費",
    "非営利",
    "NPO",
    "割引",
    "Google Drive",
    "Googleドライブ",
    "推奨機種",
    "型番",
    "ISMS",
    "プライバシーマーク",
    "Pマーク",
    "スケジュール",
    "定期出力",
    "自動出力",
    "人数",
    "何人",
]


def norm(s: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", s))


def manual_text() -> str:
    doc = Document(DOCS / MANUAL_FILE)
    parts = [p.text for p in doc.paragraphs]
    for t in doc.tables:
        for row in t.rows:
            for cell in row.cells:
                parts.append(cell.text)
    return "\n".join(parts)


def release_text() -> str:
    return (DOCS / RELEASE_FILE).read_text(encoding="utf-8")


def faq_rows() -> dict[int, str]:
    wb = load_workbook(DOCS / FAQ_FILE, read_only=True)
    ws = wb.worksheets[0]
    rows = list(ws.iter_rows(values_only=True))
    assert [str(c) for c in rows[0]] == ["No", "分類", "質問", "回答"], rows[0]
    out = {}
    for i, r in enumerate(rows[1:], 1):
        assert r[0] == i, f"FAQ No column {r[0]!r} != data row {i}"
        out[i] = f"{r[2]}\n{r[3]}"
    return out


def is_english(q: str) -> bool:
    return not re.search(r"[\u3040-\u30ff\u3400-\u9fff]", q)


def main() -> int:
    errors: list[str] = []
    man = manual_text()
    rn = release_text()
    faq = faq_rows()
    texts = {MANUAL_FILE: norm(man), RELEASE_FILE: norm(rn)}
    faq_n = {k: norm(v) for k, v in faq.items()}

    def where(doc: str, row):
        if doc == FAQ_FILE:
            if row not in faq_n:
                return None
            return faq_n[row]
        if row is not None:
            errors.append(f"{doc}: row must be null")
        return texts.get(doc)

    # ---- questions.jsonl -------------------------------------------------
    qs = [
        json.loads(l)
        for l in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if l.strip()
    ]
    ids = [q["id"] for q in qs]
    if len(set(ids)) != len(ids):
        errors.append("duplicate question ids")
    counts = {"answerable": 0, "partial": 0, "unanswerable": 0}
    n_phr = 0
    for q in qs:
        qid = q["id"]
        if not q.get("question"):
            errors.append(f"{qid}: empty question")
        if q["answerable"] is False:
            counts["unanswerable"] += 1
            if q["expected"] != [] or "unanswerable_parts" in q:
                errors.append(f"{qid}: unanswerable must have expected=[]")
            continue
        if "unanswerable_parts" in q:
            counts["partial"] += 1
            if not q["unanswerable_parts"] or not isinstance(q.get("parts"), int) or q["parts"] < 2:
                errors.append(f"{qid}: partial needs unanswerable_parts and parts>=2")
            if q["parts"] <= len(q["unanswerable_parts"]):
                errors.append(f"{qid}: parts must exceed the number of unanswerable parts")
            for up in q["unanswerable_parts"]:
                if norm(up) not in norm(q["question"]):
                    errors.append(f"{qid}: unanswerable part not in the user's words: {up}")
        else:
            counts["answerable"] += 1
        if not q["expected"]:
            errors.append(f"{qid}: answerable without expected passages")
        for e in q["expected"]:
            doc, row = e["document"], e["row"]
            if e.get("page", "missing") is not None:
                errors.append(f"{qid}: page must be null")
            if doc == FAQ_FILE and not isinstance(row, int):
                errors.append(f"{qid}: FAQ passage needs an integer row")
            if not 1 <= len(e["key_phrases"]) <= 2:
                errors.append(f"{qid}: 1-2 key phrases per passage")
            hay = where(doc, row)
            if hay is None:
                errors.append(f"{qid}: unknown document/row {doc} {row}")
                continue
            for kp in e["key_phrases"]:
                n_phr += 1
                if norm(kp) not in hay:
                    errors.append(f"{qid}: key phrase {kp!r} not found in {doc} row={row}")
    n_en = sum(is_english(q["question"]) for q in qs)
    expected_counts = {"answerable": 36, "partial": 12, "unanswerable": 12}
    if counts != expected_counts:
        errors.append(f"question counts {counts} != {expected_counts}")
    if n_en != 8:
        errors.append(f"{n_en} English questions, expected 8")

    # ---- research_questions.jsonl ---------------------------------------
    rs = [
        json.loads(l)
        for l in (HERE / "research_questions.jsonl").read_text(encoding="utf-8").splitlines()
        if l.strip()
    ]
    r_ans = r_un = n_sup = 0
    kinds = {"procedure", "deadline", "list", "comparison", "fact"}
    for r in rs:
        rid = r["id"]
        if r["answerable"]:
            r_ans += 1
            if r.get("kind") not in kinds:
                errors.append(f"{rid}: bad kind {r.get('kind')!r}")
            if not 2 <= len(r["support"]) <= 4:
                errors.append(f"{rid}: 2-4 support passages")
            for s in r["support"]:
                if s.get("page", "missing") is not None:
                    errors.append(f"{rid}: page must be null")
                hay = where(s["document"], s["row"])
                n_sup += 1
                if hay is None or norm(s["contains"]) not in hay:
                    errors.append(
                        f"{rid}: support {s['contains']!r} not found in {s['document']} row={s['row']}"
                    )
        else:
            r_un += 1
            if r["support"] != []:
                errors.append(f"{rid}: unanswerable research must have support=[]")
    if (r_ans, r_un) != (8, 4):
        errors.append(f"research counts answerable={r_ans} unanswerable={r_un}, expected 8/4")

    # ---- terms that must stay absent ------------------------------------
    all_docs = texts[MANUAL_FILE] + texts[RELEASE_FILE] + "".join(faq_n.values())
    for t in ABSENT_TERMS:
        if norm(t).lower() in all_docs.lower():
            errors.append(f"term {t!r} occurs in the documents")

    # ---- summary ----------------------------------------------------------
    jp = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e\u3000-\u303f]", man))
    n_ch = len({l for l in man.splitlines() if re.match(r"^第\d+章", l)})
    print(f"manual: {len(norm(man))} non-whitespace chars ({jp} Japanese chars), {n_ch} chapters")
    print(f"release notes: {rn.count(chr(10) + '## Ver.')} versions; FAQ: {len(faq)} rows")
    print(
        f"questions: {len(qs)} ({counts['answerable']} answerable, {counts['partial']} partly answerable, "
        f"{counts['unanswerable']} unanswerable, {n_en} in English); {n_phr} key phrases checked"
    )
    print(
        f"research questions: {len(rs)} ({r_ans} answerable, {r_un} not answerable); {n_sup} support fragments checked"
    )
    print(f"absent-term check: {len(ABSENT_TERMS)} terms")
    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        for e in errors:
            print("  -", e)
        return 1
    print("OK: all labels verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
