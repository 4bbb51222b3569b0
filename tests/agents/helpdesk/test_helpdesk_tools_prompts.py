"""Search tools (schema, LangChain tool, defaults, notes) and prompt overrides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from keiri_agent.agents.helpdesk import HelpDeskAgentPrompts, SearchTool, default_tools
from keiri_agent.agents.helpdesk.prompts import PLACEHOLDERS
from keiri_agent.agents.helpdesk.tools import KEYWORD_QA_NOTE
from keiri_agent.errors import ConfigurationError
from keiri_agent.search.models import Chunk, Hit, Retriever, Source

CHUNKS = [
    Chunk("m#1", "パスワードは8文字以上です。", Source("manual.pdf", 3, "2.1 パスワード")),
    Chunk("q#1", "Q: ロック A: 管理者へ", Source("faq.csv", row=2)),
]


class FixedSearcher:
    def __init__(self, retriever: Retriever = "keyword") -> None:
        self._retriever = retriever
        self.queries: list[tuple[str, int]] = []

    @property
    def retriever(self) -> Retriever:
        return self._retriever

    def search(self, query: str, k: int = 5) -> list[Hit]:
        self.queries.append((query, k))
        return [Hit(c, 2.0, self._retriever) for c in CHUNKS if query in c.text][:k]


def test_search_tool_schema_has_one_query_argument() -> None:
    tool = SearchTool("search_xyz_manual", "マニュアル検索", FixedSearcher(), k=4)
    schema = tool.openai_schema()
    assert schema["function"]["name"] == "search_xyz_manual"
    assert schema["function"]["parameters"]["required"] == ["query"]
    assert list(schema["function"]["parameters"]["properties"]) == ["query"]
    converted = convert_to_openai_tool(tool.as_langchain_tool())
    assert converted["function"]["name"] == "search_xyz_manual"
    assert list(converted["function"]["parameters"]["properties"]) == ["query"]


def test_search_returns_outputs_with_their_source() -> None:
    searcher = FixedSearcher()
    tool = SearchTool("search_xyz_manual", "d", searcher, k=4)
    (found,) = tool.search("パスワード")
    assert searcher.queries == [("パスワード", 4)]
    assert found.citation() == "manual.pdf p.3 「2.1 パスワード」"
    payload = json.loads(tool.as_langchain_tool().invoke({"query": "ロック"}))
    assert payload["results"][0]["row"] == 2 and "note" not in payload


def test_default_tools_names_and_keyword_note() -> None:
    manual, qa = default_tools(FixedSearcher(), FixedSearcher("keyword"))
    assert (manual.name, qa.name) == ("search_xyz_manual", "search_xyz_qa")
    assert "XYZ" in manual.description and "FAQ" in qa.description
    assert qa.note == KEYWORD_QA_NOTE and manual.note is None
    payload = json.loads(qa.as_langchain_tool().invoke({"query": "ロック"}))
    assert payload["note"] == KEYWORD_QA_NOTE
    assert payload["results"][0]["retriever"] == "keyword"


def test_default_tools_with_vector_faq_has_no_note_and_overrides_apply() -> None:
    manual, qa = default_tools(
        FixedSearcher(),
        FixedSearcher("vector"),
        system_name="経費 Keihi",
        qa_name="faq",
        manual_description="手引き",
        k=2,
    )
    assert (manual.name, qa.name) == ("search_keihi_manual", "faq")
    assert manual.description == "手引き" and qa.note is None and qa.k == 2
    assert "ベクトル検索" in qa.description


@pytest.mark.parametrize("name", ["", "検索", "a b", "x" * 65])
def test_invalid_tool_names_are_rejected(name: str) -> None:
    with pytest.raises(ConfigurationError, match="は使えません"):
        SearchTool(name, "d", FixedSearcher())


def test_prompt_overrides_by_keyword_subclass_and_yaml(tmp_path: Path) -> None:
    assert "{question}" in HelpDeskAgentPrompts().planner_user_prompt
    custom = HelpDeskAgentPrompts(planner_user_prompt="Q={question}")
    assert custom.render("planner_user_prompt", question="x") == "Q=x"

    class Mine(HelpDeskAgentPrompts):
        final_answer_system_prompt = "短く答える"

    assert Mine().final_answer_system_prompt == "短く答える"
    path = tmp_path / "prompts.yaml"
    path.write_text("subtask_retry_user_prompt: 'やり直し: {advice}'\n", encoding="utf-8")
    loaded = HelpDeskAgentPrompts.from_yaml(path)
    assert loaded.render("subtask_retry_user_prompt", advice="A") == "やり直し: A"
    assert set(loaded.texts()) == set(PLACEHOLDERS)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"planner_user_prompt": "no placeholder"}, "必要な差し込み項目: {question}"),
        ({"planner_user_prompt": "{question} {extra}"}, "必要な差し込み項目"),
        ({"unknown_prompt": "x"}, "プロンプト名 unknown_prompt はありません"),
        ({"planner_system_prompt": "{"}, "書き方が正しくありません"),
    ],
)
def test_bad_prompt_overrides_fail_early(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("{", r"\{")):
        HelpDeskAgentPrompts(**overrides)


def test_bad_yaml_prompt_file(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("- a list\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="マッピング"):
        HelpDeskAgentPrompts.from_yaml(path)
    with pytest.raises(ConfigurationError, match="読み込めません"):
        HelpDeskAgentPrompts.from_yaml(tmp_path / "missing.yaml")
