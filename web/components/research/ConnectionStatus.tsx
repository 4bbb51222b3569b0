import type { ConnectionState } from "@/lib/sse";

function label(state: ConnectionState): string {
  switch (state.status) {
    case "connecting":
      return "サーバーに接続しています…";
    case "connected":
      return "接続中（受信しています）";
    case "reconnecting":
      return `接続が切れました。再接続しています…（${state.attempt} 回目、${Math.round(state.delayMs / 1000)} 秒後）`;
    case "closed":
      return state.reason === "ended" ? "受信完了" : state.reason === "cancelled" ? "受信を停止しました" : "接続できませんでした";
  }
}

/** The stream's connection, visible and announced (再接続中… with the attempt). */
export default function ConnectionStatus({ state }: { state: ConnectionState | null }) {
  if (!state) return null;
  return (
    <p className={`connection connection-${state.status}`} data-testid="connection-status" data-status={state.status} role="status" aria-live="polite">
      {label(state)}
    </p>
  );
}
