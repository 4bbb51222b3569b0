"use client";

import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import ConnectionStatus from "@/components/research/ConnectionStatus";
import Markdown from "@/components/research/Markdown";
import ProgressList from "@/components/research/ProgressList";
import SourcesPanel from "@/components/research/SourcesPanel";
import { ApiError, apiFetch, apiJson, graphql, toApiError } from "@/lib/api";
import {
  keepListed,
  type KnowledgeBaseList,
  sampleLoadedMessage,
  toggleKnowledgeBase,
} from "@/lib/knowledgeBases";
import {
  initialResearchState,
  parseResearchEvent,
  researchReducer,
  type RunSnapshot,
  type StartedRun,
  TERMINAL_KINDS,
} from "@/lib/research";
import { postIndexing, progressLabel } from "@/lib/indexing";
import { streamSse } from "@/lib/sse";

const DEEP_RESEARCH = `mutation DeepResearch($question: String!, $sessionId: String, $kb: [String!]) {
  deepResearch(question: $question, sessionId: $sessionId, kb: $kb) { runId sessionId status eventsUrl }
}`;

interface SessionSummary {
  session_id: string;
  notes: number;
  last_note_at: string;
}

const EMPTY_QUESTION = new ApiError(
  "QUESTION_EMPTY",
  "調べたいことを入力してください。",
  "例: 「インボイス制度で請求書フォーマットに必要な変更点を調べて」",
  0,
);

function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("ja-JP");
}

export default function ResearchPage() {
  const [state, dispatch] = useReducer(researchReducer, initialResearchState);
  const [question, setQuestion] = useState("");
  const [kbList, setKbList] = useState<KnowledgeBaseList | null>(null);
  const [chosenKbs, setChosenKbs] = useState<string[]>([]);
  const [loadingSample, setLoadingSample] = useState(false);
  const [sampleProgress, setSampleProgress] = useState("");
  const [sampleMessage, setSampleMessage] = useState<string | null>(null);
  const [sessionId, setSessionId] = useState("");
  const [sessions, setSessions] = useState<SessionSummary[]>([]);
  const [starting, setStarting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const streamRef = useRef<AbortController | null>(null);

  const loadSessions = useCallback(() => {
    apiJson<{ sessions: SessionSummary[] }>("/api/research/sessions")
      .then((body) => setSessions(body.sessions))
      .catch(() => setSessions([])); // the selector is optional; a start still works
  }, []);

  const loadKnowledgeBases = useCallback(
    () =>
      apiJson<KnowledgeBaseList>("/api/research/knowledge-bases").then((list) => {
        setKbList(list);
        setChosenKbs((chosen) => keepListed(chosen, list));
        return list;
      }),
    [],
  );

  const follow = useCallback((run: StartedRun) => {
    streamRef.current?.abort();
    const controller = new AbortController();
    streamRef.current = controller;
    streamSse({
      url: run.eventsUrl,
      signal: controller.signal,
      isFinal: (message) => TERMINAL_KINDS.has(message.event),
      onMessage: (message) => {
        const event = parseResearchEvent(message.data);
        if (event) dispatch({ type: "event", event });
      },
      onState: (connection) => dispatch({ type: "connection", state: connection }),
    }).catch((cause: unknown) => setError(toApiError(cause)));
  }, []);

  // ?run=<run_id> (set when a run starts): a reloaded page follows the same run again from its
  // first event; ?session=<session_id> (from the sessions page) continues that session.
  useEffect(() => {
    const params = new URLSearchParams(window.location.search);
    const requested = params.get("session");
    if (requested) setSessionId(requested);
    const runParam = params.get("run");
    if (runParam) {
      apiJson<RunSnapshot>(`/api/research/${encodeURIComponent(runParam)}`)
        .then((snapshot) => {
          const run: StartedRun = {
            runId: snapshot.run_id,
            sessionId: snapshot.session_id ?? "",
            eventsUrl: snapshot.events_url ?? `/api/research/${encodeURIComponent(snapshot.run_id)}/events`,
            question: snapshot.question ?? "",
          };
          setQuestion(run.question);
          dispatch({ type: "started", run });
          follow(run);
        })
        .catch((cause: unknown) => setError(toApiError(cause)));
    }
    loadSessions();
    loadKnowledgeBases().catch((cause: unknown) => setError(toApiError(cause)));
    return () => streamRef.current?.abort();
  }, [loadSessions, loadKnowledgeBases, follow]);

  // Events were lost (a gap): once the run has finished, the stored result is the truth.
  const { gap, status, runId } = state;
  useEffect(() => {
    if (!gap || status === "running" || !runId) return;
    apiJson<RunSnapshot>(`/api/research/${encodeURIComponent(runId)}`)
      .then((snapshot) => dispatch({ type: "final", snapshot }))
      .catch((cause: unknown) => setError(toApiError(cause)));
  }, [gap, status, runId]);

  useEffect(() => {
    if (status === "success") loadSessions();
  }, [status, loadSessions]);

  const start = async () => {
    if (starting || state.status === "running") return;
    const text = question.trim();
    if (!text) {
      setError(EMPTY_QUESTION);
      return;
    }
    setError(null);
    setSelected(null);
    setStarting(true);
    try {
      const kbNames = chosenKbs;
      const data = await graphql<{
        deepResearch: { runId: string; sessionId: string; status: string; eventsUrl: string };
      }>(DEEP_RESEARCH, { question: text, sessionId: sessionId || null, kb: kbNames.length > 0 ? kbNames : null });
      const run: StartedRun = {
        runId: data.deepResearch.runId,
        sessionId: data.deepResearch.sessionId,
        eventsUrl: data.deepResearch.eventsUrl,
        question: text,
      };
      dispatch({ type: "started", run });
      window.history.replaceState(null, "", `?run=${encodeURIComponent(run.runId)}`);
      follow(run);
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setStarting(false);
    }
  };

  const loadSample = async () => {
    setError(null);
    setSampleMessage(null);
    setSampleProgress("");
    setLoadingSample(true);
    try {
      const body = await postIndexing<{ kb: string; report: { added?: unknown; updated?: unknown; unchanged?: unknown } }>(
        "/api/research/sample",
        (progress) => setSampleProgress(progressLabel(progress)),
      );
      await loadKnowledgeBases();
      setChosenKbs([body.kb]); // asked for: the sample is chosen, alone
      setSampleMessage(sampleLoadedMessage(body.report));
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setLoadingSample(false);
    }
  };

  const cancel = async () => {
    if (!state.runId) return;
    setCancelling(true);
    try {
      await apiFetch(`/api/research/${encodeURIComponent(state.runId)}/cancel`, { method: "POST" });
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setCancelling(false);
    }
  };

  const showSource = (number: number) => {
    setSelected(number);
    requestAnimationFrame(() => document.getElementById("passage")?.focus());
  };

  const running = state.status === "running";
  // The stream gave up (its error is shown): the run may go on on the server, but this page no longer follows it.
  const following = running && state.connection?.status !== "closed";
  const runError = state.status === "failed" ? state.error : null;
  const shownError = error ?? (runError ? new ApiError(runError.code, runError.message, runError.hint, 0) : null);

  return (
    <div className="research">
      <h1>リサーチ</h1>
      <form
        className="panel research-form"
        onSubmit={(event) => {
          event.preventDefault();
          void start();
        }}
      >
        <label htmlFor="question">調べたいこと</label>
        <textarea
          id="question"
          data-testid="question"
          value={question}
          placeholder="例: インボイス制度で請求書フォーマットに必要な変更点を調べて"
          onChange={(event) => setQuestion(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
              event.preventDefault();
              void start();
            }
          }}
          aria-describedby="question-help"
        />
        <p id="question-help" className="muted">
          Ctrl+Enter でも調査を開始できます。
        </p>
        <div className="form-row">
          <fieldset className="kb-choice" data-testid="kb-choice">
            <legend>検索するナレッジベース（何も選ばなければ、サンプル資料を除くすべて）</legend>
            {kbList && kbList.knowledge_bases.length > 0 ? (
              <ul className="kb-list">
                {kbList.knowledge_bases.map((item) => (
                  <li key={item.name}>
                    <label>
                      <input
                        type="checkbox"
                        name="kb"
                        value={item.name}
                        checked={chosenKbs.includes(item.name)}
                        onChange={() => setChosenKbs((chosen) => toggleKnowledgeBase(chosen, item.name, kbList.sample.name))}
                      />
                      {item.label}
                    </label>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">ナレッジベースはまだありません。</p>
            )}
            <div className="actions">
              <button type="button" data-testid="load-sample" onClick={() => void loadSample()} disabled={loadingSample || running}>
                サンプル資料を読み込む
              </button>
              {loadingSample ? <Spinner label={sampleProgress || "サンプル資料を読み込んでいます…"} /> : null}
            </div>
            {sampleMessage ? (
              <p className="muted" role="status">
                {sampleMessage}
              </p>
            ) : null}
            {kbList && chosenKbs.includes(kbList.sample.name) ? (
              <p className="notice" data-testid="sample-notice">
                {kbList.sample.notice}
              </p>
            ) : null}
          </fieldset>
          <div>
            <label htmlFor="session">セッション（任意）</label>
            <select id="session" value={sessionId} onChange={(event) => setSessionId(event.target.value)}>
              <option value="">新しいセッション</option>
              {sessionId && !sessions.some((item) => item.session_id === sessionId) ? (
                <option value={sessionId}>{sessionId}</option>
              ) : null}
              {sessions.map((item) => (
                <option key={item.session_id} value={item.session_id}>
                  {item.session_id}（ノート {item.notes} 件、{formatDate(item.last_note_at)}）
                </option>
              ))}
            </select>
          </div>
        </div>
        <div className="actions">
          <button type="submit" className="primary" data-testid="start" disabled={starting || running}>
            調査開始
          </button>
          {running ? (
            <button type="button" className="danger" data-testid="cancel" onClick={() => void cancel()} disabled={cancelling}>
              キャンセル
            </button>
          ) : null}
          {starting ? <Spinner label="調査を開始しています…" /> : null}
          {following ? <Spinner label="調査中…" /> : null}
        </div>
      </form>

      <ErrorBox error={shownError} />
      {state.status === "cancelled" ? (
        <p className="notice" role="status">
          調査をキャンセルしました。{state.reportMd ? "途中までの結果を表示しています。" : ""}
        </p>
      ) : null}

      {state.runId ? (
        <>
          <ConnectionStatus state={state.connection} />
          <div className="research-grid">
            <div className="research-main">
              <ProgressList plan={state.plan} queries={state.queries} gapChecks={state.gapChecks} stepErrors={state.stepErrors} />
              <section className="panel" aria-labelledby="report-title" aria-busy={running}>
                <h2 id="report-title">レポート</h2>
                {state.reportMd ? (
                  <Markdown text={state.reportMd} sourceCount={state.sources.length} onCite={showSource} className="report" testId="report" />
                ) : running ? (
                  <p className="muted">レポートは調査の最後に届きます。</p>
                ) : (
                  <p className="muted">レポートはありません。</p>
                )}
              </section>
              {state.limitations.length > 0 ? (
                <section className="panel" aria-labelledby="limitations-title">
                  <h2 id="limitations-title">調査の限界</h2>
                  <ul>
                    {state.limitations.map((item, index) => (
                      <li key={index}>{item}</li>
                    ))}
                  </ul>
                </section>
              ) : null}
            </div>
            <aside className="research-side">
              <SourcesPanel sources={state.sources} selected={selected} onSelect={showSource} />
            </aside>
          </div>
        </>
      ) : null}
    </div>
  );
}
