// Pure helpers of the sessions, HelpDesk and Plans pages: what a user reads, from the API's JSON.

/** A research note's or answer's source as the API sends it (search.models.Source). */
export interface SourceRef {
  document: string;
  page?: number | null;
  heading?: string | null;
  row?: number | null;
}

/** 「経理規程.pdf p.3 行2 「2.1 支払」」: the document, then where in it. */
export function sourceLabel(source: SourceRef): string {
  const parts = [source.document];
  if (source.page != null) parts.push(`p.${source.page}`);
  if (source.row != null) parts.push(`行${source.row}`);
  if (source.heading) parts.push(`「${source.heading}」`);
  return parts.join(" ");
}

function dateTimeFormat(timeZone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat("ja-JP", {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone,
  });
}

let shownIn = dateTimeFormat("Asia/Tokyo");

/** Show times in the server's one time zone (GET /api/health `time_zone`); an unknown name keeps the last. */
export function setTimeZone(timeZone: string): void {
  try {
    shownIn = dateTimeFormat(timeZone);
  } catch {
    // RangeError: a zone this browser does not know; Asia/Tokyo (or the last one) stays
  }
}

/** An ISO time in the server's time zone (「2026/01/05 09:30」); "—" when missing, the text itself when unreadable. */
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return "—";
  const moment = new Date(value);
  if (Number.isNaN(moment.getTime())) return value;
  return shownIn.format(moment);
}

export const RUN_STATUS_LABELS: Record<string, string> = {
  queued: "順番待ち",
  running: "実行中",
  paused: "入力待ち",
  success: "成功",
  failed: "失敗",
  cancelled: "中止",
};

/** A Plan run's status in Japanese (an unknown status is shown as sent). */
export function runStatusLabel(status: string): string {
  return RUN_STATUS_LABELS[status] ?? status;
}

export function confirmDeleteMessage(notes: number): string {
  return `このセッションのノート ${notes} 件を削除します。よろしいですか？`;
}

export function deletedMessage(sessionId: string, deleted: number): string {
  return `セッション「${sessionId}」のノート ${deleted} 件を削除しました。`;
}

/** Bytes in the API's convention: {"bytes": n, "base64": "…"}, a file with "name" too. */
export interface BytesValue {
  bytes: number;
  base64: string;
  name?: string;
}

export type OutputView =
  | { kind: "empty" }
  | { kind: "text"; text: string }
  | { kind: "file"; name: string; bytes: number }
  | { kind: "table"; columns: string[]; rows: string[][] }
  | { kind: "json"; text: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isBytesValue(value: unknown): value is BytesValue {
  return isRecord(value) && typeof value.base64 === "string" && typeof value.bytes === "number";
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/** How one output value is shown: text, a table (a list of records), a download, or JSON. */
export function outputView(value: unknown, fallbackName: string): OutputView {
  if (value === null || value === undefined) return { kind: "empty" };
  if (typeof value === "string") return { kind: "text", text: value };
  if (typeof value === "number" || typeof value === "boolean") return { kind: "text", text: String(value) };
  if (isBytesValue(value)) {
    return { kind: "file", name: typeof value.name === "string" && value.name ? value.name : fallbackName, bytes: value.bytes };
  }
  if (Array.isArray(value) && value.length > 0 && value.every(isRecord)) {
    const columns: string[] = [];
    for (const row of value) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
    return { kind: "table", columns, rows: value.map((row) => columns.map((column) => cellText(row[column]))) };
  }
  return { kind: "json", text: JSON.stringify(value, null, 2) };
}

/** 「1.2 KB」: a file size for a download link. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A plan id in a URL path: each segment encoded, the "/" between them kept (ids contain "/"). */
export function planPath(planId: string): string {
  return planId.split("/").map(encodeURIComponent).join("/");
}

/** What people call the node at `path` (`loop[0]/node` inside a loop body): its title, else the path. */
export function nodeTitle(titles: Record<string, string> | undefined, path: string): string {
  const nodeId = (path.split("/").pop() ?? path).split("[")[0] ?? path;
  return titles?.[nodeId] ?? path;
}
