"use client";

import Link from "next/link";
import { useCallback, useEffect, useState } from "react";
import "@/components/pages/pages.css";
import ErrorBox from "@/components/ErrorBox";
import Spinner from "@/components/Spinner";
import ConfirmDialog from "@/components/pages/ConfirmDialog";
import { formatDateTime } from "@/components/pages/format";
import { apiJson, toApiError, type ApiError } from "@/lib/api";

/** One schedule as GET /api/schedules sends it (runs.schedules.Schedule.to_dict). */
export interface Schedule {
  schedule_id: string;
  plan_id: string;
  rule: string;
  at: string | null;
  paused: boolean;
  next_at: string;
  /** The next times it is due, `next_at` first (none while paused). */
  upcoming?: string[];
  last_due_at: string | null;
  last_run_id: string | null;
  last_late: boolean;
}

/** 「毎月第5営業日 09:30」, or the cron expression as written. */
export function ruleLabel(schedule: Schedule): string {
  return schedule.at ? `${schedule.rule} ${schedule.at}` : `${schedule.rule}（cron）`;
}

/** A registered Plan as the page names it: its title (its id when it has none). */
interface NamedPlan {
  plan_id: string;
  title: string;
}

function AddForm({ plans, onAdded }: { plans: NamedPlan[]; onAdded: () => void }) {
  const [planId, setPlanId] = useState("");
  const [rule, setRule] = useState("");
  const [at, setAt] = useState("09:00");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const add = async () => {
    setBusy(true);
    setError(null);
    try {
      await apiJson("/api/schedules", {
        method: "POST",
        body: JSON.stringify({ plan_id: planId || plans[0]?.plan_id, rule, at }),
      });
      setRule("");
      onAdded();
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="panel"
      onSubmit={(event) => {
        event.preventDefault();
        void add();
      }}
      data-testid="schedule-add"
    >
      <h2>予定を追加</h2>
      <label>
        Plan
        <select value={planId || plans[0]?.plan_id || ""} onChange={(event) => setPlanId(event.target.value)}>
          {plans.map((plan) => (
            <option key={plan.plan_id} value={plan.plan_id}>
              {plan.title}
            </option>
          ))}
        </select>
      </label>
      <label>
        いつ実行するか
        <input
          value={rule}
          onChange={(event) => setRule(event.target.value)}
          placeholder="例: 毎月第5営業日、毎月末営業日、毎週月曜（祝日なら翌営業日）"
          data-testid="schedule-rule"
          required
        />
      </label>
      <label>
        時刻
        <input type="time" value={at} onChange={(event) => setAt(event.target.value)} data-testid="schedule-at" />
      </label>
      <p className="muted">祝日と会社の休業日（年末年始）は営業日に数えません。cron 式（例: 0 9 * * 1-5）も使えます。</p>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || plans.length === 0 || !rule.trim()}>
          追加する
        </button>
        {busy ? <Spinner label="追加しています…" /> : null}
      </div>
      <ErrorBox error={error} testId="schedule-add-error" />
    </form>
  );
}

export default function SchedulesView() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [plans, setPlans] = useState<NamedPlan[]>([]);
  const [error, setError] = useState<ApiError | null>(null);
  const [deleting, setDeleting] = useState<Schedule | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      const [found, registered] = await Promise.all([
        apiJson<{ schedules: Schedule[] }>("/api/schedules"),
        apiJson<{ plans: (NamedPlan & { error: unknown })[] }>("/api/plans"),
      ]);
      setSchedules(found.schedules);
      setPlans(registered.plans.filter((plan) => !plan.error).map(({ plan_id, title }) => ({ plan_id, title })));
      setError(null);
    } catch (cause) {
      setError(toApiError(cause));
      setSchedules([]);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const change = async (schedule: Schedule, action: "pause" | "resume" | "delete") => {
    setBusy(true);
    try {
      if (action === "delete") {
        await apiJson(`/api/schedules/${encodeURIComponent(schedule.schedule_id)}`, { method: "DELETE" });
      } else {
        await apiJson(`/api/schedules/${encodeURIComponent(schedule.schedule_id)}/${action}`, { method: "POST" });
      }
      await load();
    } catch (cause) {
      setError(toApiError(cause));
    } finally {
      setBusy(false);
      setDeleting(null);
    }
  };

  return (
    <>
      <h1>予定</h1>
      <p>登録済みの Plan を、営業日のルールで自動実行します。実行はサーバー（またはワーカー）が動いている間に始まります。</p>
      <ErrorBox error={error} />
      {schedules === null ? (
        <Spinner label="予定を読み込んでいます…" />
      ) : schedules.length === 0 ? (
        <p className="muted" data-testid="schedules-empty">
          予定はまだありません。
        </p>
      ) : (
        <ul className="plan-list" data-testid="schedules">
          {schedules.map((schedule) => (
            <li key={schedule.schedule_id} className="panel" data-testid="schedule-item">
              <h2>
                {plans.find((plan) => plan.plan_id === schedule.plan_id)?.title ?? schedule.plan_id}
                {schedule.paused ? <span className="item-meta">（一時停止中）</span> : null}
              </h2>
              <p data-testid="schedule-rule-shown">{ruleLabel(schedule)}</p>
              <p>
                次回: {schedule.paused ? "—（一時停止中）" : formatDateTime(schedule.next_at)}
              </p>
              {!schedule.paused && (schedule.upcoming ?? []).length > 1 ? (
                <div>
                  <p id={`upcoming-${schedule.schedule_id}`}>その後の予定:</p>
                  <ul className="upcoming" aria-labelledby={`upcoming-${schedule.schedule_id}`} data-testid="schedule-upcoming">
                    {(schedule.upcoming ?? []).slice(1).map((moment) => (
                      <li key={moment}>{formatDateTime(moment)}</li>
                    ))}
                  </ul>
                </div>
              ) : null}
              {schedule.last_run_id ? (
                <p>
                  前回: {formatDateTime(schedule.last_due_at)}{" "}
                  {schedule.last_late ? <strong>（遅れて実行）</strong> : null}{" "}
                  <Link href={`/plans/?run=${encodeURIComponent(schedule.last_run_id)}`}>実行結果を見る</Link>
                </p>
              ) : null}
              <div className="actions">
                {schedule.paused ? (
                  <button type="button" onClick={() => void change(schedule, "resume")} disabled={busy}>
                    再開する
                  </button>
                ) : (
                  <button
                    type="button"
                    onClick={() => void change(schedule, "pause")}
                    disabled={busy}
                    data-testid="schedule-pause"
                  >
                    一時停止する
                  </button>
                )}
                <button type="button" onClick={() => setDeleting(schedule)} disabled={busy} data-testid="schedule-delete">
                  削除する
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <AddForm plans={plans} onAdded={() => void load()} />
      <ConfirmDialog
        open={deleting !== null}
        title="予定の削除"
        message={deleting ? `「${deleting.plan_id}」の予定（${ruleLabel(deleting)}）を削除します。実行済みの記録は残ります。` : ""}
        confirmLabel="削除する"
        busy={busy}
        onConfirm={() => deleting && void change(deleting, "delete")}
        onCancel={() => setDeleting(null)}
      />
    </>
  );
}
