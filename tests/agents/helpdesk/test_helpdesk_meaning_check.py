"""The support check with embeddings configured: a quote must also be close in meaning.

Made-up passages and a similarity given per passage (the embeddings' verdict), so each
rule is seen on its own: a passage whose words match but that the embeddings place well
below the closest passage found is not quoted, and a part whose every word-matching
passage is far from it in meaning is declined — never answered from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from keiri_agent.agents.helpdesk.models import SearchOutput
from keiri_agent.agents.helpdesk.offline import reflect, subtask_answer
from keiri_agent.agents.helpdesk.offline.answers import SIMILARITY_MARGIN, support
from keiri_agent.config import Settings
from keiri_agent.errors import LLMError
from keiri_agent.llm.testing import HashEmbeddings
from keiri_agent.search.similarity import EmbeddingSimilarity, cosine, meaning_check

PART = "経費精算の締め日はいつですか"
DEADLINE = SearchOutput(
    file_name="manual.pdf",
    page=7,
    heading="4.1 経費精算の締め日",
    content="経費精算の締め日は毎月25日です。締め日を過ぎた申請は翌月扱いになります。",
    score=3.0,
)
MENU = SearchOutput(  # another document: the words alone cannot tell it from CLOSING
    file_name="screens.pdf",
    page=3,
    heading="2.1 経費精算の画面",
    content="経費精算の画面では、締め日の一覧と申請の状況を表示します。",
    score=2.5,
)
PAYDAY = SearchOutput(
    file_name="faq.csv",
    row=4,
    content="Q: 精算金はいつ振り込まれますか。 A: 承認の翌月10日に給与口座へ振り込みます。",
    score=2.0,
)


def by_text(scores: dict[str, float]) -> object:
    """A similarity that gives each passage (by its text) the score listed for it."""

    def similarity(question: str, passages: Sequence[str]) -> list[float]:
        assert question  # the part itself is compared, never an empty text
        return [scores[text] for text in passages]

    return similarity


def test_a_word_matching_passage_far_below_the_closest_in_meaning_is_not_quoted() -> None:
    words_only = support(PART, [DEADLINE, MENU])
    assert words_only.answered
    assert MENU in words_only.passages  # the words alone cannot tell them apart

    close = by_text({DEADLINE.content: 0.90, MENU.content: 0.90 - 2 * SIMILARITY_MARGIN})
    judged = support(PART, [DEADLINE, MENU], similarity=close)  # type: ignore[arg-type]
    assert judged.answered
    assert judged.passages == [DEADLINE]

    answer, sources = subtask_answer(PART, [DEADLINE, MENU], similarity=close)  # type: ignore[arg-type]
    assert "毎月25日" in answer
    assert len(sources) == 1 and "p.7" in sources[0], sources
    assert "p.3" not in answer


def test_a_part_whose_word_matching_passages_are_all_far_in_meaning_is_declined() -> None:
    """The closest passage in meaning shares no word with the part (the payday FAQ);
    the ones that share its words are far below it: nothing is quoted as the answer."""
    far = by_text(
        {
            MENU.content: 0.80,
            PAYDAY.content: 0.80 + 2 * SIMILARITY_MARGIN,
        }
    )
    answer, sources = subtask_answer(PART, [MENU, PAYDAY], similarity=far)  # type: ignore[arg-type]
    assert "資料には記載がありません" in answer
    assert sources == []
    assert "- " not in answer  # no quote
    done = reflect(PART, [MENU, PAYDAY], 0, similarity=far)  # type: ignore[arg-type]
    assert not done.is_completed
    judged = support(PART, [MENU, PAYDAY], similarity=far)  # type: ignore[arg-type]
    assert not judged.answered and judged.passages == []


def test_within_the_margin_the_words_decide_as_before() -> None:
    near = by_text({DEADLINE.content: 0.88, MENU.content: 0.88 + SIMILARITY_MARGIN / 2})
    judged = support(PART, [DEADLINE, MENU], similarity=near)  # type: ignore[arg-type]
    assert judged.passages == support(PART, [DEADLINE, MENU]).passages


class CountingEmbeddings(HashEmbeddings):
    def __init__(self) -> None:
        super().__init__(dim=32)
        self.documents: list[str] = []
        self.asked: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.asked.append(text)
        return super().embed_query(text)


def test_embedding_similarity_is_cosine_and_embeds_each_passage_once() -> None:
    model = CountingEmbeddings()
    similarity = EmbeddingSimilarity(model, cache_size=2)
    scores = similarity("締め日", ["締め日", "振込日", "締め日"])
    assert scores[0] == pytest.approx(
        cosine(model.embed_query("締め日"), model.embed_query("締め日"))
    )
    assert scores[0] == scores[2]
    assert model.documents == ["締め日", "振込日"]
    similarity("別の質問", ["振込日"])
    assert model.documents == ["締め日", "振込日"]  # cached
    similarity("別の質問", ["申請", "承認"])  # the cache keeps two: 振込日 and 締め日 go
    similarity("別の質問", ["振込日"])
    assert model.documents == ["締め日", "振込日", "申請", "承認", "振込日"]
    assert similarity("質問", []) == []
    assert model.asked.count("別の質問") == 1  # the question's vector is kept too
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_the_meaning_check_is_on_exactly_when_embeddings_are_configured(tmp_path: Path) -> None:
    assert meaning_check(Settings(home=tmp_path, provider="offline")) is None
    configured = Settings(
        home=tmp_path,
        provider="offline",
        embedding_provider="openai-compatible",
        embedding_base_url="http://127.0.0.1:9/v1",
        embedding_model="multilingual-e5-small",
    )
    assert isinstance(meaning_check(configured), EmbeddingSimilarity)


class MalformedEmbeddings(HashEmbeddings):
    """Answers queries in one dimension and passages in another (or nothing at all)."""

    def __init__(self, empty: bool = False) -> None:
        super().__init__(dim=16)
        self.empty = empty

    def embed_query(self, text: str) -> list[float]:
        return [] if self.empty else super().embed_query(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[*vector, 0.0] for vector in super().embed_documents(texts)]


def test_a_malformed_embeddings_reply_is_a_japanese_error_not_a_crash() -> None:
    with pytest.raises(LLMError, match="次元の異なるベクトル") as mixed:
        EmbeddingSimilarity(MalformedEmbeddings())("締め日", ["締め日は25日です"])
    assert mixed.value.details["reason"] == "vector_dimension" and mixed.value.hint
    with pytest.raises(LLMError, match="空のベクトル"):
        EmbeddingSimilarity(MalformedEmbeddings(empty=True))("締め日", ["締め日は25日です"])
