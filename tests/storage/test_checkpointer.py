"""The LangGraph checkpointer and the database engine chosen by the settings."""

from __future__ import annotations

import logging
import operator
import threading
from pathlib import Path
from typing import Annotated, TypedDict

import pandas as pd
import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from pydantic import BaseModel
from sqlalchemy import text

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.storage import (
    checkpointer_kind,
    create_engine,
    database_url,
    open_checkpointer,
    postgres_conninfo,
)
from keiri_agent.storage.errors import StoreUnreachableError
from keiri_agent.workspace import Workspace


class CounterState(TypedDict):
    count: int
    log: Annotated[list[str], operator.add]


def build_graph() -> StateGraph[CounterState]:
    def increment(state: CounterState) -> CounterState:
        return {"count": state["count"] + 1, "log": [f"step {state['count'] + 1}"]}

    graph = StateGraph(CounterState)
    graph.add_node("increment", increment)
    graph.add_edge(START, "increment")
    graph.add_edge("increment", END)
    return graph


CONFIG: RunnableConfig = {"configurable": {"thread_id": "thread-1"}}


def test_sqlite_checkpoints_survive_a_restart(keiri_home: Path) -> None:
    settings = Settings()

    with open_checkpointer(settings) as saver:
        assert isinstance(saver, SqliteSaver)
        first = build_graph().compile(checkpointer=saver).invoke({"count": 0, "log": []}, CONFIG)
    assert first == {"count": 1, "log": ["step 1"]}
    assert Workspace(keiri_home).checkpoint_file.is_file()

    with open_checkpointer(settings) as saver:  # a new connection, as after a restart
        graph = build_graph().compile(checkpointer=saver)
        assert graph.get_state(CONFIG).values == first
        second = graph.invoke({"count": first["count"], "log": []}, CONFIG)

    assert second == {"count": 2, "log": ["step 1", "step 2"]}


class Selection(BaseModel):
    column: str


class SelectionState(TypedDict):
    selection: Selection | None
    messages: Annotated[list[AnyMessage], add_messages]


def test_declared_state_types_reload_without_warnings(caplog: pytest.LogCaptureFixture) -> None:
    def choose(state: SelectionState) -> SelectionState:
        return {"selection": Selection(column="売上"), "messages": [AIMessage(content="ok")]}

    builder = StateGraph(SelectionState)
    builder.add_node("choose", choose)
    builder.add_edge(START, "choose")
    settings = Settings()
    with open_checkpointer(settings, state_types=[Selection]) as saver:
        builder.compile(checkpointer=saver).invoke({"selection": None, "messages": []}, CONFIG)

    with (
        caplog.at_level(logging.WARNING),
        open_checkpointer(settings, state_types=[Selection]) as saver,
    ):
        values = builder.compile(checkpointer=saver).get_state(CONFIG).values

    assert values["selection"] == Selection(column="売上")
    assert isinstance(values["messages"][0], AIMessage)
    assert "unregistered" not in caplog.text


def test_sqlite_saver_is_usable_from_other_threads() -> None:
    results: list[object] = []
    errors: list[BaseException] = []

    with open_checkpointer(Settings()) as saver:
        graph = build_graph().compile(checkpointer=saver)

        def run(thread_id: str) -> None:
            try:
                config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
                results.append(graph.invoke({"count": 0, "log": []}, config))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(f"t{index}",)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    assert errors == []
    assert len(results) == 4


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        (None, "sqlite"),
        ("sqlite:///tmp/app.db", "sqlite"),
        ("sqlite+pysqlite:///app.db", "sqlite"),
        ("postgresql://u:p@db:5432/keiri", "postgres"),
        ("postgresql+psycopg://u:p@db:5432/keiri", "postgres"),
    ],
)
def test_checkpointer_kind_follows_the_url_scheme(url: str | None, kind: str) -> None:
    assert checkpointer_kind(url) == kind


@pytest.mark.parametrize("url", ["mysql://u@h/db", "postgresql+asyncpg://u@h/db", "keiri.db"])
def test_other_schemes_are_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError, match="には対応していません") as caught:
        checkpointer_kind(url)
    assert "postgresql+psycopg://" in (caught.value.hint or "")


def test_postgres_conninfo_strips_the_driver() -> None:
    assert postgres_conninfo("postgresql+psycopg://u:p@db:5432/keiri?sslmode=require") == (
        "postgresql://u:p@db:5432/keiri?sslmode=require"
    )
    assert postgres_conninfo("postgresql://u@db/keiri") == "postgresql://u@db/keiri"


def test_postgres_url_opens_a_postgres_connection() -> None:
    # Nothing listens on loopback port 1: reaching psycopg's connect proves the dispatch
    # (its refusal is the store error that names the server, never the password).
    settings = Settings(database_url="postgresql+psycopg://u:p@127.0.0.1:1/keiri")
    with pytest.raises(StoreUnreachableError) as raised, open_checkpointer(settings):
        pass
    assert raised.value.details["server"] == "127.0.0.1:1"
    assert isinstance(raised.value.__context__, psycopg.OperationalError)


def test_unsupported_url_fails_before_opening_anything() -> None:
    with (
        pytest.raises(ConfigurationError),
        open_checkpointer(Settings(database_url="mysql://h/db")),
    ):
        pass


# --------------------------------------------------------------------------- engine


def test_default_database_is_a_workspace_sqlite_file(keiri_home: Path) -> None:
    url = database_url(Settings())

    database_file = Workspace(keiri_home.resolve()).database_file
    assert url == f"sqlite:///{database_file}"
    assert database_file.parent.is_dir()


def test_configured_database_url_wins() -> None:
    assert database_url(Settings(database_url="postgresql+psycopg://h/db")) == (
        "postgresql+psycopg://h/db"
    )


def test_sqlite_engine_uses_wal_and_foreign_keys() -> None:
    engine = create_engine(Settings())
    try:
        with engine.connect() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
    finally:
        engine.dispose()


def test_plain_postgresql_urls_use_psycopg3() -> None:
    engine = create_engine(Settings(database_url="postgresql://u:p@127.0.0.1:1/keiri"))
    assert engine.url.drivername == "postgresql+psycopg"
    engine.dispose()


def test_postgres_checkpoints_survive_a_restart(postgres_url: str) -> None:
    settings = Settings(database_url=postgres_url)
    config: RunnableConfig = {"configurable": {"thread_id": "pg-thread"}}
    with open_checkpointer(settings) as saver:
        assert type(saver).__name__ == "PostgresSaver"
        first = build_graph().compile(checkpointer=saver).invoke({"count": 0, "log": []}, config)
    with open_checkpointer(settings) as saver:  # a new connection, as after a restart
        graph = build_graph().compile(checkpointer=saver)
        assert graph.get_state(config).values == first
        second = graph.invoke({"count": first["count"], "log": []}, config)
    assert second == {"count": 2, "log": ["step 1", "step 2"]}


def test_postgres_engine_runs_queries(postgres_url: str) -> None:
    engine = create_engine(Settings(database_url=postgres_url))
    with engine.connect() as connection:
        assert connection.execute(text("select 1 + 1")).scalar() == 2
    engine.dispose()


def test_analysis_conversation_continues_on_postgres(postgres_url: str) -> None:
    from keiri_agent.agents.analysis import AnalysisAgent
    from keiri_agent.agents.analysis.reasoning.decision import Decision
    from keiri_agent.agents.analysis.report import ReportProse
    from keiri_agent.llm.testing import ScriptedChatModel

    frame = pd.DataFrame({"地域": ["関東", "近畿", "関東"], "売上": [1.0, 2.0, 4.0]})
    spec = {"op": "groupby_agg", "group_cols": ["地域"], "metrics": {"売上": ["sum"]}}
    settings = Settings(database_url=postgres_url)
    ask = ScriptedChatModel(
        [Decision(next_action="ask", rationale="?", clarifying_questions=["指標は？"])]
    )
    with AnalysisAgent(settings, chat_model=ask) as agent:
        agent.ask("地域別に", dataset_id=agent.registry.add_frame(frame, "f.csv"), thread_id="pg-a")
    answer = ScriptedChatModel(
        [
            Decision(next_action="act", rationale="合計", analysis_spec=spec),
            Decision(next_action="finalize", rationale="完了"),
            ReportProse(conclusions=["関東が最大"]),
        ]
    )
    with AnalysisAgent(settings, chat_model=answer) as agent:
        dataset_id = agent.registry.add_frame(frame, "f.csv")
        turn = agent.ask("売上の合計", dataset_id=dataset_id, thread_id="pg-a")
    assert "指標は？" in answer.prompts[0]
    assert turn.report_md is not None and "関東が最大" in turn.report_md
