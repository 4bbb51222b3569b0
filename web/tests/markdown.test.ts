import { describe, expect, it } from "vitest";
import { renderMarkdown } from "@/lib/markdown";

describe("renderMarkdown", () => {
  it("escapes a <script> in the model's report", () => {
    const html = renderMarkdown("前文\n\n<script>alert(1)</script>\n\n後文");
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("escapes inline raw HTML such as <img onerror>", () => {
    const html = renderMarkdown('注意 <img src=x onerror="alert(1)"> と <b>太字</b>');
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<b>/);
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
  });

  it("drops javascript:, data: and vbscript: links but keeps http, https and mailto", () => {
    const html = renderMarkdown(
      "[a](javascript:alert(1)) [b](JAVASCRIPT:alert(1)) [c](data:text/html,x) [d](vbscript:x) " +
        "[e](https://example.jp/a) [f](http://example.jp/b) [g](mailto:keiri@example.jp)",
    );
    expect(html).not.toMatch(/href="(javascript|data|vbscript):/i);
    expect(html).not.toMatch(/href="[^"]*alert/i);
    expect(html).toContain('href="https://example.jp/a"');
    expect(html).toContain('href="http://example.jp/b"');
    expect(html).toContain('href="mailto:keiri@example.jp"');
    expect(html).toContain('rel="noopener noreferrer"');
  });

  it("drops relative and protocol-less links", () => {
    const html = renderMarkdown("[x](/api/research/sessions) [y](file:///etc/passwd)");
    expect(html).not.toContain("href=");
  });

  it("shows an image from the model as its alt text, never loads it", () => {
    const html = renderMarkdown("![請求書の例](https://evil.example/track.png) ![<x>](javascript:alert(1))");
    expect(html).not.toMatch(/<img/i);
    expect(html).toContain("請求書の例");
    expect(html).toContain("&lt;x&gt;");
    expect(html).not.toContain("evil.example");
  });

  it("renders citations [n] of known sources as buttons", () => {
    const html = renderMarkdown("登録番号の記載が必要です[1][2]。根拠は [3] と [9] です。", { sourceCount: 3 });
    expect(html).toContain('<button type="button" class="citation" data-citation="1"');
    expect(html).toContain('data-citation="2"');
    expect(html).toContain('data-citation="3"');
    expect(html).not.toContain('data-citation="9"');
    expect(html).toContain("[9]");
  });

  it("leaves citations as text without sources, and keeps Markdown links with numbers as links", () => {
    expect(renderMarkdown("要約 [1]")).not.toContain("<button");
    const html = renderMarkdown("[1](https://example.jp/doc)", { sourceCount: 2 });
    expect(html).toContain('<a href="https://example.jp/doc"');
    expect(html).not.toContain("<button");
  });

  it("renders ordinary Markdown", () => {
    const html = renderMarkdown("## 変更点\n\n- 登録番号\n- 税率ごとの消費税額");
    expect(html).toContain("<h2>変更点</h2>");
    expect(html).toContain("<li>登録番号</li>");
  });
});
