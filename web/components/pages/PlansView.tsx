"use client";

import dynamic from "next/dynamic";
import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import PlanRunView from "@/components/pages/PlanRunView";
import { formatDateTime, planPath, runStatusLabel } from "@/components/pages/format";
import InputForm, { type InputField } from "@/components/pages/InputForm";
import { ApiError, apiJson, toApiError } from "@/lib/api";
import type { Diagram } from "@/lib/diagram";

/** React Flow is loaded when a diagram is opened, not with the page. */
const PlanDiagram = dynamic(() => import("@/components/pages/PlanDiagram"), {
  ssr: false,
  loading: () => <Spinner label="図を読み込んでいます…" />,
});

interface PlanSummary {
  plan_id: string;
  title: string;
  version: string | null;
  description: string | null;
  error: { message?: string; hint?: string } | null;
}

interface RunSummary {
  run_id: string;
  status: string;
  started_at: string;
  updated_at: string;
  started_by?: string;
}

/** A var a run takes (services.plan_inputs.asked_inputs). */
export interface PlanVar {
  name: string;
  title: string;
  description: string | null;
  default: unknown;
  kind: "boolean" | "integer" | "number" | "text" | "yaml";
  secret: boolean;
}

interface PlanInputs {
  vars: PlanVar[];
  interactive: { node_id: string }[];
}

interface PlanDetail {
  runs: RunSummary[] | null;
  vars: PlanVar[] | null;
  diagram?: Diagram | null;
  error: ApiError | null;
}

/** A var as a form field: its title as the label, typed by its default (lists and tables as JSON). */
export function varField(item: PlanVar, index = 0): InputField {
  const type = item.secret
    ? "secret"
    : item.kind === "boolean"
      ? "boolean"
      : item.kind === "integer" || item.kind === "number"
        ? "number"
        : item.kind === "yaml"
          ? "chat"
          : "text";
  const shown = item.kind === "yaml" ? JSON.stringify(item.default, null, 2) : item.default;
  return {
    id: item.name,
    type,
    label: item.title && item.title !== item.name ? item.title : `設定 ${index + 1}`,
    description: item.description ?? (item.kind === "yaml" ? "JSON で書いてください" : undefined),
    required: false,
    default: shown ?? undefined,
  };
}

/** The form's values as the run's vars (JSON text parsed back for lists and tables). */
export function varValues(vars: PlanVar[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of vars) {
    const value = values[item.name];
    if (item.kind === "yaml" && typeof value === "string") {
      try {
        out[item.name] = JSON.parse(value);
      } catch {
        throw new ApiError(
          "VAR_INVALID",
          `「${item.title}」を JSON として読めません。`,
          '例: ["A", "B"] や {"部門": "営業"} のように書いてください。',
          0,
        );
      }
    } else if (value !== null && value !== undefined) {
      out[item.name] = value;
    }
  }
  return out;
}

function runHref(runId: string): string {
  return `/plans/?run=${encodeURIComponent(runId)}`;
}

function PlanCard({
  plan,
  refresh,
  currentRun,
  focused,
  onStarted,
}: {
  plan: PlanSummary;
  refresh: number;
  currentRun: string | null;
  /** The Plan the address names (?plan=…, e.g. just registered on 設計): scrolled to. */
  focused: boolean;
  onStarted: (runId: string) => void;
}) {
  const [detail, setDetail] = useState<PlanDetail>({ runs: null, vars: null, error: null });
  const [diagramOpen, setDiagramOpen] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    if (!focused || !heading.current) return;
    heading.current.scrollIntoView({ block: "start" });
    heading.current.focus();
  }, [focused]);
  const [starting, setStarting] = useState(false);
  const [settingVars, setSettingVars] = useState(false);
  const [startError, setStartError] = useState<ApiError | null>(null);

  useEffect(() => {
    let stopped = false;
    const path = `/api/plans/${planPath(plan.plan_id)}`;
    Promise.all([
      apiJson<{ runs: RunSummary[] }>(`${path}/runs`),
      plan.error ? Promise.resolve(null) : apiJson<{ inputs: PlanInputs; diagram?: Diagram }>(path),
    ])
      .then(([runs, shown]) => {
        if (stopped) return;
        setDetail({
          runs: runs.runs,
          vars: shown ? shown.inputs.vars : null,
          diagram: shown?.diagram ?? null,
          error: null,
        });
      })
      .catch((cause: unknown) => {
        if (!stopped) setDetail({ runs: [], vars: null, error: toApiError(cause) });
      });
    return () => {
      stopped = true;
    };
  }, [plan.plan_id, plan.error, refresh]);

  const start = async (vars: Record<string, unknown> = {}) => {
    setStarting(true);
    setStartError(null);
    try {
      const started = await apiJson<{ run_id: string }>(`/api/plans/${planPath(plan.plan_id)}/runs`, {
        method: "POST",
        body: JSON.stringify({ vars }),
      });
      onStarted(started.run_id);
    } catch (cause) {
      setStartError(toApiError(cause));
    } finally {
      setStarting(false);
    }
  };

  const headingId = `plan-${plan.plan_id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <li className={`panel plan${focused ? " plan-focused" : ""}`} data-testid="plan-item" data-plan-id={plan.plan_id}>
      <h2 id={headingId} ref={heading} tabIndex={-1}>
        {plan.title}
        {plan.version ? <span className="item-meta">（バージョン {plan.version}）</span> : null}
      </h2>
      <details className="muted">
        <summary>Plan の識別子</summary>
        <code>{plan.plan_id}</code>
      </details>
      {plan.description ? <p>{plan.description}</p> : null}
      {plan.error ? (
        <div className="error-box" role="alert">
          <p className="error-message">{plan.error.message ?? "この Plan を読み込めません。"}</p>
          {plan.error.hint ? <p className="error-hint">{plan.error.hint}</p> : null}
        </div>
      ) : null}
      <ErrorBox error={detail.error} />
      <div className="actions">
        {detail.vars !== null ? (
          <>
            <button
              type="button"
              className="primary"
              onClick={() => (detail.vars && detail.vars.length > 0 ? setSettingVars(true) : void start())}
              disabled={starting}
              aria-describedby={headingId}
              data-testid="plan-start"
            >
              実行する
            </button>
            {starting ? <Spinner label="実行を開始しています…" /> : null}
          </>
        ) : null}
      </div>
      {settingVars && detail.vars ? (
        <InputForm
          formId={`${headingId}-vars`}
          title="実行の設定"
          request={{ fields: detail.vars.map((item, index) => varField(item, index)) }}
          onSubmit={async (values) => {
            await start(varValues(detail.vars ?? [], values));
            setSettingVars(false);
          }}
        />
      ) : null}
      <ErrorBox error={startError} testId="plan-start-error" />
      {detail.diagram && detail.diagram.steps.length > 0 ? (
        <details
          className="plan-diagram-toggle"
          onToggle={(event) => setDiagramOpen((event.target as HTMLDetailsElement).open)}
        >
          <summary>手順の図を見る（{detail.diagram.steps.length} ステップ）</summary>
          {diagramOpen ? <PlanDiagram diagram={detail.diagram} caption={`${plan.title} の手順`} /> : null}
        </details>
      ) : null}
      <h3>最近の実行</h3>
      {detail.runs === null ? (
        <Spinner label="実行履歴を読み込んでいます…" />
      ) : detail.runs.length === 0 ? (
        <p className="muted">まだ実行されていません。</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label={`${plan.title ?? "Plan"} の最近の実行`}>
          <table>
            <thead>
              <tr>
                <th scope="col">開始</th>
                <th scope="col">状態</th>
                <th scope="col">開始した人</th>
                <th scope="col">最終更新</th>
              </tr>
            </thead>
            <tbody>
              {detail.runs.map((run) => (
                <tr key={run.run_id} data-testid="plan-run-item">
                  <td>
                    <Link href={runHref(run.run_id)} aria-current={currentRun === run.run_id ? "true" : undefined}>
                      {formatDateTime(run.started_at)} の実行
                    </Link>
                  </td>
                  <td>{runStatusLabel(run.status)}</td>
                  <td>{run.started_by || "—"}</td>
                  <td>{formatDateTime(run.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </li>
  );
}

/** The Plans page: every registered Plan with its recent runs; ?run=… shows one run. */
export default function PlansView() {
  const router = useRouter();
  const params = useSearchParams();
  const runId = params.get("run");
  const focusPlan = params.get("plan");
  const [plans, setPlans] = useState<PlanSummary[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [refresh, setRefresh] = useState(0);

  useEffect(() => {
    apiJson<{ plans: PlanSummary[] }>("/api/plans")
      .then((body) => setPlans(body.plans))
      .catch((cause: unknown) => {
        setError(toApiError(cause));
        setPlans([]);
      });
  }, []);

  const settled = useCallback(() => setRefresh((count) => count + 1), []);
  const started = useCallback(
    (id: string) => {
      setRefresh((count) => count + 1);
      router.push(runHref(id));
    },
    [router],
  );

  return (
    <>
      <h1>Plan</h1>
      <p className="muted">
        登録された業務 Plan を実行し、最近の実行を確認できます。入力が必要なステップでは、この画面にフォームが出ます。
      </p>
      {runId ? (
        <>
          <p>
            <Link href="/plans/">実行の表示を閉じる</Link>
          </p>
          <PlanRunView runId={runId} onSettled={settled} />
        </>
      ) : null}
      <ErrorBox error={error} />
      {plans === null ? (
        <Spinner label="Plan を読み込んでいます…" />
      ) : plans.length === 0 && !error ? (
        <p className="muted">
          登録された Plan はありません。<Link href="/design/">設計</Link>のページで、やりたいことを文章で書いて作成・登録できます。
        </p>
      ) : (
        <ul className="plan-list">
          {plans.map((plan) => (
            <PlanCard
              key={plan.plan_id}
              plan={plan}
              refresh={refresh}
              currentRun={runId}
              focused={plan.plan_id === focusPlan}
              onStarted={started}
            />
          ))}
        </ul>
      )}
    </>
  );
}
