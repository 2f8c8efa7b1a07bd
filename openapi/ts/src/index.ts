// A TypeScript client of httpkv's HTTP API: openapi-fetch, typed by the
// paths and schemas that openapi-typescript generates from the OpenAPI
// document into schema.ts (`npm run generate`, or `go generate
// ./openapi/` from the repository; never edited by hand).
//
//   const kv = createHttpkvClient("http://127.0.0.1:2378");
//   const { data, error } = await kv.GET("/v1/kv/{key}", { params: { path: { key: "a/b" } } });
//
// Every path, parameter, body and answer is typed; an error answer comes
// as `error`, an ErrorResponse object. With auth enabled, pass the token:
// createHttpkvClient(url, { headers: { Authorization: `Bearer ${token}` } }).
//
// The streams have helpers of their own (watch.ts): watch() and
// WatchStream are async iterators over fetch that reconnect by
// themselves with Last-Event-ID, without a gap or a duplicate.
import createClient, { type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
export {
  watch,
  WatchStream,
  HttpkvError,
  CompactedError,
  CanceledError,
  type WatchRequest,
  type WatchMessage,
  type StreamMessage,
  type StreamOptions,
} from "./watch.js";

/** The schemas of the API, by name: Schemas["KeyValue"], Schemas["TxnRequest"]... */
export type Schemas = components["schemas"];

/** Returns a client of the httpkv server at baseUrl. */
export function createHttpkvClient(baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}) {
  return createClient<paths>({ ...options, baseUrl });
}

/** Options for PUT /v1/kv/{key}, whose body is the value's bytes, sent as they are. */
export const rawBody = {
  bodySerializer: (body: string | Uint8Array) => body,
  headers: { "Content-Type": "application/octet-stream" },
} as const;
