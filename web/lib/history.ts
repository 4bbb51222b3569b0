// 履歴: the filters as the page's address holds them, the API's list, what a person reads of an entry.

import type { ApiError } from "@/lib/api";

/** One entry of GET /api/history (services.history.HistoryEntry.to_json). */
export interface HistoryEntry {
  kind: string;
  kind_label: string;
  key: string;
  title: string;
  status: string;
  status_label: string;
  started_by: string;
  started_by_name: string;
  started_at: string;
  updated_at: string;
  link: string;
  questions: number;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  next_cursor: string | null;
  kinds: Record<string, string>;
  statuses: Record<string, string>;
}

export const FILTER_NAMES = ["q", "kind", "status", "started_by", "since", "until"] as const;
export type FilterName = (typeof FILTER_NAMES)[number];
export type Filters = Record<FilterName, string>;

export const EMPTY_FILTERS: Filters = { q: "", kind: "", status: "", started_by: "", since: "", until: "" };

/** The kinds and statuses to choose from (the API sends the same words with every page). */
export const KIND_LABELS: Record<string, string> = {
  plan: "Plan の実行",
  helpdesk: "ヘルプデスクの回答",
  analysis: "データ分析の会話",
  research: "リサーチ",
};

export const STATUS_LABELS: Record<string, string> = {
  queued: "順番待ち",
  running: "実行中",
  waiting: "入力待ち",
  success: "成功",
  failed: "失敗",
  cancelled: "中止",
};

/** How many entries a page asks for. */
export const PAGE_SIZE = 50;

/** The filters in an address's query (unknown names ignored, each value trimmed). */
export function filtersFrom(params: URLSearchParams | { get(name: string): string | null }): Filters {
  const filters = { ...EMPTY_FILTERS };
  for (const name of FILTER_NAMES) filters[name] = (params.get(name) ?? "").trim();
  return filters;
}

/** The query string of the filters that are filled in ("" when none), in a fixed order. */
export function filtersQuery(filters: Filters): string {
  const params = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = filters[name].trim();
    if (value) params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** The page's own address for the filters. */
export function historyHref(filters: Filters): string {
  return `/history/${filtersQuery(filters)}`;
}

/** GET /api/history for the filters, after `cursor` (the previous page's next_cursor). */
export function historyApiPath(filters: Filters, cursor: string | null = null, limit = PAGE_SIZE): string {
  const params = new URLSearchParams(filtersQuery(filters).slice(1));
  params.set("limit", String(limit));
  if (cursor) params.set("cursor", cursor);
  return `/api/history?${params.toString()}`;
}

export function hasFilters(filters: Filters): boolean {
  return FILTER_NAMES.some((name) => filters[name].trim() !== "");
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Problems the page can see before asking the server: a day that is not a day, a period backwards. */
export function filterProblems(filters: Filters): Partial<Record<FilterName, string>> {
  const problems: Partial<Record<FilterName, string>> = {};
  for (const name of ["since", "until"] as const) {
    const value = filters[name].trim();
    if (value && (!DAY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))) {
      problems[name] = "日付は 2026-04-01 のように 年-月-日 の形で入力してください。";
    }
  }
  const since = filters.since.trim();
  const until = filters.until.trim();
  if (!problems.since && !problems.until && since && until && since > until) {
    problems.until = "期間の終わりが始まりより前です。始まりと終わりを入れ替えてください。";
  }
  return problems;
}

/** The filter an API error is about (HISTORY_QUERY_INVALID names it in details.field), or null. */
export function problemField(error: ApiError | null): FilterName | null {
  const field = error?.details?.field;
  return typeof field === "string" && (FILTER_NAMES as readonly string[]).includes(field) ? (field as FilterName) : null;
}

/** Who started an entry, as a person reads it: 「山田 花子（yamada）」, the login alone, or 「記録なし」. */
export function starterLabel(entry: Pick<HistoryEntry, "started_by" | "started_by_name">): string {
  if (!entry.started_by) return "記録なし";
  const name = entry.started_by_name?.trim();
  return name && name !== entry.started_by ? `${name}（${entry.started_by}）` : entry.started_by;
}

/** An entry's name, with how many questions a conversation holds. */
export function entryTitle(entry: Pick<HistoryEntry, "title" | "questions" | "kind">): string {
  const title = entry.title.trim() || "（名前なし）";
  return entry.kind === "analysis" && entry.questions > 1 ? `${title}（ほか ${entry.questions - 1} 件の質問）` : title;
}
