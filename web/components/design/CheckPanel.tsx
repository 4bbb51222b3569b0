"use client";

import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import type { ApiError } from "@/lib/api";
import type { CheckItem } from "@/lib/design";

/** One problem as sentences: the message, the fix, the step it concerns; its code only inside a closed details. */
export function CheckIssue({ item }: { item: CheckItem }) {
  return (
    <li className={`design-issue design-issue-${item.severity}`} data-testid="design-issue">
      <p className="design-issue-message">
        <span className="design-issue-kind">{item.severity === "error" ? "エラー" : "注意"}</span>
        {item.step && !item.message.includes(`「${item.step}」`) ? `ステップ「${item.step}」: ` : ""}
        {item.message}
      </p>
      {item.hint ? <p className="design-issue-hint">直し方: {item.hint}</p> : null}
      <details className="muted design-issue-code">
        <summary>詳しい情報（問い合わせ用）</summary>
        <code>{item.code}</code>
      </details>
    </li>
  );
}

/** 検証: the problems of the Plan (validation and dry run) and もう一度検証する. */
export default function CheckPanel({
  items,
  checkedAt,
  dryRunDone,
  busy,
  error,
  onCheck,
}: {
  items: CheckItem[];
  checkedAt: "generation" | "check";
  /** Whether the dry run ran (it runs when the check passes and no question is open). */
  dryRunDone: boolean;
  busy: boolean;
  error: ApiError | null;
  onCheck: () => void;
}) {
  const errors = items.filter((item) => item.severity === "error").length;
  const warnings = items.length - errors;
  return (
    <section className="panel" aria-labelledby="design-check-title" data-testid="design-check">
      <h2 id="design-check-title">検証</h2>
      <p data-testid="design-check-summary">
        {items.length > 0
          ? `${[errors ? `エラー ${errors} 件` : "", warnings ? `注意 ${warnings} 件` : ""].filter(Boolean).join("、")}が見つかりました。`
          : dryRunDone
            ? "検証とドライラン（見本のデータでの試し運転）で問題は見つかりませんでした。"
            : "検証で問題は見つかりませんでした。ドライラン（見本のデータでの試し運転）は、質問にすべて答えてから行います。"}
        {checkedAt === "generation" ? "（Plan を作ったときの結果）" : "（いま検証した結果）"}
      </p>
      {items.length > 0 ? (
        <ul className="design-issues">
          {items.map((item, index) => (
            <CheckIssue key={`${item.code}-${index}`} item={item} />
          ))}
        </ul>
      ) : null}
      <ErrorBox error={error} testId="design-check-error" />
      <div className="actions">
        <button type="button" onClick={onCheck} disabled={busy} data-testid="design-check-button">
          もう一度検証する
        </button>
        {busy ? <Spinner label="検証しています…" /> : null}
      </div>
    </section>
  );
}
