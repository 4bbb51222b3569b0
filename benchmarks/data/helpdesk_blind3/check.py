"""Verify the documents and labels of the helpdesk_blind3 evaluation set.

Text is extracted the way a consumer of the set would see it:

* PDF       pypdf, page by page (page 1 = cover)
* FAQ CSV   decoded as CP932, one passage per data row (row n = 番号 n)
* Markdown  the whole file as is

Both the document text and every label string are NFKC-normalised and
stripped of all whitespace before comparison.  Every ``key_phrases`` entry of
``questions.jsonl`` and every ``contains`` entry of
``research_questions.jsonl`` must occur in the labelled page / row / file.

Run from the repository root::

    .venv/bin/python benchmarks/data/helpdesk_blind3/check.py
"""
# ruff: noqa: E501, C901

from __future__ import annotations

import csv
import io
import json
import re
import sys
import unicodedata
from pathlib import Path

from pypdf import PdfReader

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"
QUESTIONS = HERE / "questions.jsonl"
RESEARCH = HERE / "research_questions.jsonl"

FAQ_HEADER = ["番号", "カテゴリ", "質問", "回答"]
KINDS = {"procedure", "deadline", "list", "comparison", "fact"}
EXPECTED_COUNTS = {"answerable": 36, "partial": 12, "unanswerable": 12}
EXPECTED_ENGLISH = 8

# Topics that the unanswerable questions (and uncovered parts) rely on the
# documents NOT covering.  If one of these ever appears in a document, the
# corresponding labels must be revisited.
ABSENT_TERMS = [
    "減損",
    "API",
    "リース資産",
    "リース契約",
    "圧縮記帳",
    "IFRS",
    "電子帳簿",
    "タイムスタンプ",
    "ISMS",
    "27001",
    "外貨",
    "ドル",
    "特別償却",
    "250%",
    "資本的支出",
    "英語",
    "割引",
    "返金",
    "品番",
    "追加料金",
    "引き継",
    "自動実行",
    "保存期間",
]

_JA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def norm(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def load_documents() -> dict[str, dict]:
    docs: dict[str, dict] = {}
    for path in sorted(DOCS.iterdir()):
        if path.suffix == ".pdf":
            reader = PdfReader(str(path))
            raw = [page.extract_text() or "" for page in reader.pages]
            docs[path.name] = {"kind": "pdf", "raw": raw, "pages": [norm(t) for t in raw]}
        elif path.suffix == ".csv":
            text = path.read_bytes().decode("cp932")
            rows = list(csv.reader(io.StringIO(text, newline="")))
            docs[path.name] = {
                "kind": "csv",
                "header": rows[0],
                "data": rows[1:],
                "rows": [norm("".join(r)) for r in rows[1:]],
            }
        elif path.suffix == ".md":
            text = path.read_text(encoding="utf-8")
            docs[path.name] = {"kind": "md", "raw": text, "text": norm(text)}
    return docs


def passage(docs: dict[str, dict], ref: dict, where: str, errors: list[str]) -> str | None:
    name = ref.get("document")
    page = ref.get("page")
    row = ref.get("row")
    doc = docs.get(name)
    if doc is None:
        errors.append(f"{where}: unknown document {name!r}")
        return None
    if doc["kind"] == "pdf":
        if row is not None:
            errors.append(f"{where}: row must be null for a PDF")
        if not isinstance(page, int) or not 1 <= page <= len(doc["pages"]):
            errors.append(f"{where}: bad page {page!r} for {name}")
            return None
        return doc["pages"][page - 1]
    if page is not None:
        errors.append(f"{where}: page must be null for {name}")
    if doc["kind"] == "csv":
        if not isinstance(row, int) or not 1 <= row <= len(doc["rows"]):
            errors.append(f"{where}: bad row {row!r} for {name}")
            return None
        return doc["rows"][row - 1]
    if row is not None:
        errors.append(f"{where}: row must be null for {name}")
    return doc["text"]


def check_documents(docs: dict[str, dict], errors: list[str]) -> list[str]:
    info = []
    pdfs = [n for n, d in docs.items() if d["kind"] == "pdf"]
    csvs = [n for n, d in docs.items() if d["kind"] == "csv"]
    mds = [n for n, d in docs.items() if d["kind"] == "md"]
    if len(pdfs) != 1 or len(csvs) != 1 or len(mds) != 1:
        errors.append(f"expected one PDF, one CSV and one Markdown file, got {sorted(docs)}")
    for name in pdfs:
        d = docs[name]
        n = len(d["pages"])
        if not 12 <= n <= 16:
            errors.append(f"{name}: {n} pages, expected 12-16")
        body = "".join(d["pages"])
        ja = len(_JA.findall(body))
        for i, page in enumerate(d["pages"], 1):
            if f"-{i}-" not in page:
                errors.append(f"{name}: page {i} lacks its footer page number")
        info.append(f"{name}: {n} pages, {len(body)} non-space chars, {ja} kana/kanji")
    for name in csvs:
        d = docs[name]
        if d["header"] != FAQ_HEADER:
            errors.append(f"{name}: header {d['header']!r}")
        for i, r in enumerate(d["data"], 1):
            if len(r) != 4 or r[0] != str(i):
                errors.append(
                    f"{name}: data row {i} has 番号 {r[0] if r else None!r} / {len(r)} fields"
                )
        if not 25 <= len(d["data"]) <= 35:
            errors.append(f"{name}: {len(d['data'])} rows, expected 25-35")
        info.append(f"{name}: {len(d['data'])} rows (cp932)")
    for name in mds:
        versions = re.findall(r"^## (v\d+\.\d+\.\d+)", docs[name]["raw"], flags=re.M)
        if not 4 <= len(versions) <= 5:
            errors.append(f"{name}: {len(versions)} versions, expected 4-5")
        info.append(f"{name}: versions {', '.join(versions)}")
    everything = "".join(
        "".join(d.get("pages", [])) + "".join(d.get("rows", [])) + d.get("text", "")
        for d in docs.values()
    )
    for term in ABSENT_TERMS:
        if norm(term) in everything:
            errors.append(f"documents mention {term!r}, which unanswerable labels assume absent")
    return info


def read_jsonl(path: Path, errors: list[str]) -> list[dict]:
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            errors.append(f"{path.name}:{n}: {exc}")
    return items


def check_questions(docs: dict[str, dict], errors: list[str]) -> tuple[dict[str, int], int, int]:
    items = read_jsonl(QUESTIONS, errors)
    counts = {"answerable": 0, "partial": 0, "unanswerable": 0}
    english = 0
    phrases = 0
    seen: set[str] = set()
    for q in items:
        qid = q.get("id", "?")
        if qid in seen:
            errors.append(f"{qid}: duplicate id")
        seen.add(qid)
        if not isinstance(q.get("question"), str) or not q["question"].strip():
            errors.append(f"{qid}: empty question")
            continue
        if not _JA.search(q["question"]):
            english += 1
        expected = q.get("expected")
        if not isinstance(expected, list):
            errors.append(f"{qid}: expected must be a list")
            continue
        if q.get("answerable") is False:
            counts["unanswerable"] += 1
            if expected:
                errors.append(f"{qid}: unanswerable question with expected passages")
            if "unanswerable_parts" in q:
                errors.append(f"{qid}: unanswerable question with unanswerable_parts")
            continue
        if q.get("answerable") is not True:
            errors.append(f"{qid}: answerable must be true or false")
            continue
        if "unanswerable_parts" in q:
            counts["partial"] += 1
            parts = q.get("parts")
            up = q["unanswerable_parts"]
            if not isinstance(up, list) or not up or not all(isinstance(s, str) and s for s in up):
                errors.append(f"{qid}: unanswerable_parts must be a non-empty list of strings")
            elif not isinstance(parts, int) or parts < 2 or parts <= len(up):
                errors.append(f"{qid}: parts={parts!r} inconsistent with {len(up)} uncovered asks")
        else:
            counts["answerable"] += 1
            if "parts" in q:
                errors.append(f"{qid}: parts given without unanswerable_parts")
        if not expected:
            errors.append(f"{qid}: answerable question without expected passages")
        for k, ref in enumerate(expected):
            where = f"{qid} expected[{k}]"
            text = passage(docs, ref, where, errors)
            kps = ref.get("key_phrases")
            if not isinstance(kps, list) or not 1 <= len(kps) <= 2:
                errors.append(f"{where}: key_phrases must hold 1-2 strings")
                continue
            if text is None:
                continue
            for kp in kps:
                phrases += 1
                if not isinstance(kp, str) or not norm(kp):
                    errors.append(f"{where}: empty key phrase")
                elif norm(kp) not in text:
                    errors.append(f"{where}: key phrase {kp!r} not found")
    for kind, n in EXPECTED_COUNTS.items():
        if counts[kind] != n:
            errors.append(f"questions: {counts[kind]} {kind}, expected {n}")
    if english != EXPECTED_ENGLISH:
        errors.append(f"questions: {english} English questions, expected {EXPECTED_ENGLISH}")
    ids = [q.get("id") for q in items]
    if ids != [f"d{i:02d}" for i in range(1, len(items) + 1)]:
        errors.append("questions: ids are not d01..dNN in order")
    return counts, english, phrases


def check_research(docs: dict[str, dict], errors: list[str]) -> tuple[int, int, int]:
    items = read_jsonl(RESEARCH, errors)
    answerable = unanswerable = fragments = 0
    for q in items:
        qid = q.get("id", "?")
        support = q.get("support")
        kind = q.get("kind")
        if kind is not None and kind not in KINDS:
            errors.append(f"{qid}: unknown kind {kind!r}")
        if not isinstance(support, list):
            errors.append(f"{qid}: support must be a list")
            continue
        if q.get("answerable") is True:
            answerable += 1
            if kind not in KINDS:
                errors.append(f"{qid}: answerable research question needs a kind")
            if not 2 <= len(support) <= 4:
                errors.append(f"{qid}: {len(support)} support entries, expected 2-4")
            for k, ref in enumerate(support):
                where = f"{qid} support[{k}]"
                text = passage(docs, ref, where, errors)
                frag = ref.get("contains")
                fragments += 1
                if not isinstance(frag, str) or not norm(frag):
                    errors.append(f"{where}: empty contains")
                elif text is not None and norm(frag) not in text:
                    errors.append(f"{where}: fragment {frag!r} not found")
        elif q.get("answerable") is False:
            unanswerable += 1
            if support:
                errors.append(f"{qid}: unanswerable research question with support")
        else:
            errors.append(f"{qid}: answerable must be true or false")
    if len(items) != 12 or answerable != 8 or unanswerable != 4:
        errors.append(
            f"research: {len(items)} items, {answerable} answerable, {unanswerable} not; expected 12/8/4"
        )
    return answerable, unanswerable, fragments


def main() -> int:
    errors: list[str] = []
    docs = load_documents()
    info = check_documents(docs, errors)
    counts, english, phrases = check_questions(docs, errors)
    r_ok, r_no, fragments = check_research(docs, errors)
    for line in info:
        print(line)
    print(
        f"questions.jsonl: {sum(counts.values())} questions "
        f"({counts['answerable']} answerable, {counts['partial']} partly answerable, "
        f"{counts['unanswerable']} unanswerable; {english} in English), "
        f"{phrases} key phrases checked"
    )
    print(
        f"research_questions.jsonl: {r_ok + r_no} requests ({r_ok} answerable, {r_no} not), "
        f"{fragments} support fragments checked"
    )
    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"FAILED: {len(errors)} problem(s)")
        return 1
    print("OK: all labels verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())
