"use client";

import { useCallback, useEffect, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import DownloadLink from "@/components/pages/DownloadLink";
import { formatDateTime } from "@/components/pages/format";
import { apiJson, toApiError, type ApiError } from "@/lib/api";

/** One entry as GET /api/audit sends it (people.audit.AuditEntry.to_dict + kind_label). */
export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  kind: string;
  kind_label: string;
  subject: string;
  details: Record<string, unknown>;
  /** What people call the subject (a run's or Plan's title), when the server knows it. */
  subject_title?: string | null;
  /** The title of the Plan in `details.plan`, when the server knows it. */
  plan_title?: string | null;
}

interface Verification {
  ok: boolean;
  entries: number;
  broken_at: number | null;
  problem: string | null;
  head_seq: number | null;
  head_hash: string | null;
}

const FILTERS = ["actor", "kind", "plan", "subject", "since", "until"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** The query string of the filters that are filled in. */
export function auditQuery(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (filters[name].trim()) params.set(name, filters[name].trim());
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** What an entry's details say, in a line: the comment, the files, the version, the Plan. */
export function detailSummary(details: Record<string, unknown>, planTitle?: string | null): string {
  const parts: string[] = [];
  if (planTitle) parts.push(`Plan: ${planTitle}`);
  else if (typeof details.plan === "string") parts.push(`Plan: ${details.plan}`);
  if (typeof details.version === "string") parts.push(`版: ${details.version}`);
  if (Array.isArray(details.files)) {
    const names = details.files
      .map((file) => (typeof file === "object" && file !== null ? (file as Record<string, unknown>).name : null))
      .filter((name): name is string => typeof name === "string" && name !== "");
    if (names.length > 0) parts.push(`ファイル: ${names.join("、")}`);
  }
  if (typeof details.name === "string") parts.push(`ファイル: ${details.name}`);
  if (typeof details.comment === "string" && details.comment) parts.push(`コメント: ${details.comment}`);
  if (typeof details.via === "string") parts.push(details.via === "oidc" ? "会社のアカウント" : "パスワード");
  if (Array.isArray(details.changed)) parts.push(`変更された設定: ${details.changed.length} 件`);
  return parts.join("・");
}

/**
 * The subject in words (a run or Plan by its title) when the server knows them; its
 * identifier only in a details toggle (a removed run, a schedule, an uploaded file).
 */
function Subject({ entry }: { entry: AuditEntry }) {
  if (!entry.subject) return null;
  return (
    <>
      {entry.subject_title ?? null}
      <details className="muted">
        <summary>識別子</summary>
        <code>{entry.subject}</code>
      </details>
    </>
  );
}

/** 監査ログ: who did what and when, searchable, checked for tampering, exportable as CSV (管理者). */
export default function AuditView() {
  const [filters, setFilters] = useState<Filters>({ actor: "", kind: "", plan: "", subject: "", since: "", until: "" });
  const [query, setQuery] = useState("");
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [kinds, setKinds] = useState<Record<string, string>>({});
  const [verification, setVerification] = useState<Verification | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const load = useCallback(async (search: string) => {
    try {
      const body = await apiJson<{ entries: AuditEntry[]; kinds: Record<string, string> }>(`/api/audit${search}`);
      setEntries(body.entries);
      setKinds(body.kinds);
      setError(null);
    } catch (cause) {
      setError(toApiError(cause));
    }
  }, []);

  useEffect(() => {
    void load(query);
  }, [load, query]);

  const verify = async () => {
    try {
      setVerification(await apiJson<Verification>("/api/audit/verify"));
    } catch (cause) {
      setError(toApiError(cause));
    }
  };

  const field = (name: (typeof FILTERS)[number], label: string, type = "text") => (
    <div>
      <label htmlFor={`audit-${name}`}>{label}</label>
      <input
        id={`audit-${name}`}
        type={type}
        value={filters[name]}
        onChange={(event) => setFilters({ ...filters, [name]: event.target.value })}
        data-testid={`audit-${name}`}
      />
    </div>
  );

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">監査ログ</h1>
      <p className="muted">
        誰が・いつ・何をしたか（サインイン、Plan の登録、実行の開始、承認・差戻し、ダウンロード、利用者と設定の変更）の記録です。
        記録は前の記録とハッシュでつながっていて、書き換えや削除があれば「改ざんチェック」で分かります。
      </p>
      <form
        className="panel"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery(auditQuery(filters));
        }}
      >
        {field("actor", "利用者（ログイン名）")}
        <div>
          <label htmlFor="audit-kind">操作</label>
          <select
            id="audit-kind"
            value={filters.kind}
            onChange={(event) => setFilters({ ...filters, kind: event.target.value })}
            data-testid="audit-kind"
          >
            <option value="">すべて</option>
            {Object.entries(kinds).map(([kind, label]) => (
              <option key={kind} value={kind}>
                {label}
              </option>
            ))}
          </select>
        </div>
        {field("plan", "Plan")}
        {field("subject", "対象（実行 ID など）")}
        {field("since", "この日から", "date")}
        {field("until", "この日まで", "date")}
        <div className="actions">
          <button type="submit" className="primary" data-testid="audit-search">
            検索
          </button>
          <button type="button" onClick={() => void verify()} data-testid="audit-verify">
            改ざんチェック
          </button>
          <DownloadLink path={`/api/audit/export${query}`} name="audit.csv" label="CSV でダウンロード" />
        </div>
      </form>
      {verification ? (
        <p className={verification.ok ? "notice" : "error-message"} role="status" data-testid="audit-verification">
          {verification.ok
            ? `問題ありません: ${verification.entries} 件の記録はすべて元のままです。` +
              (verification.head_seq !== null
                ? `最新の記録は ${verification.head_seq} 番（ハッシュ ${verification.head_hash ?? ""}）です。控えておけば、後から最新の記録が消されていないかを確かめられます。`
                : "")
            : `問題があります: ${verification.problem ?? ""}`}
        </p>
      ) : null}
      <ErrorBox error={error} />
      {entries === null ? (
        error ? null : <Spinner label="監査ログを読み込んでいます…" />
      ) : entries.length === 0 ? (
        <p data-testid="audit-empty">該当する記録はありません。</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="監査ログの記録">
          <table data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">番号</th>
                <th scope="col">日時</th>
                <th scope="col">利用者</th>
                <th scope="col">操作</th>
                <th scope="col">対象</th>
                <th scope="col">内容</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.seq} data-testid="audit-row">
                  <td>{entry.seq}</td>
                  <td>{formatDateTime(entry.at)}</td>
                  <td>{entry.actor}</td>
                  <td>{entry.kind_label}</td>
                  <td>
                    <Subject entry={entry} />
                  </td>
                  <td>{detailSummary(entry.details, entry.plan_title)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
