"""The whole HelpDesk agent on a 4-part question: parallel subtasks ÷ one at a time.

Builds a ``KnowledgeBase`` from the bundled samples in a temporary folder (keyword only:
``manual`` = ``samples/helpdesk/docs``, ``qa`` = ``xyz_faq.csv``) and runs
``HelpDeskAgent`` with ``default_tools(kb.keyword("manual"), kb.keyword("qa"))`` on the
sample question set's 4-part question (q39), with a chat model that sleeps ``--delay-ms``
per call and answers by what it is asked (a plan with the 4 parts, a search tool call, a
text answer, a completed reflection, the final text), so the replies fit whatever order the
subtask threads call it in. Each subtask is one attempt: select tools → search → answer →
reflect. Prints ``name: value`` lines:

- ``agent.calls`` — chat-model calls in one run (1 plan + 4 × 3 per subtask + 1 answer);
- ``agent.sequential_s`` — wall time with ``max_parallel_subtasks=1`` (median of repeats);
- ``agent.parallel_s`` — wall time with the default ``max_parallel_subtasks`` (8);
- ``agent.parallel_over_sequential`` — the ratio, target ≤ 0.4; ``.ideal`` is the calls on
  the critical path over all calls, (1 + 3 + 1) ÷ (1 + 4 × 3 + 1) = 0.357;
- ``agent.peak_concurrent_calls`` — most model calls in flight at once (parallel run);
- ``agent.offline_s`` — the same question through the offline agent (no LLM: rule-based
  plan, queries, answers and reflection over the same knowledge base), median of repeats;
  ``agent.offline_parts`` is how many parts its rules split the question into.

Sequential and parallel runs are interleaved (after one warm-up run of each) and the
median of ``--repeats`` is reported, because the machine is shared.

    uv run python benchmarks/helpdesk_agent.py [--delay-ms 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, get_buffer_string
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from keiri_agent.agents.helpdesk import HelpDeskAgent, default_tools
from keiri_agent.agents.helpdesk.desk import SAMPLE_DOCUMENTS, SAMPLE_FAQ, SAMPLES
from keiri_agent.agents.helpdesk.offline import reformulate, split_question
from keiri_agent.agents.helpdesk.tools import SearchTool
from keiri_agent.config import Settings
from keiri_agent.search.knowledge_base import KnowledgeBase

QUESTION_ID = "q39"
PARTS = [
    "パスワードのルールを教えてください",
    "アカウントがロックされたときの解除のしかたを教えてください",
    "通知メールが届かないときに確認することを教えてください",
    "エラーE1023の意味を教えてください",
]
"""The plan the model "returns": q39 in its 4 parts, as a model would split it."""


class RoutedChatModel(BaseChatModel):
    """Answers by what it is asked, valid for any subtask and any call order.

    Structured output is bound as a tool named after the schema: ``SubtaskPlan`` → the plan,
    ``ReflectionResult`` → completed; other bound tools → a ``search_xyz_manual`` call with
    the offline query of the subtask named in the prompt; no tools → a short cited answer.
    Every call sleeps ``delay_s``; ``calls`` and ``peak`` count calls and overlap.
    """

    delay_s: float = 0.3
    subtasks: list[str] = Field(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _in_flight: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "routed-benchmark"

    @property
    def peak(self) -> int:
        return self._peak

    @property
    def calls(self) -> int:
        return self._calls

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        with self._lock:
            self._calls += 1
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
        try:
            time.sleep(self.delay_s)
        finally:
            with self._lock:
                self._in_flight -= 1
        names = [tool["function"]["name"] for tool in kwargs.get("tools") or []]
        if "SubtaskPlan" in names:
            message = _call("SubtaskPlan", {"subtasks": self.subtasks})
        elif "ReflectionResult" in names:
            message = _call("ReflectionResult", {"advice": "", "is_completed": True})
        elif names:
            message = _call("search_xyz_manual", {"query": self._query(messages)})
        else:
            message = AIMessage(content="資料によると、次のとおりです [1]。")
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _query(self, messages: list[BaseMessage]) -> str:
        """The offline query of the subtask the prompt is about (the last one named)."""
        text = get_buffer_string(messages)
        named = [(text.rfind(subtask), subtask) for subtask in self.subtasks]
        position, subtask = max(named)
        return reformulate(subtask if position >= 0 else text, 0, "")


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}_1"}])


def question_text() -> str:
    for line in (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == QUESTION_ID:
            return str(json.loads(line)["question"])
    raise SystemExit(f"{QUESTION_ID} is not in the sample question set")


def timed_run(
    tools: list[SearchTool], question: str, delay_s: float, parallel: int
) -> tuple[float, RoutedChatModel]:
    model = RoutedChatModel(delay_s=delay_s, subtasks=PARTS)
    agent = HelpDeskAgent(
        Settings(provider="offline"),
        tools=tools,
        chat_model=model,
        max_parallel_subtasks=parallel,
    )
    start = time.perf_counter()
    result = agent.run_agent(question)
    elapsed = time.perf_counter() - start
    if [s.task_name for s in result.subtasks] != PARTS or not all(
        s.is_completed and s.sources for s in result.subtasks
    ):
        raise SystemExit(f"unexpected run: {result.model_dump_json()[:500]}")
    return elapsed, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=300.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("keiri_agent").setLevel(logging.WARNING)
    delay_s = args.delay_ms / 1000
    question = question_text()
    with tempfile.TemporaryDirectory(prefix="keiri-bench-helpdesk-") as folder:
        kb = KnowledgeBase(Path(folder))
        start = time.perf_counter()
        reports = [
            kb.index_files([SAMPLE_DOCUMENTS], "manual"),
            kb.index_files([SAMPLE_FAQ], "qa", faq=True),
        ]
        index_s = time.perf_counter() - start
        if not all(report.ok for report in reports):
            raise SystemExit(f"indexing failed: {[r.to_dict() for r in reports]}")
        tools = default_tools(kb.keyword("manual"), kb.keyword("qa"))

        timed_run(tools, question, 0.0, 1)  # warm-up: tokenizer, graph, first searches
        timed_run(tools, question, 0.0, 8)
        sequential: list[float] = []
        parallel: list[float] = []
        calls = peak = 0
        for _ in range(args.repeats):
            elapsed, model = timed_run(tools, question, delay_s, 1)
            sequential.append(elapsed)
            elapsed, model = timed_run(tools, question, delay_s, 8)
            parallel.append(elapsed)
            calls, peak = model.calls, max(peak, model.peak)

        offline_agent = HelpDeskAgent(Settings(provider="offline"), tools=tools)
        offline_agent.run_agent(question)
        offline: list[float] = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            result = offline_agent.run_agent(question)
            offline.append(time.perf_counter() - start)

    subtasks = len(PARTS)
    ideal = (1 + 3 + 1) / (1 + subtasks * 3 + 1)
    seq, par = statistics.median(sequential), statistics.median(parallel)
    print(f"agent.question: {QUESTION_ID} ({subtasks} parts)")
    print(f"agent.delay_ms: {args.delay_ms:.0f}")
    print(f"agent.index_s: {index_s:.3f}")
    print(f"agent.calls: {calls}")
    print(f"agent.sequential_s: {seq:.3f}")
    print(f"agent.parallel_s: {par:.3f}")
    print(f"agent.parallel_over_sequential: {par / seq:.3f}")
    print(f"agent.parallel_over_sequential.ideal: {ideal:.3f}")
    print(f"agent.sequential_over_calls_floor: {seq / (calls * delay_s):.3f}")
    print(f"agent.peak_concurrent_calls: {peak}")
    print(f"agent.offline_s: {statistics.median(offline):.3f}")
    print(f"agent.offline_parts: {len(split_question(question))}")
    print(f"agent.offline_completed_parts: {sum(s.is_completed for s in result.subtasks)}")


if __name__ == "__main__":
    main()
