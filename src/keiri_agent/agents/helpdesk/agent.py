"""``HelpDeskAgent``: plan → parallel subtasks (search, answer, reflect) → final answer.

The graph is seed 001's, method by method::

    main graph:  START → create_plan ─(one Send per subtask)→ execute_subtasks → create_answer → END
    subgraph:    START → select_tools → execute_tools → create_subtask_answer → reflect_subtask
                            ↑                                                         │
                            └──────── "continue" (not completed and attempts < cap) ──┘
                                      "end" → END

Every decision (the plan, the searches, the answers, the reflection) is made by a
:class:`~keiri_agent.agents.helpdesk.reasoner.HelpDeskReasoner` chosen when the agent
is built: :class:`~keiri_agent.agents.helpdesk.llm_reasoner.LLMReasoner` over the chat
model of ``keiri_agent.llm.chat_model(settings)`` (or an injected one), or — provider
``offline`` and no injected model —
:class:`~keiri_agent.agents.helpdesk.offline_reasoner.OfflineReasoner`, and then
``AgentResult.offline`` is True. This module runs the graph: the tool calls, the
attempt cap, the citations' bookkeeping and the events.

Differences from the public reference implementation (ARCHITECTURE §7):

* A tool-selection reply without a tool call is a failed attempt with advice
  (「検索ツールを必ず呼び出してください…」), retried up to the cap; its text, if
  any, is kept only as an answer marked as not grounded in sources.
* On a retry the history sent to ``select_tools`` really loses the earlier
  tool calls and tool results (seed §12.2): only system/human messages, the
  previous subtask answers and the reflections remain.
* Passages are numbered with their citation; in a subtask answer ``[i]`` refers
  to ``Subtask.sources[i-1]``; the final answer renumbers them over all
  subtasks, ends with a 出典 section and says plainly what was not found.
* Subtasks run in parallel threads (a superstep's ``Send`` tasks), at most
  ``max_parallel_subtasks`` at a time.

Events: ``run_agent(question, on_event=...)`` calls ``on_event`` with
:class:`keiri_agent.events.Event` values (``source="helpdesk"``, ``run_id`` = the
run's id, also ``AgentResult.run_id``) whose ``kind`` is ``plan``, ``tool_results``,
``subtask_answer``, ``reflection``, ``subtask_done`` or ``answer``; ``docs/helpdesk.md``
lists their payloads. Subtask events come **from worker threads**: one
``EventEmitter`` per run numbers them (``seq``) and calls ``on_event`` under its lock,
one at a time; keep the handler quick (e.g. put the events on a ``queue.Queue`` and
render them from the UI thread).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from keiri_agent.agents.helpdesk.citations import (
    collect_sources,
    ensure_answer_sections,
    unanswered_subtasks,
)
from keiri_agent.agents.helpdesk.llm_reasoner import LLMReasoner
from keiri_agent.agents.helpdesk.models import (
    AgentResult,
    ReflectionResult,
    Subtask,
    SubtaskPlan,
    ToolResult,
)
from keiri_agent.agents.helpdesk.offline import Vocabulary
from keiri_agent.agents.helpdesk.offline_reasoner import OfflineReasoner
from keiri_agent.agents.helpdesk.prompts import HelpDeskAgentPrompts
from keiri_agent.agents.helpdesk.reasoner import HelpDeskReasoner
from keiri_agent.agents.helpdesk.state import (
    AgentState,
    AgentSubGraphState,
    searched_before,
    subtask_step,
)
from keiri_agent.agents.helpdesk.tools import SearchTool, run_tool_calls, tool_map
from keiri_agent.agents.helpdesk.wording import wording_for
from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError, UserInputError
from keiri_agent.events import EventCallback, EventEmitter
from keiri_agent.llm.factory import chat_model as make_chat_model
from keiri_agent.search.similarity import meaning_check

logger = logging.getLogger("keiri_agent.helpdesk")

MAX_CHALLENGE_COUNT = 3
"""Attempts per subtask before it ends as not completed (seed §6.2)."""

NO_TOOL_CALL_ADVICE = (
    "検索ツールを必ず呼び出してください。文章で回答するのではなく、用意された検索ツールのいずれかを、"
    "具体的な検索語を引数 query に指定して呼び出してください。"
)

UNGROUNDED_LABEL = "参考（検索結果に基づかないモデルの回答のため、正確さは保証されません）"

EMITTER_KEY = "helpdesk_events"
"""Where ``run_agent`` puts the run's ``EventEmitter`` in the run config's ``configurable``."""


class HelpDeskAgent:
    """The HelpDesk agent of seed 001 (plan, parallel subtasks, reflection, answer).

    Args:
        settings: Provider, model and structured-output settings (from the surface).
        tools: The search tools the model may call (see ``tools.default_tools``).
        prompts: Prompt texts (default: ``HelpDeskAgentPrompts()``).
        chat_model: A chat model to use instead of the configured one (tests).
        max_challenge_count: Attempts per subtask (seed: 3).
        max_parallel_subtasks: Subtasks run at the same time.
        vocabulary: The offline rules' system name and synonym groups (default: the
            built-in groups and the setting ``helpdesk_system_name``).

    Raises:
        ConfigurationError: No tools, duplicate tool names, bad limits, or an
            incompletely configured provider.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        tools: Sequence[SearchTool],
        prompts: HelpDeskAgentPrompts | None = None,
        chat_model: BaseChatModel | None = None,
        max_challenge_count: int = MAX_CHALLENGE_COUNT,
        max_parallel_subtasks: int = 8,
        vocabulary: Vocabulary | None = None,
    ) -> None:
        if not tools:
            raise ConfigurationError(
                "ヘルプデスクに検索先が 1 つもありません",
                hint="マニュアルか Q&A のナレッジを登録してください"
                "（開発者は tools=default_tools(manual_searcher, qa_searcher) を渡してください）",
            )
        if max_challenge_count < 1 or max_parallel_subtasks < 1:
            raise ConfigurationError(
                f"max_challenge_count（{max_challenge_count}）と max_parallel_subtasks "
                f"（{max_parallel_subtasks}）は 1 以上にしてください",
                hint="既定値の 3 と 8 を使ってください",
            )
        self.settings = settings
        self.tools = list(tools)
        self.tool_map = tool_map(self.tools)
        self.max_challenge_count = max_challenge_count
        self.max_parallel_subtasks = max_parallel_subtasks
        if chat_model is None and not settings.llm.is_offline:
            chat_model = make_chat_model(settings)
        vocabulary = vocabulary or Vocabulary.build(
            system_name=settings.helpdesk.helpdesk_system_name
        )
        similarity = meaning_check(settings)
        self.reasoner: HelpDeskReasoner = (
            OfflineReasoner(self.tools, vocabulary, similarity)
            if chat_model is None
            else LLMReasoner(
                settings,
                chat_model,
                self.tools,
                prompts or HelpDeskAgentPrompts(),
                vocabulary,
                similarity,
            )
        )
        self.offline = self.reasoner.offline
        self._subgraph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None

    # ------------------------------------------------------------------ main graph nodes
    def create_plan(self, state: AgentState) -> dict[str, Any]:
        """Split the question into subtasks (seed §4.1) → ``{"plan": [...]}``."""
        question = (state.get("question") or "").strip()
        if not question:
            raise UserInputError(
                "質問が空です", hint="システムの使い方や困っていることを文章で入力してください"
            )
        with _logged("create_plan"):
            subtasks = self.reasoner.plan(question)
            cleaned = list(dict.fromkeys(item.strip() for item in subtasks if item.strip()))
            if not cleaned:
                logger.warning("create_plan: the plan was empty; using the question as the task")
                cleaned = [question]
            logger.debug("create_plan: %d subtask(s): %s", len(cleaned), cleaned)
            _emit("plan", {"subtasks": cleaned, "offline": self.offline})
        return {"plan": cleaned}

    def create_answer(self, state: AgentState) -> dict[str, Any]:
        """Combine the subtask answers into the final answer (seed §4.6)."""
        plan = list(state.get("plan") or [])
        subtasks = _in_plan_order(state.get("subtask_results") or [], plan)
        sources = collect_sources(subtasks)
        unanswered = unanswered_subtasks(subtasks)
        with _logged("create_answer"):
            text = self.reasoner.final_answer(state["question"], subtasks, sources)
            answer = ensure_answer_sections(text, sources, unanswered)
            logger.debug("create_answer: %d source(s), unanswered %s", len(sources), unanswered)
            _emit("answer", {"answer": answer, "sources": sources, "unanswered": unanswered})
        return {"last_answer": answer}

    # ------------------------------------------------------------------ subgraph nodes
    def select_tools(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Decide which tools to call (seed §4.2) → ``{"messages": [...]}``.

        A retry follows the last reflection's advice. A reply without a tool call
        does not raise: it sets ``tool_call_missing`` (and ``fallback_answer``).
        """
        step = subtask_step(state)
        with _logged("select_tools", step.subtask, step.attempt):
            selection = self.reasoner.select_tools(step)
            if selection.tool_calls:
                logger.debug(
                    "select_tools: %s",
                    [(call["name"], call["args"]) for call in selection.tool_calls],
                )
                return {"messages": selection.messages, "tool_call_missing": False}
            logger.warning(
                "select_tools: the model called no tool for %r (attempt %d)",
                step.subtask,
                step.attempt + 1,
            )
            update: dict[str, Any] = {"messages": selection.messages, "tool_call_missing": True}
            if selection.fallback_answer:
                update["fallback_answer"] = selection.fallback_answer
            return update

    def execute_tools(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Run the tool calls of the last message (seed §4.3), numbering the passages."""
        subtask = state["subtask"]
        attempt = state.get("challenge_count") or 0
        messages = list(state.get("messages") or [])
        last = messages[-1] if messages else None
        with _logged("execute_tools", subtask, attempt):
            if state.get("tool_call_missing") or not (
                isinstance(last, AIMessage) and last.tool_calls
            ):
                _emit(
                    "tool_results",
                    {
                        "subtask": subtask,
                        "attempt": attempt + 1,
                        "results": [],
                        "error": "no_tool_call",
                    },
                )
                return {"tool_results": [[]]}
            results, tool_messages = run_tool_calls(self.tool_map, last.tool_calls)
            for result in results:
                logger.debug(
                    "execute_tools: %s(%s) → %d passage(s)",
                    result.tool_name,
                    result.args,
                    len(result.results),
                )
            _emit(
                "tool_results",
                {
                    "subtask": subtask,
                    "attempt": attempt + 1,
                    "results": [self._result_payload(result) for result in results],
                },
            )
        return {"messages": [*messages, *tool_messages], "tool_results": [results]}

    def create_subtask_answer(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Answer the subtask from this attempt's passages, citing them (seed §4.4)."""
        step = subtask_step(state, searched=True)
        with _logged("create_subtask_answer", step.subtask, step.attempt):
            if state.get("tool_call_missing"):
                update = _ungrounded_answer(state)
            else:
                answer = self.reasoner.answer_subtask(step)
                update = {
                    "messages": answer.messages,
                    "subtask_answer": answer.answer,
                    "sources": answer.sources,
                }
            logger.debug(
                "create_subtask_answer: %r sources=%s", update["subtask_answer"], update["sources"]
            )
            _emit(
                "subtask_answer",
                {
                    "subtask": step.subtask,
                    "attempt": step.attempt + 1,
                    "answer": update["subtask_answer"],
                    "sources": update["sources"],
                    "grounded": not state.get("tool_call_missing"),
                },
            )
        return update

    def reflect_subtask(self, state: AgentSubGraphState) -> dict[str, Any]:
        """Judge the subtask answer (seed §4.5); ends the subtask at the attempt cap."""
        step = subtask_step(state, searched=True)
        subtask, attempt = step.subtask, step.attempt
        with _logged("reflect_subtask", subtask, attempt):
            if state.get("tool_call_missing"):
                reflection = ReflectionResult(advice=NO_TOOL_CALL_ADVICE, is_completed=False)
                messages = list(step.messages)
            else:
                judged = self.reasoner.reflect(step)
                reflection, messages = judged.result, judged.messages
            count = attempt + 1
            update: dict[str, Any] = {
                "messages": messages,
                "reflection_results": [reflection],
                "challenge_count": count,
                "is_completed": reflection.is_completed,
            }
            searched = not state.get("tool_call_missing") or searched_before(state)
            if not reflection.is_completed and count >= self.max_challenge_count and searched:
                update["subtask_answer"] = _give_up_text(
                    subtask, count, state.get("subtask_answer") or ""
                )
                logger.warning(
                    "reflect_subtask: %r not completed after %d attempt(s)", subtask, count
                )
            logger.debug("reflect_subtask: %r → %s", subtask, reflection)
            _emit(
                "reflection",
                {
                    "subtask": subtask,
                    "attempt": count,
                    "is_completed": reflection.is_completed,
                    "advice": reflection.advice,
                },
            )
        return update

    # ------------------------------------------------------------------ routing
    def _should_continue_exec_subtasks(self, state: AgentState) -> list[Send]:
        """One ``Send("execute_subtasks", ...)`` per subtask of the plan (seed §6.1)."""
        return [
            Send(
                "execute_subtasks",
                {"question": state["question"], "plan": state["plan"], "current_step": index},
            )
            for index, _ in enumerate(state["plan"])
        ]

    def _should_continue_exec_subtask_flow(self, state: AgentSubGraphState) -> str:
        """``"end"`` when completed or out of attempts, else ``"continue"`` (seed §6.2)."""
        if state.get("is_completed") or (state.get("challenge_count") or 0) >= (
            self.max_challenge_count
        ):
            return "end"
        return "continue"

    # ------------------------------------------------------------------ graphs
    def _create_subgraph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The subtask loop (seed §5.2)."""
        workflow = StateGraph(AgentSubGraphState)
        workflow.add_node("select_tools", self.select_tools)
        workflow.add_node("execute_tools", self.execute_tools)
        workflow.add_node("create_subtask_answer", self.create_subtask_answer)
        workflow.add_node("reflect_subtask", self.reflect_subtask)
        workflow.add_edge(START, "select_tools")
        workflow.add_edge("select_tools", "execute_tools")
        workflow.add_edge("execute_tools", "create_subtask_answer")
        workflow.add_edge("create_subtask_answer", "reflect_subtask")
        workflow.add_conditional_edges(
            "reflect_subtask",
            self._should_continue_exec_subtask_flow,
            {"continue": "select_tools", "end": END},
        )
        return workflow.compile()

    def _execute_subgraph(self, state: AgentState) -> dict[str, Any]:
        """Run the subtask loop for ``plan[current_step]`` → ``{"subtask_results": [Subtask]}``."""
        if self._subgraph is None:
            self._subgraph = self._create_subgraph()
        step = state.get("current_step") or 0
        subtask = state["plan"][step]
        initial: AgentSubGraphState = {
            "question": state["question"],
            "plan": list(state["plan"]),
            "subtask": subtask,
            "current_step": step,
            "is_completed": False,
            "messages": [],
            "challenge_count": 0,
            "tool_results": [],
            "reflection_results": [],
            "subtask_answer": "",
            "sources": [],
            "tool_call_missing": False,
        }
        with _logged("execute_subtasks", subtask):
            result = self._subgraph.invoke(
                initial, {"recursion_limit": 4 * self.max_challenge_count + 10}
            )
            done = Subtask(
                task_name=subtask,
                tool_results=[list(attempt) for attempt in result.get("tool_results") or []],
                reflection_results=list(result.get("reflection_results") or []),
                is_completed=bool(result.get("is_completed")),
                subtask_answer=result.get("subtask_answer") or "",
                challenge_count=result.get("challenge_count") or 0,
                sources=list(result.get("sources") or []),
            )
            _emit("subtask_done", {"subtask": done.model_dump(mode="json")})
        return {"subtask_results": [done]}

    def create_graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The main graph (seed §5.1)."""
        workflow = StateGraph(AgentState)
        workflow.add_node("create_plan", self.create_plan)
        workflow.add_node("execute_subtasks", self._execute_subgraph)
        workflow.add_node("create_answer", self.create_answer)
        workflow.add_edge(START, "create_plan")
        workflow.add_conditional_edges(
            "create_plan", self._should_continue_exec_subtasks, ["execute_subtasks"]
        )
        workflow.add_edge("execute_subtasks", "create_answer")
        workflow.set_finish_point("create_answer")
        return workflow.compile()

    def run_agent(
        self, question: str, *, on_event: EventCallback | None = None, run_id: str | None = None
    ) -> AgentResult:
        """Answer ``question``; ``on_event`` receives the run's events (from worker threads);
        ``run_id`` names them (a new ``helpdesk_…`` id when none).

        Raises:
            UserInputError: The question is empty.
            LLMError: The model service failed or answered unusably (with a hint).
        """
        if not question or not question.strip():
            raise UserInputError(
                "質問が空です", hint="システムの使い方や困っていることを文章で入力してください"
            )
        if self._graph is None:
            self._graph = self.create_graph()
        run_id = run_id or f"helpdesk_{uuid.uuid4().hex[:12]}"
        config: Any = {
            "max_concurrency": self.max_parallel_subtasks,
            "configurable": {EMITTER_KEY: EventEmitter("helpdesk", run_id, on_event)},
        }
        logger.info("run_agent %s: start (%s)", run_id, "offline" if self.offline else "LLM")
        result = self._graph.invoke({"question": question.strip(), "current_step": 0}, config)
        plan = list(result["plan"])
        subtasks = _in_plan_order(result.get("subtask_results") or [], plan)
        logger.info("run_agent %s: done (%d subtask(s))", run_id, len(subtasks))
        return AgentResult(
            run_id=run_id,
            question=question,
            plan=SubtaskPlan(subtasks=plan),
            subtasks=subtasks,
            answer=result["last_answer"],
            sources=collect_sources(subtasks),
            unanswered=unanswered_subtasks(subtasks),
            offline=self.offline,
        )

    def _result_payload(self, result: ToolResult) -> dict[str, Any]:
        """A tool result as a ``tool_results`` event shows it (with the tool's note)."""
        tool = self.tool_map.get(result.tool_name)
        return {**result.model_dump(mode="json"), "note": tool.note if tool else None}


# --------------------------------------------------------------------------- module helpers


def _emit(kind: str, payload: Mapping[str, Any]) -> None:
    """Emit an event through the run's emitter (nothing outside a run, e.g. a unit test)."""
    try:
        config = get_config()
    except RuntimeError:  # called outside a graph run
        return
    emitter = (config.get("configurable") or {}).get(EMITTER_KEY)
    if emitter is not None:
        emitter.emit(kind, payload)


def _ungrounded_answer(state: AgentSubGraphState) -> dict[str, Any]:
    """The answer of an attempt whose model reply had no tool call."""
    previous = state.get("subtask_answer") or ""
    if previous and searched_before(state):  # keep the earlier grounded answer
        return {"subtask_answer": previous, "sources": list(state.get("sources") or [])}
    answer = (
        "検索ツールを呼び出せなかったため、資料を検索できず、"
        "資料に基づく回答を作成できませんでした。"
    )
    fallback = (state.get("fallback_answer") or "").strip()
    if fallback:
        answer += f"\n\n{UNGROUNDED_LABEL}:\n{fallback}"
    return {"subtask_answer": answer, "sources": []}


@contextmanager
def _logged(step: str, subtask: str | None = None, attempt: int | None = None) -> Iterator[None]:
    label = step
    if subtask is not None:
        label += f" [{subtask}]"
    if attempt is not None:
        label += f" attempt {attempt + 1}"
    logger.info("%s: start", label)
    try:
        yield
    except Exception as exc:
        logger.error("%s: failed: %s", label, exc)
        raise
    logger.info("%s: done", label)


def _give_up_text(subtask: str, attempts: int, last_answer: str) -> str:
    wording = wording_for(subtask)
    text = wording.gave_up.format(label=subtask, attempts=attempts)
    if last_answer:
        text += wording.for_reference + last_answer
    return text


def _in_plan_order(results: Sequence[Subtask], plan: Sequence[str]) -> list[Subtask]:
    position = {name: index for index, name in reversed(list(enumerate(plan)))}
    return sorted(results, key=lambda subtask: position.get(subtask.task_name, len(plan)))
