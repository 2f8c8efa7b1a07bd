// Watch helpers over fetch: a watch, and a stream of many watchers, as
// async iterators that reconnect by themselves and resume with
// Last-Event-ID, without a gap or a duplicate. They need nothing but
// fetch and ReadableStream: browsers, and Node.js 18 or later, without
// an EventSource.
import { readSSE, type SSEMessage } from "./sse.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** A watch: the range selectors and options of GET /v1/watch. */
export type WatchRequest = Schemas["WatchRequest"];

/** A message a watch yields: created first, then events and progress. */
export type WatchMessage = Schemas["WatchCreated"] | Schemas["WatchEvents"] | Schemas["WatchProgress"];

/** Options of watch and WatchStream. */
export interface StreamOptions {
  /** Ends the watch: the iteration stops, without an error. */
  signal?: AbortSignal;
  /**
   * Headers of every request, such as Authorization. A function is
   * called before each, so that a token can be renewed.
   */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch;
  /** Hears of every lost connection, before the watch reconnects. */
  onRetry?: (cause: unknown) => void;
}

/** An error answer of the API: {"error": {"code", "message", ...}}. */
export class HttpkvError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(code ? `${code}: ${message}` : `${status}: ${message}`);
    this.name = "HttpkvError";
  }
}

/**
 * Ends a watch whose history is compacted: list again, and watch from
 * the list's revision + 1.
 */
export class CompactedError extends Error {
  constructor(
    readonly compactRevision: number,
    readonly revision: number,
    /** The watcher, on a stream of many. */
    readonly watchId?: number,
  ) {
    super(`compacted: the history needed is below the compact revision ${compactRevision}; list again and watch from the list's revision`);
    this.name = "CompactedError";
  }
}

/** Ends a watch the server will not go on with: permission denied, watch deleted... */
export class CanceledError extends Error {
  constructor(
    readonly reason: string,
    readonly watchId?: number,
  ) {
    super(`canceled: ${reason}`);
    this.name = "CanceledError";
  }
}

/** A stream that is not what the API sends. */
class StreamError extends Error {}

/** Whether the server takes a canceled stream back (it shut down, a token expired). */
function resumable(reason: string): boolean {
  return !["permission denied", "user deleted", "watch deleted", "stream deleted"].includes(reason);
}

/** What a reader does after a message. */
interface Outcome<T> {
  step: "next" | "reconnect" | "stop";
  out?: T;
  error?: Error;
}

/** A connection's request: its path, and the cursor it resumes after. */
interface Connection {
  path: string;
  cursor?: string;
}

interface Follow<T> {
  baseUrl: string;
  options: StreamOptions;
  /** Makes the request of a connection; cursor is the id of the last message handled. */
  open: (cursor: string | undefined) => Promise<Connection>;
  handle: (m: SSEMessage) => Outcome<T>;
  /** Whether to retry after an error answer that is not retried anyway. */
  refused?: (e: HttpkvError) => boolean;
}

const firstRetry = 50;

/** Reads a stream of Server-Sent Events, reconnecting after a lost connection. */
async function* follow<T>(f: Follow<T>): AsyncGenerator<T> {
  const { signal, onRetry } = f.options;
  let delay = firstRetry;
  let maxDelay = 1000;
  let cursor: string | undefined;
  while (!signal?.aborted) {
    let cause: unknown;
    let connected = false;
    try {
      const conn = await f.open(cursor);
      cursor = conn.cursor;
      const headers = new Headers(await resolveHeaders(f.options.headers));
      headers.set("Accept", "text/event-stream");
      if (cursor !== undefined) headers.set("Last-Event-ID", cursor);
      const res = await (f.options.fetch ?? fetch)(f.baseUrl.replace(/\/$/, "") + conn.path, { headers, signal });
      if (res.status !== 200) throw await answerError(res);
      if (!res.body) throw new Error("the answer has no body");
      connected = true;
      let ended = false;
      for await (const m of readSSE(res.body, (ms) => (maxDelay = ms))) {
        let o: Outcome<T>;
        try {
          o = f.handle(m);
        } catch (e) {
          throw new StreamError(String(e));
        }
        if (o.out !== undefined) yield o.out;
        if (o.error && o.step === "stop") throw o.error;
        if (o.step === "stop") return;
        if (o.step === "reconnect") {
          ended = true;
          break;
        }
        if (m.id !== undefined) cursor = m.id;
      }
      cause = ended ? new Error("the server ended the stream; resuming") : new Error("the connection was lost");
    } catch (e) {
      if (signal?.aborted) return;
      if (e instanceof CompactedError || e instanceof CanceledError || e instanceof StreamError) throw e;
      if (e instanceof HttpkvError && !(e.status === 429 || e.status >= 500 || f.refused?.(e))) throw e;
      cause = e;
    }
    if (connected) delay = firstRetry;
    onRetry?.(cause);
    await sleep(delay - delay / 5 + Math.random() * ((2 * delay) / 5), signal);
    delay = Math.min(2 * delay, maxDelay);
  }
}

async function resolveHeaders(h: StreamOptions["headers"]): Promise<HeadersInit | undefined> {
  return typeof h === "function" ? await h() : h;
}

async function answerError(res: Response): Promise<HttpkvError> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (body?.error?.code) return new HttpkvError(res.status, body.error.code, body.error.message ?? "", body);
  } catch {
    // not the API's error
  }
  return new HttpkvError(res.status, "", text.slice(0, 200), text);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Any message of a watch, a stream of many watchers, as sent. */
type AnyMessage = {
  type: string;
  watch_id?: number;
  header?: { revision: number };
  start_revision?: number;
  compact_revision?: number;
  reason?: string;
};

function parse(m: SSEMessage): AnyMessage {
  const msg = JSON.parse(m.data) as AnyMessage;
  if (typeof msg?.type !== "string") throw new Error(`a message of the stream has no type: ${m.data.slice(0, 200)}`);
  return msg;
}

/**
 * Watches a key or a range: GET /v1/watch. Yields the created message,
 * then one message per revision with events (and progress messages, if
 * asked for). When the connection is lost, or the server restarts, it
 * reconnects with Last-Event-ID and goes on right after the last
 * revision it yielded: nothing is missed or repeated (the created message
 * of a reconnection is not yielded again). The iteration ends when
 * signal aborts; it throws a CompactedError when the history it needs is
 * compacted, a CanceledError when the server ends the watch for good,
 * and an HttpkvError when the server refuses it.
 *
 *     for await (const m of watch(url, { key: "config/", prefix: true }, { signal })) {
 *       if (m.type === "events") for (const ev of m.events) console.log(ev.type, ev.kv.key, ev.kv.value);
 *     }
 */
export async function* watch(baseUrl: string, request: WatchRequest, options: StreamOptions = {}): AsyncGenerator<WatchMessage> {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(request)) {
    if (value !== undefined && value !== false && value !== "") q.set(name, String(value));
  }
  let created = false;
  yield* follow<WatchMessage>({
    baseUrl,
    options,
    open: async (cursor) => ({ path: `/v1/watch?${q}`, cursor }),
    handle: (m) => {
      const msg = parse(m);
      switch (msg.type) {
        case "created":
          if (created) return { step: "next" };
          created = true;
          return { step: "next", out: msg as WatchMessage };
        case "compacted":
          return { step: "stop", error: new CompactedError(msg.compact_revision ?? 0, msg.header?.revision ?? 0) };
        case "canceled":
          if (resumable(msg.reason ?? "")) return { step: "reconnect" };
          return { step: "stop", error: new CanceledError(msg.reason ?? "") };
      }
      return { step: "next", out: msg as WatchMessage };
    },
  });
}

/**
 * A message of a stream of many watchers, for one of them; watch_id is
 * the watcher's ID as WatchStream gave it, the same when the stream is
 * made again. A compacted message carries a CompactedError, a canceled
 * one that the server ended for good a CanceledError, in error.
 */
export type StreamMessage = Schemas["WatchStreamMessage"] & { error?: CompactedError | CanceledError };

interface StreamWatcher {
  id: number;
  request: WatchRequest;
  next: number; // the revision to resume from; 0 before created
  created: boolean;
}

/**
 * A stream of many watchers (/v1/watch/streams): one connection for any
 * number of watches, added and canceled while it runs. Read it with
 * messages(); it reconnects with Last-Event-ID, and when the server has
 * forgotten the stream (after a restart) makes it again, each watcher
 * from the revision after the last it yielded. One messages() loop at a
 * time.
 *
 *     const { stream, ids } = await WatchStream.create(url, [{ key: "config/", prefix: true }]);
 *     for await (const m of stream.messages()) ...
 */
export class WatchStream {
  private id = "";
  private cursor: string | undefined;
  private last = 0;
  private watchers = new Map<number, StreamWatcher>();
  private byServer = new Map<number, StreamWatcher>();
  private closed = false;
  // Calls that change the stream run one at a time, so that the reader
  // always knows the watchers those calls made.
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly baseUrl: string,
    private readonly options: StreamOptions,
  ) {}

  /** Makes a stream with watches: POST /v1/watch/streams. */
  static async create(baseUrl: string, watches: WatchRequest[], options: StreamOptions = {}): Promise<{ stream: WatchStream; ids: number[] }> {
    const s = new WatchStream(baseUrl, options);
    const ids = watches.map((request) => {
      const w = { id: ++s.last, request, next: 0, created: false };
      s.watchers.set(w.id, w);
      return w.id;
    });
    await s.serially(() => s.make());
    return { stream: s, ids };
  }

  private serially<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => {});
    return run;
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers = new Headers(await resolveHeaders(this.options.headers));
    if (body !== undefined) headers.set("Content-Type", "application/json");
    const res = await (this.options.fetch ?? fetch)(this.baseUrl.replace(/\/$/, "") + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: this.options.signal,
    });
    if (res.status >= 300) throw await answerError(res);
    return res.json();
  }

  /** Makes the stream on the server with every live watcher from where it is. */
  private async make(): Promise<void> {
    const live = [...this.watchers.values()].sort((a, b) => a.id - b.id);
    const watches = live.map((w) => ({ ...w.request, start_revision: w.next || w.request.start_revision }));
    const out = (await this.call("POST", "/v1/watch/streams", { watches })) as Schemas["WatchStreamCreated"];
    if (out.watches.length !== live.length) throw new Error(`${live.length} watches asked for, ${out.watches.length} made`);
    this.id = out.stream;
    this.cursor = undefined;
    this.byServer = new Map(live.map((w, i) => [out.watches[i]!.watch_id, w]));
  }

  private get path(): string {
    return `/v1/watch/streams/${encodeURIComponent(this.id)}`;
  }

  /** Adds a watch and returns its ID: POST /v1/watch/streams/{stream}/watches. */
  add(request: WatchRequest): Promise<number> {
    return this.serially(async () => {
      if (this.closed) throw new Error("the watch stream is closed");
      const w: StreamWatcher = { id: this.last + 1, request, next: 0, created: false };
      if (this.id) {
        try {
          const out = (await this.call("POST", `${this.path}/watches`, request)) as Schemas["WatchAdded"];
          this.byServer.set(out.watch_id, w);
        } catch (e) {
          if (!(e instanceof HttpkvError && e.code === "stream_not_found")) throw e;
          this.id = ""; // messages() makes it again, with this watch
        }
      }
      this.last++;
      this.watchers.set(w.id, w);
      return w.id;
    });
  }

  /** Ends the watch id; messages() yields its canceled message (watch deleted). */
  cancel(id: number): Promise<void> {
    return this.serially(async () => {
      if (!this.watchers.delete(id)) throw new Error(`no watch ${id} on this stream`);
      for (const [sid, w] of this.byServer) {
        if (w.id !== id || !this.id) continue;
        try {
          await this.call("DELETE", `${this.path}/watches/${sid}`);
        } catch (e) {
          if (!(e instanceof HttpkvError && (e.code === "stream_not_found" || e.code === "watch_not_found"))) throw e;
        }
      }
    });
  }

  /** Ends the stream and every watcher: DELETE /v1/watch/streams/{stream}. */
  close(): Promise<void> {
    return this.serially(async () => {
      if (this.closed) return;
      this.closed = true;
      if (!this.id) return;
      try {
        await this.call("DELETE", this.path);
      } catch (e) {
        if (!(e instanceof HttpkvError && e.code === "stream_not_found")) throw e;
      }
    });
  }

  /**
   * Yields every watcher's messages: its created message, then one
   * message per revision with events (and progress, if asked for); a
   * compacted or canceled message ends that watcher alone. Ends when
   * signal aborts or after close().
   */
  async *messages(): AsyncGenerator<StreamMessage> {
    try {
      yield* this.follow();
    } catch (e) {
      if (this.closed) return;
      throw e;
    }
  }

  private follow(): AsyncGenerator<StreamMessage> {
    return follow<StreamMessage>({
      baseUrl: this.baseUrl,
      options: this.options,
      open: () =>
        this.serially(async () => {
          if (this.closed) throw new CanceledError("stream deleted");
          if (!this.id) await this.make();
          return { path: this.path, cursor: this.cursor };
        }),
      refused: (e) => {
        if (e.code !== "stream_not_found") return false;
        this.id = "";
        return !this.closed;
      },
      handle: (m) => this.take(m),
    });
  }

  private take(m: SSEMessage): Outcome<StreamMessage> {
    if (m.id !== undefined) this.cursor = m.id;
    if (this.closed) return { step: "stop" };
    const msg = parse(m);
    const w = this.byServer.get(msg.watch_id ?? 0);
    if (!w || (this.watchers.get(w.id) !== w && msg.type !== "canceled")) return { step: "next" };
    const out = { ...msg, watch_id: w.id } as StreamMessage;
    switch (msg.type) {
      case "created":
        w.next = Math.max(w.next, msg.start_revision ?? 0);
        if (w.created) return { step: "next" };
        w.created = true;
        break;
      case "events":
      case "progress":
        w.next = Math.max(w.next, (msg.header?.revision ?? 0) + 1);
        break;
      case "compacted":
        this.watchers.delete(w.id);
        out.error = new CompactedError(msg.compact_revision ?? 0, msg.header?.revision ?? 0, w.id);
        break;
      case "canceled":
        if (msg.reason === "stream deleted") return { step: "stop", error: new CanceledError(msg.reason) };
        if (resumable(msg.reason ?? "")) return { step: "next" };
        this.watchers.delete(w.id);
        if (msg.reason !== "watch deleted") out.error = new CanceledError(msg.reason ?? "", w.id);
        break;
    }
    return { step: "next", out };
  }
}
