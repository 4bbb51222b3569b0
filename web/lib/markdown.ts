// The model's report (Markdown) as safe HTML: markdown-it with `html: false` escapes any raw
// HTML, links keep only http, https and mailto targets, images are shown as their alt text
// (the model does not get to load anything), and citations [n] become buttons that open
// source n in the sources panel (the page listens for clicks on [data-citation]).

import MarkdownIt, { type StateInline } from "markdown-it";

const SAFE_LINK = /^(https?:|mailto:)/i;

export interface RenderOptions {
  /** Citations [1]..[sourceCount] become buttons; any other [n] stays text. 0 = none. */
  sourceCount: number;
}

function citationRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x5b /* [ */) return false;
  const match = /^\[(\d{1,3})\](?![(:])/.exec(src.slice(pos));
  if (!match) return false;
  const number = Number(match[1]);
  const max = (state.env as { sourceCount?: number }).sourceCount ?? 0;
  if (number < 1 || number > max) return false;
  if (!silent) {
    const token = state.push("citation", "", 0);
    token.meta = { number };
  }
  state.pos += match[0].length;
  return true;
}

function createRenderer(): InstanceType<typeof MarkdownIt> {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
  md.validateLink = (url: string) => SAFE_LINK.test(url.trim());
  md.inline.ruler.before("link", "citation", citationRule);
  md.renderer.rules.citation = (tokens, idx) => {
    const number = (tokens[idx]?.meta as { number: number }).number;
    return `<button type="button" class="citation" data-citation="${number}" aria-label="出典 ${number} を表示">[${number}]</button>`;
  };
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    if (!token) return "";
    const alt = self.renderInlineAsText(token.children ?? [], options, env);
    return alt ? `<span class="image-alt">${md.utils.escapeHtml(alt)}</span>` : "";
  };
  const defaultLinkOpen =
    md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    if (token && /^https?:/i.test(String(token.attrGet("href") ?? ""))) {
      token.attrSet("target", "_blank");
      token.attrSet("rel", "noopener noreferrer");
    }
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  return md;
}

const renderer = createRenderer();

/** Sanitised HTML for the report (or a partial summary). */
export function renderMarkdown(markdown: string, options: RenderOptions = { sourceCount: 0 }): string {
  return renderer.render(markdown, { sourceCount: options.sourceCount });
}
