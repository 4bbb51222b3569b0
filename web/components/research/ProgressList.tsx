import { type GapCheck, type Plan, planSummary, type QueryProgress } from "@/lib/research";
import Markdown from "./Markdown";

function statusLabel(query: QueryProgress): string {
  switch (query.status) {
    case "searching":
      return "検索中";
    case "found":
      return `${query.count ?? 0} 件見つかりました・要約中`;
    case "summarized":
      return `${query.count ?? 0} 件・要約済み`;
    case "saved":
      return query.reused ? "このセッションのノートを再利用" : `${query.count ?? 0} 件・要約済み`;
    case "skipped":
      return query.skipReason === "no_hits"
        ? "見つからなかったため省きました"
        : `${query.count ?? 0} 件・質問に関係する記述がなく省きました`;
    case "failed":
      return "失敗";
  }
}

/** Each query's progress as it streams in; partial summaries fold open. */
export default function ProgressList({
  plan,
  queries,
  gapChecks,
  stepErrors,
}: {
  plan: Plan | null;
  queries: QueryProgress[];
  gapChecks: GapCheck[];
  stepErrors: string[];
}) {
  const stepless = stepErrors.filter((message) => !queries.some((query) => query.error === message));
  return (
    <section className="panel" aria-labelledby="progress-title">
      <h2 id="progress-title">進捗</h2>
      {plan ? (
        <p className="muted" data-testid="plan-summary">
          {planSummary(plan, gapChecks)}
        </p>
      ) : null}
      <ol className="progress-list" aria-live="polite" aria-relevant="additions text">
        {queries.map((query) => (
          <li key={query.stepNo} className={`progress-item status-${query.status}`} data-testid="progress-item">
            <div className="progress-head">
              <span className="step-no">[{query.stepNo}]</span>
              <span className="query">{query.query}</span>
              <span className="status" data-testid="progress-status">
                {statusLabel(query)}
              </span>
            </div>
            {query.error ? <p className="error-message">{query.error}</p> : null}
            {query.summaryMd ? (
              <details className="partial-summary">
                <summary>要約を表示</summary>
                <Markdown text={query.summaryMd} />
              </details>
            ) : null}
          </li>
        ))}
        {gapChecks
          .filter((check) => check.queries.length > 0)
          .map((check) => (
            <li key={`gap-${check.cycle}`} className="progress-note">
              不足の確認 {check.cycle}: {check.missing} → 追加クエリ {check.queries.join(" / ")}
            </li>
          ))}
      </ol>
      {stepless.length > 0 ? (
        <ul className="warnings">
          {stepless.map((message, index) => (
            <li key={index}>{message}</li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
