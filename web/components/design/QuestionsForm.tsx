"use client";

import { answerKind, questionLabel, type Requirement } from "@/lib/design";

/** One question as a typed field: choices as radio buttons (a list when many), はい/いいえ, a number, or text. */
function Question({
  question,
  index,
  value,
  open,
  problem,
  disabled,
  onChange,
}: {
  question: Requirement;
  index: number;
  value: unknown;
  open: boolean;
  problem: string | null;
  disabled: boolean;
  onChange: (value: unknown) => void;
}) {
  const id = `design-question-${index}`;
  const label = questionLabel(question, index);
  const kind = answerKind(question);
  const note = [question.description, question.hint].filter(Boolean).join(" ");
  const describedBy = [note ? `${id}-note` : null, problem ? `${id}-problem` : null].filter(Boolean).join(" ") || undefined;
  const state = open ? (
    <span className="design-badge design-badge-open">未回答</span>
  ) : (
    <span className="design-badge design-badge-done">Plan に反映済み</span>
  );
  const required = question.required && kind !== "at_run" ? <span className="required">（必須）</span> : null;
  const noteText = note ? (
    <p className="muted" id={`${id}-note`}>
      {note}
    </p>
  ) : null;
  const problemText = problem ? (
    <p className="error-message" id={`${id}-problem`} role="alert" data-testid="design-answer-problem">
      {problem}
    </p>
  ) : null;

  if (kind === "at_run") {
    return (
      <div className="design-question" data-testid="design-question">
        <p className="design-question-label">{label}</p>
        <p className="muted">実行するときにファイルを選んでもらいます。設計では答える必要はありません。</p>
        {noteText}
      </div>
    );
  }
  if (kind === "choice" || kind === "yesno") {
    const options: { value: unknown; text: string }[] =
      kind === "yesno"
        ? [
            { value: true, text: "はい" },
            { value: false, text: "いいえ" },
          ]
        : (question.options ?? []).map((option) => ({ value: option, text: option }));
    if (kind === "choice" && options.length > 6) {
      return (
        <div className="design-question input-field" data-testid="design-question">
          <label htmlFor={id}>
            {label}
            {required} {state}
          </label>
          <select
            id={id}
            value={typeof value === "string" ? value : ""}
            disabled={disabled}
            aria-invalid={problem ? true : undefined}
            aria-describedby={describedBy}
            onChange={(event) => onChange(event.target.value)}
          >
            <option value="">選んでください</option>
            {options.map((option) => (
              <option key={option.text} value={String(option.value)}>
                {option.text}
              </option>
            ))}
          </select>
          {noteText}
          {problemText}
        </div>
      );
    }
    return (
      <fieldset className="design-question design-choices" data-testid="design-question" aria-describedby={describedBy}>
        <legend>
          {label}
          {required} {state}
        </legend>
        {options.map((option, optionIndex) => (
          <label key={option.text} className="design-choice">
            <input
              type="radio"
              name={id}
              id={`${id}-${optionIndex}`}
              checked={value === option.value}
              disabled={disabled}
              onChange={() => onChange(option.value)}
            />
            {option.text}
          </label>
        ))}
        {noteText}
        {problemText}
      </fieldset>
    );
  }
  return (
    <div className="design-question input-field" data-testid="design-question">
      <label htmlFor={id}>
        {label}
        {required} {state}
      </label>
      <input
        id={id}
        type={kind === "number" ? "number" : "text"}
        inputMode={kind === "number" ? "decimal" : undefined}
        value={value === null || value === undefined ? "" : String(value)}
        disabled={disabled}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy}
        onChange={(event) => {
          const text = event.target.value;
          onChange(kind === "number" ? (text === "" ? null : Number(text)) : text);
        }}
      />
      {noteText}
      {problemText}
    </div>
  );
}

/** 決める必要がある項目: every question asked for this instruction, answered or not, and 回答して作り直す. */
export default function QuestionsForm({
  questions,
  values,
  openIds,
  problems,
  busy,
  onChange,
  onSubmit,
}: {
  questions: Requirement[];
  values: Record<string, unknown>;
  openIds: Set<string>;
  problems: Record<string, string>;
  busy: boolean;
  onChange: (id: string, value: unknown) => void;
  onSubmit: () => void;
}) {
  const askable = questions.filter((question) => answerKind(question) !== "at_run");
  const open = askable.filter((question) => openIds.has(question.id)).length;
  return (
    <form
      className="panel design-questions"
      aria-labelledby="design-questions-title"
      data-testid="design-questions"
      onSubmit={(event) => {
        event.preventDefault();
        onSubmit();
      }}
    >
      <h2 id="design-questions-title">決める必要がある項目</h2>
      <p className="muted">
        {open > 0
          ? `あと ${open} 項目に答えると Plan が完成します。答えたら「回答して Plan を作り直す」を押してください。`
          : "すべての項目に答えました。答えを変えたときは「回答して Plan を作り直す」を押してください。"}
      </p>
      {questions.map((question, index) => (
        <Question
          key={question.id}
          question={question}
          index={index}
          value={values[question.id]}
          open={openIds.has(question.id)}
          problem={problems[question.id] ?? null}
          disabled={busy}
          onChange={(value) => onChange(question.id, value)}
        />
      ))}
      {askable.length > 0 ? (
        <div className="actions">
          <button type="submit" className="primary" disabled={busy} data-testid="design-answer">
            回答して Plan を作り直す
          </button>
        </div>
      ) : null}
    </form>
  );
}
