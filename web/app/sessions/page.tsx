"use client";

import { useCallback, useEffect, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import ConfirmDialog from "@/components/pages/ConfirmDialog";
import Markdown from "@/components/research/Markdown";
import {
  confirmDeleteMessage,
  deletedMessage,
  formatDateTime,
  sourceLabel,
  type SourceRef,
} from "@/components/pages/format";
import { apiJson, toApiError, type ApiError } from "@/lib/api";

interface SessionSummary {
  session_id: string;
  notes: number;
  last_note_at: string;
}

interface Note {
  session_id: string;
  step_no: number;
  query: string;
  summary_md: string;
  sources: SourceRef[];
  created_at: string | null;
}

function notesPath(sessionId: string): string {
  return `/api/research/sessions/${encodeURIComponent(sessionId)}/notes`;
}

export default function SessionsPage() {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const [listError, setListError] = useState<ApiError | null>(null);
  const [selected, setSelected] = useState<SessionSummary | null>(null);
  const [notes, setNotes] = useState<Note[] | null>(null);
  const [notesError, setNotesError] = useState<ApiError | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [deleteError, setDeleteError] = useState<ApiError | null>(null);
  const [message, setMessage] = useState("");

  const loadSessions = useCallback(async () => {
    setListError(null);
    try {
      const body = await apiJson<{ sessions: SessionSummary[] }>("/api/research/sessions");
      setSessions(body.sessions);
    } catch (error) {
      setListError(toApiError(error));
      setSessions([]);
    }
  }, []);

  useEffect(() => {
    void loadSessions();
  }, [loadSessions]);

  const open = async (session: SessionSummary) => {
    setSelected(session);
    setNotes(null);
    setNotesError(null);
    setDeleteError(null);
    setMessage("");
    try {
      const body = await apiJson<{ notes: Note[] }>(notesPath(session.session_id));
      setNotes(body.notes);
    } catch (error) {
      setNotesError(toApiError(error));
      setNotes([]);
    }
  };

  const remove = async () => {
    if (!selected) return;
    setDeleting(true);
    setDeleteError(null);
    try {
      const body = await apiJson<{ session_id: string; deleted: number }>(notesPath(selected.session_id), {
        method: "DELETE",
      });
      setMessage(deletedMessage(body.session_id, body.deleted));
      setSelected(null);
      setNotes(null);
      setConfirming(false);
      await loadSessions();
    } catch (error) {
      setDeleteError(toApiError(error));
      setConfirming(false);
    } finally {
      setDeleting(false);
    }
  };

  return (
    <>
      <h1>セッション</h1>
      <p className="muted">
        リサーチのセッションごとに、保存されたノート（検索した内容とその要約）を確認・削除できます。
      </p>
      {message ? (
        <p className="notice" role="status" data-testid="delete-message">
          {message}
        </p>
      ) : null}
      <div className="split">
        <section className="panel" aria-labelledby="session-list-title">
          <h2 id="session-list-title">セッション一覧</h2>
          <ErrorBox error={listError} />
          {sessions === null ? (
            <Spinner label="セッションを読み込んでいます…" />
          ) : sessions.length === 0 && !listError ? (
            <p className="muted">ノートのあるセッションはまだありません。リサーチを実行すると、ここに表示されます。</p>
          ) : (
            <ul className="item-list">
              {sessions.map((session) => (
                <li key={session.session_id}>
                  <button
                    type="button"
                    className={selected?.session_id === session.session_id ? "item selected" : "item"}
                    aria-current={selected?.session_id === session.session_id ? "true" : undefined}
                    onClick={() => void open(session)}
                    data-testid="session-item"
                    data-session-id={session.session_id}
                  >
                    <span className="item-title">{session.session_id}</span>
                    <span className="item-meta">
                      ノート {session.notes} 件・最終 {formatDateTime(session.last_note_at)}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section className="panel" aria-labelledby="session-notes-title" data-testid="session-notes">
          <h2 id="session-notes-title">{selected ? `ノート（${selected.session_id}）` : "ノート"}</h2>
          {!selected ? (
            <p className="muted">左の一覧からセッションを選ぶと、そのノートが表示されます。</p>
          ) : notes === null ? (
            <Spinner label="ノートを読み込んでいます…" />
          ) : (
            <>
              <ErrorBox error={notesError} />
              <ErrorBox error={deleteError} testId="delete-error" />
              {notes.length === 0 && !notesError ? <p className="muted">このセッションにノートはありません。</p> : null}
              <ol className="notes">
                {notes.map((note) => (
                  <li key={`${note.step_no}-${note.query}`} className="note" data-testid="note-item">
                    <h3>
                      ステップ {note.step_no}: {note.query}
                    </h3>
                    <Markdown text={note.summary_md} />
                    {note.sources.length > 0 ? (
                      <>
                        <h4>出典</h4>
                        <ul className="sources">
                          {note.sources.map((source, index) => (
                            <li key={index}>{sourceLabel(source)}</li>
                          ))}
                        </ul>
                      </>
                    ) : null}
                    <p className="item-meta">{formatDateTime(note.created_at)}</p>
                  </li>
                ))}
              </ol>
              {notes.length > 0 ? (
                <div className="actions">
                  <button
                    type="button"
                    className="danger"
                    onClick={() => setConfirming(true)}
                    data-testid="delete-session"
                  >
                    このセッションのノートを削除
                  </button>
                </div>
              ) : null}
            </>
          )}
        </section>
      </div>
      <ConfirmDialog
        open={confirming}
        title="ノートの削除"
        message={confirmDeleteMessage(notes?.length ?? selected?.notes ?? 0)}
        confirmLabel="削除する"
        busy={deleting}
        onConfirm={() => void remove()}
        onCancel={() => setConfirming(false)}
      />
    </>
  );
}
