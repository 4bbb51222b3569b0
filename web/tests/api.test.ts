import { describe, expect, it } from "vitest";
import { ApiError, authHeaders, csrfToken, errorFromResponse } from "@/lib/api";

describe("errorFromResponse", () => {
  it("reads the API's error shape", async () => {
    const response = new Response(
      JSON.stringify({ error: { code: "NOT_FOUND", message: "調査が見つかりません", hint: "一覧から選び直してください", details: { name: "x" } } }),
      { status: 404, headers: { "Content-Type": "application/json" } },
    );
    const error = await errorFromResponse(response);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe("NOT_FOUND");
    expect(error.message).toBe("調査が見つかりません");
    expect(error.hint).toBe("一覧から選び直してください");
    expect(error.status).toBe(404);
    expect(error.details).toEqual({ name: "x" });
  });

  it("falls back to a Japanese message for a body that is not the error shape", async () => {
    const error = await errorFromResponse(new Response("<html>Bad gateway</html>", { status: 502 }));
    expect(error.code).toBe("HTTP_ERROR");
    expect(error.message).toContain("HTTP 502");
    expect(error.hint).not.toBe("");
  });
});

describe("authHeaders", () => {
  it("asks the API for Japanese messages whatever the browser's language", () => {
    expect(authHeaders().get("Accept-Language")).toBe("ja");
    expect(authHeaders({ Accept: "text/event-stream" }).get("Accept")).toBe("text/event-stream");
  });
});

describe("csrfToken", () => {
  it("reads the sign-in's CSRF cookie among others", () => {
    expect(csrfToken("a=1; keiri_csrf=abc%3D; b=2")).toBe("abc=");
    expect(csrfToken("keiri_csrfx=1; a=2")).toBeNull();
    expect(csrfToken("")).toBeNull();
  });
});
