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
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from keiri_agent.agents.analysis.artifacts import Artifact, figure_path
from keiri_agent.agents.analysis.formatting import format_value
from keiri_agent.agents.analysis.messages import is_japanese, pending_request
from keiri_agent.llm.structured import invoke_structured

TABLE_ROWS_IN_REPORT = 10
TABLE_COLUMNS_IN_REPORT = 8


def _cell(value: Any) -> str:
    return format_value(value).replace("|", "\\|").replace("\n", " ")


def table_markdown(payload: dict[str, Any], max_rows: int = TABLE_ROWS_IN_REPORT) -> str:
    """A Markdown table of the first rows/columns of a table artifact payload."""
    columns = list(payload.get("columns", []))[:TABLE_COLUMNS_IN_REPORT]
    records = list(payload.get("records", []))[:max_rows]
    if not columns:
        return "(空の表)"
    lines = [
        "| " + " | ".join(_cell(c) for c in columns) + " |",
        "| " + " | ".join("---" for _ in columns) + " |",
    ]
    lines += ["| " + " | ".join(_cell(r.get(c)) for c in columns) + " |" for r in records]
    total = payload.get("total_rows", len(payload.get("records", [])))
    hidden_columns = len(payload.get("columns", [])) - len(columns)
    if total > len(records) or hidden_columns > 0:
        lines.append(
            f"\n（全 {total} 行中 {len(records)} 行を表示"
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


_SUGGESTIONS = {
    "dataset_overview": "欠損（missingness）と重複（duplicate_check）を確認する",
    "missingness": "欠損の多い列を除外または補完した上で集計する",
    "column_summary": "ばらつきの大きい数値列を箱ひげ図（box）で外れ値確認する",
    "duplicate_check": "重複行を除いた上で主要な集計を再実行する",
    "groupby_agg": "上位のグループについて推移（line）や構成比（share_ratio）を見る",
    "share_ratio": "上位グループの内訳を別の切り口（カテゴリ・期間）で集計する",
    "correlation_matrix": "相関の強い組合せを散布図（scatter）で確認する",
    "hist": "グループ別の分布の違いを箱ひげ図（box）で比較する",
    "scatter": "関係の強さを相関行列（correlation_matrix）で数値化する",
    "line": "期間別の増減をカテゴリ別の集計（groupby_agg）で分解する",
    "bar": "構成比（share_ratio）でパレート分析を行う",
    "box": "外れ値の行を条件（filters）で抽出して確認する",
}


def _offline_suggestions(actions: Sequence[dict[str, Any]]) -> list[str]:
    done = [a["spec"].get("op") or a["spec"].get("kind") for a in actions]
    return list(dict.fromkeys(_SUGGESTIONS[d] for d in done if d in _SUGGESTIONS))[:3]


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


def out_of_scope_reply(rationale: str, summary: dict[str, Any] | None) -> str:
    """The refusal with alternatives that the data and the vocabulary can serve."""
    columns = (summary or {}).get("columns", [])
    numeric = [c["name"] for c in columns if c.get("kind") == "numeric"][:2]
    dates = [c["name"] for c in columns if c.get("kind") == "datetime"][:1]
    groups = [c["name"] for c in columns if c.get("kind") == "categorical"][:1]
    options = []
    if dates and numeric:
        options.append(f"{dates[0]} ごとの {numeric[0]} の推移を折れ線グラフで見る（line）")
    if groups and numeric:
        options.append(f"{groups[0]} 別の {numeric[0]} を集計する（groupby_agg）")
    if len(numeric) >= 2:
        options.append(
            f"{numeric[0]} と {numeric[1]} の関係を散布図・相関で見る"
            "（scatter / correlation_matrix）"
        )
    options.append(
        "データの概要・欠損・重複を確認する（dataset_overview / missingness / duplicate_check）"
    )
    reason = f"\n\n理由: {rationale}" if rationale else ""
    return (
        f"申し訳ありませんが、このご依頼には対応していません（対応範囲外です）。{reason}\n\n"
        "代わりに、アップロードされたデータで次のような分析ができます:\n"
        + "\n".join(f"- {o}" for o in options)
    )
