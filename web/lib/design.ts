// The 設計 page's talk with the API and its pure helpers: a draft (GET/PUT /api/plans/drafts/{id}),
// a generation (POST /api/plans/generate), the check (validate + dry-run) and registration.

import { ApiError, apiJson } from "@/lib/api";
import type { Diagram } from "@/lib/diagram";

/** One question the generator asks (plans.design.models.Requirement.to_dict). */
export interface Requirement {
  id: string;
  type: "text" | "select" | "boolean" | "number" | "file" | "table" | "enum" | string;
  label: string | null;
  description: string | null;
  options: string[];
  required: boolean;
  accept: string | null;
  hint: string | null;
  validation: Record<string, unknown> | null;
  target: string | null;
}

/** One problem of a validation or a dry run (plans.issues / dry_run_report). */
export interface Issue {
  code: string;
  severity?: "error" | "warning" | string;
  message: string;
  hint?: string | null;
  node_id?: string | null;
}

export interface ValidationReport {
  ok: boolean;
  error_count?: number;
  warning_count?: number;
  issues: Issue[];
}

export interface DryRunReport {
  ok: boolean;
  problems: Issue[];
  warnings: Issue[];
  nodes: { node_id: string; status: string; problems: Issue[] }[];
}

export interface CoverageItem {
  requirement: string;
  text: string;
  status: "covered" | "waiting" | "missing" | string;
  node: string | null;
  problem: string | null;
}

/** What the page keeps of a generation (services.jsonforms.generated_plan_json). */
export interface Generation {
  ok: boolean;
  verdict: "ok" | "needs_answers" | "cannot_build" | "incomplete" | "invalid" | string;
  verdict_message: string;
  checklist: string[];
  coverage: { ok: boolean; items: CoverageItem[]; unrelated: string[] } | null;
  gaps: { kind: string; message: string; source?: string }[];
  plan_id: string | null;
  offline?: boolean;
  warnings: string[];
  requirements: Requirement[];
  validation: ValidationReport | null;
  dry_run: DryRunReport | null;
  seconds?: number;
  yaml?: string;
  /** The Plan's steps and their connections for the Plan diagram (null without a Plan). */
  diagram?: Diagram | null;
}

/** One step of the Plan in words (services.plan_drafts.plan_outline). */
export interface Step {
  id: string;
  title: string | null;
  kind: "block" | "loop" | "subflow" | string;
  block: string | null;
  does: string;
  from: string[];
  vars: string[];
  conditional: boolean;
  steps: Step[];
}

export interface Outline {
  title: string | null;
  description: string | null;
  steps: Step[];
  outputs: { name: string; title: string | null }[];
}

export interface Registered {
  plan_id: string;
  version: string;
  file_id: string;
  title: string;
  warnings: string[];
}

/** A draft as GET/PUT /api/plans/drafts/{id} answer it. */
export interface Draft {
  draft_id: string;
  owner: string;
  instruction: string;
  answers: Record<string, unknown>;
  questions: Requirement[];
  generated_instruction: string;
  title: string;
  yaml: string;
  result: Generation | null;
  registered: Registered | null;
  created_at: string;
  updated_at: string;
  outline: Outline | null;
}

export interface DraftSummary {
  draft_id: string;
  title: string;
  instruction: string;
  verdict: string | null;
  registered: boolean;
  updated_at: string;
}

/** What a save changes (a field left out keeps its value). */
export interface DraftChanges {
  instruction?: string;
  answers?: Record<string, unknown>;
  questions?: Requirement[];
  generated_instruction?: string;
  title?: string;
  yaml?: string;
  result?: Generation;
  clear_result?: boolean;
  registered?: Registered;
  clear_registered?: boolean;
}

/** A new draft's id: "d-" and 20 random hex digits (the API takes 8–64 of A–Z a–z 0–9 _ -). */
export function newDraftId(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const bytes = random(new Uint8Array(10));
  return `d-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The Plan id a draft's Plan gets: one draft, one Plan (registering again adds a version). */
export function draftPlanId(draftId: string): string {
  return `design_${draftId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

export function draftHref(draftId: string): string {
  return `/design/?draft=${encodeURIComponent(draftId)}`;
}

const draftPath = (draftId: string) => `/api/plans/drafts/${encodeURIComponent(draftId)}`;

export function loadDraft(draftId: string): Promise<Draft> {
  return apiJson<Draft>(draftPath(draftId));
}

export function saveDraft(draftId: string, changes: DraftChanges): Promise<Draft> {
  return apiJson<Draft>(draftPath(draftId), { method: "PUT", body: JSON.stringify(changes) });
}

export async function listDrafts(): Promise<DraftSummary[]> {
  return (await apiJson<{ drafts: DraftSummary[] }>("/api/plans/drafts")).drafts;
}

/**
 * Generate the Plan of `instruction` (with the answers given so far). `samples`: files like
 * the ones the Plan will get ({name, base64}); a question about a column then offers their
 * columns as choices.
 */
export function generate(
  instruction: string,
  planId: string,
  answers: Record<string, unknown>,
  samples: { name: string; base64: string }[] = [],
  signal?: AbortSignal,
): Promise<Generation> {
  return apiJson<Generation>("/api/plans/generate", {
    method: "POST",
    body: JSON.stringify({ instruction, plan_id: planId, answers, samples }),
    signal,
  });
}

/** 検証 then, when it passes, the dry run of a Plan's YAML. */
export async function checkPlan(yaml: string): Promise<{ validation: ValidationReport; dryRun: DryRunReport | null }> {
  const validation = await apiJson<ValidationReport>("/api/plans/validate", {
    method: "POST",
    body: JSON.stringify({ yaml }),
  });
  if (!validation.ok) return { validation, dryRun: null };
  const dryRun = await apiJson<DryRunReport>("/api/plans/dry-run", { method: "POST", body: JSON.stringify({ yaml }) });
  return { validation, dryRun };
}

export function registerPlan(
  yaml: string,
  acceptMajor: boolean,
): Promise<{ plan_id: string; version: string; file_id: string; warnings: string[] }> {
  return apiJson("/api/plans/register", { method: "POST", body: JSON.stringify({ yaml, accept_major: acceptMajor }) });
}

// --- the questions -----------------------------------------------------------------------

/** How a question is answered on the page. */
export type AnswerKind = "choice" | "yesno" | "number" | "text" | "at_run";

/** File and table questions are not answered while designing: the Plan asks for the file when it runs. */
export function answerKind(requirement: Requirement): AnswerKind {
  if (requirement.type === "file" || requirement.type === "table") return "at_run";
  if ((requirement.type === "select" || requirement.type === "enum") && (requirement.options ?? []).length > 0) return "choice";
  if (requirement.type === "boolean") return "yesno";
  if (requirement.type === "number") return "number";
  return "text";
}

/** The label a person reads (never the question's id). */
export function questionLabel(requirement: Requirement, index: number): string {
  return requirement.label?.trim() || `質問 ${index + 1}`;
}

/** The questions asked so far: the earlier ones, updated by (and followed by) the ones just asked. */
export function mergeQuestions(earlier: Requirement[], asked: Requirement[]): Requirement[] {
  const byId = new Map(asked.map((item) => [item.id, item]));
  const merged = earlier.map((item) => byId.get(item.id) ?? item);
  for (const item of asked) if (!earlier.some((known) => known.id === item.id)) merged.push(item);
  return merged;
}

function isBlank(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === "string" && value.trim() === "");
}

/** The answers to send: only for questions asked while designing, blanks left out. */
export function answersToSend(questions: Requirement[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const question of questions) {
    if (answerKind(question) === "at_run") continue;
    const value = values[question.id];
    if (!isBlank(value)) out[question.id] = typeof value === "string" ? value.trim() : value;
  }
  return out;
}

/** The questions a generation still leaves open (ids), from its requirements. */
export function openQuestionIds(result: Generation | null): Set<string> {
  return new Set((result?.requirements ?? []).filter((item) => answerKind(item) !== "at_run").map((item) => item.id));
}

// --- the result in words -------------------------------------------------------------------

export const COVERAGE_LABELS: Record<string, string> = {
  covered: "できています",
  waiting: "回答待ち",
  missing: "できていません",
};

export function coverageLabel(status: string): string {
  return COVERAGE_LABELS[status] ?? "確認が必要です";
}

/** Every step's id → its title (nested steps too); a step without a title is 「ステップ n」. */
export function stepTitles(steps: Step[]): Record<string, string> {
  const titles: Record<string, string> = {};
  const walk = (items: Step[], prefix: string) => {
    items.forEach((step, index) => {
      const number = `${prefix}${index + 1}`;
      if (!(step.id in titles)) titles[step.id] = step.title?.trim() || `ステップ ${number}`;
      walk(step.steps, `${number}-`);
    });
  };
  walk(steps, "");
  return titles;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Every step's id → its block (nested steps too). */
export function stepBlocks(steps: Step[]): Record<string, string> {
  const blocks: Record<string, string> = {};
  const walk = (items: Step[]) => {
    for (const step of items) {
      if (step.block && !(step.id in blocks)) blocks[step.id] = step.block;
      walk(step.steps);
    }
  };
  walk(steps);
  return blocks;
}

/**
 * A message with the steps it names by id named by their titles instead (「ノード 'read_1'」 →
 * 「ステップ「経費の読込」」); `own` is the step the message is about, whose block id is named by its title too.
 */
export function withStepTitles(
  text: string,
  titles: Record<string, string>,
  own?: { title: string; block: string | null },
): string {
  let out = text;
  if (own?.block) {
    const block = new RegExp(` ?${escapeRegExp(own.block)}(?:@[0-9A-Za-z.^~<>=*-]+)? ?`, "g");
    out = out.replace(block, `「${own.title}」`);
  }
  for (const [id, title] of Object.entries(titles)) {
    const quoted = new RegExp(` ?(?:'|"|「)${escapeRegExp(id)}(?:'|"|」) ?`, "g");
    out = out.replace(quoted, `「${title}」`);
    if (/[_0-9]/.test(id)) out = out.replace(new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(id)}(?![A-Za-z0-9_])`, "g"), `「${title}」`);
  }
  return out.replace(/ノード\s*「/g, "ステップ「");
}

/** One problem as the page shows it: a sentence, its fix, the step it is about, and (hidden) its code. */
export interface CheckItem {
  severity: "error" | "warning";
  message: string;
  hint: string | null;
  step: string | null;
  code: string;
}

/** Every problem of a validation and a dry run, errors first, each once. */
export function checkItems(
  validation: ValidationReport | null,
  dryRun: DryRunReport | null,
  titles: Record<string, string>,
  blocks: Record<string, string> = {},
): CheckItem[] {
  const items: CheckItem[] = [];
  const seen = new Set<string>();
  const add = (issue: Issue, severity: "error" | "warning", nodeId: string | null) => {
    const key = `${issue.code}|${issue.message}|${nodeId ?? ""}`;
    if (seen.has(key)) return;
    seen.add(key);
    const own = nodeId && titles[nodeId] ? { title: titles[nodeId], block: blocks[nodeId] ?? null } : undefined;
    items.push({
      severity,
      message: withStepTitles(issue.message, titles, own),
      hint: issue.hint ? withStepTitles(issue.hint, titles, own) : null,
      step: nodeId ? (titles[nodeId] ?? null) : null,
      code: issue.code,
    });
  };
  for (const issue of validation?.issues ?? []) {
    add(issue, issue.severity === "warning" ? "warning" : "error", issue.node_id ?? null);
  }
  for (const problem of dryRun?.problems ?? []) add(problem, "error", null);
  for (const node of dryRun?.nodes ?? []) {
    const nodeId = node.node_id.split("/").pop()?.split("[")[0] ?? node.node_id;
    for (const problem of node.problems) add(problem, "error", nodeId);
  }
  for (const warning of dryRun?.warnings ?? []) add(warning, "warning", null);
  return items.sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1));
}

/** Why 登録 is not offered yet, in words (null: it may be registered). */
export function registerBlocker(result: Generation | null, yaml: string): string | null {
  if (!result) return "まず「Plan を作る」で Plan を作ってください。";
  switch (result.verdict) {
    case "ok":
      return yaml.trim() ? null : "まず「Plan を作る」で Plan を作ってください。";
    case "needs_answers":
      return "「決める必要がある項目」にすべて答えると登録できます。";
    case "cannot_build":
      return "指示の一部を組み立てられないため、登録できる Plan がありません。";
    case "incomplete":
      return "指示の項目を満たしていないため登録できません。指示を書き直して作り直してください。";
    default:
      return "Plan にエラーがあるため登録できません。指示を書き直して作り直してください。";
  }
}

/** The problem of each answer the API refused (DESIGN_ANSWER_INVALID: details.errors), by question id. */
export function answerErrors(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || error.code !== "DESIGN_ANSWER_INVALID") return {};
  const errors = error.details.errors;
  if (typeof errors !== "object" || errors === null || Array.isArray(errors)) return {};
  return Object.fromEntries(Object.entries(errors).map(([key, value]) => [key, String(value)]));
}
