"""Verify the labels of the helpdesk_blind4 evaluation set.

Checks that the documents in ``docs/`` have the intended shape and that every
``key_phrases`` string in ``questions.jsonl`` and every ``contains`` fragment in
``research_questions.jsonl`` occurs in the labelled document (or FAQ row) after
NFKC normalisation and removal of all whitespace.

Run from the repository root:
    .venv/bin/python benchmarks/data/helpdesk_blind4/check.py
"""
# ruff: noqa: E501, C901

from __future__ import annotations

import csv
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

from docx import Document

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"

MANUAL_NAME = "kaishunavi_manual_v5.0.docx"
RELEASE_NOTES_NAME = "kaishunavi_release_notes.md"
FAQ_NAME = "kaishunavi_faq.csv"
FAQ_HEADER = ["ID", "カテゴリ", "質問", "回答"]

EXPECTED_COUNTS = {"answerable": 36, "partial": 12, "unanswerable": 12}
EXPECTED_ENGLISH = 8
RESEARCH_KINDS = {"procedure", "deadline", "list", "comparison", "fact"}

_WS = re.compile(r"\s+")
_JA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def norm(text: str) -> str:
    return _WS.sub("", unicodedata.normalize("NFKC", text))


def load_docx(path: Path) -> tuple[str, list]:
    doc = Document(str(path))
    parts = [p.text for p in doc.paragraphs]
    for table in doc.tables:
        for row in table.rows:
            for cell in row.cells:
                parts.append(cell.text)
    return "\n".join(parts), doc


def load_faq(path: Path) -> tuple[list[list[str]], bool]:
    raw = path.read_bytes()
    has_bom = raw.startswith(b"\xef\xbb\xbf")
    with path.open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    return rows, has_bom


def main() -> int:
    errors: list[str] = []

    # --- documents -------------------------------------------------------
    manual_text, doc = load_docx(DOCS / MANUAL_NAME)
    notes_text = (DOCS / RELEASE_NOTES_NAME).read_text(encoding="utf-8")
    faq_rows, has_bom = load_faq(DOCS / FAQ_NAME)

    if not has_bom:
        errors.append("FAQ CSV has no UTF-8 BOM")
    if faq_rows[0] != FAQ_HEADER:
        errors.append(f"FAQ header is {faq_rows[0]!r}")
    faq_data = faq_rows[1:]
    if not 25 <= len(faq_data) <= 35:
        errors.append(f"FAQ has {len(faq_data)} data rows (want 25-35)")

    h1 = [p.text for p in doc.paragraphs if p.style.name == "Heading 1"]
    h2 = [p.text for p in doc.paragraphs if p.style.name == "Heading 2"]
    if not 10 <= len(h1) <= 12:
        errors.append(f"manual has {len(h1)} chapters (want 10-12)")
    manual_chars = len(norm(manual_text))
    if not 9000 <= manual_chars <= 12000:
        errors.append(f"manual has {manual_chars} characters (want 9,000-12,000)")
    versions = re.findall(r"^## (Ver\.\d+\.\d+)", notes_text, flags=re.M)
    if not 4 <= len(versions) <= 5:
        errors.append(f"release notes have {len(versions)} versions (want 4-5)")

    texts = {
        MANUAL_NAME: norm(manual_text),
        RELEASE_NOTES_NAME: norm(notes_text),
    }
    faq_texts = [norm(" ".join(row)) for row in faq_data]

    def locate(where: str, document: str, page, row) -> str | None:
        if page is not None:
            errors.append(f"{where}: page must be null, got {page!r}")
        if document == FAQ_NAME:
            if not isinstance(row, int) or not 1 <= row <= len(faq_data):
                errors.append(f"{where}: bad FAQ row {row!r}")
                return None
            return faq_texts[row - 1]
        if document not in texts:
            errors.append(f"{where}: unknown document {document!r}")
            return None
        if row is not None:
            errors.append(f"{where}: row must be null for {document}")
        return texts[document]

    # --- questions.jsonl --------------------------------------------------
    questions = [
        json.loads(line)
        for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    kinds: Counter[str] = Counter()
    ids = [q["id"] for q in questions]
    for qid, n in Counter(ids).items():
        if n > 1:
            errors.append(f"duplicate id {qid}")
    english = 0
    for q in questions:
        qid = q["id"]
        if not _JA.search(q["question"]):
            english += 1
        if not q["answerable"]:
            kinds["unanswerable"] += 1
            if q["expected"] != []:
                errors.append(f"{qid}: unanswerable question must have expected []")
            if "unanswerable_parts" in q:
                errors.append(f"{qid}: unanswerable question has unanswerable_parts")
            continue
        if "unanswerable_parts" in q:
            kinds["partial"] += 1
            parts = q.get("parts")
            up = q["unanswerable_parts"]
            if not isinstance(up, list) or not up or not all(isinstance(s, str) and s for s in up):
                errors.append(f"{qid}: unanswerable_parts must be a non-empty list of strings")
            if not isinstance(parts, int) or parts < 2 or parts <= len(up):
                errors.append(f"{qid}: parts={parts!r} inconsistent with unanswerable_parts")
        else:
            kinds["answerable"] += 1
            if "parts" in q:
                errors.append(f"{qid}: answerable question has parts")
        if not q["expected"]:
            errors.append(f"{qid}: answerable question without expected passages")
        for i, exp in enumerate(q["expected"]):
            where = f"{qid}.expected[{i}]"
            if set(exp) != {"document", "page", "row", "key_phrases"}:
                errors.append(f"{where}: keys {sorted(exp)}")
            text = locate(where, exp["document"], exp["page"], exp["row"])
            phrases = exp["key_phrases"]
            if not 1 <= len(phrases) <= 2:
                errors.append(f"{where}: {len(phrases)} key phrases (want 1-2)")
            if text is None:
                continue
            for phrase in phrases:
                if norm(phrase) not in text:
                    errors.append(
                        f"{where}: key phrase {phrase!r} not found in {exp['document']} row={exp['row']}"
                    )
    for kind, want in EXPECTED_COUNTS.items():
        if kinds[kind] != want:
            errors.append(f"{kinds[kind]} {kind} questions (want {want})")
    if english != EXPECTED_ENGLISH:
        errors.append(f"{english} English questions (want {EXPECTED_ENGLISH})")

    # --- research_questions.jsonl ----------------------------------------
    research = [
        json.loads(line)
        for line in (HERE / "research_questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    r_kinds: Counter[str] = Counter()
    for r in research:
        rid = r["id"]
        if r["answerable"]:
            r_kinds["answerable"] += 1
            if r.get("kind") not in RESEARCH_KINDS:
                errors.append(f"{rid}: bad kind {r.get('kind')!r}")
            if not 2 <= len(r["support"]) <= 4:
                errors.append(f"{rid}: {len(r['support'])} support passages (want 2-4)")
            for i, sup in enumerate(r["support"]):
                where = f"{rid}.support[{i}]"
                text = locate(where, sup["document"], sup["page"], sup["row"])
                if text is not None and norm(sup["contains"]) not in text:
                    errors.append(
                        f"{where}: fragment {sup['contains']!r} not found in {sup['document']} row={sup['row']}"
                    )
        else:
            r_kinds["unanswerable"] += 1
            if r["support"] != []:
                errors.append(f"{rid}: unanswerable research question must have support []")
    if len(research) != 12 or r_kinds["answerable"] != 8 or r_kinds["unanswerable"] != 4:
        errors.append(f"research questions: {len(research)} total, {dict(r_kinds)}")

    # --- report -----------------------------------------------------------
    n_phrases = sum(len(e["key_phrases"]) for q in questions for e in q["expected"])
    n_support = sum(len(r["support"]) for r in research)
    print(
        f"manual: {len(h1)} chapters, {len(h2)} sections, {len(doc.tables)} tables, {manual_chars} characters"
    )
    print(f"release notes: {len(versions)} versions ({', '.join(versions)})")
    print(f"faq: {len(faq_data)} rows, BOM={'yes' if has_bom else 'no'}")
    print(
        f"questions: {len(questions)} ({kinds['answerable']} answerable, {kinds['partial']} partial, {kinds['unanswerable']} unanswerable; {english} in English), {n_phrases} key phrases checked"
    )
    print(
        f"research questions: {len(research)} ({r_kinds['answerable']} answerable, {r_kinds['unanswerable']} unanswerable), {n_support} support fragments checked"
    )
    if errors:
        print(f"FAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        return 1
    print("OK: all labels verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
