"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import PlanRunView from "@/components/pages/PlanRunView";
import { formatDateTime, planPath, runStatusLabel } from "@/components/pages/format";
import { NEEDS_INPUT_TEXT, STREAMLIT_URL } from "@/components/pages/streamlit";
import { apiJson, toApiError, type ApiError } from "@/lib/api";

interface PlanSummary {
  plan_id: string;
  version: string | null;
  description: string | null;
  error: { message?: string; hint?: string } | null;
}

interface RunSummary {
  run_id: string;
  status: string;
  started_at: string;
  updated_at: string;
}

interface PlanInputs {
  vars: { name: string }[];
  interactive: { node_id: string }[];
}

interface PlanDetail {
  runs: RunSummary[] | null;
  asksInput: boolean | null;
  hasVars: boolean;
  error: ApiError | null;
}

function runHref(runId: string): string {
  return `/plans/?run=${encodeURIComponent(runId)}`;
}

function PlanCard({
  plan,
  refresh,
  currentRun,
  onStarted,
}: {
  plan: PlanSummary;
  refresh: number;
  currentRun: string | null;
  onStarted: (runId: string) => void;
}) {
  const [detail, setDetail] = useState<PlanDetail>({ runs: null, asksInput: null, hasVars: false, error: null });
  const [starting, setStarting] = useState(false);
  const [startError, setStartError] = useState<ApiError | null>(null);

  useEffect(() => {
    let stopped = false;
    const path = `/api/plans/${planPath(plan.plan_id)}`;
    Promise.all([
      apiJson<{ runs: RunSummary[] }>(`${path}/runs`),
      plan.error ? Promise.resolve(null) : apiJson<{ inputs: PlanInputs }>(path),
    ])
      .then(([runs, shown]) => {
        if (stopped) return;
        setDetail({
          runs: runs.runs,
          asksInput: shown ? shown.inputs.interactive.length > 0 : null,
          hasVars: shown ? shown.inputs.vars.length > 0 : false,
          error: null,
        });
      })
      .catch((cause: unknown) => {
        if (!stopped) setDetail({ runs: [], asksInput: null, hasVars: false, error: toApiError(cause) });
      });
    return () => {
      stopped = true;
    };
  }, [plan.plan_id, plan.error, refresh]);

  const start = async () => {
    setStarting(true);
    setStartError(null);
    try {
      const started = await apiJson<{ run_id: string }>(`/api/plans/${planPath(plan.plan_id)}/runs`, {
        method: "POST",
        body: JSON.stringify({}),
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
    <li className="panel plan" data-testid="plan-item" data-plan-id={plan.plan_id}>
      <h2 id={headingId}>
        {plan.plan_id}
        {plan.version ? <span className="item-meta">（バージョン {plan.version}）</span> : null}
      </h2>
      {plan.description ? <p>{plan.description}</p> : null}
      {plan.error ? (
        <div className="error-box" role="alert">
          <p className="error-message">{plan.error.message ?? "この Plan を読み込めません。"}</p>
          {plan.error.hint ? <p className="error-hint">{plan.error.hint}</p> : null}
        </div>
      ) : null}
      <ErrorBox error={detail.error} />
      <div className="actions">
        {detail.asksInput === true ? (
          <a href={STREAMLIT_URL} target="_blank" rel="noopener noreferrer" data-testid="plan-open-streamlit">
            {NEEDS_INPUT_TEXT}
          </a>
        ) : detail.asksInput === false ? (
          <>
            <button
              type="button"
              className="primary"
              onClick={() => void start()}
              disabled={starting}
              aria-describedby={headingId}
              data-testid="plan-start"
            >
              実行する
            </button>
            {detail.hasVars ? <span className="muted">変数は Plan の既定値で実行します。</span> : null}
            {starting ? <Spinner label="実行を開始しています…" /> : null}
          </>
        ) : null}
      </div>
      <ErrorBox error={startError} testId="plan-start-error" />
      <h3>最近の実行</h3>
      {detail.runs === null ? (
        <Spinner label="実行履歴を読み込んでいます…" />
      ) : detail.runs.length === 0 ? (
        <p className="muted">まだ実行されていません。</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">実行 ID</th>
                <th scope="col">状態</th>
                <th scope="col">開始</th>
                <th scope="col">最終更新</th>
              </tr>
            </thead>
            <tbody>
              {detail.runs.map((run) => (
                <tr key={run.run_id} data-testid="plan-run-item">
                  <td>
                    <Link href={runHref(run.run_id)} aria-current={currentRun === run.run_id ? "true" : undefined}>
                      {run.run_id}
                    </Link>
                  </td>
                  <td>{runStatusLabel(run.status)}</td>
                  <td>{formatDateTime(run.started_at)}</td>
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
  const runId = useSearchParams().get("run");
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
        登録された業務 Plan と最近の実行を確認できます。入力が必要な Plan は Streamlit の実行ページで開きます。
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
        <p className="muted">登録された Plan はありません。Streamlit の設計ページで作成・登録できます。</p>
      ) : (
        <ul className="plan-list">
          {plans.map((plan) => (
            <PlanCard key={plan.plan_id} plan={plan} refresh={refresh} currentRun={runId} onStarted={started} />
          ))}
        </ul>
      )}
    </>
  );
}
