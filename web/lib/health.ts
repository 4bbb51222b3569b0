// GET /api/health, read once per page load and shared: whether a token is required (the token
// prompt) and whether the server runs without a language model (the offline notice on every page).

import { setTimeZone } from "@/components/pages/format";
import { apiJson } from "@/lib/api";

/** GET /api/health (src/keiri_agent/api/routes/system.py `Health`). */
export interface Health {
  status: string;
  offline: boolean;
  /** What every page says from the start when `offline` (the server's text); null otherwise. */
  offline_notice: string | null;
  /** A request must say who it is (a shared token, registered people or a company sign-in). */
  token_required: boolean;
  /** People are registered: the sign-in asks for a login and password. */
  password_sign_in: boolean;
  /** A company sign-in (OpenID Connect) is configured. */
  oidc_sign_in: boolean;
  /** The time zone every page shows times in (the server's setting). */
  time_zone: string;
  /** Where the Streamlit app is (the server's setting); null: no link. */
  streamlit_url: string | null;
}

let pending: Promise<Health> | null = null;

/** The server's health, fetched once (a failure is not kept: the next call asks again). */
export function loadHealth(): Promise<Health> {
  if (pending === null) {
    pending = apiJson<Health>("/api/health")
      .then((health) => {
        if (typeof health.time_zone === "string") setTimeZone(health.time_zone);
        return health;
      })
      .catch((error: unknown) => {
        pending = null;
        throw error;
      });
  }
  return pending;
}

/** The notice to show on every page: the server's text when it runs offline, otherwise none. */
export function offlineNotice(health: Partial<Health> | null): string | null {
  if (!health || health.offline !== true) return null;
  return typeof health.offline_notice === "string" && health.offline_notice ? health.offline_notice : null;
}
