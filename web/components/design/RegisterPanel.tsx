"use client";

import Link from "next/link";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import type { ApiError } from "@/lib/api";
import { withStepTitles, type Registered } from "@/lib/design";

interface RefusedItem {
  message: string;
  hint: string | null;
  breaking: boolean;
}

/** What a refused registration lists: the errors (DESIGN_NOT_VALID) or the changes (BREAKING_CHANGE). */
export function refusedItems(error: ApiError | null, titles: Record<string, string> = {}): RefusedItem[] {
  if (!error) return [];
  const list = error.code === "DESIGN_NOT_VALID" ? error.details.errors : error.details.changes;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown) => {
    if (typeof entry !== "object" || entry === null) return [];
    const item = entry as { message?: unknown; hint?: unknown; breaking?: unknown };
    if (typeof item.message !== "string") return [];
    const hint = typeof item.hint === "string" ? withStepTitles(item.hint, titles) : null;
    return [{ message: withStepTitles(item.message, titles), hint, breaking: item.breaking === true }];
  });
}

/** 登録: the Plan's name, 登録する, and once registered where to run it. */
export default function RegisterPanel({
  blocker,
  title,
  titleProblem,
  acceptMajor,
  busy,
  error,
  registered,
  titles,
  onTitle,
  onAcceptMajor,
  onRegister,
}: {
  blocker: string | null;
  title: string;
  titleProblem: string | null;
  acceptMajor: boolean;
  busy: boolean;
  error: ApiError | null;
  registered: Registered | null;
  titles: Record<string, string>;
  onTitle: (title: string) => void;
  onAcceptMajor: (accept: boolean) => void;
  onRegister: () => void;
}) {
  const refused = refusedItems(error, titles);
  const breaking = error?.code === "BREAKING_CHANGE";
  return (
    <section className="panel" aria-labelledby="design-register-title" data-testid="design-register">
      <h2 id="design-register-title">登録</h2>
      {blocker ? (
        <p className="muted" data-testid="design-register-blocked">
          {blocker}
        </p>
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            onRegister();
          }}
        >
          <div className="input-field">
            <label htmlFor="design-title">
              Plan の名前<span className="required">（必須）</span>
            </label>
            <input
              id="design-title"
              type="text"
              value={title}
              maxLength={200}
              placeholder="例: 部署別の経費集計"
              aria-invalid={titleProblem ? true : undefined}
              aria-describedby={titleProblem ? "design-title-problem" : "design-title-note"}
              onChange={(event) => onTitle(event.target.value)}
              data-testid="design-title"
            />
            <p className="muted" id="design-title-note">
              Plan の一覧や実行の画面には、この名前で表示されます。
            </p>
            {titleProblem ? (
              <p className="error-message" id="design-title-problem" role="alert">
                {titleProblem}
              </p>
            ) : null}
          </div>
          {breaking ? (
            <div className="input-field input-check">
              <input
                id="design-accept-major"
                type="checkbox"
                checked={acceptMajor}
                onChange={(event) => onAcceptMajor(event.target.checked)}
              />
              <label htmlFor="design-accept-major">互換性のない変更を承知で登録する</label>
            </div>
          ) : null}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy} data-testid="design-register-button">
              {registered ? "もう一度登録する（新しい版）" : "登録する"}
            </button>
            {busy ? <Spinner label="登録しています…" /> : null}
          </div>
        </form>
      )}
      <ErrorBox error={error} testId="design-register-error" />
      {refused.length > 0 ? (
        <ul className="design-issues">
          {refused.map((item, index) => (
            <li key={index} className={`design-issue design-issue-${item.breaking || !breaking ? "error" : "warning"}`}>
              <p className="design-issue-message">{item.message}</p>
              {item.hint ? <p className="design-issue-hint">直し方: {item.hint}</p> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {registered ? (
        <div className="design-registered" role="status" data-testid="design-registered">
          <p>
            「{registered.title}」を登録しました（バージョン {registered.version}）。
          </p>
          {(registered.warnings ?? []).map((warning) => (
            <p key={warning} className="muted">
              {warning}
            </p>
          ))}
          <p>
            <Link href={`/plans/?plan=${encodeURIComponent(registered.plan_id)}`} data-testid="design-run-link">
              Plan のページで「{registered.title}」を実行する
            </Link>
          </p>
        </div>
      ) : null}
    </section>
  );
}
