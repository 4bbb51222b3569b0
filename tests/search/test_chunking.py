"""chunk_document / chunk_faq on generated Markdown, PDF, DOCX, XLSX, TXT and CSV files."""

from __future__ import annotations

import io
import itertools

import pytest
from openpyxl import Workbook
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfgen import canvas

from keiri_agent.documents import DocumentError
from keiri_agent.errors import UserInputError
from keiri_agent.search.chunking import (
    chunk_document,
    chunk_faq,
    detect_heading,
    split_text,
)

FONT = "HeiseiKakuGo-W5"
pdfmetrics.registerFont(UnicodeCIDFont(FONT))


def make_pdf(pages: list[list[str]]) -> bytes:
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    for lines in pages:
        pdf.setFont(FONT, 11)
        for i, line in enumerate(lines):
            pdf.drawString(60, 780 - 18 * i, line)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def make_docx(paragraphs: list[tuple[str | None, str]]) -> bytes:
    from docx import Document

    document = Document()
    for style, text in paragraphs:
        if style and style.startswith("Heading"):
            document.add_heading(text, level=int(style[-1]))
        else:
            document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


MARKDOWN = """# 1. はじめに
本書はXYZシステムの説明です。

# 2. ログイン
## 2.1 パスワード
パスワードは12文字以上にしてください。有効期限は90日です。

```
# これは見出しではない
login --user xyz
```

## 2.2 ロック
5回続けて間違えるとロックされます。
"""


# --- splitting --------------------------------------------------------------------------


def test_split_prefers_sentence_ends_and_overlaps() -> None:
    text = "".join(f"これは{i:02d}番目の文です。" for i in range(40))  # 11 chars each
    pieces = split_text(text, size=100, overlap=30)
    assert all(len(piece) <= 100 for piece in pieces)
    assert all(piece.endswith("。") for piece in pieces)
    for before, after in itertools.pairwise(pieces):
        assert after[:11] in before  # the next piece starts with the previous one's tail
    assert "".join(pieces).count("39番目") >= 1


def test_split_cuts_a_sentence_longer_than_size() -> None:
    pieces = split_text("あ" * 250, size=100, overlap=20)
    assert [len(piece) for piece in pieces] == [100, 100, 90]
    assert pieces[1].startswith("あ" * 20)


def test_split_without_overlap_loses_nothing() -> None:
    text = "".join(f"文{i}です。" for i in range(100))
    assert "".join(split_text(text, size=50, overlap=0)) == text


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1)])
def test_invalid_sizes(size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        split_text("本文。", size=size, overlap=overlap)


# --- headings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2.1 パスワードの条件", (2, "2.1 パスワードの条件")),
        ("2.1パスワードの条件", (2, "2.1 パスワードの条件")),
        ("3. 申請", (1, "3. 申請")),
        ("第2章 経費精算", (1, "第2章 経費精算")),
        ("第三節 旅費", (2, "第三節 旅費")),
        ("90日以内に変更してください。", None),
        ("2024年4月1日", None),
        ("3回目の申請", None),
        ("12000", None),
        ("1.5\t2.5", None),
        ("", None),
    ],
)
def test_detect_heading(line: str, expected: tuple[int, str] | None) -> None:
    assert detect_heading(line) == expected


# --- Markdown ---------------------------------------------------------------------------


def test_markdown_heading_paths_and_code_blocks() -> None:
    chunks = chunk_document("manual.md", MARKDOWN.encode())
    headings = [chunk.source.heading for chunk in chunks]
    assert headings == ["1. はじめに", "2. ログイン > 2.1 パスワード", "2. ログイン > 2.2 ロック"]
    assert [chunk.id for chunk in chunks] == ["manual.md#0", "manual.md#1", "manual.md#2"]
    password = chunks[1].text
    assert "```\n# これは見出しではない\nlogin --user xyz\n```" in password
    assert all(
        chunk.source.page is None and chunk.source.document == "manual.md" for chunk in chunks
    )


def test_markdown_code_block_is_not_split() -> None:
    code = "```\n" + "\n".join(f"line {i}" for i in range(20)) + "\n```\n"
    text = "# A\n" + "前置きの文です。" * 10 + "\n" + code + "後ろの文です。" * 10
    chunks = chunk_document("code.md", text.encode(), size=200, overlap=20)
    holders = [chunk for chunk in chunks if "line 0" in chunk.text]
    assert len(holders) == 1
    assert "line 19\n```" in holders[0].text


def test_markdown_is_nfkc_normalised() -> None:
    chunks = chunk_document("w.md", "# ＸＹＺ\n９０日ﾊﾟｽﾜｰﾄﾞ".encode())
    assert chunks[0].source.heading == "XYZ"
    assert "90日パスワード" in chunks[0].text


def test_long_markdown_section_gets_several_chunks_with_the_same_heading() -> None:
    body = "".join(f"手順{i}を実行します。" for i in range(200))
    chunks = chunk_document("long.md", f"# 手順\n{body}".encode(), size=300, overlap=50)
    assert len(chunks) > 5
    assert {chunk.source.heading for chunk in chunks} == {"手順"}
    assert all(len(chunk.text) <= 300 for chunk in chunks)


# --- PDF, DOCX, XLSX, TXT ---------------------------------------------------------------


def test_pdf_pages_and_numbered_headings() -> None:
    data = make_pdf(
        [
            ["2. ログイン", "2.1 パスワードの条件", "パスワードは12文字以上です。"],
            ["2.2 ロック", "1. 画面を開きます。", "5回続けて間違えるとロックされます。"],
            ["第3章 経費精算", "申請は翌月10日までに行います。"],
        ]
    )
    chunks = chunk_document("manual.pdf", data)
    found = {(chunk.source.page, chunk.source.heading) for chunk in chunks}
    assert (1, "2. ログイン > 2.1 パスワードの条件") in found
    assert (2, "2. ログイン > 2.2 ロック") in found
    assert (3, "第3章 経費精算") in found
    lock = next(chunk for chunk in chunks if chunk.source.heading == "2. ログイン > 2.2 ロック")
    assert "1. 画面を開きます。" in lock.text  # a list item is not a heading
    assert "5回続けて間違える" in lock.text


@pytest.mark.parametrize(
    "contents",
    [
        ["1. 概要", "2. 申込み", "3. 解約"],  # a run of chapter titles
        ["目次", "1. 概要", "2. 申込み", "3. 解約"],
        ["1. 概要 ........ 2", "2. 申込み ........ 2", "3. 解約 ........ 3"],
    ],
)
def test_table_of_contents_sets_no_heading_and_is_never_indexed(contents: list[str]) -> None:
    data = make_pdf(
        [
            ["会員サービス 利用ガイド", "第2版 2025年4月 発行: 総務部", *contents],
            ["1. 概要", "本サービスは会員向けの予約サービスです。", "2. 申込み"],
            [
                "2.1 申込みの手順",
                "申込みは受付画面から行います。",
                "■ 支払方法",
                "支払はカードのみです。",
            ],
            ["3. 解約", "解約は月末までに届け出てください。"],
        ]
    )
    chunks = chunk_document("guide.pdf", data)
    headings = {chunk.source.heading for chunk in chunks}
    # issue 29: a cover and a table of contents were quoted as evidence: they are no chunk
    assert not any("利用ガイド" in chunk.text or "第2版" in chunk.text for chunk in chunks)
    assert not any("1. 概要" in chunk.text and "3. 解約" in chunk.text for chunk in chunks)
    found = {
        (chunk.source.page, chunk.source.heading, chunk.text.split("\n")[-1]) for chunk in chunks
    }
    assert (2, "1. 概要", "本サービスは会員向けの予約サービスです。") in found
    assert (3, "2. 申込み > 2.1 申込みの手順", "申込みは受付画面から行います。") in found
    assert (3, "2. 申込み > 2.1 申込みの手順 > 支払方法", "支払はカードのみです。") in found
    assert (4, "3. 解約", "解約は月末までに届け出てください。") in found
    assert len(headings) == 4


def test_heading_over_its_first_sub_heading_is_not_a_table_of_contents() -> None:
    data = make_pdf(
        [["1. 概要", "1.1 目的", "本書は目的を説明します。", "■ 注意", "・一つ目", "・二つ目"]]
    )
    chunks = chunk_document("guide.pdf", data)
    assert [chunk.source.heading for chunk in chunks] == [
        "1. 概要 > 1.1 目的",
        "1. 概要 > 1.1 目的 > 注意",
    ]
    assert "・二つ目" in chunks[1].text


@pytest.mark.parametrize(
    ("lines", "heading"),
    [
        (["■ 交通費", "電車代は実費を支給します。"], "交通費"),
        (["■ 交通費", "■ 宿泊費", "■ 日当"], None),  # a marked list, not headings
        (["■ 交通費は実費を支給します。", "領収書を添付します。"], None),
    ],
)
def test_marked_heading_lines(lines: list[str], heading: str | None) -> None:
    chunks = chunk_document("memo.txt", "\n".join(lines).encode())
    assert chunks[-1].source.heading == heading


def test_encrypted_or_corrupt_pdf_is_a_document_error() -> None:
    with pytest.raises(DocumentError):
        chunk_document("broken.pdf", b"%PDF-1.4 not really a pdf")


def test_docx_heading_styles_give_the_path() -> None:
    data = make_docx(
        [
            ("Heading1", "バージョン 3.2.0"),
            ("Heading2", "新機能"),
            (None, "Teams通知をまとめて送れるようになりました。"),
            ("Heading2", "不具合修正"),
            (None, "CSV出力の列ずれを修正しました。"),
        ]
    )
    chunks = chunk_document("notes.docx", data)
    by_text = {chunk.source.heading: chunk.text for chunk in chunks}
    assert "Teams通知" in by_text["バージョン 3.2.0 > 新機能"]
    assert "CSV出力" in by_text["バージョン 3.2.0 > 不具合修正"]


def test_pdf_table_of_contents_with_page_numbers_on_their_own_lines_is_dropped() -> None:
    """The extraction put each entry's dot leaders and page on the next line: the entries
    still form a table of contents — neither evidence nor the body's headings."""
    toc = ["目次"]
    for title, page in [("1. はじめに", 2), ("1.1 目的", 2), ("2. 操作", 3), ("2.1 ログイン", 3)]:
        toc += [title, ". . . . . . . . . . . . . . . . " + str(page)]
    data = make_pdf(
        [
            toc,
            ["1. はじめに", "1.1 目的", "本書は操作方法を説明します。"],
            ["2. 操作", "2.1 ログイン", "ブラウザでログイン画面を開きます。"],
        ]
    )
    chunks = chunk_document("guide.pdf", data)
    login = next(chunk for chunk in chunks if "ブラウザ" in chunk.text)
    assert login.source.heading == "2. 操作 > 2.1 ログイン"
    assert not any(". . . ." in chunk.text for chunk in chunks)


def test_pdf_table_of_contents_whose_page_numbers_were_put_apart_is_dropped() -> None:
    """Long leaders with no number on the entry's line, the numbers gathered elsewhere."""
    leaders = " " + "." * 100
    data = make_pdf(
        [
            [
                "目次",
                *("1. はじめに" + leaders, "2", "1.1 目的" + leaders),
                *("2. 操作" + leaders, "2.1 ログイン" + leaders, "3", "3"),
            ],
            ["1. はじめに", "1.1 目的", "本書は操作方法を説明します。"],
            ["2. 操作", "2.1 ログイン", "ブラウザでログイン画面を開きます。"],
        ]
    )
    chunks = chunk_document("guide.pdf", data)
    login = next(chunk for chunk in chunks if "ブラウザ" in chunk.text)
    assert login.source.heading == "2. 操作 > 2.1 ログイン"
    assert not any("...." in chunk.text for chunk in chunks)


def test_numbered_lines_with_numbers_between_them_are_no_table_of_contents_without_a_title() -> (
    None
):
    """Steps followed by a value each (no 目次 title, no leaders): body text, kept."""
    data = make_pdf(
        [
            ["手順", "1. 申請を開く", "3", "2. 金額を入力する", "5", "3. 送信する", "7"],
            ["付録", "以上です。"],
            ["索引なし", "終わり。"],
        ]
    )
    text = "".join(chunk.text for chunk in chunk_document("steps.pdf", data))
    assert "金額を入力する" in text and "送信する" in text


def test_docx_typed_table_of_contents_neither_takes_the_headings_nor_is_evidence() -> None:
    """A 目次 typed as plain paragraphs repeats every heading's text before the body: each
    body paragraph still belongs to its own styled heading, and the entries are no chunk."""
    data = make_docx(
        [
            (None, "操作マニュアル 第2.0版"),
            (None, "目次"),
            (None, "第1章 予約"),
            (None, "1.1 予約を登録する"),
            (None, "1.2 予約を取り消す"),
            (None, "付録A 制限値一覧"),
            ("Heading1", "第1章 予約"),
            ("Heading2", "1.1 予約を登録する"),
            (None, "メニューの「予約」>「新規」をクリックします。"),
            ("Heading2", "1.2 予約を取り消す"),
            (None, "予約の詳細画面で「取消」をクリックします。"),
            ("Heading1", "付録A 制限値一覧"),
            (None, "1件の予約の来訪者は10名までです。"),
        ]
    )
    chunks = chunk_document("manual.docx", data)
    by_text = {chunk.source.heading: chunk.text for chunk in chunks}
    assert "「新規」" in by_text["第1章 予約 > 1.1 予約を登録する"]
    assert "「取消」" in by_text["第1章 予約 > 1.2 予約を取り消す"]
    assert "10名" in by_text["付録A 制限値一覧"]
    assert not any("予約を取り消す" in chunk.text for chunk in chunks if "新規" in chunk.text)
    assert not any("第2.0版" in chunk.text for chunk in chunks)  # the cover is no evidence


def test_docx_without_heading_styles_uses_numbered_lines() -> None:
    data = make_docx([(None, "1. 概要"), (None, "本書は手順を説明します。")])
    chunks = chunk_document("plain.docx", data)
    assert chunks[0].source.heading == "1. 概要"


def test_xlsx_sheet_names_are_headings() -> None:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "勘定科目"
    sheet.append(["科目", "説明"])
    sheet.append(["旅費交通費", "出張の交通費"])
    out = io.BytesIO()
    workbook.save(out)
    chunks = chunk_document("accounts.xlsx", out.getvalue())
    assert chunks[0].source.heading == "勘定科目"
    assert "旅費交通費\t出張の交通費" in chunks[0].text


def test_txt_in_cp932() -> None:
    chunks = chunk_document("memo.txt", "経費精算の締め日は月末です。".encode("cp932"))
    assert chunks[0].text == "経費精算の締め日は月末です。"
    assert chunks[0].source.heading is None


def test_unsupported_suffix_lists_the_supported_ones() -> None:
    with pytest.raises(UserInputError) as caught:
        chunk_document("slides.pptx", b"data")
    assert "slides.pptx" in caught.value.message
    assert ".pdf" in (caught.value.hint or "")
    assert ".md" in caught.value.details["supported"]


def test_empty_file_is_an_error() -> None:
    with pytest.raises(UserInputError, match=r"empty\.md"):
        chunk_document("empty.md", b"")


def test_ids_are_stable() -> None:
    first = chunk_document("manual.md", MARKDOWN.encode())
    second = chunk_document("manual.md", MARKDOWN.encode())
    assert first == second


# --- FAQ --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "encoding"),
    [
        ("question,answer", "utf-8"),
        ("質問,回答", "utf-8-sig"),
        ("Q,A", "cp932"),
        ("ID,カテゴリ,質問,回答", "utf-8"),
    ],
)
def test_faq_header_detection(header: str, encoding: str) -> None:
    columns = header.split(",")
    prefix = ["FAQ-1", "ログイン"][: len(columns) - 2]
    row = ",".join([*prefix, "パスワードを忘れた", "再設定画面から変更してください"])
    data = f"{header}\n{row}\n".encode(encoding)
    [chunk] = chunk_faq("faq.csv", data)
    assert chunk.text == "Q: パスワードを忘れた\nA: 再設定画面から変更してください"
    assert chunk.id == "faq.csv#0"
    assert chunk.source.row == 1
    assert chunk.metadata["question"] == "パスワードを忘れた"
    assert chunk.metadata["answer"] == "再設定画面から変更してください"
    assert chunk.metadata["category"] == ("ログイン" if len(columns) == 4 else "")


def test_faq_rows_count_from_the_first_data_row_and_skip_blanks() -> None:
    data = "質問,回答\n一,いち\n,\n二,\n三,さん\n".encode()
    chunks = chunk_faq("faq.csv", data)
    assert [(chunk.source.row, chunk.metadata["question"]) for chunk in chunks] == [
        (1, "一"),
        (4, "三"),
    ]
    assert [chunk.id for chunk in chunks] == ["faq.csv#0", "faq.csv#1"]


def test_faq_explicit_columns() -> None:
    data = "項目,内容\n締め日,月末\n".encode()
    [chunk] = chunk_faq("faq.csv", data, question_column="項目", answer_column="内容")
    assert chunk.text == "Q: 締め日\nA: 月末"
    with pytest.raises(UserInputError, match="「なし」") as caught:
        chunk_faq("faq.csv", data, question_column="なし", answer_column="内容")
    assert "「項目」" in (caught.value.hint or "")


def test_faq_without_question_column_lists_headers_and_accepted_names() -> None:
    with pytest.raises(UserInputError) as caught:
        chunk_faq("faq.csv", "項目,内容\n締め日,月末\n".encode())
    error = caught.value
    assert "faq.csv" in error.message and "「項目」" in error.message
    assert "質問" in (error.hint or "") and "question" in (error.hint or "")
    assert error.details["headers"] == ["項目", "内容"]


@pytest.mark.parametrize("data", [b"", b"\n\n", "質問,回答\n".encode()])
def test_faq_empty(data: bytes) -> None:
    with pytest.raises(UserInputError, match=r"faq\.csv"):
        chunk_faq("faq.csv", data)


def test_faq_is_a_csv_or_a_workbook() -> None:
    with pytest.raises(UserInputError) as caught:
        chunk_faq("faq.txt", b"data")
    assert caught.value.details["supported"] == [".csv", ".xlsx"]
    assert "FAQとして登録できません" in caught.value.message


def _workbook(*sheets: tuple[str, list[list[object]]]) -> bytes:
    workbook = Workbook()
    workbook.remove(workbook.active)  # type: ignore[arg-type]
    for title, rows in sheets:
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    workbook.save(out)
    return out.getvalue()


def test_an_faq_workbook_is_read_from_the_sheet_whose_header_names_both_columns() -> None:
    data = _workbook(
        ("表紙", [["社内FAQ"], ["2025年4月版"]]),
        (
            "FAQ",
            [
                [None],
                ["No", "分類", "質問", "回答"],
                [1, "ログイン", "パスワードを忘れた", "再設定画面から変更してください"],
                [2, "精算", "締め日は", None],
                [None],
                [4, "精算", "締め日はいつ", "毎月25日です"],
            ],
        ),
    )
    chunks = chunk_faq("faq.xlsx", data)
    assert [(c.source.row, c.text) for c in chunks] == [
        (1, "Q: パスワードを忘れた\nA: 再設定画面から変更してください"),
        (4, "Q: 締め日はいつ\nA: 毎月25日です"),
    ]
    assert chunks[0].metadata["category"] == "ログイン" and chunks[0].metadata["id"] == "1"


def test_an_faq_workbook_without_the_columns_or_damaged_is_a_clear_error() -> None:
    with pytest.raises(UserInputError) as caught:
        chunk_faq("faq.xlsx", _workbook(("一覧", [["項目", "内容"], ["締め日", "月末"]])))
    assert caught.value.code == "FAQ_COLUMN_NOT_FOUND" and "「項目」" in caught.value.message
    with pytest.raises(UserInputError) as caught:
        chunk_faq("faq.xlsx", b"PK\x03\x04 not a workbook")
    assert "faq.xlsx" in caught.value.message
    with pytest.raises(UserInputError) as caught:
        chunk_faq("faq.xlsx", _workbook(("空", [])))
    assert caught.value.code == "FAQ_EMPTY" and "faq.xlsx" in caught.value.message


# --- pages: a chunk that runs onto the next page --------------------------------------------


def test_a_page_s_opening_text_is_on_that_page_and_separated() -> None:
    data = make_pdf(
        [
            ["1. Expenses", "Claims are approved by the travel desk."],
            ["Taxi receipts are kept for seven years."],
        ]
    )
    [chunk] = chunk_document("policy.pdf", data)
    assert "travel desk.\nTaxi receipts" in chunk.text  # not "desk.Taxi"
    assert chunk.source.page == 1
    assert chunk.page_of(chunk.text.index("Claims")) == 1
    assert chunk.page_of(chunk.text.index("Taxi")) == 2
    assert chunk.page_starts == ((0, 1), (chunk.text.index("Taxi"), 2))


def test_a_word_split_over_a_page_break_is_joined_and_each_half_keeps_its_page() -> None:
    header, body = "経費精算の手引き", "出張で発生した交通費は領収書を添えて申請してください。"
    data = make_pdf(
        [
            [header, body, "申請後に経理部が内容を確認し、承認された交通費の精", "- 1 -"],
            [header, "算は月末までに行われます。", body, "- 2 -"],
            [header, "3. 注意事項", "領収書は原本を提出してください。", "- 3 -"],
        ]
    )
    chunks = chunk_document("tebiki.pdf", data, size=500, overlap=0)
    joined = next(chunk for chunk in chunks if "交通費の精算は月末" in chunk.text)
    assert header not in joined.text  # running headers are not glued in
    split = joined.text.index("交通費の精算") + len("交通費の精")
    assert joined.page_of(split - 1) == 1 and joined.page_of(split) == 2
    assert joined.source.page == 1
    notes = next(chunk for chunk in chunks if "原本" in chunk.text)
    assert notes.source.page == 3 and notes.page_starts == ((0, 3),)


def test_page_starts_survive_a_small_chunk_size() -> None:
    long_line = "申請は所属長の承認を経て経理部へ回付され、内容の確認が行われ"
    data = make_pdf(
        [[long_line + "ます。", "承認された交通費の精"], ["算は月末までに行われます。"]]
    )
    chunks = chunk_document("small.pdf", data, size=20, overlap=5)
    last = chunks[-1]
    assert last.text.endswith("月末までに行われます。")
    assert last.page_of(len(last.text) - 1) == 2
    assert all(chunk.page_of(0) == chunk.source.page for chunk in chunks)


def test_a_back_of_book_index_is_never_indexed_but_a_table_of_amounts_is() -> None:
    data = make_pdf(
        [
            [
                "1. 申請",
                "申請は所属長が承認します。",
                "2. 差戻し",
                "差戻しは理由を付けて行います。",
            ],
            ["3. 金額の上限", "交通費 1,000", "宿泊費 12,000", "日当 2,000", "会議費 5,000"],
            ["索引", "あ", "承認 1, 3", "差戻し 1、2", "申請 1", "か行", "金額 3"],
            ["上限 3, 4", "交通費 3, 5", "宿泊費 3, 6", "日当 3, 7", "会議費 3, 8"],
        ]
    )
    chunks = chunk_document("guide.pdf", data)
    text = "\n".join(chunk.text for chunk in chunks)
    assert "承認 1, 3" not in text and "索引" not in text  # issue 29: navigation, no evidence
    assert "交通費 3, 5" not in text  # the index continued on the next page
    assert "宿泊費12,000" in text  # amounts with thousands separators are content
