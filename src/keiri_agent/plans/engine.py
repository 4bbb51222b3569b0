"""``PlanEngine``: one entry point to the Plan platform for the CLI, the UI and the API.

It wires the catalog (built-in and user block specs), the Plan store
(``designs/``), the validator, the dry run and the runner (``runs/``) from the
settings, so every surface behaves the same.

``PlanEngine`` is the edge of the Plan platform: it receives ``Settings`` (built once
by the surface) and the environment that ``${env.*}`` references read, and passes
both down; nothing below it reads the process environment. Without ``env`` it reads
``os.environ`` (live, so a variable set later is seen by the next run) — the only place
under ``plans/`` that does. The settings are always the caller's (``load_settings()``
for a Python API user): no component builds its own.

``${env.*}`` reads only the names on the allow-list ``KEIRI_AGENT_PLAN_ENV_ALLOW``
(``Settings.plans.plan_env_allow``, empty by default), and never one whose value is a
configured secret (an API key: ``masking.is_known_secret``), so no key enters a
Plan's outputs, files or state: the validator reports any other name as
ENV_NOT_ALLOWED, and the runner and the dry run never see it.

``${config.*}`` references read ``<home>/config.yaml`` when it exists; the validator
reports a path it lacks (UNKNOWN_REFERENCE), so ``plan validate`` catches it before a run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from keiri_agent.config import Settings
from keiri_agent.errors import ConfigurationError
from keiri_agent.events import EventCallback
from keiri_agent.masking import is_known_secret
from keiri_agent.plans.catalog.catalog import BlockCatalog
from keiri_agent.plans.check.dry_run import dry_run
from keiri_agent.plans.check.dry_run_report import DryRunProblem, DryRunReport
from keiri_agent.plans.check.llm_needs import LLM_HINT, llm_needs, llm_used, llm_warning_text
from keiri_agent.plans.check.validator import PlanValidator
from keiri_agent.plans.dsl.loader import check_plan_file, check_plan_text, load_plan_file
from keiri_agent.plans.dsl.models import Plan
from keiri_agent.plans.issues import IssueCode, ValidationReport
from keiri_agent.plans.run.run_state import RunState
from keiri_agent.plans.run.runner import PlanRunner, RunResult
from keiri_agent.plans.store import PlanStore
from keiri_agent.workspace import Workspace

PLAN_SUFFIXES = (".yaml", ".yml")


def load_config(path: Path) -> dict[str, Any]:
    """The ``${config.*}`` values: a YAML mapping, or {} when the file does not exist."""
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigurationError(f"{path} の YAML の書き方に誤りがあります: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path} のいちばん外側はマッピング（キー: 値）にしてください")
    return data


class AllowedEnv(Mapping[str, str]):
    """A live view of ``source`` holding only the names in ``allow`` whose value is not
    a configured secret."""

    def __init__(self, source: Mapping[str, str], allow: frozenset[str]) -> None:
        self.source = source
        self.allow = allow

    def __getitem__(self, name: str) -> str:
        if name not in self.allow or is_known_secret(self.source.get(name)):
            raise KeyError(name)
        return self.source[name]

    def __iter__(self) -> Iterator[str]:
        return (name for name in sorted(self.allow) if name in self)

    def __contains__(self, name: object) -> bool:
        return (
            isinstance(name, str)
            and name in self.allow
            and name in self.source
            and not is_known_secret(self.source.get(name))
        )

    def readable(self) -> frozenset[str]:
        """The allowed names a Plan may read now (a name holding a secret is not)."""
        return frozenset(name for name in self.allow if not is_known_secret(self.source.get(name)))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class PlanEngine:
    """Load, check, validate, dry-run, run and resume Plans of one workspace."""

    def __init__(self, settings: Settings, *, env: Mapping[str, str] | None = None) -> None:
        """``settings`` and ``env`` from the surface (``env`` None: ``os.environ``)."""
        self.settings = settings
        allow = frozenset(self.settings.plans.plan_env_allow)
        self.env = AllowedEnv(os.environ if env is None else env, allow)
        self.workspace = Workspace.from_settings(self.settings)
        self.catalog = BlockCatalog.from_settings(self.settings)
        self.store = PlanStore(self.workspace.designs)
        self.config = load_config(self.workspace.root / "config.yaml")
        self.runner = PlanRunner(
            self.catalog,
            self.settings,
            runs_dir=self.workspace.runs,
            plan_loader=self.store.load,
            env=self.env,
            config=self.config,
        )

    def load(self, reference: str | Path) -> Plan:
        """A Plan from a YAML file path, or by id from ``designs/``."""
        text = str(reference)
        path = Path(text)
        if path.suffix in PLAN_SUFFIXES or path.is_file():
            return load_plan_file(path)
        return self.store.load(text)  # a plan id (even when a folder has that name)

    def validate(self, plan: Plan, *, vars: Mapping[str, Any] | None = None) -> ValidationReport:
        """Every problem of a loaded plan (errors and warnings); ``vars``: the values a
        run gives its vars (a null var they fill is then no error)."""
        return PlanValidator(
            self.catalog,
            self.store,
            env=dict(self.env),
            env_allow=self.env.readable(),
            config=self.config,
            llm_configured=not self.settings.llm.is_offline,
        ).validate(plan, vars=vars)

    def check(self, source: str | Path) -> ValidationReport:
        """Every problem of a Plan in one report: the loader's (YAML syntax and size,
        duplicate keys, schema) and, when the plan can be built, the validator's, each
        with the line and column of its path. ``source`` is YAML text, or the ``Path``
        of a plan file.

        Never raises for a problem of the plan; ``UserInputError`` PLAN_NOT_FOUND when
        the file does not exist.
        """
        loaded = check_plan_file(source) if isinstance(source, Path) else check_plan_text(source)
        if loaded.plan is None:
            return ValidationReport(tuple(loaded.issues))
        found = {(issue.code, issue.path) for issue in loaded.issues}
        validated = [
            issue
            for issue in self.validate(loaded.plan).issues
            if (issue.code, issue.path) not in found  # e.g. API_VERSION, reported by both
        ]
        return ValidationReport((*loaded.issues, *loaded.locate(validated)), plan_id=loaded.plan.id)

    def dry_run(self, plan: Plan, *, vars: Mapping[str, Any] | None = None) -> DryRunReport:
        """The plan walked with declared samples only; no block runs. Without an LLM
        configured, the nodes that need one (and run with these vars) are warnings
        (LLM_NOT_CONFIGURED)."""
        report = dry_run(
            plan,
            self.catalog,
            store=self.store,
            vars=dict(vars or {}),
            env=dict(self.env),
            config=self.config,
        )
        if self.settings.llm.is_offline:
            report.warnings += [
                DryRunProblem(
                    IssueCode.LLM_NOT_CONFIGURED, llm_warning_text(need), need.path, LLM_HINT
                )
                for need in llm_used(llm_needs(plan, self.catalog), {**plan.vars, **(vars or {})})
            ]
        return report

    def run(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
        started_by: str = "",
    ) -> RunResult:
        """Validate with ``vars``, then run; PlanValidationError when the plan has errors.
        ``started_by``: the login of who starts it (kept in the run's state)."""
        self.validate(plan, vars=vars).raise_for_errors()
        return self.runner.start(
            plan,
            vars=vars,
            answers=answers,
            on_event=on_event,
            cancel_event=cancel_event,
            started_by=started_by,
        )

    def prepare(
        self,
        plan: Plan,
        *,
        vars: Mapping[str, Any] | None = None,
        answers: Mapping[str, Any] | None = None,
        started_by: str = "",
    ) -> str:
        """Validate with ``vars`` and save a new run ``queued`` (``continue_run``
        executes it); its run id. PlanValidationError when the plan has errors."""
        self.validate(plan, vars=vars).raise_for_errors()
        return self.runner.prepare(plan, vars=vars, answers=answers, started_by=started_by)

    def saved_state(self, run_id: str) -> RunState:
        """The saved state of the run ``run_id``; ``UserInputError`` for an unknown run
        (``RunStateCorruptError`` for a damaged one)."""
        from keiri_agent.plans.run.run_state import find_state, read_state

        return read_state(find_state(self.runner.runs_dir, run_id))

    def saved_plan(self, run_id: str) -> Plan:
        """The plan saved with the run ``run_id`` (what it runs, even if the file in
        ``designs/`` changed since); ``UserInputError`` for an unknown run."""
        from keiri_agent.plans.run.run_state import plan_from_dict

        return plan_from_dict(self.saved_state(run_id).plan)

    def add_answers(self, run_id: str, answers: Mapping[str, Any]) -> None:
        """Keep answers with a paused run for its ``continue_run``."""
        self.runner.add_answers(run_id, answers)

    def prepare_rerun(
        self, run_id: str, node_id: str, *, answers: Mapping[str, Any] | None = None
    ) -> None:
        """Save the run ``queued`` to re-run ``node_id`` and everything downstream of it
        (``continue_run`` executes it), keeping other outputs."""
        self.runner.prepare_rerun(run_id, node_id, answers=answers)

    def continue_run(
        self,
        run_id: str,
        *,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Execute a prepared, paused or interrupted run from where its state stands."""
        return self.runner.continue_run(run_id, on_event=on_event, cancel_event=cancel_event)

    def resume(
        self,
        run_id: str,
        *,
        answers: Mapping[str, Any],
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Continue a paused, cancelled or interrupted run (answers for waiting nodes)."""
        return self.runner.resume(
            run_id, answers=answers, on_event=on_event, cancel_event=cancel_event
        )

    def rerun_from_node(
        self,
        run_id: str,
        node_id: str,
        *,
        answers: Mapping[str, Any] | None = None,
        on_event: EventCallback | None = None,
        cancel_event: threading.Event | None = None,
    ) -> RunResult:
        """Re-run a (failed) node and everything downstream, keeping other outputs."""
        return self.runner.rerun_from_node(
            run_id, node_id, answers=answers, on_event=on_event, cancel_event=cancel_event
        )
