"""The Plan store: Plan YAML files under ``designs/`` (seed 002 §5.3, 003 §10).

Plan ids are relative paths without ``.yaml``: ``common/validation_flow`` is
``designs/common/validation_flow.yaml``. Ids that leave ``designs/`` (``..``,
absolute paths, symlinks pointing outside) are refused with code ``PLAN_PATH``.

``register`` never overwrites: it writes ``designs/<plan_id>_<yyyymmddHHMM>.yaml``
and, when that name is taken (a second registration in the same minute),
``<plan_id>_<yyyymmddHHMM>_2.yaml``, ``_3`` and so on; the file is created
exclusively, so two writers cannot clobber each other. ``load`` takes the exact
file when it exists, else the newest registered version of that id.
``designs/templates/`` holds templates, not Plans, and is not listed.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from keiri_agent.errors import UserInputError
from keiri_agent.plans.dsl.loader import load_plan_file
from keiri_agent.plans.dsl.models import SEMVER, Plan
from keiri_agent.plans.issues import unknown_choice_text
from keiri_agent.private import private_dir, private_opener

PLAN_SUFFIX = ".yaml"
TEMPLATES_DIR = "templates"
_SEGMENT = re.compile(r"^[\w][\w.\-]*$")
_REGISTERED = re.compile(r"^(?P<base>.+)_(?P<stamp>\d{12})(?:_(?P<seq>[1-9]\d*))?$")
_STAMP_FORMAT = "%Y%m%d%H%M"
_MAX_SAME_MINUTE = 1000


@dataclass(frozen=True)
class PlanEntry:
    """One Plan file: ``file_id`` loads exactly this file; ``plan_id`` is its logical id."""

    plan_id: str
    file_id: str
    path: Path
    registered_at: datetime | None = None
    sequence: int = 1
    """1 for the first registration in a minute, 2 for the second, ..."""


class PlanStore:
    """Plan files under one ``designs/`` folder."""

    def __init__(self, designs_dir: Path | str) -> None:
        self.designs_dir = Path(designs_dir)

    def path_for(self, plan_id: str) -> Path:
        """The file of ``plan_id``; ``UserInputError`` (code PLAN_PATH) when it would
        leave ``designs/`` or is not a well-formed id."""
        segments = plan_id.split("/")
        if (
            not plan_id
            or plan_id.startswith(("/", "\\"))
            or "\\" in plan_id
            or ":" in plan_id
            or any(not _SEGMENT.match(part) or part in {".", ".."} for part in segments)
        ):
            raise UserInputError(
                f"Plan id {plan_id!r} が正しくありません: designs/ の中の相対パスにしてください"
                "（英数字、_、-、. と、フォルダの区切りの / だけ。'..' は使えません）",
                code="PLAN_PATH",
                hint="例: designs/common/validation_flow.yaml なら common/validation_flow",
                details={"plan_id": plan_id},
            )
        path = self.designs_dir.joinpath(*segments[:-1], segments[-1] + PLAN_SUFFIX)
        root = self.designs_dir.resolve()
        resolved = path.resolve()
        if not resolved.is_relative_to(root):
            raise UserInputError(
                f"Plan id {plan_id!r} が designs/ の外を指しています（{resolved} へのリンク）",
                code="PLAN_PATH",
                hint="Plan は designs/ フォルダの中に置いてください",
                details={"plan_id": plan_id},
            )
        return path

    def exists(self, plan_id: str) -> bool:
        """True when ``load(plan_id)`` would find a file."""
        return self._find(plan_id) is not None

    def load(self, plan_id: str) -> Plan:
        """The Plan ``plan_id``: the exact file, else its newest registered version.

        ``UserInputError`` PLAN_NOT_FOUND lists the ids that exist (with a close match);
        ``PlanValidationError`` when the file does not load.
        """
        path = self._find(plan_id)
        if path is None:
            known = sorted({entry.plan_id for entry in self.list()})
            raise UserInputError(
                unknown_choice_text("Plan", plan_id, known)
                if known
                else f"Plan {plan_id!r} は見つかりません: designs/ に Plan がありません",
                code="PLAN_NOT_FOUND",
                hint=f"Plan は {self.designs_dir} から読み込みます。id を確かめてください",
                details={"plan_id": plan_id, "available": known[:100]},
            )
        return load_plan_file(path)

    def register(self, plan: Plan, *, now: datetime | None = None) -> Path:
        """Write ``designs/<plan.id>_<yyyymmddHHMM>.yaml`` (``_2``, ``_3``... in the same
        minute); never overwrites an existing file. Returns the path written.

        The file is created owner-only (``0600``, new folders ``0700``)."""
        stamp = (now or datetime.now()).strftime(_STAMP_FORMAT)
        base = self.path_for(f"{plan.id}_{stamp}")
        private_dir(base.parent)
        text = dump_plan(plan)
        for sequence in range(1, _MAX_SAME_MINUTE + 1):
            path = base if sequence == 1 else base.with_name(f"{base.stem}_{sequence}.yaml")
            try:
                with open(path, "x", encoding="utf-8", opener=private_opener) as handle:
                    handle.write(text)
            except FileExistsError:
                continue
            return path
        raise UserInputError(
            f"Plan {plan.id!r} は 1 分間に {_MAX_SAME_MINUTE} 回登録されています",
            code="PLAN_REGISTER_LIMIT",
            hint="1 分ほど待ってから登録し直してください",
        )

    def list(self) -> builtins.list[PlanEntry]:
        """Every Plan file (not templates/), sorted by id then registration time."""
        if not self.designs_dir.is_dir():
            return []
        root = self.designs_dir.resolve()
        entries: list[PlanEntry] = []
        for path in self.designs_dir.rglob(f"*{PLAN_SUFFIX}"):
            relative = path.relative_to(self.designs_dir)
            if relative.parts[0] == TEMPLATES_DIR or not path.resolve().is_relative_to(root):
                continue
            file_id = relative.with_suffix("").as_posix()
            entries.append(_entry(file_id, path))
        entries.sort(key=lambda e: (e.plan_id, e.registered_at or datetime.min, e.sequence))
        return entries

    def versions(self, plan_id: str) -> builtins.list[PlanEntry]:
        """The registered versions of ``plan_id``, oldest first."""
        return [e for e in self.list() if e.plan_id == plan_id and e.registered_at is not None]

    @staticmethod
    def compatibility(old: Plan, new: Plan) -> builtins.list[str]:
        """Warnings for replacing ``old`` by ``new`` (see the module function)."""
        return compatibility(old, new)

    def _find(self, plan_id: str) -> Path | None:
        path = self.path_for(plan_id)
        if path.is_file():
            return path
        versions = self.versions(plan_id)
        return versions[-1].path if versions else None


def dump_plan(plan: Plan) -> str:
    """The Plan as YAML (aliases as written in Plans, defaults left out)."""
    data = plan.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data = {"apiVersion": data.pop("apiVersion"), "id": data.pop("id"), **data}
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100)


@dataclass(frozen=True)
class CompatibilityChange:
    """One difference between a registered Plan and its new version (seed 002 §13).

    ``breaking``: callers (subflows, people running it with saved vars) may rely on what
    changed — registering it needs an explicit acceptance (``--accept-major``)."""

    code: str
    message: str
    breaking: bool

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "breaking": self.breaking}


def compatibility_changes(old: Plan, new: Plan) -> list[CompatibilityChange]:
    """What replacing ``old`` by ``new`` changes: id or apiVersion changes, major version
    bumps, removed vars and exports (breaking); versions going backwards or a changed
    Plan under the same version (warnings only)."""
    changes: list[CompatibilityChange] = []
    if old.id != new.id:
        changes.append(
            CompatibilityChange(
                "ID_CHANGED", f"Plan id が {old.id!r} から {new.id!r} に変わりました", True
            )
        )
    if old.api_version != new.api_version:
        changes.append(
            CompatibilityChange(
                "API_VERSION_CHANGED",
                f"apiVersion が {old.api_version} から {new.api_version} に変わりました: "
                "実行や道具での Plan の読み方が変わることがあります",
                True,
            )
        )
    old_version, new_version = _core(old.version), _core(new.version)
    if new_version < old_version:
        changes.append(
            CompatibilityChange(
                "VERSION_BACKWARDS",
                f"バージョンが戻っています: {old.version} -> {new.version}",
                False,
            )
        )
    elif new_version[0] > old_version[0]:
        changes.append(
            CompatibilityChange(
                "MAJOR_VERSION",
                f"メジャーバージョンが上がりました {old.version} -> {new.version}:"
                " 互換性のない変更です。この Plan を呼ぶ側（サブフロー）を見直してください",
                True,
            )
        )
    elif new_version == old_version and old != new:
        changes.append(
            CompatibilityChange(
                "VERSION_UNCHANGED",
                f"Plan が変わったのにバージョンが {new.version} のままです",
                False,
            )
        )
    removed_vars = sorted(set(old.vars) - set(new.vars))
    if removed_vars:
        changes.append(
            CompatibilityChange(
                "VARS_REMOVED",
                "vars が消えました（サブフローとして呼ぶ側がまだ渡しているかもしれません）:"
                f" {removed_vars}",
                True,
            )
        )
    removed_exports = sorted({e.name for e in old.exports} - {e.name for e in new.exports})
    if removed_exports:
        changes.append(
            CompatibilityChange(
                "EXPORTS_REMOVED",
                f"exports が消えました（呼ぶ側がまだ使っているかもしれません）: {removed_exports}",
                True,
            )
        )
    return changes


def compatibility(old: Plan, new: Plan) -> list[str]:
    """The messages of ``compatibility_changes(old, new)``."""
    return [change.message for change in compatibility_changes(old, new)]


def _core(version: str) -> tuple[int, int, int]:
    match = SEMVER.match(version)
    if match is None:  # models guarantee SemVer; keep comparisons total anyway
        return (0, 0, 0)
    return (int(match[1]), int(match[2]), int(match[3]))


def _entry(file_id: str, path: Path) -> PlanEntry:
    match = _REGISTERED.match(file_id)
    if match is None:
        return PlanEntry(plan_id=file_id, file_id=file_id, path=path)
    try:
        registered_at = datetime.strptime(match["stamp"], _STAMP_FORMAT)
    except ValueError:
        return PlanEntry(plan_id=file_id, file_id=file_id, path=path)
    return PlanEntry(
        plan_id=match["base"],
        file_id=file_id,
        path=path,
        registered_at=registered_at,
        sequence=int(match["seq"] or 1),
    )
