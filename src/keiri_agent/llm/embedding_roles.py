"""Embeddings that tell a search query from an indexed passage.

Asymmetric models (e5, NVIDIA NIM retrievers) embed a query and a passage
differently. ``RoleEmbeddings`` wraps an OpenAI(-compatible) embeddings client:
``embed_documents`` (what the vector index stores) sends passages,
``embed_query`` (what a search sends) sends a query, each with its configured
text prefix (``"passage: "`` / ``"query: "`` for e5 served by a plain server)
and/or the request field ``"input_type": "passage" | "query"`` (servers that add
the prefixes themselves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from langchain_openai import OpenAIEmbeddings


class RoleEmbeddings(Embeddings):
    """``model`` with query/passage prefixes and, when ``input_type``, the
    ``input_type`` request field.

    The endpoint attributes (``openai_api_base``, ``azure_endpoint``) are the
    wrapped client's, so errors name the endpoint.
    """

    def __init__(
        self,
        model: OpenAIEmbeddings,
        *,
        query_prefix: str = "",
        passage_prefix: str = "",
        input_type: bool = False,
    ) -> None:
        self.model = model
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.input_type = input_type

    @property
    def openai_api_base(self) -> str | None:
        return self.model.openai_api_base

    @property
    def azure_endpoint(self) -> str | None:
        endpoint = getattr(self.model, "azure_endpoint", None)
        return str(endpoint) if endpoint else None

    def _extra(self, role: str) -> dict[str, Any]:
        # the openai SDK takes fields it does not know through ``extra_body``
        return {"extra_body": {"input_type": role}} if self.input_type else {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        passages = [self.passage_prefix + text for text in texts]
        return self.model.embed_documents(passages, **self._extra("passage"))

    def embed_query(self, text: str) -> list[float]:
        query = self.query_prefix + text
        return self.model.embed_documents([query], **self._extra("query"))[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        passages = [self.passage_prefix + text for text in texts]
        return await self.model.aembed_documents(passages, **self._extra("passage"))

    async def aembed_query(self, text: str) -> list[float]:
        query = self.query_prefix + text
        return (await self.model.aembed_documents([query], **self._extra("query")))[0]

    def __repr__(self) -> str:
        return (
            f"RoleEmbeddings({self.model.model!r}, query_prefix={self.query_prefix!r}, "
            f"passage_prefix={self.passage_prefix!r}, input_type={self.input_type})"
        )
