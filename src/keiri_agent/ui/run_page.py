"""実行 page: pick a Plan, fill its form, run it, see the results: a business form.

The Plans offered are those in ``designs/`` and the bundled samples
(``keiri_agent/samples/plans``, shown as 「サンプル: …」), so a new workspace is never
a dead end; a caption says where Plans live and how to add one. The page shows the
Plan's and nodes' ``title`` (their ids when they have none).

Before 実行: the Plan's ``vars``, the input forms that depend on nothing
(``services.plan_inputs.upfront_forms``: the run starts with their values as the
nodes' answers) and, when no LLM is configured, the pre-flight check
(``plans.check.llm_needs``): a node that will call the LLM with these vars disables
実行 and says what to do; one that may (its condition depends on the run) is a warning.

The page calls the process's ``PlanEngine`` and ``PlanRuns``
(``session.process_services()``: ``plans``, ``plan_runs``). What it keeps in
``st.session_state``:

- ``run.state``: the current run (``file_id``, ``plan_id``, ``result``, ``events``
  (``Event.to_dict()`` of the last run, resume or re-run), ``forms``: node id → the
  input request last shown for it, ``job``: the run, resume or re-run still followed:
  ``action``, ``run_id`` and ``after``, the run's last event number before it);
- ``plan:{plan_id}::node:{node_id}::v{version}`` (``requirements.session_key``): the
  values of one input form, initialised from its fields and never cleared on a
  rerun; only the リセット button clears them (seed 002 §3, §8.2).

Widgets lose their state when the user visits another page: the Plan selector
(``run.plan``) and the vars (``run.vars.{file_id}.{name}``) are kept by
``components.persistent``; the forms by their values above. Coming back while a run
exists, the selector shows that run's Plan, so a paused run or its results are shown.

Errors follow seed §9.3: message, "エラー詳細" with the details, the hint, and a
再実行 button for recoverable errors. 再実行 re-runs from the failed node with the
values kept; when a form's values were edited since they were sent, it re-runs from
the first edited form instead, so the new values are used (``state["sent"]`` holds
what each form last sent; ``services.plan_inputs.rerun_start`` decides).

Runs, resumes and re-runs go through the run service (``PlanRuns.start``, ``resume``,
``rerun``): a worker (this process's threads, or the job queue's) executes the Plan,
and the page follows the run's stored events into an ``st.status`` (``ui.run_follow``),
then reads the Plan run's result as saved (``PlanRuns.result``). Only the run id is
kept: a rerun of the page (a click meanwhile) keeps following the same run, and 実行
is disabled until it has settled. A var whose YAML text does not read is shown as an
error naming it, and 実行 does not start.

The current run is in the URL (``?plan=<file id>&run=<run id>``) from the moment it
starts. A session opened with a run that is not its current one (F5, 「最近の実行」 in
the side panel) follows it while it runs, and otherwise shows it as last saved
(``PlanRuns.result``): its status, progress (from its run log), forms, errors,
outputs and downloads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, cast

import streamlit as st

from keiri_agent.blocks.requirements import session_key
from keiri_agent.errors import KeiriAgentError, UserInputError
from keiri_agent.events import Event
from keiri_agent.plans.check.llm_needs import (
    LLM_HINT,
    llm_needs,
    llm_preflight,
    llm_warning_text,
)
from keiri_agent.plans.dsl import load_plan_file
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.engine import PlanEngine
from keiri_agent.plans.run.outputs import RunStatus
from keiri_agent.plans.run.runner import RunResult
from keiri_agent.runs.records import Run
from keiri_agent.services.container import Services
from keiri_agent.services.jsonforms import json_value
from keiri_agent.services.plan_inputs import (
    failed_node,
    load_plan,
    parse_var_value,
    rerun_start,
    upfront_forms,
    var_kind,
    var_text,
)
from keiri_agent.services.plan_outputs import (
    ShownOutput,
    download_name,
    node_title,
    node_titles,
    shown_outputs,
)
from keiri_agent.services.plan_runs import RunLogReader, approval_steps
from keiri_agent.ui.components import (
    download_button,
    persistent,
    provider_banner,
    records_frame,
    show_error,
)
from keiri_agent.ui.input_forms import input_form
from keiri_agent.ui.people import acting_person, starter_login
from keiri_agent.ui.run_follow import OUTCOME_KINDS, RUN_EVENT_LABELS, follow_run, run_problem
from keiri_agent.ui.session import process_services, shared_services

STATE = "run.state"
PLAN = "run.plan"
SAMPLE = "sample:"
PLAN_PARAM = "plan"
# The run id this session last wrote into the URL (another one there: restore it).
# (A page script is run by Streamlit: a bare string here would be shown on the page.)
URL_RUN = "run.url_run"
RUN_PARAM = "run"
STATUS_LABELS = {
    "queued": "順番待ち",
    "running": "実行中",
    "success": "完了",
    "failed": "エラー",
    "paused": "入力待ち",
    "cancelled": "中止",
}
# Japanese words for the run's event kinds (progress lines).
EVENT_LABELS = {
    "plan_start": "実行を開始",
    "plan_resumed": "実行を再開",
    "plan_paused": "入力待ちで一時停止",
    "plan_complete": "実行が終了",
    "node_start": "開始",
    "node_complete": "完了",
    "node_error": "失敗",
    "node_waiting": "入力待ち",
    "node_skipped": "スキップ（条件を満たさない）",
    "when_condition_false": "スキップ（条件を満たさない）",
    "loop_iteration": "繰り返し",
    **RUN_EVENT_LABELS,
}


def run_engine() -> PlanEngine:
    """The process's ``PlanEngine`` (the one its Plan runs execute with)."""
    return shared_services().plans


def _form_key(engine: PlanEngine, plan: Plan, node_id: str, block: str) -> str:
    reference = next(
        (str(getattr(node, "block", block)) for node in plan.graph if node.id == node_id), block
    )
    try:
        version = engine.catalog.resolve(reference).version
    except KeiriAgentError:
        version = reference.partition("@")[2] or "0"
    return session_key(plan.id, node_id, str(version))


def _last_seq(services: Services, run_id: str) -> int:
    """The number of the run's last event (0 for a run the run service does not know)."""
    run = services.runs.get(run_id)
    return 0 if run is None else run.last_seq


def _invoke(action: str, start: Callable[[], str], after: int) -> None:
    """Start a run, resume or re-run (``start()``: its run id) to be followed from the
    page's next run (``_follow``); an error that stopped it from starting is kept."""
    state = st.session_state[STATE]
    try:
        run_id = start()
    except KeiriAgentError as error:
        state["problem"] = error.to_dict()
        return
    state.update(job={"action": action, "run_id": run_id, "after": after}, problem=None)


def _settled_result(services: Services, run: Run) -> tuple[RunResult, dict[str, Any] | None]:
    """The Plan run as saved, with the run service's status where the Plan's state
    could not say it (cancelled while queued, failed before the Plan ran), and then
    the run's error."""
    result = services.plan_runs.result(run.run_id)
    status = "paused" if run.status == "waiting" else str(run.status)
    if result.status == status:
        return result, None
    problem = run_problem(run) if run.status == "failed" else None
    return dataclasses.replace(result, status=cast(RunStatus, status)), problem


def _follow(services: Services, state: dict[str, Any], plan: Plan) -> None:
    """Show the run's events (after ``job["after"]``) under a status box until it has
    settled; keep the result and the events (or the error) in ``state``."""
    job: dict[str, Any] = state["job"]
    action = str(job["action"])
    titles = node_titles(plan)
    events: list[dict[str, Any]] = []
    label = "実行中…"
    with st.status(label, expanded=True) as status:

        def show(event: Event) -> None:
            line = event.to_dict()
            events.append(line)
            text = _event_text(line, titles)
            if text is not None:
                status.write(text)

        def waited(seconds: float) -> None:
            status.update(label=f"{label}（{int(seconds)} 秒）")

        try:
            run = follow_run(
                services.runs, job["run_id"], after=int(job["after"]), show=show, tick=waited
            )
            result, problem = _settled_result(services, run)
        except KeiriAgentError as error:
            state.update(job=None, problem=error.to_dict())
            status.update(label=f"{action}: エラー", state="error")
            return
        state["job"] = None
        status.update(
            label=f"{action}: {STATUS_LABELS.get(result.status, result.status)}",
            state="error" if result.status == "failed" else "complete",
            expanded=False,
        )
    state.update(result=result, events=events, problem=problem)


def _event_text(line: Mapping[str, Any], titles: Mapping[str, str]) -> str | None:
    """One progress line: the node's title and what happened, in Japanese (None: none;
    the run service's last event of a failed or cancelled run is said by the result)."""
    payload = line.get("payload") or {}
    kind = str(line["kind"])
    if kind in OUTCOME_KINDS:
        return None
    label = EVENT_LABELS.get(kind, kind)
    status = payload.get("status")
    if status:
        label += f"（{STATUS_LABELS.get(str(status), str(status))}）"
    if kind == "loop_iteration" and payload.get("iteration") is not None:
        label += f" {int(payload['iteration']) + 1} 回目"
    node = payload.get("node_id")
    return f"{node_title(titles, str(node))}: {label}" if node else label


def _answers(state: Mapping[str, Any]) -> dict[str, Any]:
    return {node_id: dict(st.session_state.get(key, {})) for node_id, key in state["keys"].items()}


def _sent(state: dict[str, Any], answers: dict[str, Any]) -> None:
    """Remember what each form sent; change warnings have been seen by now."""
    state["sent"] = answers
    for key in state["keys"].values():
        st.session_state.pop(f"{key}::warnings", None)


def _outputs(plan: Plan, result: RunResult) -> None:
    """The final outputs (titled), then the intermediate ones in an expander."""
    shown = shown_outputs(plan, result.outputs)
    finals = [output for output in shown if output.final]
    others = [output for output in shown if not output.final]
    for output in finals:
        _output(output)
    if others:
        with st.expander(f"途中の出力（{len(others)} 件）", expanded=not finals):
            for output in others:
                _output(output)


def _output(output: ShownOutput) -> None:
    st.markdown(f"**{output.title}**")
    if output.description:
        st.caption(output.description)
    _value(f"run.download.{output.node_id}.{output.alias}", output.title, output.value)


def _value(key: str, title: str, value: Any) -> None:
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        st.dataframe(records_frame(json_value(value, preview=True)), hide_index=True)
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        name, mime = download_name(title, data)
        download_button(f"{name} をダウンロード", lambda: data, file_name=name, mime=mime, key=key)
    elif isinstance(value, Mapping) and isinstance(value.get("data"), (bytes, bytearray)):
        data = bytes(value["data"])
        name, mime = download_name(str(value.get("name") or title), data)
        download_button(f"{name} をダウンロード", lambda: data, file_name=name, mime=mime, key=key)
    elif isinstance(value, (Mapping, list)):
        st.json(json_value(value, preview=True))
    else:
        st.text(str(value))


def _log(result: RunResult) -> None:
    with st.expander("実行ログ（JSONL）"):
        st.caption(str(result.log_path))
        try:
            text = result.log_path.read_text(encoding="utf-8")
        except OSError as error:
            st.warning(f"ログを読めません: {error}")
            return
        st.code(text or "(empty)", language="json")


def _vars_inputs(plan: Plan, file_id: str) -> tuple[dict[str, Any], list[UserInputError]]:
    """Widgets for the Plan's ``vars`` (defaults from the Plan), labelled by their
    ``ui.vars`` title (else the name) with the description as help; the values to run
    with and the problems (a YAML text that does not read, named by its var).

    Scalars get a widget of their type; lists and mappings are edited as YAML
    (``services.plan_inputs``). Values are kept per Plan in the session
    (``run.vars.{file_id}.{name}``).
    """
    values: dict[str, Any] = {}
    problems: list[UserInputError] = []
    if not plan.vars:
        return values, problems
    with st.expander("設定（変数）", expanded=False):
        for name, default in plan.vars.items():
            key = f"run.vars.{file_id}.{name}"
            info = plan.ui.vars.get(name)
            label = (info.title if info else None) or name
            shown = info.description if info else None
            kind = var_kind(default)
            if kind == "boolean":
                values[name] = persistent(st.checkbox, label, key=key, default=default, help=shown)
            elif kind in ("integer", "number"):
                # step=1 keeps an int an int (the value comes from the session, not value=)
                step = 1 if kind == "integer" else None
                values[name] = persistent(
                    st.number_input, label, key=key, default=default, step=step, help=shown
                )
            elif kind == "text":
                values[name] = persistent(
                    st.text_input,
                    label,
                    key=key,
                    default=default or "",
                    help=shown,
                    type="password" if plan.is_secret_var(name) else "default",
                )
            else:
                text = persistent(
                    st.text_area, label, key=key, default=var_text(default), help=shown
                )
                try:
                    values[name] = parse_var_value(name, text)
                except UserInputError as error:
                    st.error(error.message)
                    problems.append(error)
    return values, problems


def _run_forms(state: Mapping[str, Any] | None, file_id: str) -> set[str]:
    """The nodes whose forms the current run shows (``_forms``): not again up front
    (while it is followed: the forms it was given)."""
    if not state or state["file_id"] != file_id:
        return set()
    if state.get("job"):
        return set(state["forms"])
    if state.get("result") is None:
        return set()
    result: RunResult = state["result"]
    waiting = {str(waiting["node_id"]) for waiting in result.waiting}
    if result.status == "success":
        return waiting
    return set(state["forms"]) | waiting  # a run restored from the URL: its waiting nodes


def _upfront(
    engine: PlanEngine, plan: Plan, file_id: str, run_vars: Mapping[str, Any]
) -> dict[str, tuple[str, Any]]:
    """The forms filled before 実行 (node id → (values key, request)); each rendered
    here unless the current run shows it below."""
    forms: dict[str, tuple[str, Any]] = {}
    shown = _run_forms(st.session_state.get(STATE), file_id)
    for node, request in upfront_forms(plan, run_vars):
        key = _form_key(engine, plan, node.id, node.block)
        forms[node.id] = (key, request)
        if node.id in shown:
            continue
        with st.container(border=True):
            st.markdown(f"#### {node.title or node.id}")
            if node.description:
                st.caption(node.description)
            input_form(key, request)
    return forms


def _llm_preflight(engine: PlanEngine, plan: Plan, run_vars: Mapping[str, Any]) -> bool:
    """Without an LLM configured: what would fail for it. True when 実行 may start."""
    if not engine.settings.llm.is_offline:
        return True
    certain, possible = llm_preflight(llm_needs(plan, engine.catalog), run_vars)
    for need in certain:
        st.error(f"❌ {llm_warning_text(need)}")
    for need in possible:
        st.warning(llm_warning_text(need))
    if certain or possible:
        st.info(f"💡 {LLM_HINT}")
    return not certain


def _start(
    services: Services,
    plan: Plan,
    file_id: str,
    vars: Mapping[str, Any],
    forms: Mapping[str, tuple[str, Any]],
) -> None:
    """Run ``plan`` with ``vars`` and the up-front forms' values as their answers."""
    state: dict[str, Any] = {
        "file_id": file_id,
        "plan_id": plan.id,
        "result": None,
        "events": [],
        "forms": {node_id: request for node_id, (_, request) in forms.items()},
        "keys": {node_id: key for node_id, (key, _) in forms.items()},
        "sent": {},
        "problem": None,
        "job": None,
    }
    st.session_state[STATE] = state
    answers = _answers(state)
    _sent(state, answers)
    _invoke("実行", lambda: _start_as_os_user(services, plan, vars, answers), 0)


def _start_as_os_user(services: Services, plan: Plan, vars: Mapping[str, Any], answers: Any) -> str:
    """Start the run as the OS user: where people are registered, their account's roles
    and the approval rules apply here as at the command line (``ui.people``)."""
    login = starter_login(services, "run")
    return services.plan_runs.start(
        plan, vars=vars, answers=answers, started_by=login, by=acting_person(services)
    )


def _rerun_button(
    services: Services, plan: Plan, result: RunResult, failure: Mapping[str, Any], index: int
) -> None:
    """再実行 from the failed node, or from the first edited form (its new values apply)."""
    state = st.session_state[STATE]
    failed = failed_node(failure)
    nodes = [node.id for node in plan.graph]
    start = rerun_start(
        nodes, list(state["forms"]), _answers(state), state.get("sent") or {}, failed
    )
    title = node_title(node_titles(plan), start)
    st.caption(
        f"再実行: {title} から"
        + ("（失敗したノード、入力はそのまま）" if start == failed else "（入力が変更されたため）")
    )
    if st.button("再実行", key=f"run.rerun.{index}"):
        approvals = approval_steps(plan)  # asked again: not the earlier approval
        answers = {k: v for k, v in _answers(state).items() if k not in approvals}
        _sent(state, answers)
        _invoke(
            "再実行",
            lambda: services.plan_runs.rerun(
                result.run_id, start, answers, by=acting_person(services)
            ),
            _last_seq(services, result.run_id),
        )
        st.rerun()


def _samples() -> dict[str, Path]:
    """The bundled sample Plans: ``sample:<name>`` → file."""
    folder = resources.files("keiri_agent.samples").joinpath("plans")
    return {
        f"{SAMPLE}{entry.name.rsplit('.', 1)[0]}": Path(str(entry))
        for entry in sorted(folder.iterdir(), key=lambda item: item.name)
        if entry.name.endswith((".yaml", ".yml"))
    }


def _sample_label(path: Path) -> str:
    try:
        plan = load_plan_file(path)
    except KeiriAgentError:
        return f"サンプル: {path.stem}"
    return f"サンプル: {plan.title or plan.id}"


def _choose_plan(engine: PlanEngine) -> str | None:
    """The Plan selector (``designs/`` and the bundled samples); the chosen file id
    (``sample:<name>`` for a sample), None when the store cannot be read."""
    try:
        entries = engine.store.list()
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return None
    where = engine.store.designs_dir
    if not entries:
        st.info(
            f"まだ Plan がありません。Plan（業務手順の YAML ファイル）は {where} に置きます。"
            "「設計」ページで作って登録するか、YAML ファイルをこのフォルダに置くと、ここに"
            "表示されます。まずは下の同梱サンプルで試せます。"
        )
    else:
        st.caption(
            f"Plan は {where} にあります。"
            "「設計」ページで作るか、YAML ファイルを置くと追加されます。"
        )
    labels = {entry.file_id: f"{entry.plan_id} ({entry.file_id})" for entry in entries}
    labels |= {file_id: _sample_label(path) for file_id, path in _samples().items()}
    state = st.session_state.get(STATE)
    if PLAN not in st.session_state and state and state["file_id"] in labels:
        st.session_state[PLAN] = state["file_id"]  # coming back: show the current run
    return str(
        persistent(
            st.selectbox,
            "Plan",
            list(labels),
            key=PLAN,
            valid=lambda kept: kept in labels,
            format_func=lambda f: labels[f],
        )
    )


def plan_files(engine: PlanEngine) -> dict[str, str]:
    """Plan id → the file id that loads it (the samples, then ``designs/``, newest last)."""
    files = {}
    for file_id, path in _samples().items():
        try:
            files[load_plan_file(path).id] = file_id
        except KeiriAgentError:
            continue
    for entry in engine.store.list():
        files[entry.plan_id] = entry.file_id
    return files


def _follow_url(services: Services) -> None:
    """A run in the URL that is not the session's current run: follow it while it runs,
    else show it as saved."""
    run_id = st.query_params.get(RUN_PARAM)
    file_id = st.query_params.get(PLAN_PARAM)
    if not run_id or not file_id or st.session_state.get(URL_RUN) == run_id:
        return  # nothing named, or the run this session put there itself
    st.session_state[URL_RUN] = run_id
    try:
        result = services.plan_runs.result(run_id)
        run = services.runs.get(run_id)
    except KeiriAgentError as error:
        show_error(error.to_dict())
        st.query_params.clear()
        return
    state: dict[str, Any] = {
        "file_id": file_id,
        "plan_id": result.plan_id,
        "result": None,
        "events": [],
        "forms": {},
        "keys": {},
        "sent": {},
        "problem": None,
        "job": None,
    }
    if run is not None and not run.settled:  # still running: follow it from its start
        state["job"] = {"action": "実行", "run_id": run_id, "after": 0}
    else:
        events = RunLogReader(result.log_path, run_id).read()
        state.update(result=result, events=[event.to_dict() for event in events])
    st.session_state[PLAN] = file_id
    st.session_state[STATE] = state


def _write_url(state: dict[str, Any] | None) -> None:
    """The current run in the URL (restored after a reload), from the moment it starts."""
    result: RunResult | None = (state or {}).get("result")
    job: Mapping[str, Any] | None = (state or {}).get("job")
    run_id = job["run_id"] if job else result.run_id if result is not None else None
    if state is None or run_id is None:
        return
    params = {PLAN_PARAM: state["file_id"], RUN_PARAM: run_id}
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)
    st.session_state[URL_RUN] = run_id


def _load(engine: PlanEngine, file_id: str) -> Plan:
    if file_id.startswith(SAMPLE):
        return load_plan_file(_samples()[file_id])
    return load_plan(engine, file_id)


def _forms(services: Services, plan: Plan, result: RunResult) -> None:
    """The input forms of the waiting nodes (and those answered, until the run succeeds)."""
    state = st.session_state[STATE]
    titles = node_titles(plan)
    for waiting in result.waiting:
        node_id = str(waiting["node_id"])
        key = _form_key(services.plans, plan, node_id, str(waiting.get("block", "")))
        state["forms"][node_id] = waiting.get("request") or {}
        state["keys"][node_id] = key
    waiting_ids = [str(w["node_id"]) for w in result.waiting]
    for node_id, request in state["forms"].items():
        if result.status == "success" and node_id not in waiting_ids:
            continue
        with st.container(border=True):
            st.markdown(f"#### 入力: {node_title(titles, node_id)}")
            input_form(state["keys"][node_id], request)
    if result.status == "paused" and st.button("送信", type="primary", key="run.submit"):
        answers = _answers(state)
        _sent(state, answers)
        _invoke(
            "送信",
            lambda: services.plan_runs.resume(result.run_id, answers, by=acting_person(services)),
            _last_seq(services, result.run_id),
        )
        st.rerun()


def _result(services: Services, plan: Plan, result: RunResult) -> None:
    """The run's status, progress, forms, errors (with 再実行), outputs and log."""
    state = st.session_state[STATE]
    st.subheader(f"結果: {STATUS_LABELS.get(result.status, result.status)}（{result.run_id}）")
    titles = node_titles(plan)
    with st.status("進捗", state="complete", expanded=False):
        for line in state["events"]:
            st.write(_event_text(line, titles))
    _forms(services, plan, result)
    for index, failure in enumerate(result.errors):
        show_error(failure)
        if failure.get("recoverable"):
            _rerun_button(services, plan, result, failure, index)
    if result.outputs:
        st.subheader("出力")
        _outputs(plan, result)
    _log(result)


def render_run_page() -> None:
    """The page body (called by ``st.navigation``)."""
    st.title("実行")
    try:
        services = process_services()
        engine = services.plans
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return
    provider_banner(engine.settings)
    _follow_url(services)
    file_id = _choose_plan(engine)
    if file_id is None:
        return
    try:
        plan = _load(engine, file_id)
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return
    st.subheader(plan.title or plan.id)
    if plan.description:
        st.caption(plan.description)
    titles = node_titles(plan)
    layout = list(plan.ui.layout) or [node.id for node in plan.graph]
    st.caption("手順: " + " → ".join(titles.get(node_id, node_id) for node_id in layout))
    run_vars, problems = _vars_inputs(plan, file_id)
    forms = _upfront(engine, plan, file_id, {**plan.vars, **run_vars})
    ready = _llm_preflight(engine, plan, {**plan.vars, **run_vars})
    running = bool((st.session_state.get(STATE) or {}).get("job"))
    if st.button("実行", type="primary", key="run.start", disabled=not ready or running):
        for problem in problems:  # a var that does not read: say so, run nothing
            show_error(problem.to_dict())
        if not problems and not running:
            _start(services, plan, file_id, run_vars, forms)
            st.rerun()  # the forms now belong to the run (shown with its result)
    state = st.session_state.get(STATE)
    if not state or state["file_id"] != file_id:
        return
    _write_url(state)
    if state.get("job"):  # started, or a rerun interrupted following it: follow it
        _follow(services, state, plan)
        st.rerun()  # the forms, errors and outputs in their places
    if state.get("problem"):
        show_error(state["problem"])
    _write_url(state)
    result: RunResult | None = state.get("result")
    if result is not None:
        _result(services, plan, result)


if __name__ == "__main__":  # run as the 実行 page script by st.navigation
    render_run_page()
