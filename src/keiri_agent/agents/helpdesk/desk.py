"""``HelpDesk``: the knowledge base and the agent together, as the CLI, the app and Python use them.

    desk = HelpDesk(settings)                       # Settings built once by the surface
    desk.index(["manuals/"], qa=["faq.csv"])        # incremental: changed files only
    result = desk.ask("パスワードの条件と、ロックされた時の解除方法を教えて")

The knowledge base lives in the workspace (``.keiri/knowledge/<name>``) with two
collections: ``manual`` (PDF, Markdown, DOCX, ... chunked with page and heading) and
``qa`` (FAQ CSV rows); their vector indexes (Qdrant collections ``<name>-manual`` and
``<name>-qa``) live in ``.keiri/qdrant`` or on ``qdrant_url``. Vectors are written when
an embeddings endpoint is configured (``Settings.active_embedding_provider``: its own
``embedding_*`` settings or the chat provider's — chat may be offline meanwhile); the
FAQ always, manuals when ``Settings.embed_manuals`` (``helpdesk_embed_manuals``, default
on with embeddings). A collection whose every document has its vectors is searched by
hybrid retrieval (keyword + vector, ``search.hybrid``), else by keyword — the tool's
results say so, and :meth:`HelpDesk.retrievers` says why (re-run ``index`` with
embeddings configured to add the missing vectors).

Settings used: ``helpdesk_system_name`` (tool names and descriptions: ``"XYZ"`` →
``search_xyz_manual``; never a key term of the offline rules), ``helpdesk_prompts_file``
(YAML of prompt overrides, see ``HelpDeskAgentPrompts.from_yaml``), ``qdrant_url`` (a
Qdrant server instead of the local folder). The knowledge base's own synonym groups are
``<workspace>/.keiri/knowledge/<name>/synonyms.txt`` (:attr:`HelpDesk.synonyms_file`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from keiri_agent.agents.helpdesk.agent import HelpDeskAgent
from keiri_agent.agents.helpdesk.models import AgentResult
from keiri_agent.agents.helpdesk.offline import SYNONYMS_FILE, Vocabulary, load_synonym_groups
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.tools import SearchTool, default_tools
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.events import EventCallback
from keiri_agent.search.hybrid import HybridSearcher
from keiri_agent.search.knowledge_base import IndexReport, KnowledgeBase, ProgressCallback
from keiri_agent.search.models import ChunkIndex, Hit, Retriever, Searcher

MANUAL = "manual"
QA = "qa"
SAMPLES = Path(str(files("keiri_agent.samples"))) / "helpdesk"
SAMPLE_DOCUMENTS = SAMPLES / "docs"
SAMPLE_FAQ = SAMPLES / "xyz_faq.csv"
EXAMPLE_QUESTION = "パスワードの条件と、ロックされた時の解除方法を教えて"


class HelpDesk:
    """A help desk over one knowledge base (``name``) in the workspace.

    Args:
        settings: Provider, workspace, HelpDesk settings (built by the surface).
        name: The knowledge base's name (one folder per name).
        chat_model: A chat model to use instead of the configured one (tests).
        use_vectors: Build vector indexes; default: when an embeddings endpoint is
            configured (whatever the chat provider).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        name: str = "helpdesk",
        chat_model: BaseChatModel | None = None,
        use_vectors: bool | None = None,
    ) -> None:
        self.settings = settings
        self.name = name
        self.chat_model = chat_model
        self.use_vectors = (
            settings.active_embedding_provider is not None if use_vectors is None else use_vectors
        )
        factory: Callable[[str], ChunkIndex | None] | None = None
        if self.use_vectors:

            def factory(collection: str) -> ChunkIndex | None:
                if collection == MANUAL and not self.settings.embed_manuals:
                    return None
                from keiri_agent.search.vector import VectorIndex  # qdrant-client: ~2 s import

                return VectorIndex.from_settings(self.settings, f"{name}-{collection}")

        self.knowledge_base = KnowledgeBase.for_workspace(
            self.settings, name, vector_index_factory=factory
        )

    # --- indexing ---------------------------------------------------------------------

    def index(
        self,
        documents: Sequence[Path | str] = (),
        *,
        qa: Sequence[Path | str] = (),
        on_progress: ProgressCallback | None = None,
    ) -> dict[str, IndexReport]:
        """Index manuals (files or folders) into ``manual`` and FAQs (CSV, XLSX) into ``qa``.

        Only files changed since the last run are re-read. Returns a report per
        collection that was given files.
        """
        if not documents and not qa:
            raise UserInputError(
                "登録する文書が指定されていません",
                hint="マニュアルのファイルかフォルダ、または --qa で FAQ の CSV か Excel ファイルを"
                "指定してください（同梱のサンプルを登録するには --sample を付けます）。",
            )
        reports: dict[str, IndexReport] = {}
        if documents:
            reports[MANUAL] = self.knowledge_base.index_files(
                documents, MANUAL, on_progress=on_progress
            )
        if qa:
            reports[QA] = self.knowledge_base.index_files(qa, QA, faq=True, on_progress=on_progress)
        return reports

    def index_sample(self, on_progress: ProgressCallback | None = None) -> dict[str, IndexReport]:
        """Index the bundled XYZ system manual and FAQ."""
        return self.index([SAMPLE_DOCUMENTS], qa=[SAMPLE_FAQ], on_progress=on_progress)

    def remove(self, documents: Sequence[str], collection: str = MANUAL) -> IndexReport:
        """Remove documents (by name) from a collection."""
        return self.knowledge_base.remove(documents, collection)

    # --- asking -----------------------------------------------------------------------

    def tools(self) -> list[SearchTool]:
        """The seed's two search tools over this knowledge base."""
        self.check_ready()
        manual: Searcher = self._searcher(MANUAL)
        qa: Searcher = self._searcher(QA)
        return default_tools(manual, qa, system_name=self.settings.helpdesk.helpdesk_system_name)

    def check_ready(self) -> None:
        """``EMPTY_KNOWLEDGE_BASE`` when nothing is indexed yet (said before an ask starts)."""
        collections = self.knowledge_base.collections()
        if MANUAL not in collections and QA not in collections:
            raise UserInputError(
                f"ナレッジベース「{self.name}」にはまだ資料が登録されていません",
                hint="先にマニュアルや FAQ を登録してください（画面の「資料を登録」、または "
                "keiri-agent helpdesk index マニュアル... --qa FAQ.csv。試すだけなら "
                "keiri-agent helpdesk index --sample で付属の XYZ マニュアルを登録できます）",
                code="EMPTY_KNOWLEDGE_BASE",
            )

    def _searcher(self, collection: str) -> Searcher:
        """The collection's searcher; an empty stand-in when it was never indexed."""
        if collection not in self.knowledge_base.collections():
            return _EmptySearcher()
        keyword = self.knowledge_base.keyword(collection)
        if self.use_vectors and self.knowledge_base.vectors_complete(collection):
            vector = self.knowledge_base.vector(collection)
            if vector is not None:
                return HybridSearcher([keyword, vector])
        # no embeddings, or documents indexed without vectors (e.g. while offline):
        # keyword search, which the tool's results say
        return keyword

    def retrievers(self) -> dict[str, RetrieverStatus]:
        """Per indexed collection: how it is searched and, when not by vector, why.

        Read from the settings and the manifest (which documents have vectors): the
        vector index is not opened.
        """
        out: dict[str, RetrieverStatus] = {}
        for collection in self.knowledge_base.collections():
            manifest = self.knowledge_base.documents(collection)
            out[collection] = _retriever_status(self.settings, collection, manifest)
        return out

    @property
    def synonyms_file(self) -> Path:
        """The knowledge base's own synonym groups (optional; see ``offline.terms``)."""
        return self.knowledge_base.root / SYNONYMS_FILE

    def vocabulary(self) -> Vocabulary:
        """The offline rules' words: the system name, built-in and this base's synonyms.

        Raises:
            UserInputError: ``synonyms_file`` has an invalid line (file and line named).
        """
        return Vocabulary.build(
            system_name=self.settings.helpdesk.helpdesk_system_name,
            synonym_groups=load_synonym_groups(self.synonyms_file),
        )

    def agent(self) -> HelpDeskAgent:
        """The agent over this knowledge base, with the configured prompts and vocabulary."""
        prompts_file = self.settings.helpdesk.helpdesk_prompts_file
        prompts = HelpDeskAgentPrompts.from_yaml(prompts_file) if prompts_file else None
        return HelpDeskAgent(
            self.settings,
            tools=self.tools(),
            prompts=prompts,
            chat_model=self.chat_model,
            vocabulary=self.vocabulary(),
        )

    def ask(
        self, question: str, *, on_event: EventCallback | None = None, run_id: str | None = None
    ) -> AgentResult:
        """Answer ``question`` (planned, searched per part in parallel, checked, cited),
        with :meth:`retrieval_warnings` in ``warnings``; ``run_id`` names its events."""
        warnings = self.retrieval_warnings()
        result = self.agent().run_agent(question, on_event=on_event, run_id=run_id)
        return result.model_copy(update={"warnings": warnings}) if warnings else result

    def retrieval_warnings(self) -> list[str]:
        """A warning (Japanese) per collection searched by keywords alone although an
        embeddings endpoint is configured: the user expects vector search, so the answer
        says it did not happen and why. None when embeddings are not configured (keyword
        search is then the mode, which the offline notice already says)."""
        if self.settings.active_embedding_provider is None:
            return []
        return [
            f"{COLLECTION_LABELS.get(name, name)}はキーワード検索だけで検索しました"
            f"（ベクトル検索を使えませんでした: {status.reason}）"
            for name, status in self.retrievers().items()
            if status.retriever == "keyword" and status.reason
        ]


COLLECTION_LABELS = {MANUAL: "マニュアル", QA: "FAQ"}
"""How each collection is named to the user."""

RETRIEVER_LABELS: dict[Retriever, str] = {
    "keyword": "キーワード検索",
    "vector": "ベクトル検索",
    "hybrid": "ハイブリッド検索（キーワード＋ベクトル）",
}
"""How each retriever is named to the user (``helpdesk status``, the HelpDesk page)."""


@dataclass(frozen=True)
class RetrieverStatus:
    """How a collection is searched: ``keyword``, ``vector`` or ``hybrid``; ``reason``
    (Japanese, for the user) says why vectors are not used, with the fix."""

    retriever: Retriever
    reason: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"retriever": self.retriever, "reason": self.reason}


def _retriever_status(
    settings: Settings, collection: str, manifest: dict[str, dict[str, Any]]
) -> RetrieverStatus:
    problem = settings.embeddings_problem()
    if settings.active_embedding_provider is None:
        return RetrieverStatus(
            "keyword",
            "埋め込みが未設定です。ベクトル検索を使うには "
            "KEIRI_AGENT_EMBEDDING_PROVIDER と接続先を設定して、資料を登録し直してください",
        )
    if problem is not None:
        return RetrieverStatus(
            "keyword", f"埋め込みの設定が不完全です: {problem.message}。{problem.hint or ''}"
        )
    if collection == MANUAL and not settings.embed_manuals:
        return RetrieverStatus(
            "keyword",
            "マニュアルの埋め込みが無効です（KEIRI_AGENT_HELPDESK_EMBED_MANUALS=false）",
        )
    if not manifest:
        return RetrieverStatus("keyword", "登録された資料がありません")
    missing = [name for name, entry in manifest.items() if not entry.get("vector")]
    if missing:
        return RetrieverStatus(
            "keyword",
            f"再インデックスが必要です（ベクトルのない資料: {len(missing)} 件）。"
            "keiri-agent helpdesk index で登録し直すとベクトルが追加されます",
        )
    return RetrieverStatus("hybrid")


class _EmptySearcher:
    """A collection with nothing indexed: every search finds nothing."""

    retriever: Retriever = "keyword"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return []
