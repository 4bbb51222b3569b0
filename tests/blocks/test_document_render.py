"""document.render: Markdown → .docx, read back with python-docx."""

from __future__ import annotations

import io

import docx
import pytest
from block_harness import CATALOG, failure, make_context, run

from keiri_agent.blocks.document_render import MAX_MARKDOWN_CHARS

MARKDOWN = """# 経費精算チェック

対象 **3件** のうち *1件* が `上限超過` です。<script>alert(1)</script>

## 明細

- 交通費
  - 電車
- 会議費

3. 三番目
4. 四番目

| 日付 | 金額 |
|---|---:|
| 2023-04-01 | 1,234 |
| 2023-04-02 | **500** |

```
total = 1734
```
"""


def rendered(**inputs: object) -> tuple[docx.document.Document, dict[str, object]]:
    out = run("document.render", make_context(), **inputs)
    return docx.Document(io.BytesIO(out["document"])), out["summary"]


def test_markdown_structure_is_written_to_word() -> None:
    document, summary = rendered(markdown=MARKDOWN, title="点検報告")
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs]
    assert paragraphs[:3] == [
        ("Title", "点検報告"),
        ("Heading 1", "経費精算チェック"),
        ("Normal", "対象 3件 のうち 1件 が 上限超過 です。<script>alert(1)</script>"),
    ]
    assert ("Heading 2", "明細") in paragraphs
    assert ("List Bullet", "交通費") in paragraphs
    assert ("List Bullet 2", "電車") in paragraphs
    assert ("List Bullet", "会議費") in paragraphs
    assert [text for _, text in paragraphs if text[:2] in ("3.", "4.")] == [
        "3. 三番目",
        "4. 四番目",
    ]
    assert ("Normal", "total = 1734") in paragraphs
    runs = {run.text: run for p in document.paragraphs for run in p.runs}
    assert runs["3件"].bold and not runs["1件"].bold
    assert runs["1件"].italic
    assert runs["上限超過"].font.name == "Consolas"
    assert runs["total = 1734"].font.name == "Consolas"
    [table] = document.tables
    assert [[cell.text for cell in row.cells] for row in table.rows] == [
        ["日付", "金額"],
        ["2023-04-01", "1,234"],
        ["2023-04-02", "500"],
    ]
    assert table.rows[0].cells[0].paragraphs[0].runs[0].bold
    assert document.core_properties.title == "点検報告"
    assert summary["headings"] == 2 and summary["tables"] == 1 and summary["list_items"] == 5
    assert summary["code_blocks"] == 1 and summary["filename"] == "report.docx"


def test_raw_html_is_text_not_markup() -> None:
    document, _ = rendered(markdown="<h1>見出しではない</h1>\n\n<b>太字でない</b>")
    assert [p.text for p in document.paragraphs] == ["<h1>見出しではない</h1>", "<b>太字でない</b>"]
    assert all(p.style.name == "Normal" for p in document.paragraphs)
    assert not any(run.bold for p in document.paragraphs for run in p.runs)


def test_size_and_filename_are_bounded() -> None:
    ctx = make_context()
    error = failure("document.render", ctx, markdown="あ" * (MAX_MARKDOWN_CHARS + 1))
    assert "長すぎます" in error.message
    error = failure("document.render", ctx, markdown="x", filename="../報告.docx")
    assert error.details["field"] == "filename"
    error = failure("document.render", ctx, markdown="x", filename="報告.pdf")
    assert ".docx" in (error.hint or "")


@pytest.mark.parametrize("markdown", ["", "# 見出しだけ"])
def test_small_documents(markdown: str) -> None:
    document, summary = rendered(markdown=markdown)
    assert summary["bytes"] > 0
    assert [p.text for p in document.paragraphs] == ([markdown[2:]] if markdown else [])


def test_dry_run_sample_summary_is_what_the_block_returns() -> None:
    samples = CATALOG.resolve("document.render").dry_run_samples
    out = run("document.render", make_context(), **samples["inputs"])
    expected = dict(samples["outputs"]["summary"])
    assert abs(out["summary"].pop("bytes") - expected.pop("bytes")) < 2000
    assert {k: v for k, v in out["summary"].items() if k != "bytes"} == expected
    assert docx.Document(io.BytesIO(out["document"])).paragraphs[0].text == "経費精算チェック"
