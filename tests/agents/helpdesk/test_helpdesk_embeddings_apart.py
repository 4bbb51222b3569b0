"""Chat offline, embeddings from an OpenAI-compatible server: the desk embeds manuals
and FAQ, searches them hybrid, answers by rules, and never sends chat to that server
(which serves only /v1/embeddings: chat there was a 404)."""

from __future__ import annotations

from pathlib import Path

from keiri_agent.agents.helpdesk.desk import HelpDesk, RetrieverStatus
from keiri_agent.config import Settings
from keiri_agent.llm.testing import StubOpenAIServer
from keiri_agent.services.jsonforms import helpdesk_answer_json

MANUAL = """# Travel guide

## Refunds

Refund requests close 30 days after purchase. Send them from the travel desk page.

## Taxis

Taxi receipts must show the date and the route.
"""

FAQ = "question,answer\nHow do I get a refund?,Use the travel desk page within 30 days.\n"


def _files(tmp_path: Path) -> tuple[Path, Path]:
    manual = tmp_path / "travel.md"
    manual.write_text(MANUAL, encoding="utf-8")
    faq = tmp_path / "faq.csv"
    faq.write_text(FAQ, encoding="utf-8")
    return manual, faq


def test_offline_chat_with_an_embeddings_server_answers_hybrid_without_chat_calls(
    keiri_home: Path, tmp_path: Path
) -> None:
    manual, faq = _files(tmp_path)
    # 256 dimensions: the stand-in's similarity follows shared character pairs closely
    # enough for the answers' meaning check (at 16, collisions put a heading closest)
    with StubOpenAIServer(embedding_dim=256) as server:
        settings = Settings(
            provider="offline",
            embedding_provider="openai-compatible",
            embedding_base_url=server.base_url,
            embedding_input_type=True,
            max_retries=0,
        )
        desk = HelpDesk(settings)
        reports = desk.index([manual], qa=[faq])
        assert all(report.ok for report in reports.values())
        assert desk.retrievers() == {
            "manual": RetrieverStatus("hybrid"),
            "qa": RetrieverStatus("hybrid"),
        }
        manual_tool, qa_tool = desk.tools()
        assert manual_tool.searcher.retriever == qa_tool.searcher.retriever == "hybrid"
        result = desk.ask("When do refund requests close?")
        paths = [request.path for request in server.requests]

    assert "/v1/chat/completions" not in paths and "/v1/embeddings" in paths
    roles = {request.body.get("input_type") for request in server.requests}
    assert roles == {"passage", "query"}
    assert result.sources and result.sources[0].startswith("travel.md")
    assert "30 days" in result.answer


def test_status_says_why_vectors_are_not_used(keiri_home: Path, tmp_path: Path) -> None:
    manual, faq = _files(tmp_path)
    offline = HelpDesk(Settings(provider="offline"))
    offline.index([manual], qa=[faq])
    for status in offline.retrievers().values():
        assert status.retriever == "keyword" and "埋め込みが未設定" in (status.reason or "")

    with StubOpenAIServer(embedding_dim=16) as server:
        settings = Settings(
            provider="offline",
            embedding_provider="openai-compatible",
            embedding_base_url=server.base_url,
            helpdesk_embed_manuals=False,
        )
        desk = HelpDesk(settings)
        # indexed while offline: no vectors yet
        assert "再インデックスが必要" in (desk.retrievers()["qa"].reason or "")
        assert "KEIRI_AGENT_HELPDESK_EMBED_MANUALS" in (desk.retrievers()["manual"].reason or "")
        desk.index([manual], qa=[faq])
        assert desk.retrievers()["qa"] == RetrieverStatus("hybrid")
        assert desk.retrievers()["manual"].retriever == "keyword"


def test_an_answer_says_when_it_searched_by_keywords_although_embeddings_are_set_up(
    keiri_home: Path, tmp_path: Path
) -> None:
    """Documents indexed while offline have no vectors: with embeddings configured the
    desk still answers (by keywords) and the answer says so, with the fix; offline (no
    embeddings) keyword search is the mode and nothing is said."""
    manual, faq = _files(tmp_path)
    offline = HelpDesk(Settings(provider="offline"))
    offline.index([manual], qa=[faq])
    assert offline.ask("When do refund requests close?").warnings == []

    with StubOpenAIServer(embedding_dim=256) as server:
        settings = Settings(
            provider="offline",
            embedding_provider="openai-compatible",
            embedding_base_url=server.base_url,
            max_retries=0,
        )
        result = HelpDesk(settings).ask("When do refund requests close?")
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("マニュアルはキーワード検索だけで検索しました")
    assert all("再インデックスが必要です" in warning for warning in result.warnings)
    assert helpdesk_answer_json(result)["warnings"] == result.warnings
