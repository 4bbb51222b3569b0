"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { useEffect, useMemo, useRef, useState } from "react";
import "@/components/pages/pages.css";
import "@/components/pages/history.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import { formatDateTime } from "@/components/pages/format";
import { apiJson, toApiError, type ApiError } from "@/lib/api";
import {
  entryTitle,
  filterProblems,
  filtersFrom,
  hasFilters,
  historyApiPath,
  historyHref,
  KIND_LABELS,
  problemField,
  STATUS_LABELS,
  starterLabel,
  type FilterName,
  type Filters,
  type HistoryEntry,
  type HistoryPage,
} from "@/lib/history";

interface Loaded {
  /** The address query the entries were loaded for. */
  search: string;
  entries: HistoryEntry[];
  next: string | null;
  error: ApiError | null;
}

/** 履歴: every run, answer, conversation and research a person may see, found by words, kind, status, who and when. */
export default function HistoryView() {
  const router = useRouter();
  const search = useSearchParams().toString();
  const applied = useMemo(() => filtersFrom(new URLSearchParams(search)), [search]);
  const [form, setForm] = useState<Filters>(applied);
  const [problems, setProblems] = useState<Partial<Record<FilterName, string>>>({});
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<ApiError | null>(null);
  const tableRef = useRef<HTMLTableSectionElement | null>(null);
  const focusRow = useRef<number | null>(null);

  // The address is the truth: a reload, back and forward show its filters and their entries.
  useEffect(() => {
    setForm(applied);
    setProblems({});
    setMoreError(null);
    let current = true;
    apiJson<HistoryPage>(historyApiPath(applied))
      .then((page) => {
        if (current) setLoaded({ search, entries: page.entries, next: page.next_cursor, error: null });
      })
      .catch((cause: unknown) => {
        if (current) setLoaded({ search, entries: [], next: null, error: toApiError(cause) });
      });
    return () => {
      current = false;
    };
  }, [applied, search]);

  // After 「さらに表示」, the first new entry gets the focus (a keyboard user goes on from there).
  useEffect(() => {
    const index = focusRow.current;
    if (index === null || !tableRef.current) return;
    focusRow.current = null;
    tableRef.current.querySelectorAll<HTMLAnchorElement>("a.history-title")[index]?.focus();
  }, [loaded]);

  const current = loaded && loaded.search === search ? loaded : null;
  const apiField = problemField(current?.error ?? null);
  const fieldError = (name: FilterName): string | undefined =>
    problems[name] ??
    (apiField === name && current?.error
      ? [current.error.message, current.error.hint].filter(Boolean).join("。")
      : undefined);

  const submit = (event: React.FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const found = filterProblems(form);
    setProblems(found);
    const first = (Object.keys(found) as FilterName[])[0];
    if (first) {
      document.getElementById(`history-${first}`)?.focus();
      return;
    }
    router.push(historyHref(form));
  };

  const more = async () => {
    if (!current?.next || loadingMore) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      const page = await apiJson<HistoryPage>(historyApiPath(applied, current.next));
      focusRow.current = current.entries.length;
      // the list may have been searched anew meanwhile: this page belongs to the old one
      setLoaded((shown) =>
        shown?.search === current.search
          ? { ...shown, entries: [...shown.entries, ...page.entries], next: page.next_cursor }
          : shown,
      );
    } catch (cause) {
      setMoreError(toApiError(cause));
    } finally {
      setLoadingMore(false);
    }
  };

  const set = (name: FilterName) => (event: React.ChangeEvent<HTMLInputElement | HTMLSelectElement>) =>
    setForm((before) => ({ ...before, [name]: event.target.value }));

  const field = (name: FilterName, label: string, control: React.ReactNode, help?: string) => {
    const problem = fieldError(name);
    return (
      <div className={`history-field history-field-${name}`}>
        <label htmlFor={`history-${name}`}>{label}</label>
        {control}
        {help ? (
          <p id={`history-${name}-help`} className="muted history-help">
            {help}
          </p>
        ) : null}
        {problem ? (
          <p id={`history-${name}-problem`} className="error-message history-problem" data-testid={`history-${name}-problem`}>
            {problem}
          </p>
        ) : null}
      </div>
    );
  };

  const described = (name: FilterName, help = false) => {
    const ids = [help ? `history-${name}-help` : "", fieldError(name) ? `history-${name}-problem` : ""].filter(Boolean);
    return {
      id: `history-${name}`,
      name,
      value: form[name],
      onChange: set(name),
      "aria-invalid": fieldError(name) ? true : undefined,
      "aria-describedby": ids.length > 0 ? ids.join(" ") : undefined,
      "data-testid": `history-${name}`,
    };
  };

  const filtered = hasFilters(applied);
  const generalError = current?.error && !apiField ? current.error : null;

  return (
    <section aria-labelledby="history-heading" className="history">
      <h1 id="history-heading">履歴</h1>
      <p className="muted">
        {"これまでの Plan の実行、ヘルプデスクへの質問、データ分析の会話、リサーチを探して、もう一度開けます。" +
          "見られるのは、自分が始めたものと、役割で見られるものです。"}
      </p>
      <form className="panel history-form" onSubmit={submit} role="search" aria-label="履歴の検索" noValidate>
        <div className="history-fields">
          {field(
            "q",
            "言葉",
            <input type="text" {...described("q", true)} maxLength={200} />,
            "Plan の名前や質問に含まれる言葉（スペースで区切ると、すべてを含むもの）",
          )}
          {field(
            "kind",
            "種類",
            <select {...described("kind")}>
              <option value="">すべて</option>
              {Object.entries(KIND_LABELS).map(([kind, label]) => (
                <option key={kind} value={kind}>
                  {label}
                </option>
              ))}
            </select>,
          )}
          {field(
            "status",
            "状態",
            <select {...described("status")}>
              <option value="">すべて</option>
              {Object.entries(STATUS_LABELS).map(([status, label]) => (
                <option key={status} value={status}>
                  {label}
                </option>
              ))}
            </select>,
          )}
          {field(
            "started_by",
            "開始した人",
            <input type="text" {...described("started_by", true)} maxLength={128} autoComplete="off" />,
            "ログイン名（例: yamada）",
          )}
          <fieldset className="history-period">
            <legend>期間（開始した日）</legend>
            <div className="history-period-fields">
              {field("since", "この日から", <input type="date" {...described("since")} />)}
              {field("until", "この日まで", <input type="date" {...described("until")} />)}
            </div>
          </fieldset>
        </div>
        <div className="actions">
          <button type="submit" className="primary" data-testid="history-search">
            検索
          </button>
          {filtered ? (
            <Link href="/history/" data-testid="history-clear">
              条件をクリア
            </Link>
          ) : null}
        </div>
      </form>

      <ErrorBox error={generalError} />
      {current === null ? (
        <Spinner label="履歴を読み込んでいます…" />
      ) : current.error ? null : current.entries.length === 0 ? (
        <p className="panel history-empty" data-testid="history-empty">
          {filtered
            ? "条件に合う履歴はありません。言葉を短くするか、種類・状態・期間の条件を外して、もう一度検索してください。"
            : "まだ履歴はありません。Plan を実行したり、ヘルプデスク・データ分析・リサーチで質問したりすると、ここに表示されます。"}
        </p>
      ) : (
        <>
          <p className="muted" data-testid="history-count">
            {current.entries.length} 件を表示しています{current.next ? "（まだ続きがあります）" : ""}。新しく始めたものから順に並んでいます。
          </p>
          <div className="table-wrap">
            <table className="history-table" data-testid="history-table">
              <thead>
                <tr>
                  <th scope="col">種類</th>
                  <th scope="col">名前</th>
                  <th scope="col">状態</th>
                  <th scope="col">開始した人</th>
                  <th scope="col">開始日時</th>
                </tr>
              </thead>
              <tbody ref={tableRef}>
                {current.entries.map((entry) => (
                  <tr key={`${entry.kind}:${entry.key}`} data-testid="history-row" data-kind={entry.kind}>
                    <td data-label="種類">{entry.kind_label || KIND_LABELS[entry.kind] || entry.kind}</td>
                    <td data-label="名前" className="history-name">
                      <Link href={entry.link} className="history-title">
                        {entryTitle(entry)}
                      </Link>
                    </td>
                    <td data-label="状態">
                      <span className={`history-status history-status-${entry.status}`}>
                        {entry.status_label || STATUS_LABELS[entry.status] || entry.status}
                      </span>
                    </td>
                    <td data-label="開始した人">{starterLabel(entry)}</td>
                    <td data-label="開始日時">{formatDateTime(entry.started_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <ErrorBox error={moreError} testId="history-more-error" />
          {current.next ? (
            <div className="actions">
              <button type="button" onClick={() => void more()} disabled={loadingMore} data-testid="history-more">
                さらに表示
              </button>
              {loadingMore ? <Spinner label="続きを読み込んでいます…" /> : null}
            </div>
          ) : null}
        </>
      )}
    </section>
  );
}
