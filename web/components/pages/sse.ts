// Server-sent events read from a fetch body (a POST cannot use EventSource): an incremental parser.

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/** Feed it text as it arrives; it returns the events completed so far (comments are skipped). */
export class SseParser {
  private buffer = "";
  private id: string | null = null;
  private event = "";
  private data: string[] = [];

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const done: SseMessage[] = [];
    let end = this.buffer.search(/\r\n|\r|\n/);
    while (end >= 0) {
      const line = this.buffer.slice(0, end);
      const newline = this.buffer.startsWith("\r\n", end) ? 2 : 1;
      this.buffer = this.buffer.slice(end + newline);
      const message = this.line(line);
      if (message) done.push(message);
      end = this.buffer.search(/\r\n|\r|\n/);
    }
    return done;
  }

  private line(line: string): SseMessage | null {
    if (line === "") {
      if (this.data.length === 0 && !this.event) return null;
      const message = { id: this.id, event: this.event || "message", data: this.data.join("\n") };
      this.event = "";
      this.data = [];
      return message;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "event") this.event = value;
    else if (field === "id") this.id = value;
    return null;
  }
}

/** Every event of a streamed response body, as it arrives. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    yield* parser.push(decoder.decode() + "\n\n");
  } finally {
    reader.releaseLock();
  }
}
