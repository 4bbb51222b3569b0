"""履歴 (the history): every Plan run, HelpDesk answer, data-analysis conversation and
research run a person may see, found again by words of its title, kind, status, who
started it and when — newest first, a page at a time (``GET /api/history``).

    history = History.of(services)
    query = HistoryQuery.parse(q="経費 集計", kind="plan", since="2026-01-01")
    page = history.page(person, query)   # page.entries (newest first), page.next_cursor
    page = history.page(person, HistoryQuery.parse(cursor=page.next_cursor))

Where the entries come from:

- the run service's ``runs`` of kinds ``plan``, ``helpdesk`` and ``research``: one
  entry per run, titled by what the run was given as its title (the Plan's title, the
  question);
- ``analysis``: one entry per conversation (the runs sharing a ``subject``, its thread):
  titled by its first question, started by the owner of its first run (whose the
  conversation is, as ``api.owned`` decides), with its latest turn's status and dataset
  (its link opens the conversation, not one turn); words match any of its questions;
- Plan runs that only have a state file (run at the command line, or before the run
  service): from the run folders of the registered Plans, as ``PlanRuns.recent`` finds
  them (a state's ``plan_id`` must be one of the Plan's ids); states are read once per
  file version (``_state_summary``).

Who sees what (``people.ownership``) is part of each query — the person's own, and
every run of a kind their role oversees (or everything with team sharing) — so it is
applied before a page is cut to ``limit``. Paging is by keyset: ``next_cursor`` holds
the last entry's start time and key; the next page has the entries started before it.
Days (``since``/``until``) are whole days in the deployment's time zone
(``plans.time_zone``), the one the pages show times in.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import json
import logging
import zoneinfo
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import sqlalchemy
from sqlalchemy import and_, case, func, or_, select

from keiri_agent.errors import UserInputError
from keiri_agent.people.ownership import THINGS, Ownership
from keiri_agent.people.roles import Person
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.run.run_log import safe_path_part
from keiri_agent.plans.run.run_state import read_state
from keiri_agent.runs.records import STATUS_JA, iso
from keiri_agent.runs.store import RunStore
from keiri_agent.services.plan_inputs import locate_plan_id
from keiri_agent.storage.schema import runs

if TYPE_CHECKING:
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.services.container import Services

log = logging.getLogger(__name__)

KINDS: dict[str, str] = {
    kind: THINGS[kind] for kind in ("plan", "helpdesk", "analysis", "research")
}
"""The kinds the history lists, with what each is called (「Plan の実行」, …)."""
STATUSES: dict[str, str] = {
    status: label for status, label in STATUS_JA.items() if status != "paused"
}
"""The statuses an entry may have (the run service's), in Japanese."""
_STATUS_ALIASES = {"paused": "waiting"}
"""Statuses in other words (a Plan run's state says ``paused``)."""
DEFAULT_LIMIT = 50
MAX_LIMIT = 200
MAX_WORDS = 10
MAX_WORDS_CHARS = 200
FIRST_DAY, LAST_DAY = dt.date(2000, 1, 1), dt.date(9998, 12, 31)
_PLAIN_KINDS = ("plan", "helpdesk", "research")
"""Kinds listed one entry per run (``analysis``: one per conversation)."""
_CONVERSATION = "analysis"
_STATE_SUFFIX = ".state.json"
_KNOWN_CHUNK = 500
INVALID = "HISTORY_QUERY_INVALID"


# --------------------------------------------------------------------------- the query


@dataclass(frozen=True)
class Cursor:
    """Where a page ended: the last entry's start and key."""

    started_at: dt.datetime
    key: str

    def encode(self) -> str:
        text = json.dumps({"t": self.started_at.isoformat(), "k": self.key})
        return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            padded = text + "=" * (-len(text) % 4)
            data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            moment = dt.datetime.fromisoformat(data["t"])
            key = data["k"]
            if moment.tzinfo is None or not isinstance(key, str):
                raise ValueError("not a cursor")
            moment = moment.astimezone(dt.UTC)
        except (ValueError, KeyError, TypeError, UnicodeError, OverflowError, binascii.Error):
            raise _invalid(
                "cursor",
                "続きの位置が読み取れません",
                "一覧を最初から表示し直して、「さらに表示」を押してください",
            ) from None
        return cls(moment, key)


@dataclass(frozen=True)
class HistoryQuery:
    """What to list (see ``parse``)."""

    words: tuple[str, ...] = ()
    kind: str | None = None
    status: str | None = None
    started_by: str | None = None
    since: dt.date | None = None
    until: dt.date | None = None
    limit: int = DEFAULT_LIMIT
    cursor: Cursor | None = None

    @classmethod
    def parse(
        cls,
        *,
        q: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        started_by: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> HistoryQuery:
        """The query from request text; ``UserInputError`` HISTORY_QUERY_INVALID naming
        the field (``details.field``) and how to fix it. Empty text means no filter."""
        words = tuple((q or "").split())  # spaces of either width separate words
        if len(q or "") > MAX_WORDS_CHARS or len(words) > MAX_WORDS:
            raise _invalid(
                "q",
                f"言葉が長すぎます（{MAX_WORDS} 語・{MAX_WORDS_CHARS} 文字まで）",
                "名前や質問に含まれる特徴的な言葉を 1〜3 語ほどに絞ってください",
            )
        kind = (kind or "").strip() or None
        if kind is not None and kind not in KINDS:
            raise _invalid(
                "kind",
                f"種類「{kind}」はありません",
                "種類は "
                + "、".join(f"{label}（{name}）" for name, label in KINDS.items())
                + " から選んでください",
            )
        status = (status or "").strip() or None
        status = _STATUS_ALIASES.get(status, status) if status else None
        if status is not None and status not in STATUSES:
            raise _invalid(
                "status",
                f"状態「{status}」はありません",
                "状態は "
                + "、".join(f"{label}（{name}）" for name, label in STATUSES.items())
                + " から選んでください",
            )
        if not 1 <= limit <= MAX_LIMIT:
            raise _invalid(
                "limit",
                f"一度に表示できるのは 1〜{MAX_LIMIT} 件です（{limit} 件が指定されました）",
                "件数を減らして、続きは「さらに表示」で読み込んでください",
            )
        first, last = _day("since", since), _day("until", until)
        if first is not None and last is not None and first > last:
            raise _invalid(
                "until",
                f"期間の終わり（{last.isoformat()}）が始まり（{first.isoformat()}）より前です",
                "期間の始まりと終わりを入れ替えてください",
            )
        return cls(
            words=words,
            kind=kind,
            status=status,
            started_by=(started_by or "").strip() or None,
            since=first,
            until=last,
            limit=limit,
            cursor=Cursor.decode(cursor) if cursor else None,
        )


def _day(name: str, text: str | None) -> dt.date | None:
    text = (text or "").strip()
    if not text:
        return None
    which = "期間の始まり" if name == "since" else "期間の終わり"
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise _invalid(
            name,
            f"{which}「{text}」を日付として読み取れません",
            "2026-04-01 のように 年-月-日 の形で入力してください",
        ) from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise _invalid(
            name,
            f"{which}「{text}」は扱える範囲の外です",
            f"{FIRST_DAY.isoformat()} から {LAST_DAY.isoformat()} までの日付を入力してください",
        )
    return day


def _invalid(name: str, message: str, hint: str) -> UserInputError:
    return UserInputError(message, code=INVALID, hint=hint, details={"field": name})


# --------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class HistoryEntry:
    """One thing in the history: a run, or an analysis conversation."""

    kind: str
    key: str
    """The run id; for a conversation its thread."""
    title: str
    status: str
    started_by: str
    started_at: dt.datetime
    updated_at: dt.datetime
    link: str
    """Where the web UI opens it."""
    questions: int = 1
    """How many questions a conversation holds (1 for a run)."""

    def to_json(self, names: Mapping[str, str] | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "kind_label": KINDS.get(self.kind, self.kind),
            "key": self.key,
            "title": self.title,
            "status": self.status,
            "status_label": STATUS_JA.get(self.status, self.status),
            "started_by": self.started_by,
            "started_by_name": (names or {}).get(self.started_by) or self.started_by,
            "started_at": iso(self.started_at),
            "updated_at": iso(self.updated_at),
            "link": self.link,
            "questions": self.questions,
        }

    @property
    def order(self) -> tuple[dt.datetime, str]:
        return (self.started_at, self.key)


@dataclass(frozen=True)
class HistoryPage:
    entries: list[HistoryEntry]
    next_cursor: str | None
    """The cursor of the next page; None when this page is the last."""
    names: Mapping[str, str] = field(default_factory=dict)
    """Login → name to show, of the people the entries name."""

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": [entry.to_json(self.names) for entry in self.entries],
            "next_cursor": self.next_cursor,
            "kinds": KINDS,
            "statuses": STATUSES,
        }


def link_of(kind: str, key: str, dataset: str = "") -> str:
    """The web UI's address of a run (or an analysis conversation)."""
    if kind == "plan":
        return f"/plans/?run={quote(key, safe='')}"
    if kind == "helpdesk":
        return f"/helpdesk/?answer={quote(key, safe='')}"
    if kind == "analysis":  # the page's keys: web/lib/analysis.ts (DATA_PARAM, THREAD_PARAM)
        return f"/analysis/?data={quote(dataset, safe='')}&thread={quote(key, safe='')}"
    return f"/?run={quote(key, safe='')}"  # research: the page follows the run again


# --------------------------------------------------------------------------- the history


@dataclass(frozen=True)
class _Plan:
    """A registered Plan: the ids its runs are saved under, its title."""

    ids: frozenset[str]
    title: str


class History:
    """The history of one deployment (see the module docstring)."""

    def __init__(
        self,
        store: RunStore,
        ownership: Ownership,
        *,
        plans: PlanEngine | None = None,
        time_zone: str = "Asia/Tokyo",
        names: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        self.store = store
        self.ownership = ownership
        self.plans = plans
        self.zone = zoneinfo.ZoneInfo(time_zone)
        self._names = names

    @classmethod
    def of(cls, services: Services) -> History:
        """The history over a process's services."""

        def names() -> dict[str, str]:
            return {
                account.login: account.display_name
                for account in services.accounts.list()
                if account.display_name
            }

        return cls(
            services.runs.store,
            services.ownership,
            plans=services.plans,
            time_zone=services.settings.plans.time_zone,
            names=names,
        )

    def page(self, person: Person, query: HistoryQuery) -> HistoryPage:
        """The entries ``person`` may see that match ``query``, newest first: at most
        ``query.limit``, after ``query.cursor``."""
        wanted = query.limit + 1
        kinds = [query.kind] if query.kind else list(KINDS)
        plans = self._registered() if "plan" in kinds else []
        found: list[HistoryEntry] = []
        plain = [kind for kind in kinds if kind in _PLAIN_KINDS]
        if plain:
            found += self._runs(person, query, plain, plans, wanted)
        if _CONVERSATION in kinds:
            found += self._conversations(person, query, wanted)
        if "plan" in kinds:
            found += self._state_only(person, query, plans, wanted)
        found = [
            entry
            for entry in found  # the queries chose these already: a check, not a filter
            if self.ownership.may_see(person, entry.started_by, entry.kind)
        ]
        found.sort(key=lambda entry: entry.order, reverse=True)
        shown = found[: query.limit]
        more = len(found) > query.limit
        next_cursor = Cursor(shown[-1].started_at, shown[-1].key).encode() if more else None
        people = {entry.started_by for entry in shown if entry.started_by}
        names = self._names() if self._names and people else {}
        return HistoryPage(
            shown, next_cursor, {login: name for login, name in names.items() if login in people}
        )

    # --- the run service's runs ------------------------------------------------------

    def _runs(
        self,
        person: Person,
        query: HistoryQuery,
        kinds: Sequence[str],
        plans: Sequence[_Plan],
        wanted: int,
    ) -> list[HistoryEntry]:
        c = runs.c
        titles = _titles(plans)
        conditions = [
            c.kind.in_(list(kinds)),
            self._visible(person, kinds, c.kind, c.owner),
            *self._common(query, c.owner, c.status, c.created_at),
        ]
        for word in query.words:
            # a Plan run titled by its Plan's id (a Plan without a title, a scheduled run
            # that could not start) is found by the registered Plan's title too
            named = [plan_id for plan_id, title in titles.items() if _contains(title, word)]
            by_plan = and_(c.kind == "plan", c.title == c.subject, c.subject.in_(named))
            conditions.append(or_(_has(c.title, word), by_plan) if named else _has(c.title, word))
        if query.cursor is not None:
            conditions.append(_before(query.cursor, c.created_at, c.run_id))
        statement = (
            select(
                c.run_id, c.kind, c.subject, c.title, c.owner, c.status, c.created_at, c.updated_at
            )
            .where(*conditions)
            .order_by(c.created_at.desc(), c.run_id.desc())
            .limit(wanted)
        )
        with self.store.engine.connect() as connection:
            rows = connection.execute(statement).all()
        return [
            HistoryEntry(
                kind=row.kind,
                key=row.run_id,
                title=titles.get(row.subject, row.title)
                if row.kind == "plan" and row.title == row.subject
                else row.title,
                status=row.status,
                started_by=row.owner,
                started_at=_utc(row.created_at),
                updated_at=_utc(row.updated_at),
                link=link_of(row.kind, row.run_id),
            )
            for row in rows
        ]

    def _conversations(
        self, person: Person, query: HistoryQuery, wanted: int
    ) -> list[HistoryEntry]:
        c = runs.c
        conversation = (c.kind, c.subject)
        oldest_first: dict[str, Any] = {
            "partition_by": conversation,
            "order_by": (c.created_at.asc(), c.run_id.asc()),
        }
        columns = [
            c.subject,
            c.kind,
            c.status,
            c.inputs,
            c.updated_at,
            func.row_number()
            .over(partition_by=conversation, order_by=(c.created_at.desc(), c.run_id.desc()))
            .label("newest"),
            func.first_value(c.title, type_=c.title.type).over(**oldest_first).label("title"),
            func.first_value(c.owner, type_=c.owner.type).over(**oldest_first).label("owner"),
            func.first_value(c.created_at, type_=c.created_at.type)
            .over(**oldest_first)
            .label("started_at"),
            func.count().over(partition_by=conversation).label("questions"),
        ]
        if query.words:  # any of its questions has every word
            every = and_(*(_has(c.title, word) for word in query.words))
            matched = func.max(case((every, 1), else_=0)).over(partition_by=conversation)
            columns.append(matched.label("matched"))
        turns = select(*columns).where(c.kind == _CONVERSATION).subquery()
        t = turns.c
        conditions = [
            t.newest == 1,
            self._visible(person, [_CONVERSATION], t.kind, t.owner),
            *self._common(query, t.owner, t.status, t.started_at),
        ]
        if query.words:
            conditions.append(t.matched == 1)
        if query.cursor is not None:
            conditions.append(_before(query.cursor, t.started_at, t.subject))
        statement = (
            select(
                t.subject,
                t.status,
                t.inputs,
                t.updated_at,
                t.title,
                t.owner,
                t.started_at,
                t.questions,
            )
            .where(*conditions)
            .order_by(t.started_at.desc(), t.subject.desc())
            .limit(wanted)
        )
        with self.store.engine.connect() as connection:
            rows = connection.execute(statement).all()
        return [
            HistoryEntry(
                kind=_CONVERSATION,
                key=row.subject,
                title=str(row.title),
                status=row.status,
                started_by=str(row.owner),
                started_at=_utc(row.started_at),
                updated_at=_utc(row.updated_at),
                link=link_of(_CONVERSATION, row.subject, _dataset(row.inputs)),
                questions=int(row.questions),
            )
            for row in rows
        ]

    def _visible(
        self, person: Person, kinds: Iterable[str], kind: Any, owner: Any
    ) -> sqlalchemy.ColumnElement[bool]:
        """What ``person`` may see of ``kinds``: their own runs, and every run of a kind
        whose runs of nobody they see (a role overseeing it, or team sharing)."""
        everyone = [name for name in kinds if self.ownership.may_see(person, "", name)]
        allowed: list[sqlalchemy.ColumnElement[bool]] = []
        if everyone:
            allowed.append(kind.in_(everyone))
        if person.login:
            allowed.append(owner == person.login)
        return or_(*allowed) if allowed else sqlalchemy.false()

    def _common(
        self, query: HistoryQuery, owner: Any, status: Any, started_at: Any
    ) -> list[sqlalchemy.ColumnElement[bool]]:
        """The filters every kind shares: status, who started it, the days."""
        conditions = []
        if query.status is not None:
            conditions.append(status == query.status)
        if query.started_by is not None:
            conditions.append(owner == query.started_by)
        since, until = self._moments(query)
        if since is not None:
            conditions.append(started_at >= since)
        if until is not None:
            conditions.append(started_at < until)
        return conditions

    def _moments(self, query: HistoryQuery) -> tuple[dt.datetime | None, dt.datetime | None]:
        """``since`` and the day after ``until`` as UTC moments (midnight, local time)."""

        def start(day: dt.date | None) -> dt.datetime | None:
            if day is None:
                return None
            return dt.datetime.combine(day, dt.time(), self.zone).astimezone(dt.UTC)

        after = query.until + dt.timedelta(days=1) if query.until else None
        return start(query.since), start(after)

    # --- Plan runs with a state file only ---------------------------------------------

    def _registered(self) -> list[_Plan]:
        """The registered Plans: each id of its files and its YAML, and its title."""
        if self.plans is None:
            return []
        store = self.plans.store
        found = []
        for plan_id in sorted({entry.plan_id for entry in store.list()}):
            ids, title = {plan_id}, plan_id
            with contextlib.suppress(UserInputError):
                plan = load_plan_file(locate_plan_id(store, plan_id))
                ids.add(plan.id)
                title = plan.title or plan_id
            found.append(_Plan(frozenset(ids), title))
        return found

    def _state_only(
        self, person: Person, query: HistoryQuery, plans: Sequence[_Plan], wanted: int
    ) -> list[HistoryEntry]:
        """Runs of the registered Plans known by their state file alone."""
        if self.plans is None or not plans:
            return []
        runs_dir = self.plans.runner.runs_dir
        titles = _titles(plans)
        paths: dict[str, Path] = {}
        for plan_id in titles:
            folder = runs_dir / safe_path_part(plan_id)
            if folder.is_dir():
                for path in folder.glob(f"*{_STATE_SUFFIX}"):
                    if not path.name.startswith("."):  # a state being written
                        paths[path.name.removesuffix(_STATE_SUFFIX)] = path
        known = self._known(list(paths))
        since, until = self._moments(query)
        found = []
        for run_id, path in paths.items():
            if run_id in known:
                continue
            try:
                stat = path.stat()
            except FileNotFoundError:  # removed meanwhile
                continue
            state = _state_summary(str(path), stat.st_mtime_ns, stat.st_size)
            if state is None or state.plan_id not in titles:
                continue
            title = state.title or titles[state.plan_id]
            status = _STATUS_ALIASES.get(state.status, state.status)
            entry = HistoryEntry(
                kind="plan",
                key=run_id,
                title=title,
                status=status,
                started_by=state.started_by,
                started_at=state.started_at,
                updated_at=state.updated_at,
                link=link_of("plan", run_id),
            )
            if not (
                self.ownership.may_see(person, entry.started_by, "plan")
                and (query.status is None or status == query.status)
                and (query.started_by is None or entry.started_by == query.started_by)
                and (since is None or entry.started_at >= since)
                and (until is None or entry.started_at < until)
                and all(_contains(title, word) for word in query.words)
                and (query.cursor is None or entry.order < _order(query.cursor))
            ):
                continue
            found.append(entry)
        found.sort(key=lambda entry: entry.order, reverse=True)
        return found[:wanted]

    def _known(self, run_ids: list[str]) -> set[str]:
        """Which of ``run_ids`` the run service has."""
        known: set[str] = set()
        with self.store.engine.connect() as connection:
            for start in range(0, len(run_ids), _KNOWN_CHUNK):
                chunk = run_ids[start : start + _KNOWN_CHUNK]
                rows = connection.execute(select(runs.c.run_id).where(runs.c.run_id.in_(chunk)))
                known.update(row[0] for row in rows)
        return known


@dataclass(frozen=True)
class _StateSummary:
    plan_id: str
    title: str
    status: str
    started_by: str
    started_at: dt.datetime
    updated_at: dt.datetime


@lru_cache(maxsize=4096)
def _state_summary(path: str, mtime_ns: int, size: int) -> _StateSummary | None:
    """What the history shows of the state file at ``path`` (this version of it: its
    modification time and size are part of the key); None when it does not read."""
    del mtime_ns, size  # the cache key only
    try:
        state = read_state(Path(path))
        plan = state.plan if isinstance(state.plan, dict) else {}
        return _StateSummary(
            plan_id=state.plan_id,
            title=str(plan.get("title") or ""),
            status=state.status,
            started_by=state.started_by,
            started_at=_parsed(state.created_at),
            updated_at=_parsed(state.updated_at),
        )
    except (UserInputError, ValueError, OSError) as error:
        log.warning("history: skipping %s: %s", path, error)
        return None


# --------------------------------------------------------------------------- helpers


def _titles(plans: Sequence[_Plan]) -> dict[str, str]:
    """Every id a registered Plan's runs are saved under → its title."""
    return {plan_id: plan.title for plan in plans for plan_id in sorted(plan.ids)}


def _has(column: Any, word: str) -> sqlalchemy.ColumnElement[bool]:
    """``column`` contains ``word`` (ASCII letters in either case; ``%`` and ``_`` as
    themselves)."""
    result: sqlalchemy.ColumnElement[bool] = func.lower(column).contains(
        word.lower(), autoescape=True
    )
    return result


def _contains(text: str, word: str) -> bool:
    return word.lower() in text.lower()


def _before(cursor: Cursor, started_at: Any, key: Any) -> sqlalchemy.ColumnElement[bool]:
    return or_(
        started_at < cursor.started_at, and_(started_at == cursor.started_at, key < cursor.key)
    )


def _order(cursor: Cursor) -> tuple[dt.datetime, str]:
    return (cursor.started_at, cursor.key)


def _utc(moment: dt.datetime) -> dt.datetime:
    """A stored time as an aware UTC time (SQLite hands naive UTC times back)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def _parsed(text: str) -> dt.datetime:
    return _utc(dt.datetime.fromisoformat(text.replace("Z", "+00:00")))


def _dataset(inputs: Any) -> str:
    if isinstance(inputs, str):  # a JSON column read through a window's subquery
        with contextlib.suppress(ValueError):
            inputs = json.loads(inputs)
    return str(inputs.get("dataset") or "") if isinstance(inputs, dict) else ""
