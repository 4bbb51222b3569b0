"""Search: chunks, a Japanese keyword index, a vector index, hybrid fusion (ARCHITECTURE §4)."""

from keiri_agent.search.models import Chunk, ChunkIndex, Hit, Retriever, Searcher, Source

__all__ = ["Chunk", "ChunkIndex", "Hit", "Retriever", "Searcher", "Source"]
