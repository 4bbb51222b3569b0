import type { Source } from "@/lib/research";

function location(source: Source): string {
  const parts = [source.document ?? source.title];
  if (source.page !== null) parts.push(`${source.page} ページ`);
  if (source.row !== null) parts.push(`${source.row} 行目`);
  return parts.filter(Boolean).join(" ");
}

const SAFE_URL = /^https?:\/\//i;

/** The report's numbered sources; the selected one shows its cited passage. */
export default function SourcesPanel({
  sources,
  selected,
  onSelect,
}: {
  sources: Source[];
  selected: number | null;
  onSelect: (number: number) => void;
}) {
  const current = sources.find((source) => source.number === selected) ?? null;
  return (
    <section className="panel sources" aria-labelledby="sources-title">
      <h2 id="sources-title">出典</h2>
      {sources.length === 0 ? <p className="muted">出典はありません。</p> : null}
      <ol className="source-list">
        {sources.map((source) => (
          <li key={source.number} data-testid="source-item">
            <button
              type="button"
              className={source.number === selected ? "source-button selected" : "source-button"}
              aria-pressed={source.number === selected}
              onClick={() => onSelect(source.number)}
            >
              <span className="source-number">[{source.number}]</span>
              <span className="source-doc">{location(source)}</span>
              {source.heading || (source.title && source.title !== source.document) ? (
                <span className="source-title">{source.heading ?? source.title}</span>
              ) : null}
            </button>
          </li>
        ))}
      </ol>
      {current ? (
        <div className="passage" data-testid="passage" tabIndex={-1} id="passage" aria-live="polite">
          <h3>
            [{current.number}] {location(current)}
            {current.heading ? `「${current.heading}」` : ""}
          </h3>
          <blockquote>{current.text || "（引用箇所の本文はありません）"}</blockquote>
          {current.url && SAFE_URL.test(current.url) ? (
            <p>
              <a href={current.url} target="_blank" rel="noopener noreferrer">
                {current.url}
              </a>
            </p>
          ) : null}
        </div>
      ) : sources.length > 0 ? (
        <p className="muted">番号を選ぶと引用箇所の本文を表示します。</p>
      ) : null}
    </section>
  );
}
