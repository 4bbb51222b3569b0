import { describe, expect, it } from "vitest";
import { ApiError } from "@/lib/api";
import {
  EMPTY_FILTERS,
  entryTitle,
  filterProblems,
  filtersFrom,
  filtersQuery,
  hasFilters,
  historyApiPath,
  historyHref,
  problemField,
  starterLabel,
} from "@/lib/history";

describe("the filters in the address", () => {
  it("reads the known filters, trimmed, and ignores the rest", () => {
    const filters = filtersFrom(new URLSearchParams("q=%E7%B5%8C%E8%B2%BB+&kind=plan&run=run_1&since=2026-04-01"));
    expect(filters).toEqual({ ...EMPTY_FILTERS, q: "経費", kind: "plan", since: "2026-04-01" });
    expect(hasFilters(filters)).toBe(true);
    expect(hasFilters(EMPTY_FILTERS)).toBe(false);
  });

  it("writes only the filled filters, so a reload reads them back", () => {
    const filters = { ...EMPTY_FILTERS, q: "月次 締め", status: "failed", started_by: " yamada " };
    expect(filtersQuery(filters)).toBe(`?q=${encodeURIComponent("月次")}+${encodeURIComponent("締め")}&status=failed&started_by=yamada`);
    expect(filtersFrom(new URLSearchParams(filtersQuery(filters).slice(1)))).toEqual({ ...filters, started_by: "yamada" });
    expect(historyHref(EMPTY_FILTERS)).toBe("/history/");
    expect(historyHref({ ...EMPTY_FILTERS, kind: "helpdesk" })).toBe("/history/?kind=helpdesk");
  });

  it("asks the API for a page, after a cursor", () => {
    expect(historyApiPath(EMPTY_FILTERS)).toBe("/api/history?limit=50");
    expect(historyApiPath({ ...EMPTY_FILTERS, kind: "plan" }, "abc", 10)).toBe("/api/history?kind=plan&limit=10&cursor=abc");
  });
});

describe("filterProblems", () => {
  it("finds a period that runs backwards or a day that is not a day", () => {
    expect(filterProblems(EMPTY_FILTERS)).toEqual({});
    expect(filterProblems({ ...EMPTY_FILTERS, since: "2026-04-02", until: "2026-04-01" }).until).toContain("入れ替えて");
    expect(filterProblems({ ...EMPTY_FILTERS, since: "2026/04/01" }).since).toContain("年-月-日");
    expect(filterProblems({ ...EMPTY_FILTERS, since: "2026-04-01", until: "2026-04-01" })).toEqual({});
  });
});

describe("problemField", () => {
  it("names the filter an API error is about", () => {
    const error = new ApiError("HISTORY_QUERY_INVALID", "種類「x」はありません", "", 400, { field: "kind" });
    expect(problemField(error)).toBe("kind");
    expect(problemField(new ApiError("X", "", "", 400, { field: "elsewhere" }))).toBeNull();
    expect(problemField(null)).toBeNull();
  });
});

describe("what a person reads of an entry", () => {
  it("names who started it", () => {
    expect(starterLabel({ started_by: "yamada", started_by_name: "山田 花子" })).toBe("山田 花子（yamada）");
    expect(starterLabel({ started_by: "yamada", started_by_name: "yamada" })).toBe("yamada");
    expect(starterLabel({ started_by: "", started_by_name: "" })).toBe("記録なし");
  });

  it("says how many more questions a conversation holds", () => {
    expect(entryTitle({ kind: "analysis", title: "地域別の売上", questions: 3 })).toBe("地域別の売上（ほか 2 件の質問）");
    expect(entryTitle({ kind: "plan", title: "月次締め", questions: 1 })).toBe("月次締め");
    expect(entryTitle({ kind: "helpdesk", title: " ", questions: 1 })).toBe("（名前なし）");
  });
});
