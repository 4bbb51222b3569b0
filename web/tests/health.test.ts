import { describe, expect, it } from "vitest";
import { offlineNotice } from "@/lib/health";

describe("offlineNotice", () => {
  it("is the server's text when it runs without a language model", () => {
    const notice = "オフラインモード（LLM 未設定）: LLM を使わず、ルールベースで動作します。";
    expect(offlineNotice({ status: "ok", offline: true, offline_notice: notice, token_required: false, password_sign_in: false, oidc_sign_in: false, time_zone: "Asia/Tokyo", streamlit_url: null })).toBe(notice);
  });

  it("is nothing when a model is configured, or the server said nothing usable", () => {
    expect(offlineNotice({ status: "ok", offline: false, offline_notice: null, token_required: false, password_sign_in: false, oidc_sign_in: false, time_zone: "Asia/Tokyo", streamlit_url: null })).toBeNull();
    expect(offlineNotice({ offline: true })).toBeNull();
    expect(offlineNotice(null)).toBeNull();
  });
});
