"""TemplateLibrary (bundled + workspace, problems per file, search) and validate_template."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from keiri_agent.errors import UserInputError
from keiri_agent.plans.catalog import BlockCatalog
from keiri_agent.plans.design.models import TemplateSpec
from keiri_agent.plans.design.templates import (
    MAX_TEMPLATE_BYTES,
    TemplateLibrary,
    missing_blocks,
    validate_template,
)

CATALOG = BlockCatalog.discover()
BUNDLED = TemplateLibrary.load()
EXISTING_BLOCK_TEMPLATES = {
    "upload_evidence_zip",
    "upload_payments_workbook",
    "evidence_zip_import",
    "invoice_extraction",
    "payments_read",
    "difference_report_excel",
    "approval",
    "department_summary",
    "filter_rows",
}

FILTER_TEMPLATE = {
    "id": "high_value",
    "title": "高額取引の抽出",
    "description": "金額が大きい取引だけを取り出す",
    "category": "filter",
    "tags": ["高額", "抽出"],
    "imports": {"records": {"type": "table"}},
    "exports": {"high": {"type": "table", "from": "pick.high"}},
    "vars_defaults": {"limit": 1000},
    "graph_snippet": [
        {
            "id": "pick",
            "block": "table.filter",
            "in": {
                "records": "${vars.records}",
                "conditions": [{"col": "金額", "op": ">=", "value": "${vars.limit}"}],
            },
            "out": {"records": "high"},
        }
    ],
}


def write(folder: Path, relative: str, data: object) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else yaml.safe_dump(data, allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_templates_load_without_problems() -> None:
    assert BUNDLED.problems == []
    assert set(BUNDLED.ids()) >= EXISTING_BLOCK_TEMPLATES
    assert len(EXISTING_BLOCK_TEMPLATES) >= 8


@pytest.mark.parametrize("template_id", TemplateLibrary.load().ids())
def test_every_bundled_template_validates(template_id: str) -> None:
    template = BUNDLED.get(template_id)
    absent = missing_blocks(template, CATALOG)
    if absent:
        assert template_id not in EXISTING_BLOCK_TEMPLATES
        pytest.skip(f"{template_id}: blocks not in the catalog yet: {', '.join(absent)}")
    assert validate_template(template, CATALOG) == []


def test_bundled_templates_are_japanese_and_tagged() -> None:
    for template in BUNDLED.all():
        assert any("\u3040" <= ch <= "\u9fff" for ch in template.title), template.id
        assert template.description and template.tags, template.id


def test_workspace_template_overrides_bundled_and_is_reported(tmp_path: Path) -> None:
    data = copy.deepcopy(FILTER_TEMPLATE)
    data.update(id="filter_rows", title="独自の条件抽出")
    path = write(tmp_path, "filter/filter_rows.yaml", data)
    library = TemplateLibrary.load([tmp_path])
    assert library.get("filter_rows").title == "独自の条件抽出"
    assert [(o.template_id, o.by) for o in library.overrides] == [("filter_rows", str(path))]
    assert "filter_rows" in library.overrides[0].message()
    assert library.problems == []


def test_problems_are_collected_per_file_not_raised(tmp_path: Path) -> None:
    write(tmp_path, "filter/high_value.yaml", FILTER_TEMPLATE)
    write(tmp_path, "filter/broken.yaml", "id: broken\ntitle: [unclosed\n")
    bad = copy.deepcopy(FILTER_TEMPLATE)
    bad.update(id="bad_schema", imports={"records": {"type": "tabel"}}, extra_key=1)
    del bad["graph_snippet"]
    write(tmp_path, "filter/bad_schema.yaml", bad)
    named = copy.deepcopy(FILTER_TEMPLATE)
    named["id"] = "other_name"
    write(tmp_path, "filter/wrong_name.yaml", named)
    big = copy.deepcopy(FILTER_TEMPLATE)
    big.update(id="big", description="あ" * MAX_TEMPLATE_BYTES)
    write(tmp_path, "filter/big.yaml", big)
    library = TemplateLibrary.load([tmp_path])
    assert "high_value" in library
    by_file = {}
    for problem in library.problems:
        by_file.setdefault(Path(problem.source or "").name, []).append(problem)
    assert set(by_file) == {"broken.yaml", "bad_schema.yaml", "wrong_name.yaml", "big.yaml"}
    assert by_file["broken.yaml"][0].code == "TEMPLATE_YAML"
    schema = " ".join(p.message for p in by_file["bad_schema.yaml"])
    assert "graph_snippet: 必須の項目がありません" in schema
    assert "extra_key: 使えない項目です" in schema
    assert "imports.records.type" in schema
    assert by_file["wrong_name.yaml"][0].code == "TEMPLATE_NAME"
    assert "大きすぎます" in by_file["big.yaml"][0].message


def test_a_link_leaving_the_folder_is_a_problem(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside", "high_value.yaml", FILTER_TEMPLATE)
    folder = tmp_path / "templates"
    (folder / "filter").mkdir(parents=True)
    (folder / "filter" / "high_value.yaml").symlink_to(outside)
    library = TemplateLibrary.load([folder])
    assert "high_value" not in library
    assert [p.code for p in library.problems] == ["TEMPLATE_FILE"]
    assert "外" in library.problems[0].message


def test_get_unknown_lists_close_ids() -> None:
    with pytest.raises(UserInputError) as caught:
        BUNDLED.get("filter_row")
    assert "filter_rows" in (caught.value.hint or "")
    assert caught.value.code == "TEMPLATE_NOT_FOUND"


def test_search_ranks_by_title_tags_and_blocks() -> None:
    assert BUNDLED.search("部門別に金額を集計したい", k=3)[0][0].id == "department_summary"
    assert BUNDLED.search("入金明細のExcelを読み込む", k=3)[0][0].id == "payments_read"
    assert BUNDLED.search("table.filter", k=1)[0][0].id == "filter_rows"
    assert BUNDLED.search("天気予報を調べる") == []
    scores = [score for _, score in BUNDLED.search("請求書", k=10)]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def spec(**changes: object) -> TemplateSpec:
    data = copy.deepcopy(FILTER_TEMPLATE)
    data.update(changes)
    return TemplateSpec.model_validate(data)


def test_validate_accepts_a_good_template() -> None:
    assert validate_template(spec(), CATALOG) == []


def test_validate_reports_snippet_errors_from_the_plan_validator() -> None:
    snippet = copy.deepcopy(FILTER_TEMPLATE["graph_snippet"])
    snippet[0]["block"] = "table.filterr"
    codes = [p.code for p in validate_template(spec(graph_snippet=snippet), CATALOG)]
    assert "UNKNOWN_BLOCK" in codes


def test_validate_reports_undeclared_vars() -> None:
    problems = validate_template(spec(vars_defaults={}), CATALOG)
    assert [(p.code, p.path) for p in problems if p.code == "TEMPLATE_VAR"] == [
        ("TEMPLATE_VAR", "graph_snippet[0].in.conditions[0].value")
    ]


def test_validate_reports_exports_naming_no_output() -> None:
    problems = validate_template(
        spec(exports={"high": {"type": "table", "from": "pick.nothing"}}), CATALOG
    )
    assert "TEMPLATE_EXPORT" in [p.code for p in problems]
    problems = validate_template(
        spec(exports={"high": {"type": "table", "from": "elsewhere.high"}}), CATALOG
    )
    assert "TEMPLATE_EXPORT" in [p.code for p in problems]


def test_validate_reports_export_type_disagreeing_with_the_block_output() -> None:
    problems = validate_template(
        spec(exports={"high": {"type": "text", "from": "pick.high"}}), CATALOG
    )
    assert [(p.code, p.path) for p in problems] == [("TEMPLATE_TYPE", "exports.high.type")]
    assert "array" in problems[0].message
    assert (
        validate_template(spec(exports={"high": {"type": "list", "from": "pick.high"}}), CATALOG)
        == []
    )


def test_from_settings_reads_the_workspace_designs_templates(tmp_path: Path) -> None:
    from keiri_agent.config import Settings

    write(tmp_path / "designs" / "templates", "filter/high_value.yaml", FILTER_TEMPLATE)
    library = TemplateLibrary.from_settings(Settings(home=tmp_path))
    assert "high_value" in library and "filter_rows" in library
    assert library.source_of("high_value") == str(
        tmp_path.resolve() / "designs" / "templates" / "filter" / "high_value.yaml"
    )
