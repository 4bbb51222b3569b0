"use client";

import dynamic from "next/dynamic";
import { useEffect, useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import DataTable from "@/components/pages/DataTable";
import DownloadLink from "@/components/pages/DownloadLink";
import PlainText from "@/components/pages/PlainText";
import { formatBytes, formatDateTime, nodeTitle, outputView, runStatusLabel } from "@/components/pages/format";
import InputForm, { type InputRequest } from "@/components/pages/InputForm";
import { apiJson, toApiError, type ApiError } from "@/lib/api";
import { applyRunEvent, type Diagram, type StepState } from "@/lib/diagram";
import { streamSse } from "@/lib/sse";

/** React Flow is loaded with the first run shown, not with the page. */
const PlanDiagram = dynamic(() => import("@/components/pages/PlanDiagram"), {
  ssr: false,
  loading: () => <Spinner label="図を読み込んでいます…" />,
});

interface RunError {
  code?: string;
  message?: string;
  hint?: string;
  details?: { node_id?: string };
}

interface PlanRun {
  run_id: string;
  plan_id: string;
  status: string;
  outputs: Record<string, Record<string, unknown> | null>;
  errors: RunError[];
  waiting: { node_id: string; title?: string; approval?: boolean; request?: InputRequest }[];
  /** Every node id → its title (its id when it has none). */
  node_titles?: Record<string, string>;
  /** The Plan's title (its id when it has none). */
  title?: string;
  started_at?: string | null;
  started_by?: string;
  /** The outputs in reading order, final ones first (services.plan_outputs). */
  shown?: ShownOutput[];
  /** The Plan's steps in words and their connections (services/plan_diagram.py). */
  diagram?: Diagram;
  /** Where each top-level step stands, as last saved. */
  step_states?: Record<string, StepState>;
  events_url?: string;
}

const POLL_MS = 1000;

function OutputValue({
  runId,
  node,
  alias,
  value,
  label,
}: {
  runId: string;
  node: string;
  alias: string;
  value: unknown;
  label: string;
}) {
  const view = outputView(value, `${node}.${alias}`);
  switch (view.kind) {
    case "empty":
      return <p className="muted">（なし）</p>;
    case "text":
      return <PlainText text={view.text} className="output-text" />;
    case "file":
      return (
        <DownloadLink
          path={`/api/plans/runs/${encodeURIComponent(runId)}/outputs/${encodeURIComponent(node)}/${encodeURIComponent(alias)}`}
          name={view.name}
          label={`${view.name}（${formatBytes(view.bytes)}）をダウンロード`}
        />
      );
    case "table":
      return <DataTable columns={view.columns} rows={view.rows} label={label} />;
    case "json":
      return <pre className="output-json">{view.text}</pre>;
  }
}

/** One shown output (GET /api/plans/runs/{id} `shown`): where it is, its title, final or not. */
interface ShownOutput {
  node_id: string;
  alias: string;
  title: string;
  description?: string | null;
  final: boolean;
}

function OutputItem({ run, item }: { run: PlanRun; item: ShownOutput }) {
  const value = run.outputs[item.node_id]?.[item.alias];
  return (
    <div data-testid="run-output">
      <dt>{item.title}</dt>
      <dd>
        {item.description ? <p className="muted">{item.description}</p> : null}
        <OutputValue runId={run.run_id} node={item.node_id} alias={item.alias} value={value} label={item.title} />
      </dd>
    </div>
  );
}

/** The run's results: the final ones by their titles, the steps' intermediate ones folded away. */
function Outputs({ run }: { run: PlanRun }) {
  const shown = run.shown ?? [];
  if (shown.length === 0) return <p className="muted">まだ出力はありません。</p>;
  const finals = shown.filter((item) => item.final);
  const steps = shown.filter((item) => !item.final);
  return (
    <>
      {finals.length > 0 ? (
        <dl className="outputs">
          {finals.map((item) => (
            <OutputItem key={`${item.node_id}.${item.alias}`} run={run} item={item} />
          ))}
        </dl>
      ) : null}
      {steps.length > 0 ? (
        <details data-testid="run-steps-outputs">
          <summary>途中の結果（{steps.length} 件）</summary>
          <dl className="outputs">
            {steps.map((item) => (
              <OutputItem key={`${item.node_id}.${item.alias}`} run={run} item={item} />
            ))}
          </dl>
        </details>
      ) : null}
    </>
  );
}

const SETTLED = new Set(["success", "failed", "cancelled"]);

/** やり直す: run a settled run again from a step (the failed one first), as the same run. */
function Rerun({ run, onRerun }: { run: PlanRun; onRerun: (status: string) => void }) {
  const failed = run.errors.find((item) => item.details?.node_id)?.details?.node_id ?? null;
  const steps = Object.entries(run.node_titles ?? {});
  const [step, setStep] = useState<string>(failed ?? steps[0]?.[0] ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const rerun = async () => {
    setBusy(true);
    setError(null);
    try {
      const started = await apiJson<{ status: string }>(`/api/plans/runs/${encodeURIComponent(run.run_id)}/rerun`, {
        method: "POST",
        body: JSON.stringify({ from_node: step }),
      });
      onRerun(started.status);
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setBusy(false);
    }
  };

  if (steps.length === 0) return null;
  return (
    <div className="panel" data-testid="run-rerun">
      <label htmlFor={`rerun-${run.run_id}`}>やり直すステップ（その後のステップもやり直します）</label>
      <select id={`rerun-${run.run_id}`} value={step} onChange={(event) => setStep(event.target.value)}>
        {steps.map(([id, title]) => (
          <option key={id} value={id}>
            {title}
          </option>
        ))}
      </select>
      <div className="actions">
        <button type="button" onClick={() => void rerun()} disabled={busy || !step} data-testid="run-rerun-button">
          このステップからやり直す
        </button>
      </div>
      <ErrorBox error={error} testId="run-rerun-error" />
    </div>
  );
}

const LIVE = new Set(["running", "queued"]);

/**
 * One Plan run: its status, its diagram with where each step stands (live from the run's
 * events while it runs), outputs, errors, and where to answer its inputs. While the run goes
 * on, its events are followed from the first (replayed in order, they end at where each step
 * stands now); when they end (paused or finished) the run is read again. If the event stream
 * fails, the run is read every second instead.
 */
export default function PlanRunView({ runId, onSettled }: { runId: string; onSettled: () => void }) {
  const [run, setRun] = useState<PlanRun | null>(null);
  const [states, setStates] = useState<Record<string, StepState>>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [answered, setAnswered] = useState(0);

  const answer = async (nodeId: string, values: Record<string, unknown>) => {
    await apiJson(`/api/plans/runs/${encodeURIComponent(runId)}/resume`, {
      method: "POST",
      body: JSON.stringify({ answers: { [nodeId]: values } }),
    });
    setAnswered((count) => count + 1);
  };

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const following = new AbortController();
    setRun(null);
    setError(null);
    const read = async (): Promise<PlanRun | null> => {
      try {
        const body = await apiJson<PlanRun>(`/api/plans/runs/${encodeURIComponent(runId)}`);
        if (stopped) return null;
        setRun(body);
        setStates(body.step_states ?? {});
        setError(null);
        return body;
      } catch (cause) {
        if (!stopped) setError(toApiError(cause));
        return null;
      }
    };
    const poll = async () => {
      const body = await read();
      if (body && LIVE.has(body.status)) timer = setTimeout(() => void poll(), POLL_MS);
      else if (body) onSettled();
    };
    const follow = async (body: PlanRun) => {
      const diagram = body.diagram ?? { steps: [], edges: [] };
      try {
        await streamSse({
          url: body.events_url ?? `/api/plans/runs/${encodeURIComponent(runId)}/events`,
          signal: following.signal,
          onMessage: (message) => {
            let event: { payload?: Record<string, unknown> } = {};
            try {
              event = JSON.parse(message.data);
            } catch {
              return; // not an event of ours: the diagram stays as it is
            }
            const payload = event.payload;
            if (!payload) return;
            setStates((current) => applyRunEvent(current, diagram, message.event, payload));
            if (message.event === "node_start") {
              setRun((current) => (current && current.status === "queued" ? { ...current, status: "running" } : current));
            }
          },
        });
      } catch {
        if (stopped) return;
      }
      if (!stopped) void poll();
    };
    void (async () => {
      const body = await read();
      if (body && LIVE.has(body.status)) void follow(body);
    })();
    return () => {
      stopped = true;
      following.abort();
      if (timer) clearTimeout(timer);
    };
  }, [runId, onSettled, answered]);

  return (
    <section className="panel" aria-labelledby="run-title" data-testid="plan-run">
      <h2 id="run-title">
        {run ? `${run.title ?? "Plan"} — ${run.started_at ? `${formatDateTime(run.started_at)} 開始` : "実行"}` : "実行"}
      </h2>
      <ErrorBox error={error} />
      {run === null ? (
        error ? null : <Spinner label="実行の状態を読み込んでいます…" />
      ) : (
        <>
          <p>
            状態:{" "}
            <strong className={`status status-${run.status}`} data-testid="run-status">
              {runStatusLabel(run.status)}
            </strong>
            {run.started_by ? `・開始した人: ${run.started_by}` : null}
          </p>
          <details className="muted">
            <summary>識別子</summary>
            <p>
              実行 <code>{run.run_id}</code>・Plan <code>{run.plan_id}</code>
            </p>
          </details>
          {run.diagram && run.diagram.steps.length > 0 ? (
            <PlanDiagram diagram={run.diagram} states={states} caption="ステップの進み具合" />
          ) : null}
          {run.status === "running" ? <Spinner label="実行しています…（自動で更新します）" /> : null}
          {run.status === "queued" ? <Spinner label="実行の順番を待っています…（自動で更新します）" /> : null}
          {run.status === "paused"
            ? run.waiting.map((item) =>
                item.approval ? (
                  <p className="notice" key={item.node_id} data-testid="run-awaits-approval">
                    「{item.title ?? nodeTitle(run.node_titles, item.node_id)}」は承認を待っています。承認者が
                    <a href="/approvals/">承認待ち</a>の一覧から承認すると続きます。
                  </p>
                ) : item.request ? (
                  <InputForm
                    key={`${item.node_id}-${answered}`}
                    formId={`run-${item.node_id}`}
                    title={`入力: ${item.title ?? nodeTitle(run.node_titles, item.node_id)}`}
                    request={item.request}
                    onSubmit={(values) => answer(item.node_id, values)}
                  />
                ) : null,
              )
            : null}
          {run.errors.length > 0 ? (
            <>
              <h3>エラー</h3>
              {run.errors.map((item, index) => (
                <div className="error-box" role="alert" key={index}>
                  <p className="error-message">
                    {item.details?.node_id ? `${nodeTitle(run.node_titles, item.details.node_id)}: ` : ""}
                    {item.message ?? "ステップが失敗しました。"}
                  </p>
                  {item.hint ? <p className="error-hint">{item.hint}</p> : null}
                </div>
              ))}
            </>
          ) : null}
          <h3>出力</h3>
          <Outputs run={run} />
          {SETTLED.has(run.status) ? <Rerun
              run={run}
              onRerun={(status) => {
                setRun({ ...run, status });
                setAnswered((count) => count + 1);
              }}
            /> : null}
        </>
      )}
    </section>
  );
}
