"use client";

import { useCallback, useEffect, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import DataTable from "@/components/pages/DataTable";
import PlainText from "@/components/pages/PlainText";
import { formatBytes, formatDateTime, outputView } from "@/components/pages/format";
import { apiJson, toApiError, type ApiError } from "@/lib/api";

/** One run waiting at an approval step (GET /api/plans/approvals, services.plan_runs.waiting_approvals). */
export interface WaitingApproval {
  run_id: string;
  plan_id: string;
  title: string;
  started_by: string;
  waiting_since: string;
  node_id: string;
  step: string;
  message: string | null;
  context: unknown;
  can_answer: boolean;
}

function isScalarRecord(value: unknown): value is Record<string, string | number | boolean | null> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((item) => item === null || ["string", "number", "boolean"].includes(typeof item))
  );
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !("base64" in value);
}

/** What is approved: a table, totals (名前 → 値), a text, a file's name — or several of
 * them by name ({"records": [...], "合計": {...}}), each under its name. */
function WhatIsApproved({ value, depth = 0 }: { value: unknown; depth?: number }) {
  if (depth === 0 && isPlainRecord(value) && !isScalarRecord(value)) {
    return (
      <>
        {Object.entries(value).map(([name, item]) => (
          <div key={name} data-testid="approval-part">
            <h3>{name === "records" ? "対象の行" : name}</h3>
            <WhatIsApproved value={item} depth={1} />
          </div>
        ))}
      </>
    );
  }
  if (isScalarRecord(value) && !("base64" in value)) {
    return (
      <dl className="outputs" data-testid="approval-totals">
        {Object.entries(value).map(([name, item]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{typeof item === "number" ? item.toLocaleString("ja-JP") : String(item ?? "")}</dd>
          </div>
        ))}
      </dl>
    );
  }
  const view = outputView(value, "ファイル");
  switch (view.kind) {
    case "empty":
      return null;
    case "text":
      return <PlainText text={view.text} className="output-text" />;
    case "file":
      return <p>{`${view.name}（${formatBytes(view.bytes)}）`}</p>;
    case "table":
      return <DataTable columns={view.columns} rows={view.rows} />;
    case "json":
      return <pre className="output-json">{view.text}</pre>;
  }
}

function Answer({ item, onAnswered }: { item: WaitingApproval; onAnswered: (text: string) => void }) {
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const answer = async (approved: boolean) => {
    setBusy(true);
    setError(null);
    try {
      await apiJson(`/api/plans/runs/${encodeURIComponent(item.run_id)}/resume`, {
        method: "POST",
        body: JSON.stringify({ answers: { [item.node_id]: { approved, comment } } }),
      });
      onAnswered(approved ? `「${item.title}」を承認しました。` : `「${item.title}」を差し戻しました。`);
    } catch (cause) {
      setError(toApiError(cause));
      setBusy(false);
    }
  };

  return (
    <div>
      <ErrorBox error={error} />
      <label htmlFor={`comment-${item.run_id}`}>コメント（差戻しの理由など。実行を始めた人に表示されます）</label>
      <textarea
        id={`comment-${item.run_id}`}
        value={comment}
        onChange={(event) => setComment(event.target.value)}
        data-testid="approval-comment"
      />
      <div className="actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void answer(true)} data-testid="approve">
          承認
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => void answer(false)} data-testid="reject">
          差戻し
        </button>
      </div>
    </div>
  );
}

/** 承認待ち: the runs paused at an approval step this person may see; approve or send back with a comment. */
export default function ApprovalsView() {
  const [items, setItems] = useState<WaitingApproval[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const body = await apiJson<{ approvals: WaitingApproval[] }>("/api/plans/approvals");
      setItems(body.approvals);
      setError(null);
    } catch (cause) {
      setError(toApiError(cause));
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">承認待ち</h1>
      <p className="muted">承認のステップで止まっている実行です。内容を確かめて、承認するか差し戻してください。</p>
      {done ? (
        <p className="notice" role="status" data-testid="approval-done">
          {done}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {items === null ? (
        error ? null : <Spinner label="承認待ちを読み込んでいます…" />
      ) : items.length === 0 ? (
        <p data-testid="approvals-empty">承認待ちの実行はありません。</p>
      ) : (
        items.map((item) => (
          <article className="panel" key={`${item.run_id}-${item.node_id}`} data-testid="approval-item">
            <h2>{item.title}</h2>
            <p>
              ステップ: {item.step}・開始した人: <span data-testid="approval-starter">{item.started_by || "（記録なし）"}</span>・
              待ち始め: {formatDateTime(item.waiting_since)}
            </p>
            {item.message ? <PlainText text={item.message} className="output-text" /> : null}
            <WhatIsApproved value={item.context} />
            {item.can_answer ? (
              <Answer
                item={item}
                onAnswered={(text) => {
                  setDone(text);
                  void load();
                }}
              />
            ) : (
              <p className="muted" data-testid="approval-not-yours">
                この承認はできません（承認者の役割がないか、ご自身が始めた実行です）。
              </p>
            )}
          </article>
        ))
      )}
    </section>
  );
}
