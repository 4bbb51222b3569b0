"""The offline reasoner: deterministic rules that decide ``reason`` without an LLM.

``OfflineReasoner().decide(state)`` reads the pending request (an answered
clarifying question is joined to the request it answers), plans one spec per
thing asked for (``planner``) and returns them one at a time:

- no dataset → ``ask`` for a CSV/Excel upload;
- out-of-scope parts (prediction, ML models, files/e-mail, web, editing data,
  imputation, rescaling, conditions on computed values) → ``out_of_scope`` once
  when nothing else can run, after which the in-scope parts are served; when the
  other parts can run, they run at once and the refusal is stated with them;
- missing information without a sensible default → ``ask`` with questions;
- the first planned spec not yet run in this turn → ``act``;
- a spec that failed → fixed once when the error names a close match or the spec
  can be relaxed (time/memory limits), otherwise ``ask`` quoting the error;
- every planned spec ran → ``finalize``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import HumanMessage

import keiri_agent.agents.analysis.reasoning.offline.vocab as vocab
from keiri_agent.agents.analysis.messages import message_kind, pending_request, request_start
from keiri_agent.agents.analysis.ops.specs import parse_analysis_spec, parse_plot_spec
from keiri_agent.agents.analysis.reasoning.decision import ActionRecord, Decision, ReasonInput
from keiri_agent.agents.analysis.reasoning.offline.en_column_words_ja import japanese_readings
from keiri_agent.agents.analysis.reasoning.offline.follow_up import edit_previous
from keiri_agent.agents.analysis.reasoning.offline.ja_english_words import english_readings
from keiri_agent.agents.analysis.reasoning.offline.parser import (
    is_japanese,
    name_tokens,
    without_brackets,
)
from keiri_agent.agents.analysis.reasoning.offline.planner import Plan, Step, plan_request
from keiri_agent.errors import SpecError

_SUGGESTION = re.compile(r"列 '([^']+)' は見つかりません。もしかして '([^']+)' ですか")
_LIMIT = re.compile(
    r"ACTION_(TIMEOUT|MEMORY|LIMIT)|timed? ?out|time limit|did not finish|memory", re.IGNORECASE
)
_COARSER = {"D": "W", "W": "M", "M": "Q", "Q": "Y"}
# "Sum up what we have": a report of the conversation so far, nothing new to run.
_SUMMARY_REQUEST = re.compile(
    r"(ここまで|これまで|今まで|以上|全体|結果|分析).{0,12}(レポート|報告書?|まとめ|総括)"
    r"|(レポート|報告書?)(に|として|で|を)?(まとめ|作成|作って|作る|書いて|出して|にして|して"
    r"|ください|お願い)"
    r"|^(それ|これ|今の|全部|すべて|全て)?(を)?(まとめて|まとめる|総括して)"
    r"(ください|下さい|ほしい|欲しい|もらえますか|くれますか)?[。！!？?]*$"
    r"|\b(write|make|create|give me|produce|put)\b.{0,20}\breports?\b"
    r"|\b(as|in|into) a report\b"
    r"|\bsumm?ari[sz]e\b.{0,20}\b(results?|findings|so far|everything|analys[ie]s|report)\b"
    r"|\b(wrap (it |this |everything )?up|final report)\b"
    r"|\bwrite[- ]?(it |this |everything |them )?up\b",
    re.IGNORECASE,
)
# Data from outside the uploaded file (weather, markets, the economy): out of scope unless
# the file itself has a column of that name.
_EXTERNAL_DATA = re.compile(
    r"天気|天候|気温|降水量?|降雨|株価|為替|景気|日経平均|物価|金利|人口|GDP|気象|\bfx\b"
    r"|\b(weather|temperature|rainfall|stock prices?|share prices?|exchange rates?"
    r"|interest rates?|inflation|population|gdp)\b",
    re.IGNORECASE,
)


def _t(lang: str, ja: str, en: str) -> str:
    return ja if lang == "ja" else en


def _canonical(spec: dict[str, Any]) -> str:
    """A spec in a comparable form: validated with defaults, without id and title."""
    try:
        parse = parse_plot_spec if "kind" in spec else parse_analysis_spec
        dumped = parse(spec).model_dump(mode="json")
    except (SpecError, TypeError, ValueError):
        dumped = dict(spec)
    dumped.pop("dataset_id", None)
    dumped.pop("title", None)
    return json.dumps(dumped, sort_keys=True, ensure_ascii=False, default=str)


def _readings(name: str) -> list[str]:
    """A column's name in the other language (金利(%) → "interest rate"; fx_rate → 為替レート)."""
    if name.isascii():
        return japanese_readings(name_tokens(name))
    return english_readings(without_brackets(name))


def _external_data(text: str, summary: dict[str, Any]) -> str | None:
    """The first external-data word of the text that no column of the file is named after."""
    names = [str(c.get("name", "")).lower() for c in summary.get("columns", [])]
    names += [reading for name in names for reading in _readings(name)]  # 金利(%) ~ interest rate
    values = {
        str(value)
        for column in summary.get("columns", [])
        for value in [*(column.get("values") or []), *(column.get("examples") or [])]
        if len(str(value)) >= 2
    }
    for found in _EXTERNAL_DATA.finditer(text):
        word = found.group(0).lower()
        if any(word in name or (name and name in word) for name in names):
            continue
        if not _inside_a_value(text, found.start(), found.end(), values):  # 貸付金利息 ∌ 金利
            return found.group(0)
    return None


def _inside_a_value(text: str, start: int, end: int, values: set[str]) -> bool:
    """Whether text[start:end] lies inside one of ``values`` written in the text."""
    for value in values:
        at = text.find(value, max(0, end - len(value)))
        if at != -1 and at <= start and end <= at + len(value):
            return True
    return False


_YEAR_ON_YEAR = re.compile(
    r"前年同月比|前年同期比|前年比|前年対比|昨対"
    r"|\byear[- ]over[- ]year\b|\byoy\b|\bvs\.? last year\b",
    re.IGNORECASE,
)


def _one_year_only(summary: dict[str, Any]) -> str | None:
    """The period of the data ("2025-04-01〜2026-03-31") when every date column spans less
    than thirteen months (no earlier year to compare with), else None."""
    spans = []
    for column in summary.get("columns", []):
        if column.get("kind") != "datetime":
            continue
        dates = sorted(str(e)[:10] for e in column.get("examples") or [] if str(e)[:4].isdigit())
        if len(dates) < 2:
            return None
        first, last = dates[0], dates[-1]
        months = (int(last[:4]) - int(first[:4])) * 12 + int(last[5:7]) - int(first[5:7])
        if months >= 12:
            return None
        spans.append(f"{first}〜{last}")
    return spans[0] if spans else None


_PARTS = re.compile(r";|。|\bthen\b|\band then\b|、\s*(?:その後|それから|あと|ついでに)")


def _without_part(request: str, word: str) -> str:
    """The request without the parts (split at ; 。 then その後) that name ``word``: what
    can run when one part asks for data the file does not have; "" when nothing is left."""
    parts = [p.strip(" 、,") for p in _PARTS.split(request)]
    kept = [p for p in parts if p and word.lower() not in p.lower()]
    return "。".join(kept) if len(kept) < len(parts) else ""


def _error_text(record: ActionRecord, last_error: str | None) -> str:
    if record.error:
        message = str(record.error.get("message") or record.error)
        hint = record.error.get("hint")
        return f"{message} (hint: {hint})" if hint else message
    return last_error or "unknown error"


def _replace_column(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {(new if k == old else k): _replace_column(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_column(v, old, new) for v in value]
    return new if value == old else value


def repair(spec: dict[str, Any], error: str, columns: Sequence[str]) -> dict[str, Any] | None:
    """A fixed or relaxed spec to retry once after ``error``, or None when there is none.

    A close-match suggestion for an unknown column replaces that column; a time or
    memory limit is met by a lighter spec (fewer points, columns, groups or periods).
    """
    if (m := _SUGGESTION.search(error)) and m.group(2) in columns:
        return _replace_column(spec, m.group(1), m.group(2))
    if not _LIMIT.search(error):
        return None
    fixed = dict(spec)
    kind = spec.get("kind") or spec.get("op")
    if kind == "scatter":
        fixed["max_points"] = max(100, int(spec.get("max_points") or 20_000) // 10)
    elif kind == "correlation_matrix":
        fixed["max_columns"] = max(2, min(int(spec.get("max_columns") or 10), 10) // 2)
        fixed["columns"] = (spec.get("columns") or [])[: fixed["max_columns"]] or None
    elif kind == "groupby_agg" and len(spec.get("group_cols") or []) > 1:
        fixed["group_cols"] = spec["group_cols"][:1]
    elif kind in ("groupby_agg", "share_ratio", "bar", "box"):
        fixed["top_k"] = min(int(spec.get("top_k") or 50), 20)
    elif kind == "line" and spec.get("freq") in _COARSER:
        fixed["freq"] = _COARSER[spec["freq"]]
    elif kind == "hist" and spec.get("by"):
        fixed["by"] = None
    return fixed if fixed != spec else None


def _after_a_result(messages: Sequence[Any]) -> bool:
    """True when the latest user message comes right after a finished result (a report):
    only then may it edit that result (「それを営業部だけで」); an answer to a question
    completes its own request."""
    latest = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    before = [m for m in list(messages)[:latest] if not isinstance(m, HumanMessage)]
    return bool(before) and message_kind(before[-1]) == "report"


class OfflineReasoner:
    """Rule-based ``Reasoner`` for offline mode (no LLM key); Japanese and English."""

    def decide(self, state: ReasonInput) -> Decision:
        """Decide the next action for the pending request (named in ``Decision.request``)."""
        decision = self._decide(state)
        if decision.request is None:
            summary = state.dataset_summary
            stands_alone = (
                (lambda text, pending: self.stands_alone(text, pending, summary))
                if summary
                else None
            )
            decision.request = pending_request(state.messages, stands_alone).strip()
        return decision

    def _decide(self, state: ReasonInput) -> Decision:
        summary = state.dataset_summary
        stands_alone = (
            (lambda text, pending: self.stands_alone(text, pending, summary)) if summary else None
        )
        request = pending_request(state.messages, stands_alone).strip()
        lang = "ja" if not request or is_japanese(request) else "en"
        if not state.dataset_id or not summary:
            return Decision(
                next_action="ask",
                rationale=_t(
                    lang, "分析するデータがまだありません。", "There is no dataset to analyse yet."
                ),
                clarifying_questions=[
                    _t(
                        lang,
                        "分析したいCSVまたはExcelファイルをアップロードしてください。",
                        "Please upload the CSV or Excel file you want to analyse.",
                    )
                ],
            )
        declined = any(
            message_kind(m) == "out_of_scope"
            for m in list(state.messages)[request_start(state.messages, stands_alone) :]
        )
        if (summary_request := _SUMMARY_REQUEST.search(request)) is not None:
            rest = request[: summary_request.start()] + " " + request[summary_request.end() :]
            if not self._runnable(plan_request(rest.strip(), summary, state.dataset_id)):
                return self._summary(lang, state)
            request = rest.strip()  # "地域別の売上合計をレポートにまとめて": run it, then report
        if _YEAR_ON_YEAR.search(request) and (span := _one_year_only(summary)):
            return Decision(  # 「前年同月比を出して」 on one fiscal year: said, not asked
                next_action="ask",
                rationale=_t(
                    lang, "前年と比べられる期間がデータにありません。", "No earlier year."
                ),
                clarifying_questions=[
                    _t(
                        lang,
                        f"このデータの日付は {span} で、前年の同じ時期がないため"
                        "前年比は出せません。代わりに月別の推移を見る場合は"
                        "「月別の推移を見せて」のように依頼してください。",
                        f"The data covers {span} only, so there is no earlier year to compare "
                        "with. Ask for the monthly trend instead (e.g. 'monthly trend').",
                    )
                ],
            )
        external = None if declined else _external_data(request, summary)
        rest = _without_part(request, external) if external else request
        if external and (
            not rest or not self._runnable(plan_request(rest, summary, state.dataset_id))
        ):
            return Decision(
                next_action="out_of_scope",
                rationale=_t(
                    lang,
                    f"{external}はアップロードされたファイルにない外部データです。"
                    + vocab.OUT_OF_SCOPE_REASONS["web"][0],
                    f"{external} is external data that is not in the uploaded file; "
                    + vocab.OUT_OF_SCOPE_REASONS["web"][1],
                ),
            )
        follow = (
            edit_previous(request, state.previous_specs, summary, state.dataset_id)
            if state.previous_specs and not declined and _after_a_result(state.messages)
            else None
        )
        if follow is not None and follow.question:
            return Decision(
                next_action="ask",
                rationale=_t(
                    lang, "前回の結果の変更に確認が必要です。", "The change needs a detail."
                ),
                clarifying_questions=[follow.question],
            )
        if follow is not None and follow.spec is not None:
            edited = Plan(
                lang, [Step(follow.title, spec=follow.spec)], [], [], follow.assumptions, []
            )
            return self._next(edited, state)
        plan = plan_request(rest, summary, state.dataset_id, skip_out_of_scope=declined)
        lang = plan.lang
        runnable = self._runnable(plan)
        if external:  # "total fees by branch; then pull in weather data": the first part
            plan.out_of_scope = [
                *plan.out_of_scope,
                _t(lang, f"{external}（ファイルにない外部データ）", f"{external} (external data)"),
            ]
        if plan.out_of_scope and runnable:
            # one part that cannot be done does not hold up the parts that can
            refused = _t(lang, "対応できない部分: ", "not done: ") + _t(
                lang, "、".join(plan.out_of_scope), "; ".join(plan.out_of_scope)
            )
            plan.assumptions = [refused, *plan.assumptions]
        elif plan.out_of_scope:
            return Decision(
                next_action="out_of_scope",
                rationale=_t(
                    lang,
                    "、".join(plan.out_of_scope) + "。",
                    "; ".join(plan.out_of_scope).capitalize() + ".",
                ),
                assumptions=plan.assumptions,
            )
        if declined and not plan.steps:
            # The refusal (with alternatives) was given; the turn ends on it, so the next
            # message is a request of its own, not an answer joined to this one.
            return Decision(
                next_action="out_of_scope",
                rationale=_t(
                    lang,
                    "対応範囲外のご依頼のため、代わりにできる分析をご案内しました。",
                    "The request is out of scope; alternatives were offered.",
                ),
            )
        questions = plan.problems + [q for step in plan.steps for q in step.questions]
        if questions:
            return Decision(
                next_action="ask",
                rationale=_t(
                    lang,
                    "分析を進めるために確認が必要です。",
                    "Some details are needed before running the analysis.",
                ),
                clarifying_questions=questions,
                assumptions=plan.assumptions,
            )
        if not plan.steps:
            return self._unknown(plan, request)
        return self._next(plan, state)

    @staticmethod
    def _runnable(plan: Plan) -> bool:
        return bool(plan.steps) and not plan.problems and all(s.spec for s in plan.steps)

    def stands_alone(self, text: str, pending: str, summary: dict[str, Any]) -> bool:
        """True when ``text`` is a request of its own, not an answer to the agent's question:
        a report request, an out-of-scope request, or one that names what to compute and
        can run by itself and is not what the ``pending`` request was missing (joined to it,
        the same analyses run but with details taken from the pending request).
        「売上」, 「地域別で」 or 「はい」 is an answer."""
        if _SUMMARY_REQUEST.search(text) or vocab.out_of_scope(text):
            return True
        if _external_data(text, summary):
            return True
        if not (vocab.intents(text) or vocab.aggregations(text)):
            return False
        alone = plan_request(text, summary)
        if not self._runnable(alone):
            return False
        joined = plan_request(f"{pending} {text}", summary)
        if not self._runnable(joined) or len(joined.steps) != len(alone.steps):
            return True
        # joined, the same analyses with details from the pending request: an answer to it
        specs = [_canonical(step.spec or {}) for step in alone.steps]
        return specs == [_canonical(step.spec or {}) for step in joined.steps]

    @staticmethod
    def _summary(lang: str, state: ReasonInput) -> Decision:
        """Finalize with the conversation's results, or ask when nothing ran yet."""
        if state.artifacts:
            return Decision(
                next_action="finalize",
                rationale=_t(
                    lang,
                    "これまでの分析結果をレポートにまとめます。",
                    "Summarising the analyses so far in a report.",
                ),
            )
        return Decision(
            next_action="ask",
            rationale=_t(lang, "まだ分析結果がありません。", "Nothing has been analysed yet."),
            clarifying_questions=[
                _t(
                    lang,
                    "先にどのような分析をしますか？ 例: 地域別の売上の合計",
                    "What should I analyse first? For example: total sales by region",
                )
            ],
        )

    def _unknown(self, plan: Plan, request: str) -> Decision:
        lang = plan.lang
        examples = "、".join(plan.examples) if lang == "ja" else ", ".join(plan.examples)
        if request:
            rationale = _t(
                lang,
                "依頼内容から実行する分析を特定できませんでした。",
                "I could not tell which analysis the request asks for.",
            )
        else:
            rationale = _t(lang, "依頼がまだありません。", "There is no request yet.")
        return Decision(
            next_action="ask",
            rationale=rationale,
            clarifying_questions=[
                _t(
                    lang,
                    f"どのような分析をしますか？ 例: {examples}",
                    f"What would you like to analyse? For example: {examples}",
                )
            ],
        )

    def _next(self, plan: Plan, state: ReasonInput) -> Decision:
        lang = plan.lang
        records: dict[str, ActionRecord] = {}
        for record in state.turn_actions:
            records[_canonical(record.spec)] = record
        columns = (
            [str(c["name"]) for c in state.dataset_summary.get("columns", [])]
            if (state.dataset_summary)
            else []
        )
        assumptions = list(
            dict.fromkeys(plan.assumptions + [a for step in plan.steps for a in step.assumptions])
        )
        done: list[str] = []
        for number, step in enumerate(plan.steps, start=1):
            assert step.spec is not None
            spec, retried = step.spec, False
            while True:
                found = records.get(_canonical(spec))
                if found is None:
                    return self._act(plan, step, spec, number, retried, assumptions)
                record = found
                if record.ok:
                    done.append(step.title)
                    break
                error = _error_text(record, state.last_error)
                code = str((record.error or {}).get("code") or "")
                fixed = None if retried else repair(spec, f"{code} {error}", columns)
                if fixed is None:
                    return Decision(
                        next_action="ask",
                        rationale=_t(
                            lang,
                            f"「{step.title}」の実行に失敗しました。",
                            f"Running '{step.title}' failed.",
                        ),
                        clarifying_questions=[
                            _t(
                                lang,
                                f"「{step.title}」でエラーが発生しました: {error}。"
                                "列名や条件を指定し直していただけますか？",
                                f"'{step.title}' failed with: {error}. "
                                "Could you restate the columns or conditions?",
                            )
                        ],
                        assumptions=assumptions,
                    )
                spec, retried = fixed, True
        return Decision(
            next_action="finalize",
            rationale=_t(
                lang,
                "依頼された分析をすべて実行しました: " + "、".join(done) + "。",
                "All requested analyses ran: " + ", ".join(done) + ".",
            ),
            assumptions=assumptions,
        )

    @staticmethod
    def _act(
        plan: Plan,
        step: Step,
        spec: dict[str, Any],
        number: int,
        retried: bool,
        assumptions: list[str],
    ) -> Decision:
        lang, total = plan.lang, len(plan.steps)
        position = (
            _t(lang, f"（{total}件中{number}件目）", f" ({number} of {total})")
            if (total > 1)
            else ""
        )
        if retried:
            rationale = _t(
                lang,
                f"前回のエラーを踏まえて修正し、「{step.title}」を再実行します{position}。",
                f"Retrying '{step.title}' with a corrected spec{position}.",
            )
        else:
            rationale = _t(
                lang,
                f"「{step.title}」を実行します{position}。",
                f"Running '{step.title}'{position}.",
            )
        is_plot = spec.get("type") == "plot"
        return Decision(
            next_action="act",
            rationale=rationale,
            assumptions=assumptions,
            analysis_spec=None if is_plot else spec,
            plot_spec=spec if is_plot else None,
        )
