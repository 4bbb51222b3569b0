import { describe, expect, it } from "vitest";
import { keepListed, type KnowledgeBaseList, sampleLoadedMessage, toggleKnowledgeBase } from "@/lib/knowledgeBases";

const LIST: KnowledgeBaseList = {
  knowledge_bases: [
    { name: "kitei", label: "kitei", sample: false },
    { name: "manuals", label: "manuals", sample: false },
    { name: "research", label: "同梱のサンプル資料（架空の会社）", sample: true },
  ],
  sample: { name: "research", label: "同梱のサンプル資料（架空の会社）", notice: "…", indexed: true },
};

describe("toggleKnowledgeBase", () => {
  it("adds and removes the user's knowledge bases", () => {
    expect(toggleKnowledgeBase([], "kitei", "research")).toEqual(["kitei"]);
    expect(toggleKnowledgeBase(["kitei"], "manuals", "research")).toEqual(["kitei", "manuals"]);
    expect(toggleKnowledgeBase(["kitei", "manuals"], "kitei", "research")).toEqual(["manuals"]);
  });

  it("never chooses the sample with another knowledge base", () => {
    expect(toggleKnowledgeBase(["kitei", "manuals"], "research", "research")).toEqual(["research"]);
    expect(toggleKnowledgeBase(["research"], "kitei", "research")).toEqual(["kitei"]);
    expect(toggleKnowledgeBase(["research"], "research", "research")).toEqual([]);
  });
});

describe("keepListed and the sample message", () => {
  it("drops names the server no longer lists", () => {
    expect(keepListed(["kitei", "gone"], LIST)).toEqual(["kitei"]);
  });

  it("says what was loaded and that the sample is now chosen", () => {
    expect(sampleLoadedMessage({ added: ["a.md", "b.md"], updated: [], unchanged: ["c.md"] })).toBe(
      "サンプル資料を読み込みました（追加 2 件、更新 0 件、変更なし 1 件）。検索するナレッジベースにサンプル資料を選びました。",
    );
  });
});
