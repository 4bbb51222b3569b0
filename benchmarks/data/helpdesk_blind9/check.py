#!/usr/bin/env python3
# ruff: noqa
"""Verify helpdesk_blind9: document shapes and every label. Exits non-zero on any problem.

The document text and the label records come from the generated files; build.py is imported only
for the source text of the manual (to check that it is extracted verbatim), the list of headings,
the superseded facts and the shared text helpers.
"""

import csv
import io
import json
import os
import re
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build as B  # noqa: E402

DOCS = os.path.join(HERE, "docs")
PROBLEMS = []


def bad(msg):
    PROBLEMS.append(msg)


def norm(s):
    return B.norm(s)


def low(s):
    return unicodedata.normalize("NFKC", s).lower()


# Probe words: if a document contained one of these, the question (part) could be answered.
PROBES = {
    "q37": ["カメラ", "ビデオをオン"],
    "q38": ["定期出力", "定期的に出力", "スケジュール", "自動送信", "自動で出力"],
    "q39": ["会議室", "会場の予約", "会場予約"],
    "q40": ["英語", "English", "多言語"],
    "q41": ["事前告知", "予告", "メンテナンスのお知らせ", "事前に通知", "事前にお知らせ"],
    "q42": ["SDカード", "外部ストレージ", "保存先"],
    "q43": ["郵送", "紙の修了証", "印刷して"],
    "q44": ["ランダム", "シャッフル", "出題順", "並び替え", "並べ替え"],
    "q45": ["画質", "圧縮", "解像度を下げ"],
    "q46": ["出欠の修正", "出欠を修正", "確定を取り消", "確定の取消", "確定後"],
    "q47": ["部署ごと", "部署別"],
    "q48": ["Wi-Fi", "WiFi", "無線LAN"],
    "q49": ["資格の有効期限", "有効期限が切れ", "更新通知"],
    "q50": ["録画データ", "自動録画", "録画の保存", "録画は"],
    "q51": ["VTT", "SRT", "字幕ファイル", "字幕の形式"],
    "q52": ["ライセンス", "Zoomの料金"],
    "q53": ["Slack"],
    "q54": ["AI", "自動作成", "自動生成", "人工知能"],
    "q55": ["API", "人事システム", "連携"],
    "q56": ["立替", "立て替", "精算", "直接支払", "直接払"],
    "q57": ["ランキング", "順位"],
    "q58": ["データセンター", "ISMS", "ISO", "認証取得"],
    "q59": ["読み上げ", "スクリーンリーダー", "アクセシビリティ", "視覚"],
    "q60": ["割引", "年払い", "年間一括", "一括払い"],
    "r09": ["費用対効果", "効果測定"],
    "r10": ["プライバシー", "個人情報"],
    "r11": ["SLA", "返金", "稼働率", "保証"],
    "r12": ["他社製品", "競合", "他社"],
}
# Unanswerable questions about something the documents mention only in passing: the topic word
# must occur somewhere.
PASSING = {"q49": "資格", "q50": "録画", "q51": "字幕", "q52": "Zoom", "q56": "受講料"}
# Facts stated only in one kind of place (README "Files" table): the phrase occurs in the manual only
# in table cells (outside 付録A), only in ※ notes, or only in the 付録A table, and in neither the FAQ
# nor the release notes.
ONLY = {
    "table": [
        "直属の部下",
        "翌朝8:00",
        "毎週月曜日 8:00",
        "発行されない",
        "決裁番号",
        "500MB",
        "7日前",
        "3日前",
        "1〜300名",
        "0〜50名",
        "受講者のみ",
        "500GB",
        "2TB",
        "最低利用者数",
        "MB-115",
        "VPN",
        "Internet Explorer",
        "macOS 13",
        "03-6812-4490",
        "受験から2年",
    ],
    "note": [
        "24時間です",
        "制限時間の計測は止まりません",
        "アプリでは利用できません",
        "営業日カレンダー",
        "直近6か月で2回",
        "手動で出席",
        "記名式",
        "差戻しから14日以内",
        "半分程度",
        "自動割当",
        "3日間ダウンロード",
        "72時間",
        "5,000円",
        "前月の20日",
        "第3日曜日",
    ],
    "appendix": [
        "60分",
        "80文字",
        "50件",
        "2,000文字",
        "2,000行",
        "10万行",
        "1端末10本",
        "5階層",
        "20件",
        "10MB",
    ],
}
RN_QUESTIONS = [f"q{i:02d}" for i in range(4, 15)]
FAQ_ONLY = ["q31", "q32", "q33", "q34"]


def is_english(text):
    letters = sum(c.isascii() and c.isalpha() for c in text)
    return letters > 0.5 * len(text.replace(" ", ""))


def main():
    # ---------------- files ----------------
    names = sorted(os.listdir(DOCS))
    if names != sorted([B.PDF_NAME, B.RN_NAME, B.FAQ_NAME]):
        bad(f"docs/ holds {names}")
    pdf_path = os.path.join(DOCS, B.PDF_NAME)
    texts = B.pdf_pages(pdf_path)
    n_pages = len(texts)
    bodies = B.page_bodies(texts)
    stretches = B.section_stretches(bodies)

    # ---------------- PDF shape ----------------
    if not 15 <= n_pages <= 18:
        bad(f"PDF has {n_pages} pages (want 15-18)")
    cover = norm(texts[0])
    for w in (B.PRODUCT_FULL, "操作マニュアル", "第4.2版", "発行日", B.VENDOR, B.CATEGORY):
        if norm(w) not in cover:
            bad(f"cover lacks {w}")
    if norm(B.HEADER_LEFT) in cover or "-1-" in cover:
        bad("cover has a header or footer")
    for i, t in enumerate(texts[1:], start=2):
        if not norm(t).startswith(B.HF_PREFIX + f"-{i}-"):
            bad(f"page {i}: running header/footer missing")
    # headings: each exactly once in the body pages; page of each
    heading_page = {}
    for h in B.HEADINGS:
        found = [pg for pg in range(3, n_pages + 1) if norm(h) in bodies[pg]]
        cnt = sum(bodies[pg].count(norm(h)) for pg in range(3, n_pages + 1))
        if cnt != 1:
            bad(f"heading {h!r} occurs {cnt} times in the body")
        if found:
            heading_page[h] = found[0]
    # 目次
    toc = bodies[2]
    if not toc.startswith("目次"):
        bad("page 2 is not the 目次")
    pos = 0
    for h in B.HEADINGS:
        entry = norm(h) + str(heading_page.get(h, -1))
        j = toc.find(entry, pos)
        if j < 0:
            bad(f"目次 lacks {h!r} with page {heading_page.get(h)} (in order)")
        else:
            pos = j + len(entry)
    toc_rest = toc[len("目次") :]
    expected_toc = "".join(norm(h) + str(heading_page.get(h, -1)) for h in B.HEADINGS)
    if toc_rest != expected_toc:
        bad("目次 holds more than the headings and their pages")
    # numbering
    chap, sec = 0, 0
    for b in B.MANUAL:
        if b["kind"] == "h1":
            m = re.match(r"第(\d+)章 ", b["text"])
            if m:
                chap += 1
                sec = 0
                if int(m.group(1)) != chap:
                    bad(f"chapter numbering at {b['text']}")
            elif not b["text"].startswith("付録A "):
                bad(f"odd chapter heading {b['text']}")
            else:
                chap = "A"
            if b["newpage"] and not bodies.get(heading_page.get(b["text"], 0), "").startswith(
                norm(b["text"])
            ):
                bad(f"{b['text']} does not start a page")
        elif b["kind"] == "h2":
            sec += 1
            if not b["text"].startswith(f"{chap}.{sec} "):
                bad(f"section numbering at {b['text']}")
    n_tables = sum(b["kind"] == "table" for b in B.MANUAL)
    n_notes = sum(b["kind"] == "note" for b in B.MANUAL)
    n_lists = sum(b["kind"] == "step" and b["first"] for b in B.MANUAL)
    if n_tables < 15 or n_notes < 20 or n_lists < 10:
        bad(f"manual has {n_tables} tables, {n_notes} notes, {n_lists} step lists")
    # verbatim extraction, and paragraphs continuing across a page break
    joined = "".join(bodies[pg] for pg in range(3, n_pages + 1))
    crossing = []
    for b in B.MANUAL:
        if b["kind"] == "table":
            for row in b["rows"]:
                for c in row:
                    if norm(c) not in joined:
                        bad(f"table cell not extracted verbatim: {c}")
            continue
        t = norm(b["text"])
        if t not in joined:
            bad(f"text not extracted verbatim: {b['text'][:40]}")
            continue
        if b["kind"] in ("p", "note", "step") and not any(
            t in bodies[pg] for pg in range(3, n_pages + 1)
        ):
            for pg in range(3, n_pages):
                for k in range(1, len(t)):
                    if bodies[pg].endswith(t[:k]) and bodies[pg + 1].startswith(t[k:]):
                        crossing.append((pg, b["text"][:30]))
                        break
    if len(crossing) < 3:
        bad(f"only {len(crossing)} paragraphs continue across a page break: {crossing}")

    # facts that exist only in tables / notes / the appendix
    places = []
    sec = None
    for b in B.MANUAL:
        if b["kind"] in ("h1", "h2"):
            sec = b["text"]
        elif b["kind"] == "table":
            kind = "appendix" if sec.startswith("付録A") else "table"
            places += [(kind, norm(c)) for row in b["rows"] for c in row]
        else:
            places.append(("note" if b["kind"] == "note" else "text", norm(b["text"])))
    others = norm("".join("".join(r) for r in B.FAQ) + B.RELEASE_NOTES)
    for kind, phrases in ONLY.items():
        for ph in phrases:
            kinds = {k for k, t in places if norm(ph) in t}
            if kinds != {kind} or norm(ph) in others:
                bad(f"{ph!r} should exist only in the manual's {kind} (found in {kinds})")

    # ---------------- release notes ----------------
    with open(os.path.join(DOCS, B.RN_NAME), encoding="utf-8") as f:
        rn = f.read()
    versions = re.findall(r"^## Ver\.(\d+)\.(\d+)（(\d{4})年(\d{1,2})月(\d{1,2})日）$", rn, re.M)
    keys = [((int(a), int(b)), (int(y), int(m), int(d))) for a, b, y, m, d in versions]
    if (
        len(keys) < 3
        or keys != sorted(keys, reverse=True)
        or [k[1] for k in keys] != sorted([k[1] for k in keys], reverse=True)
    ):
        bad(f"release notes not newest first: {keys}")
    blocks = {}
    for m in re.finditer(r"^## Ver\.(\d+\.\d+)（", rn, re.M):
        blocks[m.group(1)] = m.start()
    order = sorted(blocks.values()) + [len(rn)]
    rn_block = {v: rn[s : order[order.index(s) + 1]] for v, s in blocks.items()}
    for sec, old, ver, new in B.SUPERSEDED:
        sec_text = "".join(txt for (s, pg), txt in stretches.items() if s == sec)
        if norm(old) not in sec_text:
            bad(f"superseded: old value {old!r} not in manual section {sec!r}")
        if norm(new) not in norm(rn_block.get(ver, "")):
            bad(f"superseded: new value {new!r} not in release notes Ver.{ver}")
    if len(B.SUPERSEDED) < 10:
        bad("fewer than ten superseded facts")
    rn_norm = norm(rn)

    # ---------------- FAQ ----------------
    raw = open(os.path.join(DOCS, B.FAQ_NAME), "rb").read()
    if not raw.startswith(b"\xef\xbb\xbf"):
        bad("faq.csv has no BOM")
    rows = list(csv.reader(io.StringIO(raw[3:].decode("utf-8"))))
    if rows[0] != ["No", "分類", "質問", "回答"]:
        bad(f"faq header {rows[0]}")
    data = rows[1:]
    if len(data) != 30 or [r[0] for r in data] != [str(i) for i in range(1, 31)]:
        bad("faq must have 30 rows numbered 1-30")
    if any(len(r) != 4 or not all(c.strip() for c in r) for r in data):
        bad("faq has an empty or missing cell")
    faq_row = {i: norm("".join(r)) for i, r in enumerate(data, start=1)}

    all_docs = low(" ".join(texts) + "\n" + rn + "\n" + raw[3:].decode("utf-8"))

    def locate(rid, e, needles):
        doc = e["document"]
        for x in needles:
            nx = norm(x)
            if doc == B.PDF_NAME:
                txt = stretches.get((e["section"], e["page"]))
                if txt is None:
                    bad(f"{rid}: section {e['section']!r} is not on page {e['page']}")
                    return
                if nx not in txt:
                    bad(f"{rid}: {x!r} not in {e['section']!r} on page {e['page']}")
            elif doc == B.FAQ_NAME:
                if nx not in faq_row.get(e["row"], ""):
                    bad(f"{rid}: {x!r} not in faq row {e['row']}")
            elif doc == B.RN_NAME:
                if nx not in rn_norm:
                    bad(f"{rid}: {x!r} not in release notes")
            else:
                bad(f"{rid}: unknown document {doc}")

    def key_set(rid, e, extra):
        want = {"document", "page", "row", extra} | (
            {"section"} if e.get("document") == B.PDF_NAME else set()
        )
        if set(e) != want:
            bad(f"{rid}: entry keys {sorted(e)}")
        if e.get("document") == B.PDF_NAME:
            if not isinstance(e.get("page"), int) or e.get("row") is not None:
                bad(f"{rid}: PDF entry needs an int page and row null")
        elif e.get("document") == B.FAQ_NAME:
            if e.get("page") is not None or not isinstance(e.get("row"), int):
                bad(f"{rid}: FAQ entry needs page null and an int row")
        elif e.get("page") is not None or e.get("row") is not None:
            bad(f"{rid}: release-note entry needs page and row null")

    def probes(rid):
        for w in PROBES.get(rid, []):
            if low(w) in all_docs:
                bad(f"{rid}: probe word {w!r} occurs in the documents")
        if rid not in PROBES:
            bad(f"{rid}: no probe words")

    # ---------------- questions ----------------
    qs = [json.loads(l) for l in open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8")]
    if [q["id"] for q in qs] != [f"q{i:02d}" for i in range(1, 61)]:
        bad("question ids must be q01-q60 in order")
    full = [q for q in qs if q["answerable"] and "parts" not in q]
    part = [q for q in qs if q["answerable"] and "parts" in q]
    none = [q for q in qs if not q["answerable"]]
    if (len(full), len(part), len(none)) != (36, 12, 12):
        bad(f"counts {len(full)}/{len(part)}/{len(none)}")
    if [q["id"] for q in full] != [f"q{i:02d}" for i in range(1, 37)] or [
        q["id"] for q in part
    ] != [f"q{i:02d}" for i in range(37, 49)]:
        bad("groups out of order")
    eng = [q["id"] for q in qs if is_english(q["question"])]
    groups = {
        g: [q["id"] for q in grp if q["id"] in eng]
        for g, grp in (("a", full), ("p", part), ("u", none))
    }
    if len(eng) != 8 or not all(groups.values()):
        bad(f"English questions {eng}")
    for q in qs:
        rid = q["id"]
        want = {"id", "question", "answerable", "expected"} | (
            {"unanswerable_parts", "parts"} if q in part else set()
        )
        if set(q) != want:
            bad(f"{rid}: keys {sorted(q)}")
        if q in none:
            if q["expected"]:
                bad(f"{rid}: unanswerable with expected")
            probes(rid)
            continue
        if not q["expected"]:
            bad(f"{rid}: no expected")
        for e in q["expected"]:
            key_set(rid, e, "key_phrases")
            if not 1 <= len(e["key_phrases"]) <= 2:
                bad(f"{rid}: {len(e['key_phrases'])} key phrases")
            locate(rid, e, e["key_phrases"])
        if q in part:
            if q["parts"] != 1 + len(q["unanswerable_parts"]) or not q["unanswerable_parts"]:
                bad(f"{rid}: parts")
            probes(rid)
        docs = {e["document"] for e in q["expected"]}
        if rid in RN_QUESTIONS and not {B.PDF_NAME, B.RN_NAME} <= docs:
            bad(f"{rid}: release-note question must label the manual and the release notes")
        if rid in FAQ_ONLY and docs != {B.FAQ_NAME}:
            bad(f"{rid}: FAQ-only question labels {docs}")
    for rid, topic in PASSING.items():
        if low(topic) not in all_docs:
            bad(f"{rid}: passing-mention topic {topic!r} does not occur")

    # ---------------- research ----------------
    rs = [
        json.loads(l)
        for l in open(os.path.join(HERE, "research_questions.jsonl"), encoding="utf-8")
    ]
    if [r["id"] for r in rs] != [f"r{i:02d}" for i in range(1, 13)]:
        bad("research ids must be r01-r12 in order")
    kinds = sorted(r.get("kind") for r in rs if r["answerable"])
    if kinds != sorted(
        ["procedure", "procedure", "deadline", "deadline", "list", "list", "comparison", "fact"]
    ):
        bad(f"research kinds {kinds}")
    if [r["id"] for r in rs if not r["answerable"]] != ["r09", "r10", "r11", "r12"]:
        bad("research r09-r12 must be the not-answerable ones")
    for r in rs:
        rid = r["id"]
        if (
            not r["question"].endswith("資料から整理してください。")
            and "資料から" not in r["question"]
        ):
            bad(f"{rid}: not a 資料から整理 request")
        if r["answerable"]:
            if set(r) != {"id", "question", "answerable", "kind", "support"}:
                bad(f"{rid}: keys {sorted(r)}")
            if not 2 <= len(r["support"]) <= 4:
                bad(f"{rid}: {len(r['support'])} support passages")
            for e in r["support"]:
                key_set(rid, e, "contains")
                locate(rid, e, [e["contains"]])
        else:
            if set(r) != {"id", "question", "answerable", "support"} or r["support"]:
                bad(f"{rid}: not-answerable shape")
            probes(rid)

    if PROBLEMS:
        print(f"check.py: {len(PROBLEMS)} problem(s)")
        for p in PROBLEMS:
            print("  -", p)
        sys.exit(1)
    print(
        f"check.py: OK ({n_pages} PDF pages, {len(B.HEADINGS)} headings, {n_tables} tables, {n_notes} notes, "
        f"{n_lists} step lists, {len(crossing)} paragraphs across page breaks: {crossing})"
    )


if __name__ == "__main__":
    main()
