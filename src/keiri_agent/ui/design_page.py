"""設計 page: an instruction (and documents, templates) → a checked Plan → 登録 (seed 003).

The page calls the process's ``DesignService`` (``session.process_services().design``)
and its run service, and renders what comes back:

1. the request: 指示, 参考ドキュメント, テンプレート (keyword filter + multiselect),
   適用モード, 失敗時に代替 Plan を返す; offline, a note that templates found by the
   instruction are composed mechanically;
2. the candidate blocks (top K) for the instruction, with the blocks to pin;
3. 自動生成 as a run of kind ``design`` (``runs.design_kind``: the reference documents
   staged in the workspace, never in the run's inputs), executed by the run service's
   workers and followed in an ``st.status`` from its stored events (``ui.run_follow``);
   then, from the run's result (``design_kind.generation_json``), how the Plan was
   made, its warnings, each repair attempt with its per-node diff, the 不足項目 and
   the Design chat (``DesignChat``, its requests rendered by ``input_form``); 反映 puts
   the chat's Plan into the editor;
4. the YAML editor with 検証/ドライラン and 登録 (then 実行ページで開く);
5. 生成の記録: the generation metrics.

What it keeps in ``st.session_state`` (nothing typed is lost on a rerun or a visit to
another page): ``design.instruction``, ``design.template_filter``,
``design.templates``, ``design.apply_mode``, ``design.fallback``, ``design.pinned``
and ``design.editor`` (widgets kept by ``components.persistent``);
``design.documents`` (the uploaded files as (name, bytes), kept until removed);
``design.generation`` (``run_id``: the generation's run while it is followed,
``result``: its result JSON, ``problem``: an error dict); ``design.chat``
(``DesignChat.to_dict()``) and ``design.chat.turn`` (the last ``ChatTurn``);
``design.check`` (the last 検証/ドライラン) and ``design.registered`` /
``design.register_problem``. A rerun while the generation runs (a click meanwhile)
follows the same run again, so its result is not lost.

A browser reload starts a new session, so the work is also kept server-side as a
design draft (``services.plan_drafts``, the web 設計 page's drafts, one file per
draft, its owner the person the page acts as) named in the address: ``?draft=<id>``
(``d-`` and 20 hex digits, as the web makes them). The draft is made the first time
there is something to keep (an instruction, a YAML, a generation) and saved when the
page's work changed, after the run of the page that changed it (``design.draft``
holds its id and what was saved): the instruction, the editor's YAML, the chat's
answers and questions, and the last generation's result (what ``RESULT_KEYS`` keeps;
``generated_instruction``: the instruction it was made from). A page opened with a
``?draft=`` its session does not hold restores them into the widgets' Session State
(and the chat over the draft's YAML). While a generation runs its run id is in the
address too (``?design_run=<id>``): a reload follows the same run and saves its
result to the draft when it ends. A draft that is missing, damaged, or another
person's (``people.ownership``, kind ``design``: seen and changed by its owner or
管理者) is a Japanese error and a fresh page; a damaged file is never overwritten.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from keiri_agent.errors import KeiriAgentError
from keiri_agent.events import Event
from keiri_agent.people.operator import operator
from keiri_agent.plans.design.coverage import CoverageReport, RequirementCoverage
from keiri_agent.plans.design.design_chat import DesignChat, requirement_from_dict
from keiri_agent.plans.design.models import TemplateSpec
from keiri_agent.runs import design_kind
from keiri_agent.runs.records import run_not_found
from keiri_agent.runs.service import new_run_id
from keiri_agent.services.container import Services
from keiri_agent.services.design import DesignCheck, DesignRequest, DesignService
from keiri_agent.services.jsonforms import json_value
from keiri_agent.services.plan_drafts import Draft, DraftChanges, PlanDrafts, check_draft_id
from keiri_agent.services.staged_uploads import StagedUploads
from keiri_agent.ui.components import (
    accepted_types_caption,
    persistent,
    provider_banner,
    show_error,
)
from keiri_agent.ui.input_forms import input_form
from keiri_agent.ui.people import starter_login
from keiri_agent.ui.run_follow import OUTCOME_KINDS, RUN_EVENT_LABELS, follow_run, run_problem
from keiri_agent.ui.session import process_services
from keiri_agent.workspace import Workspace

GENERATION = "design.generation"
CHAT = "design.chat"
TURN = "design.chat.turn"
EDITOR = "design.editor"
CHECK = "design.check"
REGISTERED = "design.registered"
REGISTER_PROBLEM = "design.register_problem"
DOCUMENTS = "design.documents"
RUN_PLAN = "run.plan"  # the 実行 page's Plan selector (run_page.PLAN), set by 実行ページで開く
RUN_PAGE = "run_page.py"
INSTRUCTION = "design.instruction"
DRAFT = "design.draft"  # {"id": the draft's id, "saved": what the page last saved to it}
DRAFT_FAILED = "design.draft.failed"  # the page's work a save failed on (not retried)
DRAFT_PARAM = "draft"  # the draft's id in the address, as on the web 設計 page
RUN_PARAM = "design_run"  # the generation's run id in the address while it runs
DRAFT_KIND = "design"  # people.ownership's kind of a design draft

DOCUMENT_TYPES = ["txt", "md", "pdf", "docx", "xlsx"]
APPLY_MODES = {
    "hint": "ヒント（テンプレートを手本として LLM が組み立てる）",
    "compose": "組み合わせ（テンプレートを機械的につなぐ。LLM を使いません）",
    "llm-only": "LLM のみ（テンプレートを使わない）",
}
CHANGE_LABELS = {"added": "追加", "removed": "削除", "changed": "変更"}
TYPE_LABELS = {
    "text": "文字",
    "select": "選択",
    "boolean": "はい/いいえ",
    "number": "数値",
    "file": "ファイル",
    "table": "表（ファイル）",
    "enum": "選択",
}


# --- 1. the request ------------------------------------------------------------------


def _documents() -> list[tuple[str, bytes]]:
    """The reference documents: uploaded files are kept as (name, bytes) in the session,
    so they survive a visit to another page (a file uploader cannot be refilled)."""
    uploaded = st.file_uploader(
        "参考ドキュメント（任意）",
        type=DOCUMENT_TYPES,
        accept_multiple_files=True,
        key="design.uploader",
        help="社内規程・手順書・様式など。内容の要約を生成の参考にします。",
    )
    accepted_types_caption(DOCUMENT_TYPES)
    if uploaded:
        st.session_state[DOCUMENTS] = [(f.name, f.getvalue()) for f in uploaded]
    kept: list[tuple[str, bytes]] = st.session_state.get(DOCUMENTS) or []
    if kept:
        st.caption("保持中のファイル: " + ", ".join(name for name, _ in kept))
        if not uploaded and st.button("ファイルをはずす", key="design.documents.clear"):
            st.session_state.pop(DOCUMENTS, None)
            st.rerun()
    return list(kept)


def _matches(template: TemplateSpec, words: Sequence[str]) -> bool:
    text = " ".join(
        [template.id, template.title, template.description or "", template.category, *template.tags]
    ).lower()
    return all(word in text for word in words)


def _template_caption(template: TemplateSpec) -> None:
    tags = "、".join(template.tags)
    st.caption(
        f"**{template.title}**（{template.category}）: {template.description or ''}"
        + (f"　タグ: {tags}" if tags else "")
    )


def _templates(service: DesignService) -> list[str]:
    """The keyword/tag filter and the template multiselect; the chosen template ids."""
    try:
        templates = {template.id: template for template in service.templates()}
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return []
    words = (
        persistent(
            st.text_input,
            "テンプレートを探す（キーワード・タグ）",
            key="design.template_filter",
            default="",
            placeholder="例: 照合 入金",
        )
        .lower()
        .split()
    )
    chosen = [t for t in st.session_state.get("design.templates") or [] if t in templates]
    options = [tid for tid, t in templates.items() if _matches(t, words) or tid in chosen]
    selected: list[str] = persistent(
        st.multiselect,
        "テンプレート（任意）",
        options,
        key="design.templates",
        default=[],
        valid=lambda kept: all(item in templates for item in kept),
        format_func=lambda tid: templates[tid].title,
    )
    for tid in selected:
        _template_caption(templates[tid])
    unselected = [tid for tid in options if tid not in selected]
    if unselected:
        with st.expander(f"テンプレートの説明（{len(unselected)} 件）", expanded=bool(words)):
            for tid in unselected:
                _template_caption(templates[tid])
    elif words and not options:
        st.caption("該当するテンプレートがありません。")
    return selected


def _request(service: DesignService) -> DesignRequest | None:
    """The request widgets; the request when 自動生成 is clicked."""
    instruction = persistent(
        st.text_area,
        "指示",
        key=INSTRUCTION,
        default="",
        placeholder="例: 経費.csv の金額が5万円以上の行を部門別に合計してExcelに出力",
        height=100,
    )
    documents = _documents()
    templates = _templates(service)
    mode = str(
        persistent(
            st.radio,
            "適用モード",
            list(APPLY_MODES),
            key="design.apply_mode",
            default="hint",
            valid=lambda kept: kept in APPLY_MODES,
            format_func=lambda m: APPLY_MODES[m],
        )
    )
    fallback = persistent(
        st.checkbox,
        "失敗時に代替 Plan を返す",
        key="design.fallback",
        default=service.settings.design.llm_fallback,
        help="LLM が失敗したとき、エラーの代わりに安全な代替 Plan を返します。",
    )
    if service.offline:
        st.info(
            "LLM が設定されていないため、指示から見つけたテンプレートを"
            "機械的に組み合わせて Plan を作ります（テンプレートの機械的な組み合わせ）。"
        )
    pinned = _candidates(service, instruction)
    running = bool((st.session_state.get(GENERATION) or {}).get("run_id"))
    clicked = st.button("自動生成", type="primary", key="design.generate", disabled=running)
    if not clicked or running:
        return None
    if not instruction.strip():
        st.warning("指示を入力してください。")
        return None
    return DesignRequest(
        instruction=instruction,
        documents=documents,
        templates=templates,
        apply_mode=mode,
        pinned=pinned,
        fallback=bool(fallback),
    )


# --- 2. candidate blocks -------------------------------------------------------------


def _candidate_table(candidates: Sequence[Mapping[str, Any]]) -> None:
    """Candidate blocks in their JSON form (``BlockCandidate.to_dict()``)."""
    rows = [
        {
            "id": str(c.get("block")) + (" 📌" if c.get("pinned") else ""),
            "カテゴリ": c.get("category"),
            "入力": ", ".join(c.get("inputs") or []),
            "出力": ", ".join(c.get("outputs") or []),
            "説明": c.get("description"),
            "スコア": round(float(c.get("score") or 0.0), 3),
        }
        for c in candidates
    ]
    columns = ["id", "カテゴリ", "入力", "出力", "説明", "スコア"]
    st.dataframe(pd.DataFrame(rows, columns=columns), hide_index=True, width="stretch")


def _candidates(service: DesignService, instruction: str) -> list[str]:
    """The candidate blocks for the instruction (top K) and the pin multiselect; the
    pinned ids."""
    st.subheader("使えそうなブロック（上位の候補）")
    ids = service.engine.catalog.ids()
    pinned: list[str] = persistent(
        st.multiselect,
        "固定するブロック（必ず LLM に渡します）",
        ids,
        placeholder="ブロックを選んでください",
        key="design.pinned",
        default=[],
        valid=lambda kept: all(item in ids for item in kept),
    )
    if not instruction.strip() and not pinned:
        st.caption("指示を入力すると、使えそうなブロックが表示されます。")
        return pinned
    cache_key = (instruction.strip(), tuple(pinned))
    cached = st.session_state.get("design.candidates")
    if cached is None or cached[0] != cache_key:
        try:
            found = service.candidates(instruction, pinned)
        except KeiriAgentError as error:
            show_error(error.to_dict())
            return pinned
        cached = (cache_key, found)
        st.session_state["design.candidates"] = cached
    if cached[1].warning:
        st.warning(cached[1].warning)
    _candidate_table([candidate.to_dict() for candidate in cached[1].candidates])
    return pinned


# --- 3. generation -------------------------------------------------------------------


def _generate(services: Services, request: DesignRequest) -> None:
    """Start the generation as a run (its files staged for it); its id is kept in
    ``GENERATION`` and followed from the page's next run."""
    for key in (CHAT, TURN, CHECK, REGISTERED, REGISTER_PROBLEM):
        st.session_state.pop(key, None)
    run_id = new_run_id()
    staged = StagedUploads(Workspace.from_settings(services.settings))
    try:
        inputs = design_kind.design_inputs(run_id, request, staged)
        services.runs.start(
            design_kind.KIND,
            subject=request.plan_id or "",
            title=request.instruction.strip()[:200],
            inputs=inputs,
            owner=starter_login(services, "design"),
            run_id=run_id,
        )
    except KeiriAgentError as error:
        staged.discard(run_id)
        st.session_state[GENERATION] = {"run_id": None, "result": None, "problem": error.to_dict()}
        return
    except BaseException:
        staged.discard(run_id)
        raise
    st.session_state[GENERATION] = {
        "run_id": run_id,
        "result": None,
        "problem": None,
        "instruction": request.instruction,
    }
    _write_url()  # before following it: a reload meanwhile follows the same run


STAGE_LABELS = {
    "requirements": "指示の要件を整理しています",
    "skeleton": "骨組み（流れ・画面）を作成中",
    "wiring": "入出力をつないでいます",
}


def _event_text(line: Mapping[str, Any]) -> str | None:
    """One progress line of the generation, in Japanese (None: no line)."""
    payload = line.get("payload") or {}
    kind = line.get("kind")
    if kind == "stage":
        return STAGE_LABELS.get(str(payload.get("stage")), str(payload.get("stage")))
    if kind == "attempt":
        return f"修正 {payload.get('attempt')} 回目（エラー {payload.get('errors')} 件）"
    if kind == "check":
        codes = payload.get("error_codes") or payload.get("codes") or {}
        return "検証: " + (", ".join(map(str, codes)) if codes else "エラーなし")
    if kind in OUTCOME_KINDS:
        return None  # said by the status box and the error below
    return RUN_EVENT_LABELS.get(str(kind), str(kind))


def _follow(services: Services, state: dict[str, Any]) -> None:
    """Show the generation's events until its run has ended; keep the result (or the
    error); a generated Plan goes into the editor and its open items into the chat."""
    label = "生成中…"
    with st.status(label, expanded=True) as status:

        def waited(seconds: float) -> None:
            status.update(label=f"{label}（{int(seconds)} 秒）")

        def show(event: Event) -> None:
            text = _event_text(event.to_dict())
            if text is not None:
                status.write(text)

        run = follow_run(services.runs, state["run_id"], show=show, tick=waited)
        state["run_id"] = None
        problem = run_problem(run)
        if problem is not None:
            state["problem"] = problem
            status.update(label="自動生成: エラー", state="error")
            return
        result = dict(run.result or {})
        ok = result.get("plan_id") is not None
        status.update(
            label="自動生成: 完了" if ok else "自動生成: Plan を作れませんでした",
            state="complete" if ok else "error",
            expanded=False,
        )
    state["result"] = result
    if result.get("yaml") and ok:
        st.session_state[EDITOR] = result["yaml"]
        chat = DesignChat.from_dict(
            {"plan_yaml": result["yaml"], "requirements": result.get("requirements") or []}
        )
        st.session_state[CHAT] = chat.to_dict()


def _how_made(result: Mapping[str, Any]) -> None:
    """How the Plan was made, from the generation's result JSON."""
    label = "LLM"
    if result.get("offline"):
        label = (
            "オフライン（テンプレートの機械的な組み合わせ）"
            if result.get("templates")
            else "オフライン（指示の言葉から規則で組み立て）"
        )
    st.markdown(f"**生成の方法**: {label}・適用モード {result.get('apply_mode')}")
    if result.get("reasoning"):
        st.caption(f"根拠: {result['reasoning']}")
    if result.get("templates"):
        st.caption("使ったテンプレート: " + ", ".join(result["templates"]))
    st.caption(f"所要時間: {float(result.get('seconds') or 0.0):.1f} 秒")
    for warning in result.get("warnings") or []:
        st.warning(warning)
    for conflict in result.get("conflicts") or []:
        st.warning(f"テンプレートの競合（{conflict.get('code')}）: {conflict.get('message')}")
    digest = result.get("digest") or {}
    for warning in digest.get("warnings") or []:
        st.warning(f"参考ドキュメント: {warning}")
    for document in digest.get("documents") or []:
        for warning in document.get("warnings") or []:
            st.warning(f"参考ドキュメント {document.get('name')}: {warning}")


def _attempts(result: Mapping[str, Any]) -> None:
    """Each attempt with its error codes and what it changed, node by node."""
    attempts = list(result.get("attempts") or [])
    if not attempts:
        return
    with st.expander(f"生成の試行（{len(attempts)} 回）"):
        for attempt in attempts:
            codes = ", ".join(
                f"{code} ×{n}" for code, n in (attempt.get("error_codes") or {}).items()
            )
            st.markdown(
                f"**試行 {attempt.get('number')}**: "
                + (f"エラー {codes}" if codes else "エラーなし")
            )
            changes = list(attempt.get("changes") or [])
            if changes:
                rows = [
                    {
                        "ノード": change.get("node"),
                        "変更": CHANGE_LABELS.get(change.get("change"), change.get("change")),
                        "項目": ", ".join(change.get("fields") or []),
                    }
                    for change in changes
                ]
                st.dataframe(pd.DataFrame(rows), hide_index=True)
            elif int(attempt.get("number") or 0) > 1:
                st.caption("前の試行からの変更はありません。")


def _coverage_lines(coverage: Mapping[str, Any]) -> list[str]:
    """The coverage report's lines (``CoverageReport.lines``) from its JSON form."""
    report = CoverageReport(
        items=[RequirementCoverage(**item) for item in coverage.get("items") or []],
        unrelated=list(coverage.get("unrelated") or []),
    )
    return report.lines()


def _verdict(result: Mapping[str, Any]) -> None:
    """The verdict (as on the CLI and the API), each requirement with what covers it, and
    the parts that cannot be built."""
    message = str(result.get("verdict_message") or "")
    {"ok": st.success, "needs_answers": st.info}.get(str(result.get("verdict")), st.error)(message)
    if result.get("coverage") is not None:
        st.markdown("**指示の項目**")
        st.markdown("\n".join(f"- {line}" for line in _coverage_lines(result["coverage"])))
    elif result.get("checklist"):
        st.markdown("**指示の項目**")
        st.markdown("\n".join(f"- {line}" for line in result["checklist"]))
    gaps = list(result.get("gaps") or [])
    if gaps:
        st.markdown("**作れない部分**")
        for gap in gaps:
            st.error(str(gap.get("message") or ""))


def _requirements(result: Mapping[str, Any]) -> None:
    st.subheader("不足項目")
    requirements = list(result.get("requirements") or [])
    if not requirements:
        st.caption("不足している項目はありません。")
        return
    rows = [
        {
            "項目": item.get("label") or item.get("id"),
            "種類": TYPE_LABELS.get(item.get("type"), item.get("type")),
            "必須": "はい" if item.get("required") else "いいえ",
            "対象": item.get("target") or "",
            "説明": item.get("description") or "",
        }
        for item in requirements
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def _chat() -> None:
    """The Design chat: the next questions, 回答する, the vars preview and 反映."""
    data = st.session_state.get(CHAT)
    if not data:
        return
    chat = DesignChat.from_dict(data)
    if not chat.requirements:
        return
    st.subheader("設計チャット")
    turn = st.session_state.get(TURN)
    if turn and turn.get("message"):
        st.info(turn["message"])
    request = chat.next_request()
    if request is not None:
        asked = [str(field["id"]) for field in request.get("fields") or []]
        key = "design.chat.form." + "-".join(asked)
        shown = {**request, "errors": {k: v for k, v in (turn or {}).get("errors", {}).items()}}
        with st.container(border=True):
            input_form(key, shown)
        if st.button("回答する", type="primary", key="design.chat.answer"):
            answered = chat.answer(dict(st.session_state.get(key) or {}))
            st.session_state[CHAT] = chat.to_dict()
            st.session_state[TURN] = answered.to_dict()
            st.rerun()
    else:
        st.success("すべての項目が確定しました。「反映」で Plan に書き込みます。")
    st.markdown("**vars のプレビュー**")
    st.json(json_value(chat.vars_preview(), preview=True))
    if st.button("反映", key="design.chat.apply"):
        try:
            st.session_state[EDITOR] = chat.apply()
        except ValueError:
            st.error(
                "Plan の YAML を読めないため反映できません。エディタの YAML を直してください。"
            )
            return
        st.session_state.pop(CHECK, None)
        st.rerun()


def _generation(services: Services) -> None:
    state = st.session_state.get(GENERATION)
    if not state:
        return
    if state.get("run_id"):  # started, or a rerun interrupted following it: follow it
        try:
            _follow(services, state)
        except KeiriAgentError as error:  # the run is gone (deleted meanwhile)
            state.update(run_id=None, problem=error.to_dict())
    if state.get("problem"):
        show_error(state["problem"])
    result: Mapping[str, Any] | None = state.get("result")
    if result is None:
        return
    _how_made(result)
    _verdict(result)
    if result.get("plan_id") is None:
        if "candidates" in result:  # not kept in a draft (RESULT_KEYS)
            st.markdown("**検討した候補ブロック**")
            _candidate_table(list(result.get("candidates") or []))
        return
    _attempts(result)
    _requirements(result)
    _chat()


# --- 4. editor, check, register ------------------------------------------------------


def _check_view(check: DesignCheck) -> None:
    issues = [
        {
            "種類": "エラー" if issue.severity == "error" else "警告",
            "コード": str(issue.code),
            "ノード": issue.node_id or "",
            "メッセージ": issue.message,
            "ヒント": issue.hint or "",
        }
        for issue in check.report.issues
    ]
    if check.ok:
        st.success("検証・ドライランとも問題ありません。")
    elif not check.report.ok:
        st.error(f"検証で {len(check.report.errors)} 件のエラーが見つかりました。")
    if issues:
        st.dataframe(pd.DataFrame(issues), hide_index=True, width="stretch")
    if check.dry_run_error:
        show_error(check.dry_run_error)
    if check.dry_run is not None:
        if not check.dry_run.ok:
            st.error("ドライランで問題が見つかりました。")
        for problem in check.dry_run.problems:
            st.warning(f"{problem.code}: {problem.message}")
        rows = [
            {
                "ノード": node.node_id,
                "ブロック": node.block or "",
                "状態": node.status,
                "問題": "; ".join(p.message for p in node.problems),
            }
            for node in check.dry_run.nodes
        ]
        st.markdown("**ドライラン**")
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def _editor(service: DesignService) -> None:
    st.subheader("Plan（YAML）")
    text: str = persistent(st.text_area, "Plan の YAML", key=EDITOR, default="", height=420)
    left, right = st.columns(2)
    if left.button("検証/ドライラン", key="design.check.button"):
        st.session_state[CHECK] = service.check(text)
    accept_major = right.checkbox(
        "互換性のない変更を承知で登録する",
        key="design.accept_major",
        help="登録済みの版からメジャーバージョンを上げる、vars・exports を消すなど、"
        "この Plan を呼ぶ側に影響する変更も登録します",
    )
    if right.button("登録", type="primary", key="design.register"):
        st.session_state.pop(REGISTERED, None)
        st.session_state.pop(REGISTER_PROBLEM, None)
        try:
            saved = service.register(text, accept_major=accept_major)
        except KeiriAgentError as error:
            st.session_state[REGISTER_PROBLEM] = error.to_dict()
        else:
            st.session_state[REGISTERED] = {
                "file_id": service.file_id(saved.path),
                "path": str(saved.path),
                "warnings": saved.warnings,
            }
    check: DesignCheck | None = st.session_state.get(CHECK)
    if check is not None:
        _check_view(check)
    problem = st.session_state.get(REGISTER_PROBLEM)
    if problem:
        show_error(problem)
        errors = (problem.get("details") or {}).get("errors") or []
        if errors:
            rows = [
                {
                    "コード": e.get("code", ""),
                    "ノード": (e.get("details") or {}).get("node") or "",
                    "メッセージ": e.get("message", ""),
                    "ヒント": e.get("hint") or "",
                }
                for e in errors
            ]
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
        for change in (problem.get("details") or {}).get("changes") or []:
            (st.error if change.get("breaking") else st.warning)(change.get("message", ""))
    registered = st.session_state.get(REGISTERED)
    if registered:
        for warning in registered.get("warnings") or []:
            st.warning(warning)
        st.success(f"登録しました: {registered['file_id']}（{registered['path']}）")
        if st.button("実行ページで開く", key="design.open_run"):
            st.session_state[RUN_PLAN] = registered["file_id"]
            st.switch_page(RUN_PAGE)


# --- 5. metrics ----------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} 秒"


def _metrics(service: DesignService) -> None:
    with st.expander("生成の記録"):
        summary = service.metrics()
        if not summary.get("count"):
            st.caption("まだ生成の記録はありません。")
            return
        rate = summary.get("error_rate")
        cols = st.columns(5)
        cols[0].metric("件数", summary["count"])
        cols[1].metric("エラー率", "-" if rate is None else f"{rate:.0%}")
        cols[2].metric("所要時間（中央値）", _seconds(summary.get("duration_median")))
        cols[3].metric("所要時間（p90）", _seconds(summary.get("duration_p90")))
        cols[4].metric("ドライラン時間（中央値）", _seconds(summary.get("dry_run_median")))
        blocks = summary.get("blocks") or {}
        if blocks:
            st.markdown("**採用ブロックの分布**")
            frame = pd.DataFrame({"ブロック": list(blocks), "件数": list(blocks.values())})
            st.bar_chart(frame, x="ブロック", y="件数")
            st.dataframe(frame, hide_index=True)


# --- 6. the draft: the page's work kept server-side (a reload finds it) ---------------

# What a new draft holds (what the page's work is compared with before its first save).
SAVED_EMPTY: dict[str, Any] = {
    "instruction": "",
    "yaml": "",
    "answers": {},
    "questions": [],
    "result": None,
    "generated_instruction": "",
}


def _drafts(services: Services) -> PlanDrafts:
    settings = services.settings
    return PlanDrafts(Workspace.from_settings(settings), keep_days=settings.storage.retention_days)


def _new_draft_id() -> str:
    """A new draft's id, as the web 設計 page makes them: ``d-`` and 20 random hex digits."""
    return check_draft_id(f"d-{secrets.token_hex(10)}")


def _draft_id() -> str | None:
    draft_id: str | None = (st.session_state.get(DRAFT) or {}).get("id")
    return draft_id


def _write_url() -> None:
    """The draft in the address, and the generation's run while it runs."""
    params: dict[str, str] = {}
    draft_id = _draft_id()
    if draft_id:
        params[DRAFT_PARAM] = draft_id
        run_id = (st.session_state.get(GENERATION) or {}).get("run_id")
        if run_id:
            params[RUN_PARAM] = str(run_id)
    if dict(st.query_params) != params:
        st.query_params.from_dict(params)


def _page_work() -> dict[str, Any]:
    """What the page holds that its draft keeps (the generation's result once its run
    has ended: while it runs, the draft keeps the one before)."""
    chat: Mapping[str, Any] = st.session_state.get(CHAT) or {}
    generation: Mapping[str, Any] = st.session_state.get(GENERATION) or {}
    work: dict[str, Any] = {
        "instruction": str(st.session_state.get(INSTRUCTION) or ""),
        "yaml": str(st.session_state.get(EDITOR) or ""),
        "answers": dict(chat.get("values") or {}),
        "questions": list(chat.get("requirements") or []),
    }
    if not generation.get("run_id"):
        work["result"] = generation.get("result")
        work["generated_instruction"] = str(generation.get("instruction") or "")
    return work


def _changes(work: Mapping[str, Any], saved: Mapping[str, Any]) -> DraftChanges | None:
    """What a save sets so that the draft holds ``work`` (None: it does already)."""
    changed = {key for key, value in work.items() if value != saved.get(key, SAVED_EMPTY[key])}
    if not changed:
        return None
    fields: dict[str, Any] = {
        key: work[key] for key in ("instruction", "yaml", "answers", "questions") if key in changed
    }
    if changed & {"result", "generated_instruction"}:
        if work["result"] is None:
            fields["clear_result"] = True
        else:
            fields.update(
                result=work["result"],
                generated_instruction=work["generated_instruction"],
                clear_registered=True,
            )
    return DraftChanges(**fields)


def _keep_draft(services: Services) -> None:
    """Save what changed on the page to its draft — a new one the first time there is
    something to keep (an instruction or a YAML) — and put the draft in the address.
    A save that fails is reported once, and tried again when the work changes."""
    work = _page_work()
    held: Mapping[str, Any] = st.session_state.get(DRAFT) or {}
    keep = bool(held) or bool(work["instruction"].strip() or work["yaml"].strip())
    changes = _changes(work, held.get("saved") or {}) if keep else None
    if changes is not None and st.session_state.get(DRAFT_FAILED) != work:
        draft_id = str(held.get("id") or _new_draft_id())
        try:
            _drafts(services).save(draft_id, starter_login(services, "design"), changes)
        except KeiriAgentError as error:
            st.session_state[DRAFT_FAILED] = work
            show_error(error.to_dict())
        except OSError:
            st.session_state[DRAFT_FAILED] = work
            show_error(
                {
                    "message": "下書きを保存できませんでした（ワークスペースに書き込めません）",
                    "hint": "ディスクの空きとワークスペースのフォルダの権限を確認してください",
                }
            )
        else:
            st.session_state.pop(DRAFT_FAILED, None)
            st.session_state[DRAFT] = {
                "id": draft_id,
                "saved": {**(held.get("saved") or {}), **work},
            }
    _write_url()


def _draft_chat(draft: Draft) -> dict[str, Any] | None:
    """The Design chat over the draft's YAML with its questions and answers (None: the
    draft has no generated Plan, or its questions cannot be read)."""
    if not draft.questions or not draft.yaml.strip():
        return None
    if (draft.result or {}).get("plan_id") is None:
        return None
    try:
        requirements = [requirement_from_dict(item) for item in draft.questions]
    except (KeyError, TypeError, ValueError):
        return None
    return DesignChat(draft.yaml, requirements, values=draft.answers).to_dict()


def _restore(draft: Draft) -> None:
    """The draft's work into the page's Session State (what the widgets show)."""
    for key in (GENERATION, CHAT, TURN, CHECK, REGISTERED, REGISTER_PROBLEM, DRAFT_FAILED):
        st.session_state.pop(key, None)
    st.session_state[INSTRUCTION] = draft.instruction
    st.session_state[EDITOR] = draft.yaml
    if draft.result is not None:
        st.session_state[GENERATION] = {
            "run_id": None,
            "result": draft.result,
            "problem": None,
            "instruction": draft.generated_instruction,
        }
        chat = _draft_chat(draft)
        if chat is not None:
            st.session_state[CHAT] = chat


def _follow_draft_run(services: Services, run_id: str, draft: Draft) -> bool:
    """The draft's generation that was running at the reload: followed again (its
    result then goes to the draft); a run that is gone or not the person's: an error
    (False)."""
    try:
        run = services.runs.require(run_id)
        if run.kind != design_kind.KIND:
            raise run_not_found(run_id)
        services.ownership.check_see(operator(services.accounts), run.owner, DRAFT_KIND, run_id)
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return False
    for key in (CHAT, TURN):
        st.session_state.pop(key, None)
    st.session_state[GENERATION] = {
        "run_id": run_id,
        "result": None,
        "problem": None,
        "instruction": draft.instruction,
    }
    return True


def _open_draft(services: Services) -> None:
    """A draft in the address that the session does not hold (a reload, a link): its
    work restored into the page, its running generation followed. One that is missing,
    damaged or another person's: the error, and a fresh page."""
    wanted = st.query_params.get(DRAFT_PARAM)
    if not wanted or wanted == _draft_id():
        return
    try:
        draft = _drafts(services).get(check_draft_id(wanted))
        person = operator(services.accounts)
        services.ownership.check_see(person, draft.owner, DRAFT_KIND, wanted)
        services.ownership.check_act(person, draft.owner, DRAFT_KIND, wanted)
    except KeiriAgentError as error:
        for key in (DRAFT_PARAM, RUN_PARAM):
            st.query_params.pop(key, None)
        show_error(error.to_dict())
        return
    _restore(draft)
    # what the draft holds, as the page now shows it (so that only a change is saved)
    saved: dict[str, Any] = {
        "result": draft.result,
        "generated_instruction": draft.generated_instruction,
        **_page_work(),
    }
    run_id = st.query_params.get(RUN_PARAM)
    if run_id and _follow_draft_run(services, run_id, draft):
        # the chat of the draft's last result is not shown: the run's replaces it
        saved.update(answers=draft.answers, questions=draft.questions)
    st.session_state[DRAFT] = {"id": draft.draft_id, "saved": saved}


def render_design_page() -> None:
    """The page body (called by ``st.navigation``)."""
    st.title("設計")
    st.caption("やりたいことを文章で書くと、実行できる Plan を組み立てます。")
    try:
        services = process_services()
        service = services.design
    except KeiriAgentError as error:
        show_error(error.to_dict())
        return
    provider_banner(service.settings)
    _open_draft(services)
    request = _request(service)
    if request is not None:
        _keep_draft(services)  # the draft is in the address before the generation starts
        _generate(services, request)
    _generation(services)
    _editor(service)
    _keep_draft(services)
    _metrics(service)


if __name__ == "__main__":  # run as the 設計 page script by st.navigation
    render_design_page()
