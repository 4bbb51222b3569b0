"""The ``report`` node's Markdown (seed 000): 結論, 根拠, 再現要約 and optional 深掘り提案.

根拠 and 再現要約 are always built from the computed artifacts and the specs that
ran, so they are exact. 結論 and 深掘り提案 are written by the LLM in LLM mode and
derived from the computed facts in offline mode.

Each action names the file it ran on (``run_log["dataset"]``). When the evidence
comes from more than one file (a thread whose file changed), 根拠 and 再現要約 are
grouped by file, each group with its own ``keiri-agent analyze FILE --spec`` line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from keiri_agent.agents.analysis.artifacts import Artifact, figure_path
from keiri_agent.agents.analysis.formatting import AGG_LABELS, column_labels, display_rows
from keiri_agent.agents.analysis.messages import is_japanese, pending_request
from keiri_agent.llm.structured import invoke_structured

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

TABLE_ROWS_IN_REPORT = 10
TABLE_COLUMNS_IN_REPORT = 8


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table_markdown(payload: dict[str, Any], max_rows: int = TABLE_ROWS_IN_REPORT) -> str:
    """A Markdown table of the first rows/columns of a table artifact payload, as people
    read it (``formatting``: Japanese labels, separators, percentages, periods)."""
    columns = column_labels(payload)[:TABLE_COLUMNS_IN_REPORT]
    rows = [row[:TABLE_COLUMNS_IN_REPORT] for row in display_rows(payload, max_rows)]
    if not columns:
        return "(空の表)"
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    total = payload.get("total_rows", len(payload.get("records", [])))
    hidden_columns = len(payload.get("columns", [])) - len(columns)
    if total > len(rows) or hidden_columns > 0:
        lines.append(
            f"\n（全 {total} 行中 {len(rows)} 行を表示"
            + (f"、{hidden_columns} 列を省略" if hidden_columns > 0 else "")
            + "）"
        )
    return "\n".join(lines)


def spec_summary(spec: dict[str, Any]) -> str:
    """One line for 再現要約: the spec as compact JSON, without the session's dataset_id
    (reusable with ``--spec`` on the same file)."""
    return json.dumps(
        {k: v for k, v in spec.items() if v not in (None, [], {}) and k != "dataset_id"},
        ensure_ascii=False,
        separators=(", ", ": "),
    )


def evidence_actions(
    turn_actions: Sequence[dict[str, Any]], action_history: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The successful actions the report rests on: this turn's, else the whole conversation's."""
    done = [action for action in turn_actions if action.get("ok")]
    return done or [action for action in action_history if action.get("ok")]


def action_dataset(action: dict[str, Any]) -> str | None:
    """The name of the file an action ran on (None for actions recorded without it)."""
    name = (action.get("run_log") or {}).get("dataset")
    return str(name) if name else None


def _by_dataset(actions: Sequence[dict[str, Any]]) -> dict[str | None, list[dict[str, Any]]]:
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for action in actions:
        groups.setdefault(action_dataset(action), []).append(action)
    return groups


def _file_label(name: str | None) -> str:
    return name or "（ファイル名の記録なし）"


def evidence_artifacts(
    artifacts: Sequence[Artifact], actions: Sequence[dict[str, Any]]
) -> list[Artifact]:
    by_id = {artifact["artifact_id"]: artifact for artifact in artifacts}
    ids = [i for action in actions for i in action.get("artifact_ids", [])]
    return [by_id[i] for i in ids if i in by_id]


def _offline_conclusions(evidence: Sequence[Artifact]) -> list[str]:
    facts = [str(a["payload"]).strip() for a in evidence if a["kind"] == "text" and a["payload"]]
    if facts:
        return facts
    lines = []
    for artifact in evidence:
        if artifact["kind"] == "table":
            payload = artifact["payload"]
            total = payload.get("total_rows") if isinstance(payload, dict) else None
            lines.append(f"{artifact['title']}: {total} 行の表を作成しました。")
        elif artifact["kind"] == "figure":
            lines.append(f"{artifact['title']}: 図を作成しました。")
    return lines or ["実行済みの分析はまだありません。"]


def _suggestion(spec: dict[str, Any]) -> str | None:
    """A follow-up analysis in plain Japanese, built from the spec that ran (no op names)."""
    op = spec.get("op") or spec.get("kind")
    groups = spec.get("group_cols") or []
    metrics = spec.get("metrics") or {}
    by = "・".join(str(g) for g in groups)
    if op == "groupby_agg" and by and metrics:
        column, aggs = next(iter(metrics.items()))
        what = f"{column}{AGG_LABELS.get(aggs[0], aggs[0]) if aggs else ''}"
        return f"{by}別の{what}を月ごとに見る（推移の折れ線グラフ）"
    if op == "total":
        column, aggs = next(iter(metrics.items()), ("", []))
        what = f"{column}の{AGG_LABELS.get(aggs[0], aggs[0])}" if column and aggs else "件数"
        return f"{what}を区分ごと（部署・取引先など）や月ごとに分けて見る"
    if op == "share_ratio":
        value = spec.get("value_col")
        whole = f"{value}合計" if value else "件数"
        return (
            f"{whole}に占める割合の大きい{spec.get('group_col')}の内訳を、"
            "別の切り口（期間・カテゴリ）で見る"
        )
    if op == "line":
        return f"{spec.get('y')}の増減がどのカテゴリから来ているかを、カテゴリ別の集計で分ける"
    if op == "bar":
        return f"{spec.get('x')}別の構成比（全体に占める割合）と累積の割合を見る"
    if op == "scatter":
        return f"{spec.get('x')}と{spec.get('y')}の関係の強さを相関係数で確かめる"
    if op == "hist":
        return f"{spec.get('x')}の分布の違いをグループ別の箱ひげ図で比べる"
    if op == "box":
        return f"{spec.get('y') or spec.get('x')}の外れ値の行を条件で絞り込んで確認する"
    return _GENERAL_SUGGESTIONS.get(str(op))


_GENERAL_SUGGESTIONS = {
    "dataset_overview": "欠損している値と重複している行を確認する",
    "missingness": "欠損の多い列を除いた上で集計する",
    "column_summary": "ばらつきの大きい数値列を箱ひげ図で見て外れ値を確認する",
    "duplicate_check": "重複している行を除いた上で主な集計をやり直す",
    "correlation_matrix": "相関の強い組み合わせを散布図で確認する",
}


def _offline_suggestions(actions: Sequence[dict[str, Any]]) -> list[str]:
    found = [_suggestion(a["spec"]) for a in actions]
    return list(dict.fromkeys(s for s in found if s))[:3]


class ReportProse(BaseModel):
    """What the LLM writes for the report; the evidence sections are built by code."""

    conclusions: list[str] = Field(
        description="Findings that answer the request, each one sentence, citing numbers "
        "from the evidence (表n/図n). No facts that are not in the evidence."
    )
    suggestions: list[str] = Field(
        default_factory=list, description="Up to 3 optional follow-up analyses (深掘り提案)."
    )


_REPORT_SYSTEM = (
    "You write the conclusion of a data-analysis report for back-office staff. Use only the "
    "evidence given (tables, figures and facts computed from the data); cite it as 表n / 図n; "
    "never invent numbers. Answer in the language of the request."
)


class ReportWriter:
    """Writes the final Markdown; ``chat_model`` None means offline (rule-based) mode."""

    def __init__(
        self,
        chat_model: BaseChatModel | None = None,
        *,
        method: str = "function_calling",
        reasks: int = 2,
    ) -> None:
        self.chat_model = chat_model
        self.method = method
        self.reasks = reasks

    def write(
        self,
        *,
        messages: Sequence[BaseMessage],
        artifacts: Sequence[Artifact],
        assumptions: Sequence[str],
        turn_actions: Sequence[dict[str, Any]],
        action_history: Sequence[dict[str, Any]] = (),
        request: str | None = None,
    ) -> str:
        """The report for the current request.

        Its evidence is what this turn ran; a turn that ran nothing (e.g. "まとめて")
        gets a report of the whole conversation. ``request`` is the request the reasoner
        acted on (its 依頼); without it, the latest message and the answers it completes.
        """
        request = request or pending_request(messages)
        actions = evidence_actions(turn_actions, action_history)
        evidence = evidence_artifacts(artifacts, actions)
        labels = _labels(evidence)
        groups = _by_dataset(actions)
        if len(groups) > 1:
            evidence_md = "\n\n".join(
                f"### {_file_label(name)}\n\n"
                + _evidence_markdown(evidence_artifacts(artifacts, group), labels, level=4)
                for name, group in groups.items()
            )
        else:
            evidence_md = _evidence_markdown(evidence, labels)
        if self.chat_model is None:
            conclusions = (
                [
                    f"{_file_label(name)}: {line}"
                    for name, group in groups.items()
                    for line in _offline_conclusions(evidence_artifacts(artifacts, group))
                ]
                if len(groups) > 1
                else _offline_conclusions(evidence)
            )
            suggestions = _offline_suggestions(actions)
        else:
            prose = invoke_structured(
                self.chat_model,
                ReportProse,
                [
                    SystemMessage(_REPORT_SYSTEM),
                    HumanMessage(f"Request: {request}\n\nEvidence:\n{evidence_md}"),
                ],
                method=self.method,
                reasks=self.reasks,
            )
            assert isinstance(prose, ReportProse)
            conclusions, suggestions = prose.conclusions, prose.suggestions
        return _assemble(
            request,
            conclusions,
            evidence_md,
            assumptions,
            actions,
            suggestions,
            offline=self.chat_model is None,
        )


def _labels(evidence: Sequence[Artifact]) -> dict[str, str]:
    labels: dict[str, str] = {}
    counts = {"table": 0, "figure": 0}
    for artifact in evidence:
        if artifact["kind"] in counts:
            counts[artifact["kind"]] += 1
            prefix = "表" if artifact["kind"] == "table" else "図"
            labels[artifact["artifact_id"]] = f"{prefix}{counts[artifact['kind']]}"
    return labels


def _evidence_markdown(
    evidence: Sequence[Artifact], labels: dict[str, str], *, level: int = 3
) -> str:
    blocks = []
    hashes = "#" * level
    for artifact in evidence:
        label = labels.get(artifact["artifact_id"])
        if artifact["kind"] == "table" and isinstance(artifact["payload"], dict):
            blocks.append(
                f"{hashes} {label}: {artifact['title']}\n\n{artifact['description']}\n\n"
                + table_markdown(artifact["payload"])
            )
        elif artifact["kind"] == "figure":
            blocks.append(
                f"{hashes} {label}: {artifact['title']}\n\n{artifact['description']}\n\n"
                f"![{artifact['title']}]({figure_path(artifact)})"
            )
    return "\n\n".join(blocks) or "（根拠となる表・図はありません）"


def _assemble(
    request: str,
    conclusions: Sequence[str],
    evidence_md: str,
    assumptions: Sequence[str],
    actions: Sequence[dict[str, Any]],
    suggestions: Sequence[str],
    *,
    offline: bool,
) -> str:
    english = bool(request) and not is_japanese(request)
    head = (lambda ja, en: f"{ja} ({en})") if english else (lambda ja, en: ja)
    parts = [f"# {head('分析レポート', 'Analysis report')}"]
    if request:
        parts.append(f"**{head('依頼', 'Request')}**: {request}")
    groups = _by_dataset(actions)
    names = [_file_label(name) for name in groups]
    if len(names) > 1:
        parts.append(
            f"**{head('対象データ', 'Data')}**: "
            + "、".join(names)
            + "（ファイルごとに分けて示します）"
        )
    elif names and names[0] != _file_label(None):
        parts.append(f"**{head('対象データ', 'Data')}**: {names[0]}")
    if offline:
        parts.append("> オフラインモード（ルールベース、LLM 不使用）で作成しました。")
    parts.append(f"## {head('結論', 'Conclusion')}\n\n" + "\n".join(f"- {c}" for c in conclusions))
    parts.append(f"## {head('根拠', 'Evidence')}\n\n{evidence_md}")
    if assumptions:
        parts.append(
            f"## {head('仮定', 'Assumptions')}\n\n" + "\n".join(f"- {a}" for a in assumptions)
        )
    reproduce = f"## {head('再現要約', 'How to reproduce')}\n\n"
    if not actions:
        reproduce += "（実行した spec はありません）"
    elif len(groups) == 1:
        reproduce += _reproduce_block(next(iter(groups)), actions)
    else:
        reproduce += "\n\n".join(
            f"### {_file_label(name)}\n\n" + _reproduce_block(name, group)
            for name, group in groups.items()
        )
    parts.append(reproduce)
    if suggestions:
        parts.append(
            f"## {head('深掘り提案', 'Next steps')}\n\n" + "\n".join(f"- {s}" for s in suggestions)
        )
    return "\n\n".join(parts) + "\n"


def _reproduce_block(name: str | None, actions: Sequence[dict[str, Any]]) -> str:
    """The specs that ran on one file and the command that re-runs them on it."""
    steps = [f"{i}. `{spec_summary(a['spec'])}`" for i, a in enumerate(actions, start=1)]
    target = name or "FILE"
    return (
        "\n".join(steps)
        + f"\n\n`keiri-agent analyze {target} --spec SPECS.json` で同じ spec を再実行できます"
        + ("（SPECS.json には上の spec を JSON の配列で保存します）。" if len(steps) > 1 else "。")
    )


def out_of_scope_reply(rationale: str, summary: dict[str, Any] | None, lang: str = "ja") -> str:
    """The refusal with alternatives that the data and the vocabulary can serve, in the
    language of the request and in the user's words (no op names)."""
    columns = (summary or {}).get("columns", [])
    numeric = [c["name"] for c in columns if c.get("kind") == "numeric"][:2]
    dates = [c["name"] for c in columns if c.get("kind") == "datetime"][:1]
    groups = [c["name"] for c in columns if c.get("kind") == "categorical"][:1]
    ja = lang == "ja"
    options = []
    if dates and numeric:
        options.append(
            f"{dates[0]} ごとの {numeric[0]} の推移を折れ線グラフで見る"
            if ja
            else f"the trend of {numeric[0]} over {dates[0]} as a line chart"
        )
    if groups and numeric:
        options.append(
            f"{groups[0]} 別の {numeric[0]} を集計する"
            if ja
            else f"{numeric[0]} totalled by {groups[0]}"
        )
    if len(numeric) >= 2:
        options.append(
            f"{numeric[0]} と {numeric[1]} の関係を散布図・相関で見る"
            if ja
            else f"how {numeric[0]} and {numeric[1]} relate, as a scatter plot and a correlation"
        )
    options.append(
        "データの概要・欠損・重複を確認する"
        if ja
        else "an overview of the data, its missing values and duplicate rows"
    )
    if ja:
        reason = f"\n\n理由: {rationale}" if rationale else ""
        return (
            f"申し訳ありませんが、このご依頼には対応していません（対応範囲外です）。{reason}\n\n"
            "代わりに、アップロードされたデータで次のような分析ができます:\n"
            + "\n".join(f"- {o}" for o in options)
        )
    reason = f"\n\nReason: {rationale}" if rationale else ""
    return (
        f"Sorry, this request is out of scope.{reason}\n\n"
        "Instead, the uploaded data can answer, for example:\n"
        + "\n".join(f"- {o}" for o in options)
    )
