"use client";

import { useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import PlainText from "@/components/pages/PlainText";
import { toApiError, type ApiError } from "@/lib/api";

/** One field of a paused step's form (blocks/interactive_input.py `field_of`). */
export interface InputField {
  id: string;
  type: string;
  label?: string;
  description?: string;
  required?: boolean;
  options?: unknown[];
  accept?: string;
  default?: unknown;
}

/** What a paused step asks (`waiting[].request`): its fields, and after a wrong answer what is missing or wrong. */
export interface InputRequest {
  mode?: string;
  message?: string | null;
  fields: InputField[];
  missing?: string[];
  errors?: Record<string, string>;
}

/** A file as the API takes it: {"name", "base64"}. */
export interface FileAnswer {
  name: string;
  base64: string;
}

/** The label a person reads: the field's label, else its place in the form (never its id). */
export function fieldLabel(field: InputField, index: number): string {
  return field.label?.trim() || `項目 ${index + 1}`;
}

/** The problem to show next to a field: the step's own message, or 「入力してください」 when it was missing. */
export function fieldProblem(request: InputRequest, field: InputField): string | null {
  const error = request.errors?.[field.id];
  if (error) return error;
  return request.missing?.includes(field.id) ? "入力してください（必須）" : null;
}

/** A chosen file as the API takes it ({"name", "base64"}). */
export async function readFile(file: File): Promise<FileAnswer> {
  const buffer = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let start = 0; start < buffer.length; start += 0x8000) {
    binary += String.fromCharCode(...buffer.subarray(start, start + 0x8000));
  }
  return { name: file.name, base64: btoa(binary) };
}

function initial(field: InputField): unknown {
  if (field.default !== undefined) return field.default;
  if (field.type === "boolean") return false;
  if (field.type === "select") return field.options?.[0] ?? "";
  if (field.type === "files" || field.type === "folder") return [];
  return field.type === "number" || field.type === "file" ? null : "";
}

function Field({
  field,
  index,
  formId,
  value,
  problem,
  onChange,
}: {
  field: InputField;
  index: number;
  formId: string;
  value: unknown;
  problem: string | null;
  onChange: (value: unknown) => void;
}) {
  const id = `${formId}-${index}`;
  const label = fieldLabel(field, index);
  const describedBy = problem ? `${id}-problem` : field.description ? `${id}-description` : undefined;
  const common = {
    id,
    "aria-invalid": problem ? true : undefined,
    "aria-describedby": describedBy,
    "data-testid": "input-field",
  } as const;
  let control: React.ReactNode;
  switch (field.type) {
    case "file":
    case "files":
    case "folder":
      control = (
        <input
          {...common}
          type="file"
          accept={field.accept}
          multiple={field.type !== "file"}
          onChange={(event) => {
            const files = Array.from(event.target.files ?? []);
            onChange(
              Promise.all(files.map(readFile)).then((read) => (field.type === "file" ? (read[0] ?? null) : read)),
            );
          }}
        />
      );
      break;
    case "boolean":
      control = (
        <input {...common} type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} />
      );
      break;
    case "number":
      control = (
        <input
          {...common}
          type="number"
          inputMode="decimal"
          value={typeof value === "number" ? value : ""}
          onChange={(event) => onChange(event.target.value === "" ? null : Number(event.target.value))}
        />
      );
      break;
    case "select":
      control = (
        <select {...common} value={String(value ?? "")} onChange={(event) => onChange(event.target.value)}>
          {(field.options ?? []).map((option) => (
            <option key={String(option)} value={String(option)}>
              {String(option)}
            </option>
          ))}
        </select>
      );
      break;
    case "chat":
      control = <textarea {...common} value={String(value ?? "")} onChange={(event) => onChange(event.target.value)} />;
      break;
    case "secret":
      control = (
        <input
          {...common}
          type="password"
          autoComplete="off"
          value={String(value ?? "")}
          onChange={(event) => onChange(event.target.value)}
        />
      );
      break;
    default:
      control = <input {...common} type="text" value={String(value ?? "")} onChange={(event) => onChange(event.target.value)} />;
  }
  return (
    <div className={`input-field${field.type === "boolean" ? " input-check" : ""}`}>
      <label htmlFor={id}>
        {label}
        {field.required !== false && field.type !== "boolean" ? <span className="required">（必須）</span> : null}
      </label>
      {control}
      {field.description ? (
        <p className="muted" id={`${id}-description`}>
          {field.description}
        </p>
      ) : null}
      {problem ? (
        <p className="error-message" id={`${id}-problem`} role="alert" data-testid="input-problem">
          {problem}
        </p>
      ) : null}
    </div>
  );
}

/** A paused step's form: its message, each field by its label with its problem next to it, and 送信. */
export default function InputForm({
  formId,
  title,
  request,
  onSubmit,
}: {
  formId: string;
  title: string;
  request: InputRequest;
  onSubmit: (values: Record<string, unknown>) => Promise<void>;
}) {
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(request.fields.map((field) => [field.id, initial(field)])),
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const submit = async (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // A file is read when it is chosen; 送信 pressed at once waits for the reading.
      const entries = await Promise.all(
        Object.entries(values).map(async ([id, value]) => [id, value instanceof Promise ? await value : value] as const),
      );
      await onSubmit(Object.fromEntries(entries));
    } catch (cause) {
      setError(toApiError(cause));
      setBusy(false);
    }
  };

  return (
    <form className="panel input-form" onSubmit={(event) => void submit(event)} data-testid="input-form">
      <h3>{title}</h3>
      {request.message ? <PlainText text={request.message} className="output-text" /> : null}
      {request.fields.map((field, index) => (
        <Field
          key={field.id}
          field={field}
          index={index}
          formId={formId}
          value={values[field.id]}
          problem={fieldProblem(request, field)}
          onChange={(value) => setValues((current) => ({ ...current, [field.id]: value }))}
        />
      ))}
      <ErrorBox error={error} testId="input-error" />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy} data-testid="input-submit">
          送信
        </button>
      </div>
    </form>
  );
}
