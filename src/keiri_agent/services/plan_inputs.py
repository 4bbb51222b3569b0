"""What a user hands a Plan: the plan itself, typed ``vars``, files, answers, a 再実行 point.

- The plan: a YAML file path or a plan id under ``designs/`` (the exact file, else
  its newest registered version ``<id>_<yyyymmddHHMM>.yaml``), resolved by
  ``locate_plan`` for every command and page (``load_plan``, ``read_plan_text``).
- ``vars`` from text: a value is YAML (JSON is YAML): ``50000`` is a number,
  ``[a, b]`` a list, ``はい`` a string. Text that is not valid YAML is an error
  naming the variable (code ``VAR_INVALID``) — never "run with the default" or with
  the raw text. ``NAME=VALUE`` assignments (``--var``) without ``=`` are
  ``VAR_SYNTAX``.
- Files (``--file NAME=PATH``): ``NAME`` is a var that feeds a file input of a block
  (a port without a JSON type: ``csv.read.file``, ``excel.read_data.workbook`` …) or the
  id of a ``file``/``files`` requirement of a top-level ``ui.interactive_input`` node
  (``plan_file_inputs``). The file is read within the upload limit
  (``Settings.inputs.max_upload_mb``) as ``{"name": <base name>, "data": <bytes>}`` — the form
  a file answer takes on the terminal and on the pages — and given to the var and/or
  as that node's answer (``read_plan_files``). Mistakes raise ``UserInputError``:
  FILE_SYNTAX (no ``=``), FILE_NOT_FOUND, FILE_IS_DIRECTORY, FILE_UNREADABLE,
  FILE_TOO_LARGE, FILE_UNKNOWN_INPUT (listing the Plan's file inputs),
  FILE_NOT_ACCEPTED (outside the requirement's ``accept``).
- Answers for input nodes: a YAML/JSON file ``{node_id: {field: value}}``.
- 再実行: where a re-run of a failed run starts (``rerun_start``); node paths
  (``per_client[0]/ask``) belong to their top-level node (``node_owner``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml

from keiri_agent.blocks.requirements import accepted_extensions
from keiri_agent.errors import KeiriAgentError, UserInputError, closest_match
from keiri_agent.plans.dsl import load_plan_file
from keiri_agent.plans.dsl.references import (
    Scope,
    find_references,
    is_whole_reference,
    parse_reference,
    resolve_value,
)
from keiri_agent.plans.engine import PLAN_SUFFIXES
from keiri_agent.services.user_files import read_text_file
from keiri_agent.textcodec import TextDecodeError, decode_text

if TYPE_CHECKING:
    from keiri_agent.plans.catalog import BlockCatalog
    from keiri_agent.plans.dsl import Plan
    from keiri_agent.plans.dsl.models import BlockNode
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.plans.store import PlanStore

INTERACTIVE_BLOCK = "ui.interactive_input"
VarKind = Literal["boolean", "integer", "number", "text", "yaml"]
VAR_HINT = (
    "数値は 50000、リストは [a, b]、対応表は {キー: 値} のように YAML（または JSON）で"
    "書いてください。「:」「#」「[」などで始まる・含む文字列は引用符で囲みます"
    '（例: "9:00 開始"）'
)

# --------------------------------------------------------------------------- the plan


def locate_plan(store: PlanStore, reference: str | Path) -> Path:
    """The file ``reference`` names: a path (``*.yaml``/``*.yml`` or an existing file),
    else a plan id in ``store`` (the exact file, else its newest registered version).

    ``UserInputError`` PLAN_NOT_FOUND when there is none (for an id: listing the ids
    that exist); PLAN_PATH for an id that would leave ``designs/``.
    """
    text = str(reference)
    path = Path(text)
    if path.suffix in PLAN_SUFFIXES or path.is_file():
        if not path.is_file():
            raise UserInputError(
                f"プランのファイル {path} が見つかりません"
                if not path.exists()
                else f"{path} はファイルではありません",
                code="PLAN_NOT_FOUND",
                hint="パスを確認してください（プランは designs/ フォルダに置きます）",
                details={"path": str(path)},
            )
        return path
    return locate_plan_id(store, text)


def locate_plan_id(store: PlanStore, plan_id: str) -> Path:
    """The file of plan id ``plan_id`` in ``store`` only (the exact file, else its newest
    registered version): never a path, so nothing outside ``designs/`` is read (the
    HTTP API's plan ids). ``UserInputError`` PLAN_PATH for an id that is not a plain
    id (a path, ``..``, a ``.yaml`` name), PLAN_NOT_FOUND when there is no such plan.
    """
    if Path(plan_id).suffix in PLAN_SUFFIXES:
        raise UserInputError(
            f"Plan id {plan_id!r} にファイルの拡張子は付けません",
            code="PLAN_PATH",
            hint="例: designs/common/validation_flow.yaml なら common/validation_flow",
            details={"plan_id": plan_id},
        )
    exact = store.path_for(plan_id)  # PLAN_PATH for an id leaving designs/
    if exact.is_file():
        return exact
    versions = store.versions(plan_id)
    if not versions:
        store.load(plan_id)  # raises PLAN_NOT_FOUND listing the ids that exist
        return exact  # written in the meantime
    return versions[-1].path


def load_plan(engine: PlanEngine, reference: str | Path) -> Plan:
    """The Plan ``reference`` names (see ``locate_plan``), loaded and checked for syntax."""
    return load_plan_file(locate_plan(engine.store, reference))


def read_plan_text(store: PlanStore, reference: str | Path) -> tuple[Path, str]:
    """(path, text) of the plan ``reference`` names, for tools that edit the file."""
    path = locate_plan(store, reference)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UserInputError(
            f"Plan ファイル {path} を読み込めません: {error.strerror or error}",
            hint="ファイルの場所と読み取り権限を確かめてください",
        ) from None
    try:
        return path, decode_text(raw).text
    except TextDecodeError:
        raise UserInputError(
            f"プラン {path} の文字コードを読み取れません（UTF-8 でも CP932 でもありません）",
            hint="UTF-8 で保存してください",
        ) from None


# --------------------------------------------------------------------------- vars


def var_kind(default: Any) -> VarKind:
    """How a var is edited: by its default's type; lists and mappings as YAML text."""
    if isinstance(default, bool):
        return "boolean"
    if isinstance(default, int):
        return "integer"
    if isinstance(default, float):
        return "number"
    if isinstance(default, str) or default is None:
        return "text"
    return "yaml"


def var_text(value: Any) -> str:
    """A var's value as the YAML text a user edits (the reverse of ``parse_var_value``)."""
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False)


class _VarLoader(yaml.SafeLoader):
    """YAML as a person typing a value means it: a date stays the text typed
    (``2026-11-30``), and digits with a leading zero stay text (a bank code ``0010``
    is not the octal number 8, an account number ``0456789`` keeps its zero)."""


_VarLoader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:int")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_VarLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]*))$"), list("-+0123456789")
)


def parse_var_value(name: str, text: str) -> Any:
    """The value of var ``name`` typed from ``text`` (YAML; empty text is ``""``;
    dates and zero-led digits stay text: ``_VarLoader``).

    ``UserInputError`` VAR_INVALID naming the variable, where and why, when the text
    is not valid YAML.
    """
    if not text.strip():
        return ""
    try:
        return yaml.load(text, Loader=_VarLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        problem = str(getattr(error, "problem", None) or error).strip()
        mark = getattr(error, "problem_mark", None)
        where = f"{mark.line + 1} 行 {mark.column + 1} 文字目: " if mark is not None else ""
        raise UserInputError(
            f"変数 {name} の値を YAML として読み取れません（{where}{problem}）",
            code="VAR_INVALID",
            hint=VAR_HINT,
            details={"var": name, "text": text, "problem": problem},
        ) from None


def parse_var_assignments(items: Sequence[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x y"]`` → ``{"a": 1, "b": "x y"}`` (each value by ``parse_var_value``)."""
    values: dict[str, Any] = {}
    for item in items or []:
        name, separator, raw = item.partition("=")
        if not separator or not name.strip():
            raise UserInputError(
                f"変数の指定 {item!r} は 名前=値 の形で書いてください",
                code="VAR_SYNTAX",
                hint="例: min_amount=50000（値は YAML: 数値、文字列、[a, b] など）",
                details={"item": item},
            )
        values[name.strip()] = parse_var_value(name.strip(), raw)
    return values


def asked_inputs(plan: Plan) -> dict[str, Any]:
    """What a run of ``plan`` asks: ``{"vars": [{"name", "title", "description",
    "default", "kind", "secret"}],
    "interactive": [{"node_id", "title", "mode", "message", "requirements"}]}`` — the
    vars (titled by ``ui.vars``, else their name) with their defaults (``var_kind``)
    and the top-level ``ui.interactive_input`` nodes (titled) with the requirements
    they ask for (answered by
    ``{node_id: {requirement id: value}}``)."""
    from keiri_agent.plans.dsl.models import BlockNode

    interactive = []
    for node in plan.graph:
        if isinstance(node, BlockNode) and node.block.split("@")[0] == INTERACTIVE_BLOCK:
            interactive.append(
                {
                    "node_id": node.id,
                    "title": node.title or node.id,
                    "mode": node.inputs.get("mode"),
                    "message": node.inputs.get("message"),
                    "requirements": node.inputs.get("requirements") or [],
                }
            )
    return {
        "vars": [
            {
                "name": name,
                "title": (info.title if info else None) or name,
                "description": info.description if info else None,
                "default": default,
                "kind": var_kind(default),
                "secret": plan.is_secret_var(name),
            }
            for name, default in plan.vars.items()
            for info in [plan.ui.vars.get(name)]
        ],
        "interactive": interactive,
    }


def upfront_forms(plan: Plan, vars: Mapping[str, Any]) -> list[tuple[BlockNode, dict[str, Any]]]:
    """The input forms a person can fill before 実行: (node, request) of each top-level
    ``ui.interactive_input`` node in ``collect``/``mixed`` mode without ``when`` whose
    inputs read nothing but ``vars`` (resolved with ``vars``, the values the run will
    use), with the request the node shows when the run reaches it (same fields, so the
    form's values are its answers). Forms that need the run's data (other references,
    confirm/inquire) are asked when the run pauses."""
    from keiri_agent.blocks.interactive_input import describe, mode_fields
    from keiri_agent.plans.dsl.models import BlockNode as _BlockNode

    known = {  # a var still holding ${env.X}/${config.x} is only known when the run starts
        name: value
        for name, value in vars.items()
        if not (isinstance(value, str) and "${" in value)
    }
    scope = Scope(nodes={}, vars=known, env={}, config={}, locals={})
    forms = []
    for node in plan.graph:
        if not isinstance(node, _BlockNode) or node.block.split("@")[0] != INTERACTIVE_BLOCK:
            continue
        mode = str(node.inputs.get("mode") or "collect")
        if node.when is not None or mode not in ("collect", "mixed"):
            continue
        if any(reference.root != "vars" for _, reference in find_references(node.inputs)):
            continue
        try:
            inputs = resolve_value(node.inputs, scope.lookup)
        except KeiriAgentError:
            continue
        forms.append((node, describe(mode, inputs.get("message"), mode_fields(inputs))))
    return forms


# --------------------------------------------------------------------------- files

MIB = 2**20
FILE_REQUIREMENT_TYPES = ("file", "files")
_TYPE_KEYS = ("type", "anyOf", "oneOf", "allOf", "$ref", "enum", "const")
_FILE_HINT = "--file 名前=パス の形で書いてください（例: --file sales_csv=売上.csv）"


@dataclass(frozen=True)
class FileInput:
    """Where a Plan takes a file: a var (``node_id`` None) or an interactive
    requirement (``node_id`` its node); ``multiple`` for a ``files`` requirement."""

    name: str
    node_id: str | None = None
    accept: str | None = None
    multiple: bool = False


@dataclass
class PlanFiles:
    """The files read for a run: the vars to give and the answers to add."""

    vars: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def answers_with(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` answers (an answers file) with these files added to their nodes."""
        merged = dict(given)
        for node_id, fields in self.answers.items():
            before = merged.get(node_id)
            merged[node_id] = {**(before if isinstance(before, Mapping) else {}), **fields}
        return merged


def parse_file_assignments(items: Sequence[str] | None) -> list[tuple[str, Path]]:
    """``["sales=a.csv"]`` → ``[("sales", Path("a.csv"))]``; FILE_SYNTAX without ``=``."""
    found = []
    for item in items or []:
        name, separator, path = item.partition("=")
        if not separator or not name.strip() or not path.strip():
            raise UserInputError(
                f"ファイルの指定 {item!r} は 名前=パス の形で書いてください",
                code="FILE_SYNTAX",
                hint=_FILE_HINT,
                details={"item": item},
            )
        found.append((name.strip(), Path(os.path.expanduser(path.strip()))))
    return found


def plan_file_inputs(plan: Plan, catalog: BlockCatalog) -> list[FileInput]:
    """Where ``plan`` takes files, in the order it meets them: vars whose whole value
    feeds a block input without a JSON type (loop bodies included; blocks the catalog
    does not know are skipped), then the ``file``/``files`` requirements of its
    top-level ``ui.interactive_input`` nodes."""
    from keiri_agent.plans.dsl.models import BlockNode

    found: dict[tuple[str, str | None], FileInput] = {}
    for node in _block_nodes(plan.graph):
        try:
            spec = catalog.resolve(node.block)
        except KeiriAgentError:
            continue
        for port, value in node.inputs.items():
            declared = spec.inputs.get(port)
            if declared is None or any(key in declared for key in _TYPE_KEYS):
                continue
            if is_whole_reference(value):
                reference = parse_reference(value)
                if reference.root == "vars" and len(reference.path) == 1:
                    name = str(reference.path[0])
                    found.setdefault((name, None), FileInput(name))
    for top in plan.graph:
        if not isinstance(top, BlockNode) or top.block.split("@")[0] != INTERACTIVE_BLOCK:
            continue
        requirements = top.inputs.get("requirements")
        for item in requirements if isinstance(requirements, list) else []:
            if isinstance(item, Mapping) and item.get("type") in FILE_REQUIREMENT_TYPES:
                name = str(item.get("id"))
                accept = item.get("accept")
                found.setdefault(
                    (name, top.id),
                    FileInput(
                        name,
                        top.id,
                        accept=str(accept) if accept else None,
                        multiple=item.get("type") == "files",
                    ),
                )
    return list(found.values())


def _block_nodes(graph: Sequence[Any]) -> Iterator[BlockNode]:
    from keiri_agent.plans.dsl.models import BlockNode, LoopNode

    for node in graph:
        if isinstance(node, BlockNode):
            yield node
        elif isinstance(node, LoopNode):
            yield from _block_nodes(node.body.plan.graph)


def read_plan_files(
    engine: PlanEngine, plan: Plan, assignments: Sequence[tuple[str, Path]]
) -> PlanFiles:
    """The files of ``assignments`` (``parse_file_assignments``) read for ``plan``: each
    ``{name, data}`` given to the var of that name and/or as the answer of the
    requirement of that id (a ``files`` requirement takes every file given to it).

    ``UserInputError`` FILE_UNKNOWN_INPUT for a name the Plan does not take a file by
    (listing those it does), FILE_NOT_ACCEPTED, and ``read_input_file``'s errors.
    """
    inputs = plan_file_inputs(plan, engine.catalog)
    max_bytes = engine.settings.inputs.max_upload_mb * MIB
    files = PlanFiles()
    for name, path in assignments:
        targets = [item for item in inputs if item.name == name]
        if not targets:
            raise _unknown_file_input(name, inputs)
        value = read_input_file(path, max_bytes=max_bytes, what=f"--file {name} のファイル")
        for target in targets:
            if target.node_id is None:
                files.vars[name] = value
                continue
            extensions = accepted_extensions(target.accept)
            if extensions and not path.name.lower().endswith(tuple(extensions)):
                raise UserInputError(
                    f"--file {name} の {path.name} は受け付けない形式です"
                    f"（受け付ける形式: {', '.join(extensions)}）",
                    code="FILE_NOT_ACCEPTED",
                    hint=f"{', '.join(extensions)} のファイルを指定してください",
                    details={"name": name, "path": str(path), "accept": extensions},
                )
            fields = files.answers.setdefault(target.node_id, {})
            if target.multiple:
                fields.setdefault(name, []).append(value)
            else:
                fields[name] = value
    return files


def _unknown_file_input(name: str, inputs: Sequence[FileInput]) -> UserInputError:
    names = list(dict.fromkeys(item.name for item in inputs))
    if not names:
        return UserInputError(
            f"--file {name}: この Plan にはファイルを受け取る入力がありません",
            code="FILE_UNKNOWN_INPUT",
            hint="値は --var 名前=値 で、入力ノードへの回答は --inputs で渡してください",
            details={"name": name, "choices": []},
        )
    suggestion = closest_match(name, names)
    did_you_mean = f"。{suggestion} のことですか？" if suggestion else ""
    return UserInputError(
        f"--file {name}: この Plan に {name} というファイルの入力はありません{did_you_mean}"
        f"（ファイルの入力: {', '.join(names)}）",
        code="FILE_UNKNOWN_INPUT",
        hint=f"名前をファイルの入力のどれかにしてください（例: --file {names[0]}=パス）",
        details={"name": name, "choices": names, "closest": suggestion},
    )


def read_input_file(path: Path, *, max_bytes: int, what: str = "ファイル") -> dict[str, Any]:
    """The file at ``path`` as ``{"name": <base name>, "data": <bytes>}``, refused over
    ``max_bytes`` (the upload limit) before it is read. ``what`` names it in errors.

    ``UserInputError`` FILE_NOT_FOUND, FILE_IS_DIRECTORY, FILE_UNREADABLE, FILE_TOO_LARGE.
    """
    details = {"path": str(path)}
    if path.is_dir():
        raise UserInputError(
            f"{what} {path} はフォルダです",
            code="FILE_IS_DIRECTORY",
            hint="フォルダの中のファイルのパスを指定してください",
            details=details,
        )
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = file.read(max_bytes + 1) if size <= max_bytes else b""
    except FileNotFoundError:
        raise UserInputError(
            f"{what} {path} が見つかりません",
            code="FILE_NOT_FOUND",
            hint=f"パスを確かめてください（相対パスは今いるフォルダ {Path.cwd()} から）",
            details=details,
        ) from None
    except OSError as error:
        raise UserInputError(
            f"{what} {path} を読めません: {error.strerror or error}",
            code="FILE_UNREADABLE",
            hint="ファイルの場所と読み取り権限を確かめてください",
            details=details,
        ) from None
    if size > max_bytes or len(data) > max_bytes:
        size = max(size, len(data))
        raise UserInputError(
            f"{what} {path.name} は {size / MIB:,.1f} MB あり、上限"
            f"（{max_bytes / MIB:,.1f} MB）を超えています",
            code="FILE_TOO_LARGE",
            hint="必要な行や列に絞るか、ファイルを分けてください。上限を上げるには設定 "
            "KEIRI_AGENT_MAX_UPLOAD_MB（MB 単位）を変更します",
            details={**details, "size_bytes": size, "max_bytes": max_bytes},
        )
    return {"name": path.name, "data": data}


# --------------------------------------------------------------------------- answers


def read_answers(path: Path | None) -> dict[str, Any]:
    """The answers file (YAML or JSON): node id → {field: value}; {} without a file."""
    if path is None:
        return {}
    try:
        data = yaml.safe_load(read_text_file(path, "回答ファイル"))
    except yaml.YAMLError as error:
        raise UserInputError(
            f"回答ファイル {path} は YAML として読めません: {error}",
            hint="{ノードID: {項目: 値}} の形で書いてください"
            "（例: collect_inputs: {proceed: true}）",
        ) from None
    if not isinstance(data, dict):
        raise UserInputError(
            f"回答ファイル {path} はノード ID ごとの回答の形になっていません",
            hint="{ノードID: {項目: 値}} の形で書いてください"
            "（例: collect_inputs: {proceed: true}）",
        )
    return data


# --------------------------------------------------------------------------- 再実行


def node_owner(path: str) -> str:
    """The top-level node of a node path: ``per_client[0]/ask`` → ``per_client``."""
    return re.split(r"[\[/]", path, maxsplit=1)[0]


def failed_node(error: Mapping[str, Any]) -> str:
    """The top-level node to re-run for a run error (``details.node_id``), or ''."""
    return str((error.get("details") or {}).get("node_id") or "")


def rerun_start(
    node_ids: Sequence[str],
    forms: Sequence[str],
    answers: Mapping[str, Any],
    sent: Mapping[str, Any],
    failed: str,
) -> str:
    """Where 再実行 starts: the first top-level node owning a form edited since it was
    sent (so the new values are used), else the failed node (the answers are reused),
    else the first node owning a form, else the first node.

    ``node_ids``: the plan's top-level nodes in order; ``forms``: node paths of the
    input forms shown; ``answers`` / ``sent``: path → values now / when last sent.
    """
    owners = {path: node_owner(path) for path in forms}
    edited = {owners[path] for path in forms if answers.get(path) != sent.get(path)}
    if edited:
        return next(node_id for node_id in node_ids if node_id in edited)
    owning = [node_id for node_id in node_ids if node_id in owners.values()]
    return failed or (owning[0] if owning else node_ids[0])
