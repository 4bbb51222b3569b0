"""Design drafts: what a person is designing on the web 設計 page, kept in the workspace
so that a reload, another browser tab or another server process finds it again.

One draft is one JSON file, written atomically and owner-only
(``private.write_private``)::

    <workspace>/.keiri/design_drafts/<draft_id>.json

It holds the instruction, the answers to the generator's questions, the questions
asked so far, the Plan's name (``title``), the generated (or edited) YAML, the last
generation's result as the page shows it (``result``: the keys of ``RESULT_KEYS``
only) and, once registered, what was registered (``registered``). ``owner`` is the
login of the person who made it; the API checks it (``people.ownership``, kind
``design``) before it shows or changes a draft.

Limits: the instruction as the generator takes it (``MAX_INSTRUCTION_CHARS``), a
Plan's YAML as the loader takes it (``MAX_PLAN_BYTES``), ``MAX_ANSWERS`` answers and
questions, the whole draft ``MAX_DRAFT_BYTES``. Each person keeps at most
``MAX_DRAFTS_PER_PERSON`` drafts and none unchanged for longer than the workspace's
retention (``retention_days``): saving a draft removes that person's oldest ones past
either limit. A file that is not a draft (damaged, cut short, written by hand) is
``DraftDamagedError`` — never overwritten, since whose it was cannot be told.

``plan_outline(yaml, catalog)`` is what the page lists as the Plan's steps: each
node's title, what it does in words (``BLOCK_WORDS``), the steps it takes data from
and the vars it uses (an unanswered question), loop bodies nested.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from keiri_agent.errors import ErrorCategory, KeiriAgentError, UserInputError
from keiri_agent.private import write_private
from keiri_agent.workspace import Workspace

log = logging.getLogger(__name__)

DRAFT_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
MAX_INSTRUCTION_CHARS = 4000
MAX_TITLE_CHARS = 200
MAX_ANSWERS = 100
MAX_DRAFT_BYTES = 4 * 1024 * 1024
MAX_DRAFTS_PER_PERSON = 100
FOLDER = "design_drafts"
NEW_DRAFT_HINT = "メニューの「設計」を開き直して、新しい下書きとして作り直してください"
"""What to do about a draft that cannot be opened, on the web and the Streamlit page alike."""
RESULT_KEYS = frozenset(
    {
        "ok",
        "verdict",
        "verdict_message",
        "checklist",
        "coverage",
        "gaps",
        "plan_id",
        "offline",
        "warnings",
        "requirements",
        "questions",
        "validation",
        "dry_run",
        "seconds",
        "templates",
        "apply_mode",
        "diagram",
    }
)
"""What a draft keeps of a generation's result (``jsonforms.generated_plan_json``): what
the page shows. The candidate blocks and the repair attempts are not kept."""


class DraftNotFoundError(UserInputError):
    """No draft has that id."""

    code = "DESIGN_DRAFT_NOT_FOUND"
    category: ErrorCategory = "not_found"


class DraftDamagedError(UserInputError):
    """The draft's file is not a draft the service wrote."""

    code = "DESIGN_DRAFT_DAMAGED"


def _now() -> datetime:
    return datetime.now(UTC)


def check_draft_id(draft_id: str) -> str:
    """``draft_id`` when it is a draft id (8–64 of A–Z, a–z, 0–9, ``_``, ``-``)."""
    if not DRAFT_ID.fullmatch(draft_id):
        raise UserInputError(
            "下書きの番号が正しくありません",
            hint=NEW_DRAFT_HINT,
            code="DESIGN_DRAFT_ID",
            details={"draft_id": draft_id[:80]},
        )
    return draft_id


@dataclass
class Draft:
    """One design draft (see the module docstring)."""

    draft_id: str
    owner: str
    instruction: str = ""
    answers: dict[str, Any] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)
    generated_instruction: str = ""
    """The instruction the YAML was generated from (answers belong to it)."""
    title: str = ""
    yaml: str = ""
    result: dict[str, Any] | None = None
    registered: dict[str, Any] | None = None
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "draft_id": self.draft_id,
            "owner": self.owner,
            "instruction": self.instruction,
            "answers": dict(self.answers),
            "questions": list(self.questions),
            "generated_instruction": self.generated_instruction,
            "title": self.title,
            "yaml": self.yaml,
            "result": self.result,
            "registered": self.registered,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Draft:
        """A draft from its file's JSON; ``ValueError`` when it is not one."""
        text_keys = ("draft_id", "owner", "instruction", "generated_instruction", "title", "yaml")
        if not all(isinstance(data.get(key, ""), str) for key in text_keys):
            raise ValueError("a text field is not text")
        answers, questions = data.get("answers") or {}, data.get("questions") or []
        result, registered = data.get("result"), data.get("registered")
        if not isinstance(answers, dict) or not isinstance(questions, list):
            raise ValueError("answers or questions of the wrong type")
        if not all(isinstance(item, dict) for item in questions):
            raise ValueError("a question is not an object")
        if not (result is None or isinstance(result, dict)):
            raise ValueError("result is not an object")
        if not (registered is None or isinstance(registered, dict)):
            raise ValueError("registered is not an object")
        return cls(
            draft_id=str(data.get("draft_id") or ""),
            owner=str(data.get("owner") or ""),
            instruction=str(data.get("instruction") or ""),
            answers=dict(answers),
            questions=list(questions),
            generated_instruction=str(data.get("generated_instruction") or ""),
            title=str(data.get("title") or ""),
            yaml=str(data.get("yaml") or ""),
            result=result,
            registered=registered,
            created_at=str(data.get("created_at") or ""),
            updated_at=str(data.get("updated_at") or ""),
        )

    def summary(self) -> dict[str, Any]:
        """What a list of drafts shows: its name (or instruction), when, registered."""
        return {
            "draft_id": self.draft_id,
            "title": self.title,
            "instruction": self.instruction[:200],
            "verdict": (self.result or {}).get("verdict"),
            "registered": self.registered is not None,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class DraftChanges:
    """What a save sets (``None``: keep what the draft has)."""

    instruction: str | None = None
    answers: Mapping[str, Any] | None = None
    questions: Sequence[Mapping[str, Any]] | None = None
    generated_instruction: str | None = None
    title: str | None = None
    yaml: str | None = None
    result: Mapping[str, Any] | None = None
    clear_result: bool = False
    registered: Mapping[str, Any] | None = None
    clear_registered: bool = False


def _too_long(what: str, limit: str) -> UserInputError:
    return UserInputError(
        f"{what}が長すぎるため下書きを保存できません（上限 {limit}）",
        hint=f"{what}を短くしてから、もう一度お試しください",
        code="DESIGN_DRAFT_TOO_LARGE",
    )


def _checked(changes: DraftChanges) -> None:
    from keiri_agent.plans.dsl.loader import MAX_PLAN_BYTES

    for what, text in (
        ("指示", changes.instruction),
        ("生成に使った指示", changes.generated_instruction),
    ):
        if text is not None and len(text) > MAX_INSTRUCTION_CHARS:
            raise _too_long(what, f"{MAX_INSTRUCTION_CHARS:,} 文字")
    if changes.title is not None and len(changes.title) > MAX_TITLE_CHARS:
        raise _too_long("Plan の名前", f"{MAX_TITLE_CHARS} 文字")
    if changes.yaml is not None and len(changes.yaml.encode("utf-8")) > MAX_PLAN_BYTES:
        raise _too_long("Plan の YAML", f"{MAX_PLAN_BYTES:,} バイト")
    for what, items in (("回答", changes.answers), ("質問", changes.questions)):
        if items is not None and len(items) > MAX_ANSWERS:
            raise _too_long(f"{what}の数", f"{MAX_ANSWERS} 件")


class PlanDrafts:
    """The design drafts of one workspace (see the module docstring)."""

    def __init__(self, workspace: Workspace, *, keep_days: int | None = None) -> None:
        self.folder = workspace.state / FOLDER
        self.keep_days = keep_days

    def _path(self, draft_id: str) -> Path:
        return self.folder / f"{check_draft_id(draft_id)}.json"

    def get(self, draft_id: str) -> Draft:
        """The draft ``draft_id``; ``DraftNotFoundError`` / ``DraftDamagedError``."""
        path = self._path(draft_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise DraftNotFoundError(
                "この下書きは見つかりません（削除されたか、保存期間を過ぎています）",
                hint=NEW_DRAFT_HINT,
                details={"draft_id": draft_id},
            ) from None
        except OSError:
            raise self._damaged(draft_id) from None
        try:
            if len(raw) > MAX_DRAFT_BYTES:
                raise ValueError("larger than a draft may be")
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            draft = Draft.from_dict(data)
        except (ValueError, UnicodeDecodeError):
            raise self._damaged(draft_id) from None
        if draft.draft_id != draft_id or not draft.owner:
            raise self._damaged(draft_id)
        return draft

    @staticmethod
    def _damaged(draft_id: str) -> DraftDamagedError:
        return DraftDamagedError(
            "この下書きのファイルが壊れているため開けません",
            hint=f"{NEW_DRAFT_HINT}（壊れた下書きは上書きしません）",
            details={"draft_id": draft_id},
        )

    def find(self, draft_id: str) -> Draft | None:
        """The draft, or None when there is none (a damaged one still raises)."""
        try:
            return self.get(draft_id)
        except DraftNotFoundError:
            return None

    def save(self, draft_id: str, owner: str, changes: DraftChanges) -> Draft:
        """Create or change the draft ``draft_id`` (made by ``owner`` when new); the
        caller checked that ``owner`` may change an existing one."""
        _checked(changes)
        now = _now().isoformat()
        found = self.find(draft_id)
        draft = found or Draft(draft_id=draft_id, owner=owner, created_at=now)
        if changes.instruction is not None:
            draft.instruction = changes.instruction
        if changes.answers is not None:
            draft.answers = dict(changes.answers)
        if changes.questions is not None:
            draft.questions = [dict(item) for item in changes.questions]
        if changes.generated_instruction is not None:
            draft.generated_instruction = changes.generated_instruction
        if changes.title is not None:
            draft.title = changes.title.strip()
        if changes.yaml is not None:
            draft.yaml = changes.yaml
        if changes.clear_result:
            draft.result = None
        if changes.result is not None:
            draft.result = {k: v for k, v in changes.result.items() if k in RESULT_KEYS}
        if changes.clear_registered:
            draft.registered = None
        if changes.registered is not None:
            draft.registered = dict(changes.registered)
        if draft.title and draft.yaml:
            draft.yaml = titled(draft.yaml, draft.title)
        draft.updated_at = now
        text = json.dumps(draft.to_dict(), ensure_ascii=False, default=str)
        if len(text.encode("utf-8")) > MAX_DRAFT_BYTES:
            raise _too_long("下書き", f"{MAX_DRAFT_BYTES // (1024 * 1024)} MB")
        write_private(self._path(draft_id), text)
        if found is None:  # a new draft: the owner's oldest may go (not on every keystroke)
            self._prune(owner=draft.owner, keep=draft_id)
        return draft

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return [path for path in self.folder.glob("*.json") if DRAFT_ID.fullmatch(path.stem)]

    def of(self, owner: str) -> list[Draft]:
        """``owner``'s drafts, the most recently changed first (damaged files skipped)."""
        drafts = []
        for path in self._files():
            with contextlib.suppress(KeiriAgentError):
                draft = self.get(path.stem)
                if draft.owner == owner:
                    drafts.append(draft)
        drafts.sort(key=lambda draft: draft.updated_at, reverse=True)
        return drafts

    def _prune(self, *, owner: str, keep: str) -> None:
        """Remove ``owner``'s drafts past ``MAX_DRAFTS_PER_PERSON`` or the retention."""
        cutoff = (
            (_now() - timedelta(days=self.keep_days)).isoformat()
            if self.keep_days is not None and self.keep_days > 0
            else None
        )
        for index, draft in enumerate(self.of(owner)):
            old = cutoff is not None and draft.updated_at < cutoff
            if draft.draft_id != keep and (index >= MAX_DRAFTS_PER_PERSON or old):
                with contextlib.suppress(OSError):
                    self._path(draft.draft_id).unlink()


_TITLE_LINE = re.compile(r"^title:.*(?:\n[ \t]+.*)*\n?", re.MULTILINE)
_ID_LINE = re.compile(r"^id:.*\n", re.MULTILINE)


def titled(yaml_text: str, title: str) -> str:
    """``yaml_text`` with the Plan's top-level ``title`` set to ``title``, the rest of
    the text as it was (a YAML that is not a Plan mapping is returned unchanged)."""
    import yaml

    try:
        data = yaml.safe_load(yaml_text)
    except yaml.YAMLError:
        return yaml_text
    if not isinstance(data, dict) or data.get("title") == title:
        return yaml_text
    line = "title: " + json.dumps(title, ensure_ascii=False) + "\n"
    if "title" in data:
        changed = _TITLE_LINE.sub(lambda _match: line, yaml_text, count=1)
    elif (found := _ID_LINE.search(yaml_text)) is not None:
        changed = yaml_text[: found.end()] + line + yaml_text[found.end() :]
    else:
        changed = line + yaml_text
    try:
        again = yaml.safe_load(changed)
    except yaml.YAMLError:
        again = None
    if isinstance(again, dict) and again.get("title") == title:
        return changed
    data["title"] = title  # a title the lines could not carry: written by the dumper
    return str(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100))


# --- the Plan's steps in words --------------------------------------------------------

BLOCK_WORDS: dict[str, str] = {
    "accounting.check_invoice_tax": "請求書をインボイス制度の記載事項に照らしてチェックします",
    "accounting.export_journal": "仕訳を会計ソフトに取り込める形式のファイルにします",
    "accounting.match_payments": "銀行の入金明細を得意先と請求に突き合わせて消し込みます",
    "accounting.zengin_transfer": "支払予定表から銀行に送る総合振込ファイルを作ります",
    "ai.classify": "AI（LLM）が表の各行を分類します",
    "ai.process_llm": "AI（LLM）が証跡ファイルを読んで項目を取り出します",
    "date.business_day": "日付を営業日に合わせます",
    "document.render": "文章から Word 文書を作ります",
    "document.extract_text": "ファイルから文章を取り出します",
    "excel.read_data": "Excel のシートを表として読み込みます",
    "excel.write": "表を Excel ブックに書き込みます",
    "csv.read": "CSV ファイルを表として読み込みます",
    "csv.write": "表を CSV ファイルにします",
    "file.parse_zip_2tier": "ZIP ファイルの中身をフォルダごとに読み込みます",
    "table.read": "CSV または Excel のファイルを表として読み込みます",
    "table.aggregate": "表をグループに分けて合計や件数を出します",
    "table.compute": "計算した列を表に加えます",
    "table.concat": "複数の表を縦につなげて一つにします",
    "table.dedupe": "同じ内容の行を一つにまとめます",
    "table.filter": "条件に合う行だけを残します",
    "table.join": "別の表から対応する行の値を付け足します（VLOOKUP のような参照）",
    "table.reconcile": "二つの表を照合して、一致・片方だけ・差異に分けます",
    "table.select": "残す列を選び、列の名前を変えます",
    "table.sort": "表の行を並べ替えます",
    "table.to_markdown": "表を報告書用の表にします",
    "text.join": "文字をつなげて一つの文章にします",
    "text.normalize": "列の書き方（全角・半角、日付、金額など）を揃えます",
    "text.template": "ひな形に値を入れて文章を作ります",
    "ui.confirmation": "実行する人に確認してもらいます",
    "ui.file_uploader": "実行する人にファイルを選んでもらいます",
    "ui.interactive_input": "実行する人に入力してもらいます",
    "validate.registration_number": "登録番号（インボイス）や法人番号が正しい番号かを確かめます",
}
"""What each block does, in the words of the person who runs the Plan."""

_INPUT_MODES = {
    "collect": "実行する人にファイルや値を入力してもらいます",
    "confirm": "実行する人に内容を確認してもらいます",
    "approval": "承認者に承認してもらいます",
    "inquire": "実行する人に質問に答えてもらいます",
}


def _base(block: str) -> str:
    return block.split("@", 1)[0]


def _block_words(block: str, inputs: Mapping[str, Any]) -> str:
    base = _base(block)
    if base == "ui.interactive_input":
        words = _INPUT_MODES.get(str(inputs.get("mode")), BLOCK_WORDS[base])
        requirements = inputs.get("requirements")
        asked = [
            str(item.get("label") or "")
            for item in (requirements if isinstance(requirements, list) else [])
            if isinstance(item, Mapping) and item.get("label")
        ]
        return f"{words}（{'、'.join(asked)}）" if asked else words
    if base == "excel.write":
        config = inputs.get("output_config")
        sheet = config.get("sheet") if isinstance(config, Mapping) else None
        if isinstance(sheet, str) and sheet:
            return f"表を Excel ブックのシート「{sheet}」に書き込みます"
    return BLOCK_WORDS.get(base, "データを処理します")


def _used_vars(node: Any) -> list[str]:
    """The vars a node (and its loop body) reads, in order, each once."""
    from keiri_agent.plans.dsl.conditions import parse_when
    from keiri_agent.plans.dsl.dependencies import node_fields
    from keiri_agent.plans.dsl.models import LoopNode
    from keiri_agent.plans.dsl.references import Reference, find_references

    names: list[str] = []
    references: list[Reference] = []
    for path, value in node_fields(node):
        with contextlib.suppress(KeiriAgentError):
            references.extend(reference for _, reference in find_references(value, path))
    if node.when is not None:
        with contextlib.suppress(KeiriAgentError):
            references.extend(parse_when(node.when).references)
    for reference in references:
        if reference.root == "vars" and reference.path and str(reference.path[0]) not in names:
            names.append(str(reference.path[0]))
    if isinstance(node, LoopNode):
        for child in node.body.plan.graph:
            names.extend(name for name in _used_vars(child) if name not in names)
    return names


def _steps(graph: Sequence[Any]) -> list[dict[str, Any]]:
    from keiri_agent.plans.dsl.dependencies import dependencies
    from keiri_agent.plans.dsl.models import BlockNode, LoopNode, SubflowNode

    deps = dependencies(graph)
    order = [node.id for node in graph]
    steps = []
    for node in graph:
        step: dict[str, Any] = {
            "id": node.id,
            "title": node.title,
            "kind": "block",
            "block": None,
            "does": "",
            "from": [other for other in order if other in deps.get(node.id, set())],
            "vars": _used_vars(node),
            "conditional": node.when is not None,
            "steps": [],
        }
        if isinstance(node, BlockNode):
            step.update(block=_base(node.block), does=_block_words(node.block, node.inputs))
        elif isinstance(node, LoopNode):
            step.update(
                kind="loop",
                does="次の手順を、項目ごとに繰り返します"
                if node.foreach is not None
                else "次の手順を、条件を満たす間くり返します",
                steps=_steps(node.body.plan.graph),
            )
        elif isinstance(node, SubflowNode):
            step.update(kind="subflow", does="登録済みの別の Plan を呼び出します")
        steps.append(step)
    return steps


def plan_outline(yaml_text: str) -> dict[str, Any] | None:
    """The Plan's steps in words (``None`` when the text does not load as a Plan):
    ``{"title", "description", "steps": [{"id", "title", "kind", "block", "does",
    "from", "vars", "conditional", "steps"}], "outputs": [{"name", "title"}]}``."""
    from keiri_agent.plans.dsl.loader import check_plan_text

    if not yaml_text.strip():
        return None
    loaded = check_plan_text(yaml_text)
    if loaded.plan is None:
        return None
    plan = loaded.plan
    try:
        steps = _steps(plan.graph)
    except (TypeError, ValueError, AttributeError, KeyError):  # a draft's odd YAML
        log.warning("a draft's Plan could not be put in words", exc_info=True)
        return None
    return {
        "title": plan.title,
        "description": plan.description,
        "steps": steps,
        "outputs": [{"name": item.name, "title": item.title} for item in plan.exports],
    }
