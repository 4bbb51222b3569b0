// The research page's state: a pure reducer over the run's events (docs/research.md, "Events").
//
// Resume and gaps: every event carries `seq` (1, 2, … per run, the SSE id). An event with
// seq <= lastEventId was already applied and is ignored, so a reconnect that repeats events
// never duplicates progress or report text. An event with seq > lastEventId + 1 means events
// were lost: it is applied, and `gap` is set. When the run has finished with `gap` set, the
// page fetches GET /api/research/{run_id} and dispatches `final`, which replaces the report,
// sources and limitations with the server's stored result (and clears `gap`).

import type { ConnectionState } from "@/lib/sse";

/** One event of the stream (src/keiri_agent/events.py `Event`). */
export interface ResearchEvent {
  source: string;
  kind: string;
  run_id: string;
  seq: number;
  timestamp: string;
  payload: Record<string, unknown>;
}

/** `skipped`: the step ended without a note (nothing found, or nothing relevant to summarise). */
export type QueryStatus = "searching" | "found" | "summarized" | "saved" | "skipped" | "failed";

export interface QueryProgress {
  stepNo: number;
  query: string;
  status: QueryStatus;
  /** Hits found (null before the search answered). */
  count: number | null;
  summaryMd: string | null;
  /** The note came from an earlier run of the same session. */
  reused: boolean;
  /** Why a skipped step has no note: "no_hits" or "no_summary" (`step_skipped`). */
  skipReason: string | null;
  error: string | null;
}

export interface Source {
  number: number;
  ref: string;
  text: string;
  title: string;
  document: string | null;
  page: number | null;
  heading: string | null;
  /** 1-based row of an FAQ or table file (cited as 行N). */
  row: number | null;
  url: string | null;
}

export interface RunError {
  code: string;
  message: string;
  hint: string;
}

export interface GapCheck {
  cycle: number;
  missing: string;
  queries: string[];
  checked: boolean;
}

export interface Plan {
  needsResearch: boolean;
  reason: string;
  queries: string[];
  offline: boolean;
}

export type RunStatus = "idle" | "running" | "success" | "failed" | "cancelled";

export interface ResearchState {
  status: RunStatus;
  runId: string | null;
  sessionId: string | null;
  eventsUrl: string | null;
  question: string;
  plan: Plan | null;
  /** Ordered by step number. */
  queries: QueryProgress[];
  gapChecks: GapCheck[];
  /** Steps or sources that failed while the run went on (`error` events), in Japanese. */
  stepErrors: string[];
  reportMd: string;
  sources: Source[];
  limitations: string[];
  error: RunError | null;
  lastEventId: number;
  /** Events were lost between lastEventId and a later one: re-read the final state. */
  gap: boolean;
  connection: ConnectionState | null;
}

export interface StartedRun {
  runId: string;
  sessionId: string;
  eventsUrl: string;
  question: string;
}

/** GET /api/research/{run_id}. */
export interface RunSnapshot {
  run_id: string;
  session_id?: string;
  question?: string;
  events_url?: string;
  status: string;
  result: {
    report_md?: string;
    sources?: Record<string, unknown>[];
    limitations?: string[];
    session_id?: string;
  } | null;
  error: Record<string, unknown> | null;
  last_event_id: number;
}

export type ResearchAction =
  | { type: "started"; run: StartedRun }
  | { type: "event"; event: ResearchEvent }
  | { type: "connection"; state: ConnectionState }
  | { type: "final"; snapshot: RunSnapshot };

export const initialResearchState: ResearchState = {
  status: "idle",
  runId: null,
  sessionId: null,
  eventsUrl: null,
  question: "",
  plan: null,
  queries: [],
  gapChecks: [],
  stepErrors: [],
  reportMd: "",
  sources: [],
  limitations: [],
  error: null,
  lastEventId: 0,
  gap: false,
  connection: null,
};

export const TERMINAL_KINDS: ReadonlySet<string> = new Set(["done", "failed", "cancelled"]);

const str = (value: unknown, fallback = ""): string => (typeof value === "string" ? value : fallback);
const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);
const strList = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

export function toSource(raw: Record<string, unknown>, index: number): Source {
  return {
    number: num(raw.number) ?? index + 1,
    ref: str(raw.ref),
    text: str(raw.text),
    title: str(raw.title),
    document: typeof raw.document === "string" ? raw.document : null,
    page: num(raw.page),
    heading: typeof raw.heading === "string" ? raw.heading : null,
    row: num(raw.row),
    url: typeof raw.url === "string" ? raw.url : null,
  };
}

function toRunError(raw: unknown, fallbackMessage: string): RunError {
  const error = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  return {
    code: str(error.code, "RESEARCH_FAILED"),
    message: str(error.message, fallbackMessage),
    hint: str(error.hint),
  };
}

function toSources(raw: unknown): Source[] {
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
    .map(toSource);
}

function upsertQuery(
  queries: QueryProgress[],
  stepNo: number,
  query: string,
  change: (current: QueryProgress) => QueryProgress,
): QueryProgress[] {
  const existing = queries.find((item) => item.stepNo === stepNo);
  const base: QueryProgress = existing ?? {
    stepNo,
    query,
    status: "searching",
    count: null,
    summaryMd: null,
    reused: false,
    skipReason: null,
    error: null,
  };
  const updated = change({ ...base, query: query || base.query });
  const others = queries.filter((item) => item.stepNo !== stepNo);
  return [...others, updated].sort((a, b) => a.stepNo - b.stepNo);
}

function applyEvent(state: ResearchState, event: ResearchEvent): ResearchState {
  const p = event.payload ?? {};
  const stepNo = num(p.step_no);
  const query = str(p.query);
  switch (event.kind) {
    case "plan":
      return {
        ...state,
        plan: {
          needsResearch: p.needs_research !== false,
          reason: str(p.reason),
          queries: strList(p.queries),
          offline: p.offline === true,
        },
      };
    case "query_started":
      if (stepNo === null) return state;
      return { ...state, queries: upsertQuery(state.queries, stepNo, query, (q) => ({ ...q, status: "searching" })) };
    case "hits":
      if (stepNo === null) return state;
      return {
        ...state,
        queries: upsertQuery(state.queries, stepNo, query, (q) => ({ ...q, status: "found", count: num(p.count) ?? 0 })),
      };
    case "partial_summary":
      if (stepNo === null) return state;
      return {
        ...state,
        queries: upsertQuery(state.queries, stepNo, query, (q) => ({
          ...q,
          status: "summarized",
          summaryMd: str(p.summary_md),
        })),
      };
    case "note_saved":
      if (stepNo === null) return state;
      return {
        ...state,
        queries: upsertQuery(state.queries, stepNo, query, (q) => ({
          ...q,
          status: q.status === "failed" ? q.status : "saved",
          reused: p.reused === true,
        })),
      };
    case "step_skipped":
      if (stepNo === null) return state;
      return {
        ...state,
        queries: upsertQuery(state.queries, stepNo, query, (q) => ({
          ...q,
          status: "skipped",
          count: num(p.count) ?? q.count,
          skipReason: str(p.reason, "no_summary"),
        })),
      };
    case "gap_check":
      return {
        ...state,
        gapChecks: [
          ...state.gapChecks,
          { cycle: num(p.cycle) ?? state.gapChecks.length + 1, missing: str(p.missing), queries: strList(p.queries), checked: p.checked !== false },
        ],
      };
    case "report_chunk":
      return { ...state, reportMd: state.reportMd + str(p.text) };
    case "error": {
      const message = str(p.message, "調査の一部が失敗しました。");
      const withError = { ...state, stepErrors: [...state.stepErrors, message] };
      if (stepNo === null) return withError;
      return {
        ...withError,
        queries: upsertQuery(state.queries, stepNo, query, (q) => ({ ...q, status: "failed", error: message })),
      };
    }
    case "done":
      return {
        ...state,
        status: "success",
        sessionId: str(p.session_id) || state.sessionId,
        sources: toSources(p.sources),
        limitations: strList(p.limitations),
      };
    case "failed":
      return { ...state, status: "failed", error: toRunError(p.error, "調査が失敗しました。") };
    case "cancelled":
      return {
        ...state,
        status: "cancelled",
        error: p.error ? toRunError(p.error, "調査はキャンセルされました。") : null,
      };
    default:
      return state; // a kind this page does not know yet changes nothing
  }
}

export function researchReducer(state: ResearchState, action: ResearchAction): ResearchState {
  switch (action.type) {
    case "started":
      return {
        ...initialResearchState,
        status: "running",
        runId: action.run.runId,
        sessionId: action.run.sessionId,
        eventsUrl: action.run.eventsUrl,
        question: action.run.question,
      };
    case "event": {
      const { event } = action;
      if (state.runId !== null && event.run_id !== state.runId) return state;
      if (event.seq <= state.lastEventId) return state; // already applied (a resume repeated it)
      const gap = state.gap || event.seq > state.lastEventId + 1;
      return { ...applyEvent(state, event), lastEventId: event.seq, gap };
    }
    case "connection":
      return { ...state, connection: action.state };
    case "final": {
      const { snapshot } = action;
      if (state.runId !== null && snapshot.run_id !== state.runId) return state;
      const status: RunStatus =
        snapshot.status === "success" || snapshot.status === "failed" || snapshot.status === "cancelled"
          ? snapshot.status
          : state.status;
      const result = snapshot.result;
      return {
        ...state,
        status,
        reportMd: result?.report_md ?? state.reportMd,
        sources: result?.sources ? toSources(result.sources) : state.sources,
        limitations: result?.limitations ?? state.limitations,
        sessionId: result?.session_id ?? state.sessionId,
        error: snapshot.error ? toRunError(snapshot.error, "調査が失敗しました。") : state.error,
        lastEventId: Math.max(state.lastEventId, snapshot.last_event_id),
        gap: false,
      };
    }
    default:
      return state;
  }
}

/**
 * The progress header: how many queries the run searches — the plan's and those the gap checks
 * added — so it matches the steps listed below it.
 */
export function planSummary(plan: Plan, gapChecks: GapCheck[]): string {
  if (!plan.needsResearch) return `詳細調査は不要です: ${plan.reason}`;
  const added = gapChecks.reduce((total, check) => total + check.queries.length, 0);
  const total = plan.queries.length + added;
  const offline = plan.offline ? "（オフライン）" : "";
  const detail = added > 0 ? `（最初の計画 ${plan.queries.length} 件、不足の確認で追加 ${added} 件）` : "";
  return `調査計画${offline}: クエリ ${total} 件${detail}`;
}

/** Parse one SSE data line into an event (null when it is not one). */
export function parseResearchEvent(data: string): ResearchEvent | null {
  try {
    const value: unknown = JSON.parse(data);
    if (typeof value !== "object" || value === null) return null;
    const event = value as Record<string, unknown>;
    if (typeof event.kind !== "string" || typeof event.seq !== "number") return null;
    return {
      source: str(event.source),
      kind: event.kind,
      run_id: str(event.run_id),
      seq: event.seq,
      timestamp: str(event.timestamp),
      payload: typeof event.payload === "object" && event.payload !== null ? (event.payload as Record<string, unknown>) : {},
    };
  } catch {
    return null;
  }
}
