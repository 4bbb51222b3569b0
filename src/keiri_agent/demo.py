"""The offline demo: the analysis agent and a Plan on the bundled sample data.

Part 1, a short conversation with the analysis agent. It runs whatever provider
the settings choose; with no key that is the offline rule-based reasoner, so the
demo needs no network. The last turn asks for a summary, whose report (all
tables and figures of the conversation) is written to ``out_dir/report.md`` with
the figures under ``out_dir/figures/``.

Part 2, the sample Plan ``evidence_summary`` (no LLM): a ZIP of sample evidence
documents is "uploaded" to its input node, and the per-group summary it writes
is saved as ``out_dir/evidence_summary.xlsx``.

Part 3, the HelpDesk: the sample XYZ system manual and FAQ are indexed into the
workspace (incrementally: a second demo re-reads nothing) and the README's question
is answered with sources; the answer is saved as ``out_dir/helpdesk_answer.md``.

Part 4, Plan generation: the README's instruction becomes a Plan (offline: the
bundled templates it finds, composed mechanically), checked and dry-run; the YAML is
saved as ``out_dir/generated_plan.yaml`` with what is still to be decided.

Part 5, deep research: the bundled research corpus (a fictional company's 経理規程,
経理部通知 and 請求書様式ガイド) is indexed and the README's research question answered
from it alone (the sample is searched only when chosen) with numbered sources; the
report is saved as ``out_dir/research_report.md``.
"""

from __future__ import annotations

import io
import uuid
import zipfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from rich.console import Console

from keiri_agent.agents.analysis import AnalysisAgent
from keiri_agent.cli.render import render_artifact, render_markdown
from keiri_agent.config import Settings
from keiri_agent.errors import ExecutionError
from keiri_agent.events import Event
from keiri_agent.services.exports import write_report

DEMO_QUESTIONS = (
    "このデータの概要を見せて",
    "地域別の売上の合計と平均を見せて",
    "商品カテゴリ別の売上の構成比を見せて",
    "売上の分布をヒストグラムで見せて",
    "月別の売上の推移を折れ線グラフで見せて",
    "ここまでの結果をレポートにまとめて",
)


SAMPLE_PLAN_INPUT_NODE = "collect_zip"


def sample_plan_path(name: str) -> Path:
    """A Plan shipped with the package (``keiri_agent/samples/plans/<name>.yaml``)."""
    return Path(str(resources.files("keiri_agent.samples").joinpath("plans", f"{name}.yaml")))


def sample_evidence_zip() -> bytes:
    """The bundled sample evidence (one folder per group), zipped in memory."""
    buffer = io.BytesIO()
    root = resources.files("keiri_agent.samples").joinpath("evidence")

    def add(folder: Traversable, prefix: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda item: item.name):
            if entry.is_dir():
                add(entry, f"{prefix}{entry.name}/")
            else:
                archive.writestr(f"{prefix}{entry.name}", entry.read_bytes())

    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        add(root, "")
    return buffer.getvalue()


def run_plan_demo(*, out_dir: Path, console: Console, settings: Settings) -> Path:
    """Run the ``evidence_summary`` Plan on the sample evidence; returns the workbook path."""
    from keiri_agent.plans.engine import PlanEngine
    from keiri_agent.services.plan_inputs import load_plan

    console.rule("Plan: evidence_summary（証跡ZIPのグループ別集計、LLM 不要）")
    engine = PlanEngine(settings)
    plan = load_plan(engine, sample_plan_path("evidence_summary"))
    result = engine.run(plan)
    if result.status == "paused":
        upload = {"evidence_zip": {"name": "evidence.zip", "data": sample_evidence_zip()}}
        console.print(f"入力待ち {SAMPLE_PLAN_INPUT_NODE}: サンプルの証跡ZIPを渡して再開します")
        result = engine.resume(result.run_id, answers={SAMPLE_PLAN_INPUT_NODE: upload})
    if result.status != "success":
        first = result.errors[0] if result.errors else {"code": result.status, "message": ""}
        raise ExecutionError(
            f"サンプルの Plan が {result.status} で終わりました: [{first['code']}] "
            f"{first['message']}",
            hint=f"実行ログで原因を確かめてください: {result.log_path}",
        )
    rows = result.outputs["report_rows"]["rows"]
    for row in rows:
        console.print("  " + "  ".join(f"{key}: {value}" for key, value in row.items()))
    path = out_dir / "evidence_summary.xlsx"
    path.write_bytes(result.outputs["write_report"]["workbook"])
    console.print(f"集計ブックを保存しました: {path}（実行ログ: {result.log_path}）")
    return path


DESIGN_INSTRUCTION = "請求一覧.xlsx と入金明細.csv を請求番号で照合して、差異をExcelに出力"


def run_design_demo(*, out_dir: Path, console: Console, settings: Settings) -> Path:
    """Generate a Plan from the README's instruction; returns the YAML file."""
    from keiri_agent.services.design import DesignRequest, DesignService

    console.rule(f"[bold]Plan の自動生成:[/bold] {DESIGN_INSTRUCTION}")
    result = DesignService(settings).generate(DesignRequest(DESIGN_INSTRUCTION)).result
    for warning in result.warnings:
        console.print(f"注意: {warning}")
    if result.verdict != "ok" or result.plan is None:
        raise ExecutionError(
            f"生成した Plan が検証を通りませんでした: {result.reasoning}",
            hint="同じ指示で `keiri-agent plan generate` を実行すると問題点を確かめられます",
        )
    blocks = " → ".join(str(getattr(node, "block", node.id)) for node in result.plan.graph)
    console.print(f"検証・ドライラン OK（{len(result.plan.graph)} ノード）: {blocks}")
    for requirement in result.requirements:
        console.print(f"決める項目: {requirement.label}")
    path = out_dir / "generated_plan.yaml"
    path.write_text(result.yaml_text, encoding="utf-8")
    console.print(f"Plan を保存しました: {path}（登録: keiri-agent plan register {path}）")
    return path


def run_research_demo(*, out_dir: Path, console: Console, settings: Settings) -> Path:
    """Index the bundled research corpus, research the README's question; returns the report."""
    from keiri_agent.agents.research.agent import progress_line
    from keiri_agent.services.research import (
        EXAMPLE_QUESTION,
        SAMPLE_KB,
        SAMPLE_NOTICE,
        ResearchService,
    )

    console.rule(f"[bold]リサーチ:[/bold] {EXAMPLE_QUESTION}")
    service = ResearchService(settings)
    console.print(f"索引: {service.index_sample().summary()}")
    console.print(SAMPLE_NOTICE)

    def show(event: Event) -> None:
        line = progress_line(event)
        if line:
            console.print(f"· {line}")

    result = service.research(EXAMPLE_QUESTION, kb_names=[SAMPLE_KB], on_event=show)
    render_markdown(console, result.report_md)
    path = out_dir / "research_report.md"
    path.write_text(result.report_md, encoding="utf-8")
    console.print(f"レポートを保存しました: {path}（セッション {result.session_id}）")
    return path


def run_helpdesk_demo(*, out_dir: Path, console: Console, settings: Settings) -> Path:
    """Index the sample XYZ manual and FAQ, ask the README's question; returns the answer file."""
    from keiri_agent.agents.helpdesk.desk import EXAMPLE_QUESTION, HelpDesk

    console.rule("ヘルプデスク: XYZシステムのマニュアルとFAQ")
    desk = HelpDesk(settings)
    for report in desk.index_sample().values():
        console.print(f"索引: {report.summary()}")
    console.rule(f"[bold]質問:[/bold] {EXAMPLE_QUESTION}")
    result = desk.ask(EXAMPLE_QUESTION)
    console.print("計画: " + " / ".join(result.plan.subtasks))
    render_markdown(console, result.answer)
    path = out_dir / "helpdesk_answer.md"
    path.write_text(result.answer, encoding="utf-8")
    console.print(f"回答を保存しました: {path}")
    return path


def sample_data_path() -> Path:
    """The bundled sample sales CSV (fictional data written for this project)."""
    return Path(str(resources.files("keiri_agent.samples").joinpath("sales.csv")))


def run_demo(
    *,
    out_dir: Path,
    data_path: Path | None = None,
    settings: Settings,
    console: Console | None = None,
) -> Path:
    """Run the demo conversation; returns the path of the written report."""
    console = console or Console()
    data_path = data_path or sample_data_path()
    mode = "オフライン（ルールベース）" if settings.llm.is_offline else settings.describe()
    console.rule(f"keiri-agent デモ — {data_path.name} — {mode}")
    thread_id = f"demo-{uuid.uuid4().hex[:8]}"
    report_md: str | None = None
    with AnalysisAgent(settings) as agent:
        dataset_id = agent.load_file(data_path)
        summary = agent.registry.summary(dataset_id)
        console.print(f"データ: {summary['rows']:,} 行 × {len(summary['columns'])} 列")
        for question in DEMO_QUESTIONS:
            console.rule(f"[bold]ユーザー:[/bold] {question}")
            turn = agent.ask(question, dataset_id=dataset_id, thread_id=thread_id)
            for artifact in turn.artifacts:
                if artifact["kind"] != "figure":
                    render_artifact(console, artifact, {})
            if turn.report_md is None:
                render_markdown(console, turn.reply)
            report_md = turn.report_md
            final = turn
    if not report_md:
        raise ExecutionError(
            "デモの会話がレポートを作らずに終わりました",
            hint="最後の質問で `keiri-agent analyze` を実行すると、エージェントの返答を確かめら"
            "れます",
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    report_path, files = write_report(out_dir, report_md, final.report_artifacts)
    assert report_path is not None  # report_md is not empty
    console.rule("レポート")
    render_markdown(console, report_md)
    console.print(f"図 {len(files)} 件を {out_dir / 'figures'} に保存しました。")
    run_plan_demo(out_dir=out_dir, console=console, settings=settings)
    run_helpdesk_demo(out_dir=out_dir, console=console, settings=settings)
    run_design_demo(out_dir=out_dir, console=console, settings=settings)
    run_research_demo(out_dir=out_dir, console=console, settings=settings)
    return report_path
