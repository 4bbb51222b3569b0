// The research page's knowledge-base choice (GET /api/research/knowledge-bases). None chosen: the
// server searches every knowledge base but the bundled sample. The sample is searched only when
// it is chosen, and then alone: choosing it drops the others, choosing another drops it.

/** One knowledge base a run can search (`kb`). */
export interface KnowledgeBaseItem {
  name: string;
  /** How the page shows it (the sample in words, not by its name). */
  label: string;
  sample: boolean;
}

/** GET /api/research/knowledge-bases. */
export interface KnowledgeBaseList {
  knowledge_bases: KnowledgeBaseItem[];
  sample: { name: string; label: string; notice: string; indexed: boolean };
}

/** `chosen` after the user ticks or unticks `name` (the sample is never chosen with another). */
export function toggleKnowledgeBase(chosen: string[], name: string, sampleName: string): string[] {
  if (chosen.includes(name)) return chosen.filter((item) => item !== name);
  if (name === sampleName) return [name];
  return [...chosen.filter((item) => item !== sampleName), name];
}

/** `chosen` without the names the server no longer lists. */
export function keepListed(chosen: string[], list: KnowledgeBaseList): string[] {
  const names = new Set(list.knowledge_bases.map((item) => item.name));
  return chosen.filter((name) => names.has(name));
}

/** The message after POST /api/research/sample (its report's counts). */
export function sampleLoadedMessage(report: { added?: unknown; updated?: unknown; unchanged?: unknown }): string {
  const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
  return (
    `サンプル資料を読み込みました（追加 ${count(report.added)} 件、更新 ${count(report.updated)} 件、` +
    `変更なし ${count(report.unchanged)} 件）。検索するナレッジベースにサンプル資料を選びました。`
  );
}
