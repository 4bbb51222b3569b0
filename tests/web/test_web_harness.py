"""The browser harness itself, over a tiny hand-written page that streams a research
run with fetch and reconnects with Last-Event-ID: Chromium drives it through the proxy,
the proxy cuts the stream mid-run, the page resumes and gets every event exactly once.
(The real web UI's tests, test_web_e2e.py, need web/out.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from browser_support import QUESTION, REPORT, Site

PAGE = """<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><title>harness</title></head>
<body>
<input data-testid="question"><button data-testid="start">調べる</button>
<p data-testid="connection-status">待機中</p>
<ol id="events"></ol><pre data-testid="report"></pre>
<script>
window.ids = []; window.reconnects = 0; window.finished = false;
const status = document.querySelector('[data-testid=connection-status]');
async function stream(url) {
  let last = 0;
  for (;;) {
    try {
      const headers = last ? {'Last-Event-ID': String(last)} : {};
      const response = await fetch(url, {headers});
      status.textContent = '接続中';
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer += value;
        let at;
        while ((at = buffer.indexOf('\\n\\n')) >= 0) {
          const block = buffer.slice(0, at); buffer = buffer.slice(at + 2);
          let id = 0, kind = '', data = '';
          for (const line of block.split('\\n')) {
            if (line.startsWith('id: ')) id = Number(line.slice(4));
            else if (line.startsWith('event: ')) kind = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (!data) continue;
          last = id; window.ids.push(id);
          const item = document.createElement('li');
          item.dataset.testid = 'progress-item'; item.textContent = kind;
          document.getElementById('events').append(item);
          const event = JSON.parse(data);
          if (kind === 'report_chunk')
            document.querySelector('[data-testid=report]').textContent += event.payload.text;
          if (['done', 'failed', 'cancelled'].includes(kind)) {
            window.finished = true; status.textContent = '完了'; return;
          }
        }
      }
      throw new Error('the stream ended before the run');
    } catch (error) {
      window.reconnects += 1; status.textContent = '再接続中';
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}
document.querySelector('[data-testid=start]').onclick = async () => {
  const response = await fetch('/api/research', {method: 'POST',
    headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({question: document.querySelector('[data-testid=question]').value,
                          kb: ['research']})});
  const run = await response.json();
  window.runId = run.run_id;
  await stream(run.events_url);
};
</script></body></html>
"""


def test_a_cut_stream_resumes_in_chromium_without_loss_or_repeat(
    tmp_path: Path, site: Callable[..., Site], page: Any
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text(PAGE, encoding="utf-8")
    running = site(out, delay_s=0.5)

    page.goto(running.url + "/")
    page.get_by_test_id("question").fill(QUESTION)
    page.get_by_test_id("start").click()
    page.get_by_test_id("progress-item").first.wait_for()
    assert running.proxy.cut() > 0
    page.wait_for_function("() => window.reconnects > 0")
    page.wait_for_function("() => window.finished", timeout=60_000)

    ids = page.evaluate("window.ids")
    run_id = page.evaluate("window.runId")
    state = httpx.get(f"{running.server.url}/api/research/{run_id}").json()
    assert ids == list(range(1, ids[-1] + 1))
    assert state["status"] == "success"
    assert state["last_event_id"] == ids[-1]
    assert (
        page.get_by_test_id("report").inner_text().strip() == state["result"]["report_md"].strip()
    )
    assert "登録番号の記載が必要です" in state["result"]["report_md"]
    assert REPORT.splitlines()[0] in state["result"]["report_md"]
