"use client";

import { useMemo } from "react";
import { renderMarkdown } from "@/lib/markdown";

/**
 * Markdown from the model, rendered by lib/markdown (html: false escapes raw HTML, unsafe links
 * and images are dropped), so the HTML set here never carries the model's own markup.
 * A click on a citation button calls onCite with its number.
 */
export default function Markdown({
  text,
  sourceCount = 0,
  onCite,
  className,
  testId,
}: {
  text: string;
  sourceCount?: number;
  onCite?: (number: number) => void;
  className?: string;
  testId?: string;
}) {
  const html = useMemo(() => renderMarkdown(text, { sourceCount }), [text, sourceCount]);
  const onClick = (event: React.MouseEvent<HTMLDivElement>) => {
    const target = (event.target as HTMLElement).closest<HTMLElement>("[data-citation]");
    if (!target || !onCite) return;
    onCite(Number(target.dataset.citation));
  };
  return (
    <div
      className={className ? `markdown ${className}` : "markdown"}
      data-testid={testId}
      onClick={onClick}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
