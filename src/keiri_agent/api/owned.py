"""Runs as the caller may reach them (``people.ownership``): the run's owner, from the
run service, checked against the person ``authenticate`` found. Every route that reads
or acts on a run by its id goes through here, so the rule is written once."""

from __future__ import annotations

from keiri_agent.api.context import ApiContext
from keiri_agent.people.roles import Person
from keiri_agent.runs.records import Run


def seen_run(context: ApiContext, person: Person, run_id: str) -> Run | None:
    """The run, when ``person`` may see it (403 ``PERMISSION_DENIED`` otherwise); None
    when the run service has no such run (the route says what is missing)."""
    run = context.runs.get(run_id)
    if run is not None:
        context.ownership.check_see(person, run.owner, run.kind, run_id)
    return run


def acted_run(context: ApiContext, person: Person, run_id: str) -> Run | None:
    """The run, when ``person`` may also act on it (cancel, answer, rerun: its owner or
    管理者); None when there is no such run."""
    run = seen_run(context, person, run_id)
    if run is not None:
        context.ownership.check_act(person, run.owner, run.kind, run_id)
    return run


def seen_plan_run(context: ApiContext, person: Person, run_id: str) -> str:
    """Refuse unless ``person`` may see the Plan run ``run_id``; who started it (the run
    service's owner, or the login its state recorded at the command line)."""
    starter = context.plan_runs.starter(run_id)
    context.ownership.check_see(person, starter, "plan", run_id)
    return starter


def acted_plan_run(context: ApiContext, person: Person, run_id: str) -> str:
    """``seen_plan_run``, and ``person`` may also act on it (its starter or 管理者)."""
    starter = seen_plan_run(context, person, run_id)
    context.ownership.check_act(person, starter, "plan", run_id)
    return starter


def _subject_owner(context: ApiContext, kind: str, subject: str) -> str | None:
    """Who made the conversation or session: its first run's owner; "" (nobody's) for
    research notes no run made (asked at the command line); None when nothing is there
    yet (a new one, whoever names it)."""
    owner = context.runs.subject_owner(kind, subject)
    if owner is None and kind == "research" and context.research.notes(subject):
        return ""
    return owner


def seen_subject(context: ApiContext, person: Person, kind: str, subject: str) -> None:
    """Refuse unless ``person`` may see the conversation or session ``subject`` of
    ``kind``."""
    owner = _subject_owner(context, kind, subject)
    if owner is not None:
        context.ownership.check_see(person, owner, kind, subject)


def continued_subject(context: ApiContext, person: Person, kind: str, subject: str) -> None:
    """Refuse unless ``person`` may continue the conversation or session ``subject``
    (its owner or 管理者; a new one is theirs)."""
    owner = _subject_owner(context, kind, subject)
    if owner is not None:
        context.ownership.check_see(person, owner, kind, subject)
        context.ownership.check_act(person, owner, kind, subject)


def seen_dataset(context: ApiContext, person: Person, ref: str) -> None:
    """Refuse unless ``person`` uploaded the file ``ref`` or may see others' uploads."""
    from keiri_agent.services.saved_datasets import LoadedDatasets

    owned = LoadedDatasets.of(context.analysis).saved.owned_by(ref, person.login)
    context.ownership.check_see_owned(person, owned is True, "dataset", ref)
