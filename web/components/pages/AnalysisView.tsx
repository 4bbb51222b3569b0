"use client";

import { useRouter, useSearchParams } from "next/navigation";
import { useCallback, useEffect, useRef, useState } from "react";
import "@/components/pages/pages.css";
import "@/components/analysis/analysis.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import DatasetSummaryPanel from "@/components/analysis/DatasetSummaryPanel";
import QuestionForm from "@/components/analysis/QuestionForm";
import TurnView, { type TurnItem } from "@/components/analysis/TurnView";
import UploadForm from "@/components/analysis/UploadForm";
import { ApiError, toApiError } from "@/lib/api";
import {
  analysisHref,
  askTurn,
  DATA_PARAM,
  type Dataset,
  followTurn,
  loadDataset,
  loadThread,
  NO_DATASET,
  newThreadId,
  progressLine,
  runError,
  THREAD_PARAM,
  type ThreadTurn,
  type TurnEvent,
  type TurnOutcome,
} from "@/lib/analysis";

const EMPTY_QUESTION = new ApiError(
  "QUESTION_EMPTY",
  "質問が空です。",
  "知りたいことを文章で入力してください。例: 「部署別の金額合計を出して」",
  0,
);
const NO_FILE_YET = new ApiError("NO_DATASET", NO_DATASET, "上の「ファイルの読み込み」でファイルを選んで「読み込む」を押してください。", 0);
/** A file in the address that cannot be shown: said for a person (the server's hint names the API's fields). */
function fileGone(error: ApiError, inConversation: boolean): ApiError {
  if (error.status !== 404 && error.code !== "SAVED_DATASET_MISSING") return error;
  return inConversation
    ? new ApiError(
        error.code,
        "この会話で使っていたファイルが見つからないため、読み込み直せませんでした（保存期間を過ぎて削除された可能性があります）。",
        "会話の内容は表示しています。続けて質問するには、同じファイルをもう一度読み込んでください。",
        error.status,
      )
    : new ApiError(
        error.code,
        "前に読み込んだファイルが見つかりません（保存期間を過ぎて削除されたか、アドレスが正しくありません）。",
        "分析するファイルをもう一度読み込んでください。",
        error.status,
      );
}
const THREAD_GONE =
  "前の会話が見つかりませんでした（保存期間を過ぎて削除されたか、アドレスが正しくありません）。質問すると新しい会話を始めます。";

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === "AbortError";
}

/** A stored turn as the page shows it (a queued or running one is followed again). */
function itemOf(turn: ThreadTurn): TurnItem {
  const base = { key: turn.run_id, question: turn.question, runId: turn.run_id, progress: [] };
  if (turn.status === "queued" || turn.status === "running") {
    return { ...base, status: "running", result: null, error: null };
  }
  if (turn.status === "success" && turn.result) return { ...base, status: "success", result: turn.result, error: null };
  return { ...base, status: "failed", result: null, error: runError(turn.error, turn.status) };
}

interface Conversation {
  threadId: string | null;
  turns: TurnItem[];
}

/**
 * データ分析: load a CSV / TSV / Excel file, see what was loaded, ask about it in turns (progress
 * streamed), answer the agent's questions, download the report. The file and the conversation
 * are in the address (?data=…&thread=…) and on the server, so a reload shows both again.
 */
export default function AnalysisView() {
  const router = useRouter();
  const params = useSearchParams();
  const dataId = params.get(DATA_PARAM);
  const threadId = params.get(THREAD_PARAM);

  const [dataset, setDataset] = useState<Dataset | null>(null);
  const [datasetError, setDatasetError] = useState<ApiError | null>(null);
  const [datasetLoading, setDatasetLoading] = useState(false);
  const [conversation, setConversationState] = useState<Conversation>({ threadId: null, turns: [] });
  const [threadLoading, setThreadLoading] = useState(false);
  const [threadError, setThreadError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [draft, setDraft] = useState("");
  const [askError, setAskError] = useState<ApiError | null>(null);
  const [announcement, setAnnouncement] = useState("");
  const [summaryShown, setSummaryShown] = useState(0);

  const datasetRef = useRef<Dataset | null>(null);
  const dataIdRef = useRef(dataId);
  dataIdRef.current = dataId;
  const threadIdRef = useRef(threadId);
  threadIdRef.current = threadId;
  const conversationRef = useRef<Conversation>(conversation);
  const streams = useRef(new Set<AbortController>());
  const summaryHeading = useRef<HTMLHeadingElement>(null);
  const questionField = useRef<HTMLTextAreaElement>(null);

  const setConversation = useCallback((next: Conversation | ((current: Conversation) => Conversation)) => {
    const value = typeof next === "function" ? next(conversationRef.current) : next;
    conversationRef.current = value;
    setConversationState(value);
  }, []);

  const updateTurn = useCallback(
    (key: string, change: (item: TurnItem) => TurnItem) =>
      setConversation((current) => ({
        ...current,
        turns: current.turns.map((item) => (item.key === key ? change(item) : item)),
      })),
    [setConversation],
  );

  const onEvent = useCallback(
    (key: string) => (event: TurnEvent) => {
      const line = progressLine(event);
      updateTurn(key, (item) => ({
        ...item,
        runId: item.runId ?? (event.run_id || null),
        progress: line && item.progress[item.progress.length - 1] !== line ? [...item.progress, line] : item.progress,
      }));
    },
    [updateTurn],
  );

  const settle = useCallback(
    (key: string, outcome: TurnOutcome) => {
      updateTurn(key, (item) =>
        outcome.kind === "result"
          ? { ...item, status: "success", result: outcome.result, error: null }
          : { ...item, status: "failed", result: null, error: outcome.error },
      );
      setAnnouncement(outcome.kind === "result" ? "回答が届きました。" : "分析がうまくいきませんでした。");
    },
    [updateTurn],
  );

  const stopStreams = useCallback(() => {
    for (const controller of streams.current) controller.abort();
    streams.current.clear();
  }, []);

  const follow = useCallback(
    (item: TurnItem) => {
      if (!item.runId) return;
      const controller = new AbortController();
      streams.current.add(controller);
      followTurn({ runId: item.runId, signal: controller.signal, onEvent: onEvent(item.key) })
        .then((outcome) => settle(item.key, outcome))
        .catch((cause: unknown) => {
          if (!isAbort(cause)) settle(item.key, { kind: "error", error: toApiError(cause) });
        })
        .finally(() => streams.current.delete(controller));
    },
    [onEvent, settle],
  );

  useEffect(() => () => stopStreams(), [stopStreams]);

  // a file just loaded: the focus goes to what was loaded (a screen reader reads it next)
  useEffect(() => {
    if (summaryShown > 0) summaryHeading.current?.focus();
  }, [summaryShown]);

  // ?data=… → the file's summary (a reload, a link, the browser's back button).
  useEffect(() => {
    if (!dataId) {
      datasetRef.current = null;
      setDataset(null);
      setDatasetError(null);
      return;
    }
    if (datasetRef.current?.dataset_id === dataId) return;
    const controller = new AbortController();
    setDatasetLoading(true);
    setDatasetError(null);
    loadDataset(dataId, controller.signal)
      .then((loaded) => {
        datasetRef.current = loaded;
        setDataset(loaded);
      })
      .catch((cause: unknown) => {
        if (isAbort(cause)) return;
        datasetRef.current = null;
        setDataset(null);
        setDatasetError(fileGone(toApiError(cause), threadIdRef.current !== null));
      })
      .finally(() => {
        if (!controller.signal.aborted) setDatasetLoading(false);
      });
    return () => controller.abort();
  }, [dataId]);

  // ?thread=… → the conversation so far, from the server; a turn still running is followed.
  useEffect(() => {
    if (conversationRef.current.threadId === threadId) return;
    stopStreams();
    setThreadError(null);
    setThreadLoading(false); // a load left behind (Back before it arrived) shows nothing
    if (!threadId) {
      setConversation({ threadId: null, turns: [] });
      return;
    }
    // until it has loaded, the page holds no conversation (an aborted load is started again)
    const controller = new AbortController();
    setThreadLoading(true);
    setConversation({ threadId: null, turns: [] });
    loadThread(threadId, controller.signal)
      .then((thread) => {
        const turns = thread.turns.map(itemOf);
        setConversation({ threadId, turns });
        for (const item of turns) if (item.status === "running") follow(item);
        if (!dataIdRef.current && thread.dataset_id) router.replace(analysisHref(thread.dataset_id, threadId));
      })
      .catch((cause: unknown) => {
        if (isAbort(cause)) return;
        const error = toApiError(cause);
        if (error.status === 404) {
          setNotice(THREAD_GONE);
          router.replace(analysisHref(dataIdRef.current, null));
        } else {
          setThreadError(error);
        }
      })
      .finally(() => {
        if (!controller.signal.aborted) setThreadLoading(false);
      });
    return () => {
      controller.abort();
      setThreadLoading(false);
    };
  }, [threadId, follow, router, setConversation, stopStreams]);

  // a question waits for the conversation it continues to have loaded
  const busy = threadLoading || conversation.turns.some((item) => item.status === "running");

  const uploaded = (next: Dataset) => {
    const previous = datasetRef.current;
    datasetRef.current = next;
    setDataset(next);
    setDatasetError(null);
    setAskError(null);
    const current = conversationRef.current;
    if (previous && previous.dataset_id !== next.dataset_id && current.turns.length > 0) {
      // a conversation is about one file: another file starts a new one (the old one stays a "back" away)
      stopStreams();
      setConversation({ threadId: null, turns: [] });
      setNotice(
        `別のファイル（${next.summary.name}）が読み込まれたため、新しい会話を始めました。` +
          `${previous.summary.name} での会話は、ブラウザーの「戻る」で開けます。`,
      );
      router.push(analysisHref(next.dataset_id, null));
    } else {
      setNotice(null);
      router.replace(analysisHref(next.dataset_id, current.threadId));
    }
    setAnnouncement(`${next.summary.name} を読み込みました。`);
    setSummaryShown((count) => count + 1);
  };

  /** Ask `text` in the conversation (a new one when there is none); `typed`: it came from the field. */
  const ask = async (text: string, typed: boolean) => {
    const question = text.trim();
    const current = datasetRef.current;
    if (!question) {
      setAskError(EMPTY_QUESTION);
      questionField.current?.focus();
      return;
    }
    if (!current) {
      setAskError(NO_FILE_YET);
      questionField.current?.focus();
      return;
    }
    if (conversationRef.current.turns.some((item) => item.status === "running")) return;
    setAskError(null);
    setNotice(null);
    if (typed) setDraft("");
    const fresh = conversationRef.current.threadId === null;
    const thread = conversationRef.current.threadId ?? newThreadId();
    const key = `asked-${Date.now()}-${conversationRef.current.turns.length}`;
    const item: TurnItem = { key, question, status: "running", runId: null, progress: [], result: null, error: null };
    setConversation((before) => ({ threadId: thread, turns: [...before.turns, item] }));
    if (thread !== threadId || current.dataset_id !== dataId) router.replace(analysisHref(current.dataset_id, thread));
    setAnnouncement("質問を送りました。分析しています。");
    const controller = new AbortController();
    streams.current.add(controller);
    try {
      settle(key, await askTurn({ datasetId: current.dataset_id, question, threadId: thread, signal: controller.signal, onEvent: onEvent(key) }));
    } catch (cause) {
      if (isAbort(cause)) return;
      const error = toApiError(cause);
      const started = conversationRef.current.turns.find((turn) => turn.key === key)?.runId;
      if (!started && error.status >= 400 && error.status < 500) {
        // refused before it started (empty, unknown file, not allowed): said next to the field
        setConversation((before) => ({
          threadId: fresh ? null : before.threadId,
          turns: before.turns.filter((turn) => turn.key !== key),
        }));
        if (fresh) router.replace(analysisHref(current.dataset_id, null));
        if (typed) setDraft(question);
        setAskError(error);
        questionField.current?.focus();
      } else {
        settle(key, { kind: "error", error });
      }
    } finally {
      streams.current.delete(controller);
    }
  };

  const newConversation = () => {
    stopStreams();
    setConversation({ threadId: null, turns: [] });
    setNotice(null);
    setAskError(null);
    router.push(analysisHref(datasetRef.current?.dataset_id ?? dataId, null));
    questionField.current?.focus();
  };

  const turns = conversation.turns;
  return (
    <div className="analysis-page">
      <h1>データ分析</h1>
      <p className="muted">
        CSV / Excel ファイルを読み込んで、知りたいことを日本語で質問してください。表・グラフ・結論で答え、レポートをダウンロードできます。
      </p>
      <p className="analysis-live" role="status" aria-live="polite">
        {announcement}
      </p>

      <UploadForm onUploaded={uploaded} />

      {datasetLoading ? <Spinner label="読み込んだデータを表示しています…" /> : null}
      {datasetError ? (
        <section className="panel" aria-labelledby="analysis-data-error-title">
          <h2 id="analysis-data-error-title">読み込んだデータ</h2>
          <ErrorBox error={datasetError} testId="analysis-data-error" />
        </section>
      ) : null}
      {dataset ? <DatasetSummaryPanel summary={dataset.summary} headingRef={summaryHeading} /> : null}

      {notice ? (
        <p className="notice analysis-notice" role="note" data-testid="analysis-notice">
          {notice}
        </p>
      ) : null}

      <section className="analysis-conversation" aria-labelledby="analysis-chat-title" data-testid="analysis-conversation">
        <h2 id="analysis-chat-title">会話</h2>
        <ErrorBox error={threadError} testId="analysis-thread-error" />
        {threadLoading ? <Spinner label="これまでの会話を読み込んでいます…" /> : null}
        {turns.length === 0 && !threadLoading ? (
          <p className="muted">{dataset ? "まだ質問はありません。下の欄から質問してください。" : NO_DATASET}</p>
        ) : (
          <ol className="analysis-turns">
            {turns.map((item, index) => (
              <li key={item.key}>
                <TurnView
                  item={item}
                  index={index}
                  latest={index === turns.length - 1}
                  answering={turns[index - 1]?.result?.next_action === "ask"}
                  busy={busy}
                  datasetName={dataset?.summary.name ?? null}
                  onChoose={(answer) => void ask(answer, false)}
                />
              </li>
            ))}
          </ol>
        )}
      </section>

      <QuestionForm
        draft={draft}
        onDraft={(text) => {
          setDraft(text);
          if (askError) setAskError(null);
        }}
        onAsk={(question) => void ask(question, true)}
        busy={busy}
        error={askError}
        hasDataset={dataset !== null}
        hasConversation={turns.length > 0}
        onNewConversation={newConversation}
        fieldRef={questionField}
      />
    </div>
  );
}
