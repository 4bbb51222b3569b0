// Who is using the page: sign-in with a login and password or the company's provider, sign-out,
// and the roles the page shows (src/keiri_agent/api/routes/auth.py, people/roles.py).

import { apiJson, setToken } from "@/lib/api";

/** GET /api/auth/me and POST /api/auth/sign-in. */
export interface Me {
  login: string;
  display_name: string;
  roles: string[];
}

export const ROLE_LABELS: Record<string, string> = {
  admin: "管理者",
  designer: "設計者",
  operator: "実行者",
  approver: "承認者",
  viewer: "閲覧者",
};

/** 「承認者・閲覧者」 */
export function roleNames(roles: string[]): string {
  return roles.map((role) => ROLE_LABELS[role] ?? role).join("・");
}

export function loadMe(): Promise<Me> {
  return apiJson<Me>("/api/auth/me");
}

export function signIn(login: string, password: string): Promise<Me> {
  return apiJson<Me>("/api/auth/sign-in", { method: "POST", body: JSON.stringify({ login, password }) });
}

/** End the browser's sign-in and forget an access token this tab kept. */
export async function signOut(): Promise<void> {
  try {
    await apiJson("/api/auth/sign-out", { method: "POST" });
  } finally {
    setToken(null);
  }
}

/** Where the company sign-in starts (the API redirects to the provider). */
export const OIDC_START = "/api/auth/oidc/start";
