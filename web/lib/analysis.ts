// The データ分析 page's talk with the API (src/keiri_agent/api/routes/analysis.py) and the pure
// helpers that turn its JSON into what a person reads: column kinds in Japanese, the agent's
// questions with their choices, the report split into its sections, progress lines.

import {
  ApiError,
  apiFetch,
  apiJson,
  apiUrl,
  authHeaders,
  errorFromResponse,
  networkError,
  onUnauthorizedNotify,
} from "@/lib/api";
import { SseParser, type SseMessage, streamSse } from "@/lib/sse";

// --------------------------------------------------------------------------- the API's JSON

/** One column of a dataset summary (agents/analysis/datasets/summary.py). */
export interface ColumnSummary {
  name: string;
  kind: string;
  missing: number;
  unique: number;
  examples?: string[];
  notes?: string[];
}

export interface DatasetSummary {
  name: string;
  rows: number;
  columns: ColumnSummary[];
  notes?: string[];
}

/** POST /api/analysis/datasets and GET /api/analysis/datasets/{id}. */
export interface Dataset {
  dataset_id: string;
  summary: DatasetSummary;
}

export interface TableArtifact {
  artifact_id: string;
  kind: "table";
  title: string;
  description?: string;
  total_rows?: number;
  /** The table as people read it: its columns' labels and each cell's text. */
  display?: { columns: string[]; rows: string[][] };
}

export interface FigureArtifact {
  artifact_id: string;
  kind: "figure";
  title: string;
  description?: string;
  url: string;
}

export interface TextArtifact {
  artifact_id: string;
  kind: "text";
  title: string;
  description?: string;
  text?: string;
}

export type Artifact = TableArtifact | FigureArtifact | TextArtifact;

/** A turn's JSON (services/analysis_turns.py turn_result_json). */
export interface TurnResult {
  turn_id: string;
  dataset_id: string;
  thread_id: string;
  offline?: boolean;
  next_action: string;
  reply: string;
  questions: string[];
  report_md: string | null;
  artifacts: Artifact[];
  actions?: unknown[];
  last_error?: string | null;
  notice?: string | null;
  report_url: string | null;
  report_zip_url: string | null;
}

/** A run's stored error ({code, message, hint, details}). */
export interface RunError {
  code?: string;
  message?: string;
  hint?: string | null;
}

/** One turn of GET /api/analysis/threads/{id} (services/analysis_threads.py). */
export interface ThreadTurn {
  run_id: string;
  question: string;
  status: string;
  created_at: string;
  updated_at: string;
  result: TurnResult | null;
  error: RunError | null;
}

export interface Thread {
  thread_id: string;
  dataset_id: string | null;
  turns: ThreadTurn[];
}

// --------------------------------------------------------------------------- words

/** The file types the server reads (the file field's accept). */
export const FILE_ACCEPT = ".csv,.tsv,.txt,.xlsx,.xlsm";
export const FILE_TYPES_TEXT = "CSV（UTF-8 / Shift_JIS）、TSV、Excel（.xlsx / .xlsm）";
export const NO_DATASET = "分析したいCSVまたはExcelファイルをアップロードしてください。";
export const EXAMPLE_QUESTION = "部署別の金額合計を出して";

const COLUMN_KIND_LABELS: Record<string, string> = {
  numeric: "数値",
  datetime: "日付",
  categorical: "カテゴリ",
  text: "テキスト",
  boolean: "真偽",
};

/** A column kind in Japanese (formatting.column_kind_label); an unknown kind: 「その他」. */
export function columnKindLabel(kind: string): string {
  return COLUMN_KIND_LABELS[kind] ?? "その他";
}

/**
 * A loading note as the page says it: the command-line flag it names for the terminal
 * (「（コマンドでは --keep-total-rows）」) is left out — the page's own checkbox is named.
 */
export function noteText(note: string): string {
  return note.replace(/[（(]コマンドでは[^）)]*[）)]/g, "");
}

/** The follow-ups the report suggests (its 深掘り提案 section's items), offered as next questions. */
export function suggestions(sections: ReportSection[]): string[] {
  const section = sections.find((item) => item.heading !== null && SUGGESTION_SECTIONS.has(item.heading));
  if (!section) return [];
  return unique(
    section.body
      .split(/\r?\n/)
      .map((line) => /^\s*[-*]\s+(.+)$/.exec(line)?.[1] ?? "")
      .map((line) => line.replace(/[*`]/g, "")),
  );
}

/** Whether every cell of a table's column is a number as people write it (「20,000」「12.5%」). */
export function numericColumn(rows: string[][], index: number): boolean {
  const cells = rows.map((row) => row[index] ?? "").filter((cell) => cell !== "");
  return cells.length > 0 && cells.every((cell) => NUMBER_TEXT.test(cell));
}

export const NUMBER_TEXT = /^[-+−]?[\d,]+(?:\.\d+)?%?$/;

/** 「5 行 × 4 列」. */
export function sizeText(summary: DatasetSummary): string {
  return `${summary.rows.toLocaleString("ja-JP")} 行 × ${summary.columns.length.toLocaleString("ja-JP")} 列`;
}

/** The agent's question and the answers it offers (clicked, each is sent as the next turn). */
export interface AskedQuestion {
  text: string;
  choices: string[];
}

const CANDIDATES = /[（(]\s*(?:候補|candidates)\s*[:：]\s*([^）)]+)[）)]\s*$/i;
const EXAMPLES = /(?:例|For example)\s*[:：]\s*(.+)$/;

/**
 * The choices in a question of the agent: 「どの列ごとに集計しますか？（候補: 部署, 勘定科目）」 offers
 * 部署 and 勘定科目; 「どのような分析をしますか？ 例: 「部署別の金額合計」、「金額の分布」」 offers the
 * quoted examples. A question without either offers none (it is answered in the question field).
 */
export function askedQuestion(question: string): AskedQuestion {
  const text = question.trim();
  const candidates = CANDIDATES.exec(text);
  if (candidates?.[1]) {
    return { text, choices: unique(candidates[1].split(/\s*[,、，]\s*/)) };
  }
  const examples = EXAMPLES.exec(text);
  if (examples?.[1]) {
    const quoted = [...examples[1].matchAll(/「([^」]+)」/g)].map((match) => match[1] ?? "");
    if (quoted.length > 0) return { text, choices: unique(quoted) };
  }
  return { text, choices: [] };
}

function unique(items: string[]): string[] {
  return [...new Set(items.map((item) => item.trim()).filter((item) => item.length > 0))].slice(0, 12);
}

/** A report section: its heading (null for what comes before the first one) and Markdown body. */
export interface ReportSection {
  heading: string | null;
  body: string;
}

const FIGURE_LINK = /!\[([^\]]*)\]\(figures\/[^)]+\)/g;

/**
 * The report's sections (split at its `## ` headings; the `# ` title dropped). Figure links point
 * at files only the ZIP holds: they become a note that the figure is shown in the conversation.
 */
export function reportSections(markdown: string): ReportSection[] {
  const text = markdown
    .replace(FIGURE_LINK, (_match, title: string) => `*（図「${title}」は会話の中に表示しています）*`)
    .replace(/^# .*(?:\r?\n|$)/m, "");
  const sections: ReportSection[] = [];
  let current: ReportSection = { heading: null, body: "" };
  for (const line of text.split(/\r?\n/)) {
    const heading = /^##\s+(.+?)\s*$/.exec(line);
    if (heading) {
      if (current.heading !== null || current.body.trim()) sections.push(current);
      current = { heading: heading[1] ?? "", body: "" };
    } else {
      current.body += `${line}\n`;
    }
  }
  if (current.heading !== null || current.body.trim()) sections.push(current);
  return sections.map((section) => ({ heading: section.heading, body: demoteHeadings(section.body.trim()) }));
}

/** Headings inside a section read under the page's own (h4 and below). */
function demoteHeadings(markdown: string): string {
  return markdown.replace(/^(#{1,4})\s/gm, (_match, marks: string) => `${"#".repeat(Math.min(6, marks.length + 2))} `);
}

/** The report's sections that hold how to run it again by command (specs, op names): kept folded. */
export const TECHNICAL_SECTIONS = new Set(["再現要約", "Reproduction", "Reproduction summary"]);
/** The report's suggested follow-ups. */
export const SUGGESTION_SECTIONS = new Set(["深掘り提案", "Suggestions", "Next steps"]);
/** The report's conclusions, shown first. */
export const CONCLUSION_SECTIONS = new Set(["結論", "Conclusion", "Conclusions"]);

/** 「分析レポート_経費.md」: the report's download name, from the data file's name. */
export function reportFileName(datasetName: string | null | undefined, zip: boolean): string {
  const stem = (datasetName ?? "")
    .replace(/\.[^.]+$/, "")
    .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, "_")
    .trim()
    .slice(0, 60);
  return `分析レポート${stem ? `_${stem}` : ""}.${zip ? "zip" : "md"}`;
}

// --------------------------------------------------------------------------- progress

/** One event of a turn's run as the API streams it (events.Event.to_dict). */
export interface TurnEvent {
  kind: string;
  run_id: string;
  seq: number;
  payload: Record<string, unknown>;
}

const RUN_EVENT_LABELS: Record<string, string> = {
  run_requeued: "実行が中断されたため、続きから実行し直します",
  run_continued: "回答を受け付けました",
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function texts(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : [];
}

/** The progress line of one step of the agent (ui/analysis_page.py NODE_LABELS); null: not shown. */
export function progressLine(event: TurnEvent): string | null {
  const payload = event.payload;
  switch (event.kind) {
    case "reason": {
      const rationale = typeof payload.rationale === "string" ? payload.rationale : "";
      return rationale ? `判断: ${rationale}` : "判断";
    }
    case "act": {
      const actions = Array.isArray(payload.actions) ? payload.actions.filter(isRecord) : [];
      const done = actions.flatMap((action) => texts(action.titles));
      const failed = actions
        .map((action) => (isRecord(action.error) && typeof action.error.message === "string" ? action.error.message : null))
        .filter((message): message is string => message !== null);
      if (failed.length > 0) return `分析の実行: うまくいかなかった処理があります（${failed.join("、")}）`;
      return done.length > 0 ? `分析の実行: ${done.join("、")}` : "分析の実行";
    }
    case "out_of_scope":
      return "範囲外の応答";
    case "report":
      return "レポート作成";
    default:
      return RUN_EVENT_LABELS[event.kind] ?? null;
  }
}

/** The events after which a turn's stream ends. */
export const FINAL_KINDS: ReadonlySet<string> = new Set(["result", "failed", "cancelled"]);

export function parseTurnEvent(data: string): TurnEvent | null {
  try {
    const value: unknown = JSON.parse(data);
    if (!isRecord(value) || typeof value.kind !== "string") return null;
    return {
      kind: value.kind,
      run_id: typeof value.run_id === "string" ? value.run_id : "",
      seq: typeof value.seq === "number" ? value.seq : 0,
      payload: isRecord(value.payload) ? value.payload : {},
    };
  } catch {
    return null;
  }
}

export const CANCELLED_ERROR = new ApiError(
  "RUN_CANCELLED",
  "分析は中止されました。",
  "続けるには、もう一度質問してください。",
  0,
);

/** The error a run ended with (its stored error, or a Japanese default). */
export function runError(error: RunError | null | undefined, status: string): ApiError {
  if (status === "cancelled" && !error?.message) return CANCELLED_ERROR;
  return new ApiError(
    error?.code ?? "RUN_FAILED",
    error?.message || "分析が失敗しました。",
    error?.hint || "もう一度お試しください。続く場合はサーバーのログを管理者に送ってください。",
    0,
  );
}

/** How a turn's run ended: its result, or its error. */
export type TurnOutcome = { kind: "result"; result: TurnResult } | { kind: "error"; error: ApiError };

/** What a final event says (null for any other event). */
export function outcomeOf(event: TurnEvent): TurnOutcome | null {
  if (event.kind === "result" && isRecord(event.payload) && typeof event.payload.turn_id === "string") {
    return { kind: "result", result: event.payload as unknown as TurnResult };
  }
  if (event.kind === "failed" || event.kind === "cancelled") {
    const error = isRecord(event.payload.error) ? (event.payload.error as RunError) : null;
    return { kind: "error", error: runError(error, event.kind) };
  }
  return null;
}

// --------------------------------------------------------------------------- URL

export const DATA_PARAM = "data";
export const THREAD_PARAM = "thread";

/** /analysis/?data=…&thread=…: the file and the conversation (a reload opens both again). */
export function analysisHref(dataId: string | null, threadId: string | null): string {
  const params = new URLSearchParams();
  if (dataId) params.set(DATA_PARAM, dataId);
  if (threadId) params.set(THREAD_PARAM, threadId);
  const query = params.toString();
  return query ? `/analysis/?${query}` : "/analysis/";
}

/** A new conversation's id (32 hex digits, as the server makes them; no secure context needed). */
export function newThreadId(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

// --------------------------------------------------------------------------- calls

export async function uploadDataset(file: File, keepTotalRows: boolean, sheet: string): Promise<Dataset> {
  const form = new FormData();
  form.append("file", file, file.name);
  if (keepTotalRows) form.append("keep_total_rows", "true");
  if (sheet.trim()) form.append("sheet", sheet.trim());
  return apiJson<Dataset>("/api/analysis/datasets", { method: "POST", body: form });
}

export function loadDataset(datasetId: string, signal?: AbortSignal): Promise<Dataset> {
  return apiJson<Dataset>(`/api/analysis/datasets/${encodeURIComponent(datasetId)}`, { signal });
}

export function loadThread(threadId: string, signal?: AbortSignal): Promise<Thread> {
  return apiJson<Thread>(`/api/analysis/threads/${encodeURIComponent(threadId)}`, { signal });
}

/** The PNG of a figure as an object URL (fetched with the token; revoke it when done). */
export async function figureObjectUrl(path: string, signal?: AbortSignal): Promise<string> {
  const response = await apiFetch(path, { signal });
  return URL.createObjectURL(await response.blob());
}

export interface AskOptions {
  datasetId: string;
  question: string;
  threadId: string;
  signal?: AbortSignal;
  /** Each event of the turn's run, in order (progress, then the final one). */
  onEvent: (event: TurnEvent) => void;
}

const LOST = new ApiError(
  "STREAM_LOST",
  "サーバーとの接続が切れました。",
  "ページを再読み込みしてください。分析はサーバーで続いているので、会話の続きが表示されます。",
  0,
);

/**
 * Ask one question (POST /api/analysis/turns with stream): the run's events go to onEvent and the
 * promise resolves with how the turn ended. A connection that drops after the run started is
 * resumed at /api/runs/{run_id}/events after the last event received; a refused request (empty
 * question, unknown file, no permission) rejects with the API's ApiError.
 */
export async function askTurn(options: AskOptions): Promise<TurnOutcome> {
  const { datasetId, question, threadId, signal, onEvent } = options;
  const headers = authHeaders({ Accept: "text/event-stream", "Content-Type": "application/json" });
  let response: Response;
  try {
    response = await fetch(apiUrl("/api/analysis/turns"), {
      method: "POST",
      headers,
      body: JSON.stringify({ dataset_id: datasetId, question, thread_id: threadId, stream: true }),
      signal,
      cache: "no-store",
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw networkError();
  }
  if (response.status === 401) onUnauthorizedNotify();
  if (!response.ok) throw await errorFromResponse(response);

  // what the stream told so far (the run, the last event id, how the turn ended)
  const seen: { runId: string | null; lastId: string | null; outcome: TurnOutcome | null } = {
    runId: null,
    lastId: null,
    outcome: null,
  };
  const take = (message: SseMessage) => {
    const event = parseTurnEvent(message.data);
    if (!event) return;
    seen.lastId = message.id ?? seen.lastId;
    if (event.run_id) seen.runId = event.run_id;
    onEvent(event);
    seen.outcome = outcomeOf(event) ?? seen.outcome;
  };

  if (response.body) {
    const parser = new SseParser();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const message of parser.push(decoder.decode(value, { stream: true }))) take(message);
        if (seen.outcome) break;
      }
    } catch {
      if (signal?.aborted) throw new DOMException("aborted", "AbortError");
      // dropped: resumed below when the run is known
    }
    if (seen.outcome) void reader.cancel().catch(() => undefined);
  }
  if (seen.outcome) return seen.outcome;
  if (seen.runId === null) throw LOST;
  return followTurn({ runId: seen.runId, lastEventId: seen.lastId, signal, onEvent });
}

/**
 * Follow a turn's run from its stored events (a reload while it runs, or a dropped stream):
 * /api/runs/{run_id}/events after lastEventId, until its final event.
 */
export async function followTurn(options: {
  runId: string;
  lastEventId?: string | null;
  signal?: AbortSignal;
  onEvent: (event: TurnEvent) => void;
}): Promise<TurnOutcome> {
  const seen: { outcome: TurnOutcome | null } = { outcome: null };
  await streamSse({
    url: `/api/runs/${encodeURIComponent(options.runId)}/events`,
    lastEventId: options.lastEventId ?? null,
    signal: options.signal,
    isFinal: (message) => FINAL_KINDS.has(message.event),
    onMessage: (message) => {
      const event = parseTurnEvent(message.data);
      if (!event) return;
      options.onEvent(event);
      seen.outcome = outcomeOf(event) ?? seen.outcome;
    },
  });
  if (options.signal?.aborted) throw new DOMException("aborted", "AbortError");
  if (!seen.outcome) throw LOST;
  return seen.outcome;
}
