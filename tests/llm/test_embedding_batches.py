"""BatchedEmbedder: a batch that times out is sent again in halves, the smaller size is
kept, a single text that times out is a clear error; timeouts are told by their type."""

from __future__ import annotations

import httpx
import httpx2
import openai
import pytest

from keiri_agent.errors import LLMError
from keiri_agent.llm.embedding_batches import BatchedEmbedder, is_timeout
from keiri_agent.llm.testing import TimingOutEmbeddings, sdk_timeout, stub_embedding

TEXTS = [f"経費精算の規程 第{number}条" for number in range(20)]
REQUEST = httpx2.Request("POST", "http://127.0.0.1/v1/embeddings")


def test_a_batch_that_times_out_is_sent_again_in_halves_and_the_vectors_stay_aligned() -> None:
    model = TimingOutEmbeddings(most=3)
    embedder = BatchedEmbedder(model, batch_size=16)
    progress: list[tuple[int, int]] = []

    vectors = embedder.embed(TEXTS, on_batch=lambda done, total: progress.append((done, total)))

    assert vectors == [stub_embedding(text) for text in TEXTS]
    assert model.sizes == [16, 8, 4] + [2] * 10
    assert progress == [(done, 20) for done in range(2, 21, 2)]
    assert embedder.batch_size == 2


def test_the_size_that_worked_is_kept_for_later_calls() -> None:
    model = TimingOutEmbeddings(most=5)
    embedder = BatchedEmbedder(model, batch_size=8)
    embedder.embed(TEXTS[:8])
    model.sizes.clear()

    assert embedder.embed(TEXTS) == [stub_embedding(text) for text in TEXTS]
    assert model.sizes == [4] * 5  # no timeout this time


def test_a_single_text_that_times_out_is_a_clear_error() -> None:
    model = TimingOutEmbeddings(most=0)
    with pytest.raises(LLMError) as caught:
        BatchedEmbedder(model, batch_size=4).embed(TEXTS[:4])
    error = caught.value
    assert model.sizes == [4, 2, 1]
    assert "時間内に応答しませんでした" in error.message and "文章 1 件" in error.message
    assert "KEIRI_AGENT_REQUEST_TIMEOUT_S" in (error.hint or "")
    assert error.details["reason"] == "embedding_timeout"
    assert error.details["error_type"] == "APITimeoutError"


def test_a_connect_timeout_is_not_about_the_batch_and_fails_at_once() -> None:
    class Unreachable(TimingOutEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.sizes.append(len(texts))
            raise sdk_timeout(httpx2.ConnectTimeout)

    model = Unreachable(most=100)
    with pytest.raises(LLMError) as caught:
        BatchedEmbedder(model, batch_size=8).embed(TEXTS)
    assert model.sizes == [8]
    assert caught.value.details["error_type"] == "APITimeoutError"  # the SDK error, translated


@pytest.mark.parametrize(
    ("error", "timeout"),
    [
        pytest.param(sdk_timeout(), True, id="sdk-read-timeout"),
        pytest.param(sdk_timeout(httpx2.WriteTimeout), True, id="sdk-write-timeout"),
        pytest.param(sdk_timeout(httpx2.ConnectTimeout), False, id="sdk-connect-timeout"),
        pytest.param(sdk_timeout(httpx2.PoolTimeout), False, id="sdk-pool-timeout"),
        pytest.param(httpx2.ReadTimeout("timed out", request=REQUEST), True, id="httpx2-read"),
        pytest.param(httpx.ReadTimeout("timed out"), True, id="httpx-read"),
        pytest.param(httpx.ConnectTimeout("timed out"), False, id="httpx-connect"),
        pytest.param(openai.APIConnectionError(request=REQUEST), False, id="sdk-connection"),
        pytest.param(TimeoutError("Request timed out."), False, id="builtin-timeout"),
        # the message says so, the type does not: not a timeout
        pytest.param(ValueError("Request timed out."), False, id="message-only"),
    ],
)
def test_what_counts_as_a_timeout(error: Exception, timeout: bool) -> None:
    assert is_timeout(error) is timeout


def test_the_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        BatchedEmbedder(TimingOutEmbeddings(most=1), batch_size=0)
