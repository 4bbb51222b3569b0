"use client";

import type { RefObject } from "react";
import ErrorBox from "@/components/ErrorBox";
import type { ApiError } from "@/lib/api";
import { EXAMPLE_QUESTION } from "@/lib/analysis";

/** The question field (Ctrl+Enter sends), 質問する, and 新しい会話を始める. */
export default function QuestionForm({
  draft,
  onDraft,
  onAsk,
  busy,
  error,
  hasDataset,
  hasConversation,
  onNewConversation,
  fieldRef,
}: {
  draft: string;
  onDraft: (text: string) => void;
  onAsk: (question: string) => void;
  busy: boolean;
  error: ApiError | null;
  hasDataset: boolean;
  hasConversation: boolean;
  onNewConversation: () => void;
  fieldRef: RefObject<HTMLTextAreaElement | null>;
}) {
  const submit = () => {
    if (!busy) onAsk(draft);
  };
  return (
    <form
      className="panel analysis-ask"
      aria-labelledby="analysis-ask-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <h2 id="analysis-ask-title">質問する</h2>
      <label htmlFor="analysis-question">知りたいこと（日本語で書けます）</label>
      <p id="analysis-question-help" className="muted">
        例: 「{EXAMPLE_QUESTION}」「月別の金額推移をグラフで見せて」「レポートにまとめて」。Ctrl+Enter でも送れます。
        {hasDataset ? null : " 先にファイルを読み込んでください。"}
      </p>
      <textarea
        ref={fieldRef}
        id="analysis-question"
        value={draft}
        onChange={(event) => onDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit();
          }
        }}
        aria-describedby="analysis-question-help analysis-question-error"
        aria-invalid={error ? true : undefined}
        data-testid="analysis-question"
      />
      <div id="analysis-question-error">
        <ErrorBox error={error} testId="analysis-ask-error" />
      </div>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy} data-testid="analysis-ask">
          質問する
        </button>
        {hasConversation ? (
          <button type="button" onClick={onNewConversation} disabled={busy} data-testid="analysis-new-conversation">
            新しい会話を始める
          </button>
        ) : null}
      </div>
    </form>
  );
}
