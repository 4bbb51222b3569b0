"""Plan design for every surface: generate, check, register (seed 003).

``DesignService`` wires ``plans.design`` from the settings once per surface (the CLI
command, a browser session, the API): the template library (bundled + the
workspace's ``designs/templates/``), the block retriever (BM25; hybrid with the
configured embeddings provider, the catalog's vectors cached under ``.keiri/design/``;
BM25 alone, with a warning the surfaces show, when the embeddings service fails),
the chat model (none offline), the reference-document limits and the generation
metrics (``logs/design_generations.jsonl``). The CLI, the 設計 page and the API call
these methods and render what comes back; none of them holds design logic.
"""

from __future__ import annotations

import difflib
import hashlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.config import Settings
from keiri_agent.errors import KeiriAgentError, LLMError, UserInputError
from keiri_agent.plans.design.design_chat import DesignChat
from keiri_agent.plans.design.documents import digest_documents, extract_design_documents
from keiri_agent.plans.design.generator import generate_plan
from keiri_agent.plans.design.metrics import (
    METRICS_FILE,
    generation_record,
    record_generation,
    summarize_generations,
)
from keiri_agent.plans.design.models import (
    BlockCandidate,
    DesignEngineOptions,
    DocumentDigest,
    GeneratedPlan,
    TemplateSpec,
)
from keiri_agent.plans.design.retrieval import BlockRetriever
from keiri_agent.plans.design.templates import TemplateLibrary
from keiri_agent.plans.dsl.loader import check_plan_text, load_plan_file
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.pinning import pin_block_majors
from keiri_agent.plans.store import PlanStore, compatibility_changes
from keiri_agent.workspace import Workspace

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from keiri_agent.events import EventCallback
    from keiri_agent.plans.check.dry_run_report import DryRunReport
    from keiri_agent.plans.issues import ValidationReport

ModelFactory = Callable[[Settings], "BaseChatModel"]
MAX_SAMPLE_COLUMNS = 200
KEYWORD_FALLBACK_WARNING = (
    "埋め込み検索に失敗したため、キーワード検索だけで候補ブロックを探しました（{reason}）。"
    "指示と違う言葉で説明されたブロックは候補に入っていないことがあります。"
)
"""Said with the candidates (and a generation's warnings) when the embeddings failed."""

logger = logging.getLogger(__name__)


def sample_columns(samples: Sequence[tuple[str, bytes]], settings: Settings) -> list[str]:
    """The column names of sample CSV / Excel files, in order, each once."""
    from keiri_agent.blocks.base import BlockContext
    from keiri_agent.blocks.table_file import ReadBlock
    from keiri_agent.errors import BlockError

    columns: list[str] = []
    for name, data in samples:
        context = BlockContext("design", "design", "sample", settings, logging.getLogger(__name__))
        try:
            read = ReadBlock().run({"file": {"name": name, "data": data}}, context)
        except BlockError as error:
            raise UserInputError(
                f"見本のファイル {name} の列を読めません（{error.message}）",
                hint="見出しのある CSV か Excel（.xlsx）を指定してください",
                code="DESIGN_SAMPLE_UNREADABLE",
            ) from None
        columns.extend(str(column) for column in read["columns"])
    return list(dict.fromkeys(columns))[:MAX_SAMPLE_COLUMNS]


def with_answers(instruction: str, result: GeneratedPlan, answers: Mapping[str, Any]) -> str:
    """The instruction followed by the questions and the user's answers (for the model)."""
    asked = {str(item.id): item.label or item.id for item in result.requirements}
    lines = [f"- {asked.get(key, key)}: {value}" for key, value in answers.items()]
    return instruction.rstrip() + "\n\n## 確認済みの回答\n" + "\n".join(lines)


def rejudged(
    yaml_text: str, result: GeneratedPlan, engine: PlanEngine, *, pending: Sequence[Any]
) -> GeneratedPlan:
    """``result`` after its answers were written into ``yaml_text``: checked, dry-run and
    covered again; the questions still open stay."""
    import yaml

    from keiri_agent.plans.design.coverage import check_coverage, resolved_vars
    from keiri_agent.plans.design.procedure_plan import answered
    from keiri_agent.plans.design.requirements import build_requirements

    loaded = check_plan_text(yaml_text)
    report = engine.check(yaml_text)
    still = {str(item.id) for item in pending}
    questions = [q for q in result.questions if str(q.get("var")) in still]
    ready = loaded.plan is not None and report.ok and not questions
    dry_run = engine.dry_run(loaded.plan) if ready and loaded.plan is not None else None
    plan_dict = yaml.safe_load(yaml_text) if loaded.plan is not None else {}
    values = plan_dict.get("vars") or {} if isinstance(plan_dict, dict) else {}
    procedure = (
        answered(result.procedure, result.questions, values)
        if result.procedure is not None
        else None
    )
    return replace(
        result,
        plan=loaded.plan,
        yaml_text=yaml_text,
        report=report,
        dry_run=dry_run,
        questions=questions,
        requirements=build_requirements(
            yaml_text,
            catalog=engine.catalog,
            var_questions={str(q["var"]): q for q in questions},
        ),
        procedure=procedure,
        coverage=(
            check_coverage(procedure, resolved_vars(plan_dict))
            if procedure is not None and isinstance(plan_dict, dict)
            else result.coverage
        ),
    )


@dataclass(frozen=True)
class DesignRequest:
    """What a user asks the generator for."""

    instruction: str
    documents: Sequence[tuple[str, bytes]] = ()
    """Reference documents as (file name, bytes)."""
    templates: Sequence[str] = ()
    apply_mode: str = "hint"
    pinned: Sequence[str] = ()
    """Blocks always offered to the model."""
    fallback: bool | None = None
    """None: the setting (KEIRI_AGENT_LLM_FALLBACK)."""
    plan_id: str | None = None
    samples: Sequence[tuple[str, bytes]] = ()
    """Sample data files (name, bytes): a question about a column offers their columns."""


@dataclass
class DesignCheck:
    """検証/ドライラン of an edited Plan text."""

    report: ValidationReport
    dry_run: DryRunReport | None = None
    dry_run_error: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.report.ok and self.dry_run is not None and self.dry_run.ok


@dataclass(frozen=True)
class CandidateSearch:
    """The candidate blocks of an instruction and, when the embeddings service failed and
    keyword search (BM25) alone found them, ``keyword_fallback``: that error's message."""

    candidates: list[BlockCandidate]
    keyword_fallback: str | None = None

    @property
    def warning(self) -> str | None:
        """What the user is told when the candidates come from keyword search alone."""
        if self.keyword_fallback is None:
            return None
        return KEYWORD_FALLBACK_WARNING.format(reason=self.keyword_fallback)


@dataclass
class Generation:
    """A generation and what the surfaces show next to it."""

    result: GeneratedPlan
    digest: DocumentDigest
    seconds: float
    metrics_path: Path | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Registered:
    """A registered Plan file and what changed since the Plan's previous version."""

    path: Path
    warnings: list[str] = field(default_factory=list)
    previous: Path | None = None
    """The file of the version it replaces (None: its first version)."""

    def audit_details(self, file_id: str, version: str) -> dict[str, Any]:
        """What the audit trail keeps of the registration: the file, its version and
        SHA-256, what changed for callers, and the line diff against the previous
        version (at most ``MAX_DIFF_LINES`` lines; ``diff_truncated`` says when cut)."""
        text = self.path.read_text(encoding="utf-8")
        before = self.previous.read_text(encoding="utf-8") if self.previous is not None else ""
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        for secret in _secret_values(self.path, self.previous):  # e.g. a bank account
            text, before = text.replace(secret, "***"), before.replace(secret, "***")
        diff = list(
            difflib.unified_diff(
                before.splitlines(),
                text.splitlines(),
                self.previous.name if self.previous is not None else "(なし)",
                self.path.name,
                lineterm="",
            )
        )
        return {
            "file": file_id,
            "version": version,
            "sha256": digest,
            "previous": self.previous.name if self.previous is not None else None,
            "changes": self.warnings,
            "diff": "\n".join(diff[:MAX_DIFF_LINES]),
            "diff_truncated": len(diff) > MAX_DIFF_LINES,
        }


MAX_DIFF_LINES = 400
"""The longest Plan diff one audit entry keeps."""


def _secret_values(*paths: Path | None) -> list[str]:
    """The values of the secret vars (``Plan.is_secret_var``) of the Plans in ``paths``,
    longest first: they never enter a diff the audit trail keeps."""
    found: set[str] = set()
    for path in paths:
        if path is None:
            continue
        try:
            plan = load_plan_file(path)
        except KeiriAgentError:
            continue
        for name, value in plan.vars.items():
            if plan.is_secret_var(name) and isinstance(value, str | int) and len(str(value)) >= 4:
                found.add(str(value))
    return sorted(found, key=len, reverse=True)


def _latest_registered(store: PlanStore, plan_id: str) -> Plan | None:
    """The last registered version of ``plan_id`` (``None``: none, or it no longer loads:
    then there is nothing to compare with)."""
    versions = store.versions(plan_id)
    if not versions:
        return None
    try:
        return load_plan_file(versions[-1].path)
    except KeiriAgentError:
        return None


class DesignService:
    """Plan generation, checking and registration over one ``PlanEngine``."""

    def __init__(
        self,
        settings: Settings,
        engine: PlanEngine | None = None,
        *,
        model_factory: ModelFactory | None = None,
    ) -> None:
        self.settings = settings
        self.engine = engine or PlanEngine(settings)
        self.workspace = Workspace.from_settings(settings)
        self._model_factory = model_factory
        self._library: TemplateLibrary | None = None
        self._retriever: BlockRetriever | None = None

    # --- what the generator draws on ---------------------------------------------------

    @property
    def offline(self) -> bool:
        """True when no chat model is used (the offline provider, no factory given)."""
        return self._model_factory is None and self.settings.llm.is_offline

    @property
    def library(self) -> TemplateLibrary:
        if self._library is None:
            self._library = TemplateLibrary.from_settings(self.settings)
        return self._library

    def templates(self) -> list[TemplateSpec]:
        return self.library.all()

    def retriever(self) -> BlockRetriever:
        if self._retriever is None:
            embeddings = None
            if self.settings.active_embedding_provider is not None:
                from keiri_agent.llm.factory import embeddings as build_embeddings

                embeddings = build_embeddings(self.settings)
            self._retriever = BlockRetriever(
                self.engine.catalog,
                embeddings=embeddings,
                cache_dir=self.workspace.state / "design",
                embedding_batch_size=self.settings.embeddings.embedding_batch_size,
            )
        return self._retriever

    def candidates(self, instruction: str, pinned: Sequence[str] = ()) -> CandidateSearch:
        """Top-K candidate blocks for ``instruction`` (pinned ones always), as the model
        would see them. Keyword search alone when the embeddings service fails, and then
        the result says so (``CandidateSearch.warning``)."""
        options = self.options(pinned=pinned)
        text = instruction.strip()
        if not text and not pinned:
            return CandidateSearch([])
        retriever = self.retriever()
        try:
            found = retriever.search(
                text or " ".join(pinned),
                per_category=options.topk_per_category,
                total=options.topk_total,
                pinned=tuple(pinned),
            )
        except LLMError as error:
            if retriever.embeddings is None:
                raise
            logger.warning(
                "block retrieval: embeddings failed (%s, %s); searching by keyword only",
                error.code,
                error.details.get("error_type") or error.details.get("reason"),
            )
            found = retriever.search(
                text,
                per_category=options.topk_per_category,
                total=options.topk_total,
                pinned=tuple(pinned),
                method="bm25",
            )
            return CandidateSearch(found, keyword_fallback=error.message)
        return CandidateSearch(found)

    def options(self, **overrides: Any) -> DesignEngineOptions:
        pinned = tuple(overrides.pop("pinned", ()) or ())
        return DesignEngineOptions.from_settings(
            self.settings.design, pinned_blocks=pinned, **overrides
        )

    def read_documents(self, files: Sequence[tuple[str, bytes]]) -> DocumentDigest:
        """Reference documents → the digest the prompt sees (never raises for a bad file)."""
        documents = extract_design_documents(
            files,
            max_chars=self.settings.design.design_max_extract_chars,
            max_pdf_pages=self.settings.design.design_max_pdf_pages,
        )
        return digest_documents(documents, max_chars=self.settings.design.design_max_docs_chars)

    def model(self) -> BaseChatModel | None:
        if self._model_factory is not None:
            return self._model_factory(self.settings)
        if self.settings.llm.is_offline:
            return None
        from keiri_agent.llm.factory import chat_model

        return chat_model(self.settings)

    # --- generate, check, register -----------------------------------------------------

    def generate(
        self, request: DesignRequest, *, on_event: EventCallback | None = None
    ) -> Generation:
        """Generate a checked Plan; one metrics record is written whatever the outcome
        (a failure is recorded, then raised)."""
        started = time.perf_counter()
        digest = self.read_documents(request.documents)
        options = self.options(pinned=request.pinned)
        if request.fallback is not None:
            options = replace(options, fallback=request.fallback)
        candidates: list[BlockCandidate] = []
        try:
            search = self.candidates(request.instruction, request.pinned)
            candidates = search.candidates
            columns = sample_columns(request.samples, self.settings)
            result = generate_plan(
                request.instruction,
                digest,
                self.engine.catalog,
                options,
                list(request.templates),
                request.apply_mode,
                engine=self.engine,
                model=self.model(),
                library=self.library,
                candidates=candidates,
                plan_id=request.plan_id,
                on_event=on_event,
                columns=columns,
            )
        except KeiriAgentError as error:
            failed = GeneratedPlan(
                plan=None,
                yaml_text="",
                reasoning=f"error: {error.code}",
                apply_mode=request.apply_mode,
                offline=self.offline,
                candidates=candidates,
            )
            self._record(failed, request, time.perf_counter() - started)
            raise
        if search.warning is not None:
            result.warnings.append(search.warning)
        seconds = time.perf_counter() - started
        path = self._record(result, request, seconds)
        return Generation(result=result, digest=digest, seconds=seconds, metrics_path=path)

    def _record(self, result: GeneratedPlan, request: DesignRequest, seconds: float) -> Path | None:
        record = generation_record(
            result,
            instruction=request.instruction,
            documents=[name for name, _ in request.documents],
            total_seconds=seconds,
            dry_run_seconds=result.dry_run_seconds,
            tokens=dict(result.tokens) if result.tokens else None,
            plan_id=result.plan.id if result.plan is not None else request.plan_id,
        )
        try:
            return record_generation(self.workspace.ensure(self.workspace.logs), record)
        except OSError:
            return None  # metrics never stop a generation

    def settle(
        self,
        request: DesignRequest,
        result: GeneratedPlan,
        answers: Mapping[str, Any],
        *,
        on_event: EventCallback | None = None,
    ) -> GeneratedPlan:
        """The generated Plan with the user's answers to its questions, judged again.

        Offline the answers are written into the Plan (``DesignChat``) and the Plan is
        checked, dry-run and covered against the same requirements; with a model the
        answers go back to it with the instruction (a new generation). Answers that do
        not fit their question raise ``UserInputError`` naming each one.
        """
        if not result.yaml_text:
            raise UserInputError(
                "答える質問のある Plan がありません",
                hint="先に指示から Plan を生成してください",
                code="DESIGN_NOTHING_TO_ANSWER",
            )
        if self.model() is not None:
            return self.generate(
                replace(request, instruction=with_answers(request.instruction, result, answers)),
                on_event=on_event,
            ).result
        chat = DesignChat(result.yaml_text, result.requirements)
        turn = chat.answer(dict(answers))
        if turn.errors:
            raise UserInputError(
                "回答に使えない値があります: "
                + "; ".join(f"{key}: {message}" for key, message in turn.errors.items()),
                hint="質問の選択肢か、列の見出しをそのまま入力してください",
                code="DESIGN_ANSWER_INVALID",
                details={"errors": dict(turn.errors)},
            )
        return rejudged(chat.apply(), result, self.engine, pending=chat.pending)

    def check(self, yaml_text: str) -> DesignCheck:
        """検証/ドライラン of an edited Plan text (the dry run only when it validates)."""
        report = self.engine.check(yaml_text)
        loaded = check_plan_text(yaml_text)
        if not report.ok or loaded.plan is None:
            return DesignCheck(report=report)
        try:
            return DesignCheck(report=report, dry_run=self.engine.dry_run(loaded.plan))
        except KeiriAgentError as error:
            return DesignCheck(report=report, dry_run_error=error.to_dict())

    def register(self, yaml_text: str, *, accept_major: bool = False) -> Registered:
        """Save the Plan as ``designs/<plan_id>_<yyyymmddHHMM>.yaml`` (never overwriting),
        with what changed since its last registered version
        (``PlanStore.compatibility_changes``); each bare block id is written with the
        major version it was validated with (``plans.pinning``).

        Raises:
            UserInputError: The Plan does not validate (code DESIGN_NOT_VALID, the
                errors in ``details``), or it changes what callers may rely on — a
                major version, removed vars or exports — and ``accept_major`` is not
                given (code BREAKING_CHANGE, the changes in ``details``).
        """
        report = self.engine.check(yaml_text)
        loaded = check_plan_text(yaml_text)
        if not report.ok or loaded.plan is None:
            raise UserInputError(
                f"Plan に {len(report.errors)} 件のエラーがあるため登録できません",
                hint="「検証/ドライラン」でエラーを確認して直してから登録してください",
                code="DESIGN_NOT_VALID",
                details={"errors": [issue.to_dict() for issue in report.errors]},
            )
        plan = pin_block_majors(loaded.plan, self.engine.catalog)
        store = self.engine.store
        versions = store.versions(plan.id)
        previous = _latest_registered(store, plan.id)
        changes = compatibility_changes(previous, plan) if previous is not None else []
        breaking = [change for change in changes if change.breaking]
        if breaking and not accept_major and previous is not None:
            raise UserInputError(
                f"Plan {plan.id} の登録済みの版（{previous.version}）と互換性のない変更が"
                f" {len(breaking)} 件あるため登録しませんでした",
                hint="この Plan を呼ぶ側（サブフロー・保存した設定）を見直したうえで、"
                "--accept-major を付けて（画面では「互換性のない変更を承知で登録する」に"
                "チェックして）登録してください",
                code="BREAKING_CHANGE",
                details={
                    "previous_version": previous.version,
                    "changes": [change.to_dict() for change in changes],
                },
            )
        path = store.register(plan)
        return Registered(
            path=path,
            warnings=[change.message for change in changes],
            previous=versions[-1].path if versions else None,
        )

    def file_id(self, path: Path) -> str:
        """The id the 実行 page and ``plan run`` use for a registered file."""
        return path.relative_to(self.engine.store.designs_dir).with_suffix("").as_posix()

    def metrics(self, last: int = 200) -> dict[str, Any]:
        return summarize_generations(self.workspace.logs / METRICS_FILE, last=last)
