"""``HelpDesk``: the knowledge base and the agent together, as the CLI, the app and Python use them.

    desk = HelpDesk(settings)                       # Settings built once by the surface
    desk.index(["manuals/"], qa=["faq.csv"])        # incremental: changed files only
    result = desk.ask("パスワードの条件と、ロックされた時の解除方法を教えて")

The knowledge base lives in the workspace (``.keiri/knowledge/<name>``) with two
collections: ``manual`` (PDF, Markdown, DOCX, ... chunked with page and heading) and
``qa`` (FAQ CSV rows); the FAQ's vector index (Qdrant collection ``<name>-qa``) lives in
``.keiri/qdrant`` or on ``qdrant_url``. The manual tool searches the keyword index (seed 001:
``search_xyz_manual``); the FAQ tool searches the FAQ's vector index when an
embeddings provider is configured and every FAQ file has its vectors
(``search_xyz_qa``), and its keyword index otherwise — the tool's results say so
(re-run ``index`` with embeddings configured to add the missing vectors).

Settings used: ``helpdesk_system_name`` (tool names and descriptions: ``"XYZ"`` →
``search_xyz_manual``; never a key term of the offline rules), ``helpdesk_prompts_file``
(YAML of prompt overrides, see ``HelpDeskAgentPrompts.from_yaml``), ``qdrant_url`` (a
Qdrant server instead of the local folder). The knowledge base's own synonym groups are
``<workspace>/.keiri/knowledge/<name>/synonyms.txt`` (:attr:`HelpDesk.synonyms_file`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from keiri_agent.agents.helpdesk.agent import HelpDeskAgent
from keiri_agent.agents.helpdesk.models import AgentResult
from keiri_agent.agents.helpdesk.offline import SYNONYMS_FILE, Vocabulary, load_synonym_groups
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.tools import SearchTool, default_tools
from keiri_agent.config import Settings
from keiri_agent.errors import UserInputError
from keiri_agent.events import EventCallback
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
        use_vectors: Build vector indexes; default: when an LLM provider is configured.
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
        self.use_vectors = (not self.settings.is_offline) if use_vectors is None else use_vectors
        factory: Callable[[str], ChunkIndex | None] | None = None
        if self.use_vectors:

            def factory(collection: str) -> ChunkIndex | None:
                # only the FAQ is searched by vector (seed 001): manuals are not embedded
                if collection != QA:
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
        """Index manuals (files or folders) into ``manual`` and FAQ CSVs into ``qa``.

        Only files changed since the last run are re-read. Returns a report per
        collection that was given files.
        """
        if not documents and not qa:
            raise UserInputError(
                "nothing to index",
                hint="give manual files or folders, and/or --qa FAQ.csv "
                "(or index the bundled sample with --sample)",
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
        collections = self.knowledge_base.collections()
        if MANUAL not in collections and QA not in collections:
            raise UserInputError(
                f"ナレッジベース「{self.name}」にはまだ資料が登録されていません",
                hint="先にマニュアルや FAQ を登録してください（画面の「資料を登録」、または "
                "keiri-agent helpdesk index マニュアル... --qa FAQ.csv。試すだけなら "
                "keiri-agent helpdesk index --sample で付属の XYZ マニュアルを登録できます）",
                code="EMPTY_KNOWLEDGE_BASE",
            )
        manual: Searcher = self._searcher(MANUAL, prefer_vector=False)
        qa: Searcher = self._searcher(QA, prefer_vector=True)
        return default_tools(manual, qa, system_name=self.settings.helpdesk_system_name)

    def _searcher(self, collection: str, *, prefer_vector: bool) -> Searcher:
        """The collection's searcher; an empty stand-in when it was never indexed."""
        if collection not in self.knowledge_base.collections():
            return _EmptySearcher()
        if prefer_vector and self.use_vectors and self.knowledge_base.vectors_complete(collection):
            vector = self.knowledge_base.vector(collection)
            if vector is not None:
                return vector
        # no embeddings, or documents indexed without vectors (e.g. while offline):
        # keyword search, which the tool's results say
        return self.knowledge_base.keyword(collection)

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
            system_name=self.settings.helpdesk_system_name,
            synonym_groups=load_synonym_groups(self.synonyms_file),
        )

    def agent(self) -> HelpDeskAgent:
        """The agent over this knowledge base, with the configured prompts and vocabulary."""
        prompts_file = self.settings.helpdesk_prompts_file
        prompts = HelpDeskAgentPrompts.from_yaml(prompts_file) if prompts_file else None
        return HelpDeskAgent(
            self.settings,
            tools=self.tools(),
            prompts=prompts,
            chat_model=self.chat_model,
            vocabulary=self.vocabulary(),
        )

    def ask(self, question: str, *, on_event: EventCallback | None = None) -> AgentResult:
        """Answer ``question`` (planned, searched per part in parallel, checked, cited)."""
        return self.agent().run_agent(question, on_event=on_event)


class _EmptySearcher:
    """A collection with nothing indexed: every search finds nothing."""

    retriever: Retriever = "keyword"

    def search(self, query: str, k: int = 5) -> list[Hit]:
        return []
