// A reader of Server-Sent Events over fetch: it works wherever fetch
// and ReadableStream do (browsers, Node.js 18 and later), and, unlike
// EventSource, sends headers (Authorization) and reports why a stream
// ended.

/** One message of a Server-Sent Events stream. */
export interface SSEMessage {
  /** The id field of this message, if it had one. */
  id?: string;
  /** The event field; undefined for the default event ("message"). */
  event?: string;
  data: string;
}

/** The longest message read, in characters: a revision of large values comes in one. */
const maxMessage = 256 << 20;

/**
 * Yields the messages of a stream of Server-Sent Events as the HTML
 * standard frames them, and the last retry field through onRetryField.
 */
export async function* readSSE(
  body: ReadableStream<Uint8Array>,
  onRetryField?: (ms: number) => void,
): AsyncGenerator<SSEMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let size = 0;
  let msg: { id?: string; event?: string } = {};
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        // A stream that ends inside a message, or between them: either
        // way the connection is gone, and the caller decides.
        return;
      }
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        let line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line === "") {
          if (data.length > 0) yield { ...msg, data: data.join("\n") };
          data = [];
          size = 0;
          msg = {};
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: keep-alive
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        switch (field) {
          case "data":
            size += value.length + 1;
            if (size > maxMessage) throw new Error(`a message of the stream is over ${maxMessage >> 20} MiB`);
            data.push(value);
            break;
          case "id":
            if (!value.includes("\0")) msg.id = value;
            break;
          case "event":
            msg.event = value;
            break;
          case "retry":
            if (/^\d+$/.test(value)) onRetryField?.(Number(value));
            break;
        }
      }
      if (buffer.length > maxMessage) throw new Error(`a line of the stream is over ${maxMessage >> 20} MiB`);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
