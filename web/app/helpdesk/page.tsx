"use client";

import Link from "next/link";
import { useRouter, useSearchParams } from "next/navigation";
import { Suspense, useCallback, useEffect, useRef, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import Markdown from "@/components/research/Markdown";
import { formatDateTime } from "@/components/pages/format";
import { ApiError, apiJson, toApiError } from "@/lib/api";
import { postIndexing, progressLabel } from "@/lib/indexing";

interface Answer {
  run_id?: string;
  question: string;
  answer: string;
  sources: string[];
  unanswered: string[];
  offline: boolean;
  /** How it was searched, when not as configured (keyword search although embeddings are set up). */
  warnings?: string[];
}

const EMPTY_KB = "EMPTY_KNOWLEDGE_BASE";
const KB_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function emptyKbError(kb: string): ApiError {
  return new ApiError(
    EMPTY_KB,
    `ナレッジベース「${kb}」にはまだ文書が登録されていません。`,
    "下の「サンプルを登録」でお試し用のサンプル（XYZ システムのマニュアルと FAQ）を登録するか、管理者にマニュアルの登録を依頼してください。",
    400,
  );
}

/** A question asked before (GET /api/helpdesk/answers). */
interface PastAnswer {
  run_id: string;
  question: string;
  status: string;
  asked_at: string;
}

function answerHref(runId: string): string {
  return `/helpdesk/?answer=${encodeURIComponent(runId)}`;
}

/** 最近の質問: the person's earlier questions, each opening its answer again. */
function PastAnswers({ refresh, current }: { refresh: number; current: string | null }) {
  const [items, setItems] = useState<PastAnswer[] | null>(null);

  useEffect(() => {
    apiJson<{ answers: PastAnswer[] }>("/api/helpdesk/answers")
      .then((body) => setItems(body.answers.filter((item) => item.status === "success")))
      .catch(() => setItems([]));
  }, [refresh]);

  if (!items || items.length === 0) return null;
  return (
    <section className="panel" aria-labelledby="past-answers-title">
      <h2 id="past-answers-title">最近の質問</h2>
      <ul className="item-list" data-testid="past-answers">
        {items.map((item) => (
          <li key={item.run_id}>
            <Link href={answerHref(item.run_id)} aria-current={current === item.run_id ? "true" : undefined}>
              {item.question}
            </Link>
            <span className="item-meta">{formatDateTime(item.asked_at)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

export default function HelpDeskPage() {
  return (
    <Suspense fallback={<Spinner label="読み込んでいます…" />}>
      <HelpDeskView />
    </Suspense>
  );
}

function HelpDeskView() {
  const router = useRouter();
  const shownAnswer = useSearchParams().get("answer");
  const [refresh, setRefresh] = useState(0);
  const [question, setQuestion] = useState("");
  const [kb, setKb] = useState("helpdesk");
  const [asking, setAsking] = useState(false);
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [indexing, setIndexing] = useState(false);
  const [indexProgress, setIndexProgress] = useState("");
  const [indexed, setIndexed] = useState("");
  const abortRef = useRef<AbortController | null>(null);

  const kbValid = KB_NAME.test(kb);

  const reopen = useCallback(async (runId: string) => {
    try {
      const run = await apiJson<{ status: string; result: Answer | null }>(`/api/runs/${encodeURIComponent(runId)}`);
      if (run.result) {
        setAnswer(run.result);
        setQuestion((typed) => typed || run.result?.question || "");
      }
    } catch (cause) {
      setError(toApiError(cause));
    }
  }, []);

  useEffect(() => {
    if (shownAnswer && answer?.run_id !== shownAnswer) void reopen(shownAnswer);
  }, [shownAnswer, answer?.run_id, reopen]);

  const ask = async (event: React.FormEvent) => {
    event.preventDefault();
    if (!question.trim() || !kbValid || asking) return;
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    setAsking(true);
    setAnswer(null);
    setError(null);
    setIndexed("");
    try {
      const result = await apiJson<Answer>("/api/helpdesk/ask", {
        method: "POST",
        body: JSON.stringify({ question: question.trim(), kb }),
        signal: controller.signal,
      });
      setAnswer(result);
      setRefresh((count) => count + 1);
      if (result.run_id) router.replace(answerHref(result.run_id)); // a reload shows it again
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === "AbortError") return;
      const apiError = toApiError(cause);
      setError(apiError.code === EMPTY_KB ? emptyKbError(kb) : apiError);
    } finally {
      if (abortRef.current === controller) {
        abortRef.current = null;
        setAsking(false);
      }
    }
  };

  const indexSample = async () => {
    setIndexProgress("");
    setIndexing(true);
    try {
      await postIndexing(`/api/helpdesk/kb/${encodeURIComponent(kb)}/sample`, (progress) =>
        setIndexProgress(progressLabel(progress)),
      );
      setError(null);
      setIndexed(`ナレッジベース「${kb}」にサンプルを登録しました。もう一度「質問する」を押してください。`);
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setIndexing(false);
    }
  };

  return (
    <>
      <h1>ヘルプデスク</h1>
      <p className="muted">
        社内システムの使い方などを質問すると、登録されたマニュアルと FAQ から出典付きで回答します。
      </p>
      <form className="panel" onSubmit={(event) => void ask(event)}>
        <label htmlFor="helpdesk-question">質問</label>
        <textarea
          id="helpdesk-question"
          value={question}
          onChange={(event) => setQuestion(event.target.value)}
          placeholder="例: パスワードを忘れたときはどうすればよいですか？"
          maxLength={4000}
          data-testid="helpdesk-question"
        />
        <label htmlFor="helpdesk-kb">ナレッジベース</label>
        <input
          id="helpdesk-kb"
          type="text"
          value={kb}
          onChange={(event) => setKb(event.target.value)}
          aria-invalid={!kbValid}
          aria-describedby="helpdesk-kb-help"
          className="narrow"
        />
        <p id="helpdesk-kb-help" className={kbValid ? "muted" : "error-message"}>
          {kbValid
            ? "通常は helpdesk のままで構いません。"
            : "ナレッジベース名は半角の英数字と _ - だけで、64 文字までにしてください。"}
        </p>
        <div className="actions">
          <button
            type="submit"
            className="primary"
            disabled={asking || !question.trim() || !kbValid}
            data-testid="helpdesk-ask"
          >
            質問する
          </button>
          {asking ? (
            <button type="button" onClick={() => abortRef.current?.abort()}>
              やめる
            </button>
          ) : null}
        </div>
      </form>
      {asking ? (
        <p>
          <Spinner label="回答を作成しています…（質問を分けて検索するため、1 分ほどかかることがあります）" />
        </p>
      ) : null}
      <ErrorBox error={error} />
      {error?.code === EMPTY_KB ? (
        <div className="actions">
          <button type="button" onClick={() => void indexSample()} disabled={indexing} data-testid="helpdesk-sample">
            サンプルを登録
          </button>
          {indexing ? <Spinner label={indexProgress || "サンプルを登録しています…"} /> : null}
        </div>
      ) : null}
      {indexed ? (
        <p className="notice" role="status">
          {indexed}
        </p>
      ) : null}
      {answer ? (
        <section className="panel" aria-labelledby="answer-title" data-testid="helpdesk-answer">
          <h2 id="answer-title">回答</h2>
          {answer.offline ? (
            <p className="muted">言語モデルを使わない簡易モードの回答です。</p>
          ) : null}
          {(answer.warnings ?? []).map((warning, index) => (
            <p key={index} className="notice" role="note" data-testid="helpdesk-warning">
              {warning}
            </p>
          ))}
          {/* the answer ends with its own 見つからなかった点 and 出典 sections (the core adds
              them, as on every surface): shown once, as written */}
          <Markdown text={answer.answer} sourceCount={answer.sources.length} />
        </section>
      ) : null}
      <PastAnswers refresh={refresh} current={shownAnswer} />
    </>
  );
}
