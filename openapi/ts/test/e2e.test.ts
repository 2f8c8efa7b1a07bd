// End-to-end test of the generated TypeScript client against a real
// server, whose URL is in HTTPKV_URL. go test ./tests/docs/ -run
// TestTypeScriptClient starts the server, builds this and runs it, and
// checks every answer the client receives against the OpenAPI document.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CompactedError, createHttpkvClient, rawBody, watch, WatchStream, type Schemas } from "../src/index.js";

const baseUrl = process.env.HTTPKV_URL;
if (!baseUrl) {
  throw new Error("HTTPKV_URL is not set: run this through go test ./tests/docs/ -run TestTypeScriptClient");
}
const kv = createHttpkvClient(baseUrl);

async function put(key: string, value: string, query: { lease?: number; prev_kv?: boolean } = {}) {
  const { data, error, response } = await kv.PUT("/v1/kv/{key}", {
    params: { path: { key }, query },
    body: value,
    ...rawBody,
  });
  assert.equal(response.status, 200, `PUT ${key}: ${JSON.stringify(error)}`);
  assert.ok(data);
  return data;
}

// get reads a key as JSON. GET /v1/kv/{key} answers raw bytes instead
// with raw=true, so its success type is a union.
async function get(key: string, revision?: number) {
  const { data, error, response } = await kv.GET("/v1/kv/{key}", { params: { path: { key }, query: { revision } } });
  if (typeof data === "string") {
    throw new Error(`GET ${key} answered raw bytes, not JSON`);
  }
  return { data, error, response };
}

function valueOf(item: Schemas["KeyValue"]): string | undefined {
  return item.value ?? (item.value_base64 === undefined ? undefined : Buffer.from(item.value_base64, "base64").toString());
}

test("put and get", async () => {
  const first = await put("ts/a/b", "one");
  assert.equal(first.prev_kv, undefined);
  const second = await put("ts/a/b", "two", { prev_kv: true });
  assert.equal(second.header.revision, first.header.revision + 1);
  assert.equal(second.prev_kv && valueOf(second.prev_kv), "one");

  const got = await get("ts/a/b");
  assert.equal(got.response.status, 200);
  assert.equal(got.data?.kv.key, "ts/a/b");
  assert.equal(got.data?.kv.value, "two");
  assert.equal(got.data?.kv.version, 2);
  assert.equal(got.data?.kv.create_revision, first.header.revision);
  assert.equal(got.response.headers.get("ETag"), `"${second.header.revision}"`);

  const raw = await kv.GET("/v1/kv/{key}", {
    params: { path: { key: "ts/a/b" }, query: { raw: true } },
    parseAs: "text",
  });
  assert.equal(raw.data, "two");
  assert.equal(raw.response.headers.get("X-Version"), "2");

  const old = await get("ts/a/b", first.header.revision);
  assert.equal(old.data?.kv.value, "one");

  const missing = await get("ts/none");
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error?.error.code, "key_not_found");
});

test("range with pagination", async () => {
  const keys = ["ts/p/0", "ts/p/1", "ts/p/2", "ts/p/3", "ts/p/4"];
  for (const k of keys) await put(k, `v${k}`);
  const seen: string[] = [];
  let pageToken: string | undefined;
  let revision: number | undefined;
  for (let page = 0; page < 10; page++) {
    const { data, error } = await kv.GET("/v1/kv", {
      params: { query: { key: "ts/p/", prefix: true, limit: 2, page_token: pageToken } },
    });
    assert.ok(data, JSON.stringify(error));
    assert.equal(data.count, keys.length);
    revision ??= data.header.revision;
    for (const item of data.kvs) seen.push(item.key ?? "");
    if (page === 0) await put("ts/p/5", "written after the first page");
    if (!data.more) break;
    assert.ok(data.next_page_token);
    pageToken = data.next_page_token;
  }
  // Every page is read at the first page's revision.
  assert.deepEqual(seen, keys);

  const now = await kv.GET("/v1/kv", { params: { query: { key: "ts/p/", prefix: true, count_only: true } } });
  assert.equal(now.data?.count, keys.length + 1);
  assert.deepEqual(now.data?.kvs, []);
});

test("history", async () => {
  const first = await put("ts/h/k", "one");
  await put("ts/h/k", "two");
  const del = await kv.DELETE("/v1/kv/{key}", { params: { path: { key: "ts/h/k" } } });
  assert.equal(del.response.status, 200);
  // Newest first, two events a page, with the previous versions.
  const seen: string[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 5; page++) {
    const { data, error, response } = await kv.GET("/v1/history", {
      params: { query: { key: "ts/h/k", order: "descend", prev_kv: true, limit: 2, page_token: pageToken } },
    });
    assert.ok(data, JSON.stringify(error));
    assert.equal(response.headers.get("X-Revision"), String(data.header.revision));
    for (const ev of data.events) {
      seen.push(`${ev.type}@${ev.kv.mod_revision}${ev.prev_kv ? ` was ${valueOf(ev.prev_kv)}` : ""}`);
    }
    if (!data.more) break;
    assert.ok(data.next_page_token);
    pageToken = data.next_page_token;
  }
  const rev = first.header.revision;
  assert.deepEqual(seen, [`delete@${rev + 2} was two`, `put@${rev + 1} was one`, `put@${rev}`]);

  const future = await kv.GET("/v1/history", { params: { query: { key: "ts/h/k", end_revision: rev + 1000 } } });
  assert.equal(future.response.status, 400);
  assert.equal(future.error?.error.code, "future_revision");
});

test("txn", async () => {
  await put("ts/t/lock", "free");
  const body: Schemas["TxnRequest"] = {
    compare: [{ key: "ts/t/lock", target: "value", result: "equal", value: "free" }],
    success: [
      { put: { key: "ts/t/lock", value: "taken", prev_kv: true } },
      { put: { key: "ts/t/owner", value: "ts" } },
      { range: { key: "ts/t/", prefix: true } },
    ],
    failure: [{ range: { key: "ts/t/lock" } }],
  };
  const won = await kv.POST("/v1/txn", { body });
  assert.ok(won.data, JSON.stringify(won.error));
  assert.equal(won.data.succeeded, true);
  assert.equal(won.data.responses.length, 3);
  assert.equal(won.data.responses[0]?.put?.prev_kv?.value, "free");
  assert.equal(won.data.responses[1]?.put?.header.revision, won.data.header.revision);
  assert.deepEqual(
    won.data.responses[2]?.range?.kvs.map((item) => [item.key, item.value]),
    [["ts/t/lock", "taken"], ["ts/t/owner", "ts"]],
  );

  const lost = await kv.POST("/v1/txn", { body });
  assert.equal(lost.data?.succeeded, false);
  assert.equal(lost.data?.responses[0]?.range?.kvs[0]?.value, "taken");

  const nested = await kv.POST("/v1/txn", {
    body: { success: [{ txn: { compare: [{ key: "ts/t/owner", target: "version", result: "greater", version: 0 }], success: [{ delete: { key: "ts/t/", prefix: true, prev_kv: true } }] } }] },
  });
  assert.equal(nested.data?.responses[0]?.txn?.succeeded, true);
  assert.equal(nested.data?.responses[0]?.txn?.responses[0]?.delete?.deleted, 2);

  const twice = await kv.POST("/v1/txn", {
    body: { success: [{ put: { key: "ts/t/x" } }, { put: { key: "ts/t/x" } }] },
  });
  assert.equal(twice.response.status, 400);
  assert.equal(twice.error?.error.code, "invalid_argument");
});

test("leases", async () => {
  const granted = await kv.POST("/v1/leases", { body: { ttl: 60 } });
  assert.equal(granted.response.status, 201, JSON.stringify(granted.error));
  assert.ok(granted.data);
  const id = granted.data.id;
  assert.equal(granted.data.ttl, 60);
  await put("ts/l/a", "leased", { lease: id });

  const ttl = await kv.GET("/v1/leases/{id}", { params: { path: { id }, query: { keys: true } } });
  assert.equal(ttl.data?.granted_ttl, 60);
  assert.deepEqual(ttl.data?.keys, ["ts/l/a"]);
  const item = await get("ts/l/a");
  assert.equal(item.data?.kv.lease, id);

  const renewed = await kv.POST("/v1/leases/{id}/keepalive", { params: { path: { id } } });
  assert.equal(renewed.data?.ttl, 60);
  const list = await kv.GET("/v1/leases");
  assert.ok(list.data?.leases.some((l) => l.id === id));

  const revoked = await kv.DELETE("/v1/leases/{id}", { params: { path: { id } } });
  assert.equal(revoked.response.status, 200);
  const gone = await get("ts/l/a");
  assert.equal(gone.error?.error.code, "key_not_found");
  const again = await kv.POST("/v1/leases/{id}/keepalive", { params: { path: { id } } });
  assert.equal(again.response.status, 404);
  assert.equal(again.error?.error.code, "lease_not_found");
});

test("locks and elections", async () => {
  const lease = async () => {
    const granted = await kv.POST("/v1/leases", { body: { ttl: 60 } });
    assert.ok(granted.data, JSON.stringify(granted.error));
    return granted.data.id;
  };
  const [holder, waiter] = [await lease(), await lease()];
  // A name with a slash: the client escapes it as %2F.
  const name = "ts/jobs";
  const held = await kv.POST("/v1/locks/{name}", {
    params: { path: { name }, query: { timeout: "10s" } },
    body: { lease: holder },
  });
  assert.equal(held.response.status, 200, JSON.stringify(held.error));
  assert.equal(held.data?.key, `${name}/${holder.toString(16)}`);
  const waiting = kv.POST("/v1/locks/{name}", {
    params: { path: { name }, query: { timeout: "30s" } },
    body: { lease: waiter },
  });
  const released = await kv.DELETE("/v1/locks/{name}", { params: { path: { name }, query: { key: held.data?.key } } });
  assert.equal(released.response.status, 200);
  const next = await waiting;
  assert.equal(next.response.status, 200, JSON.stringify(next.error));
  assert.equal(next.data?.key, `${name}/${waiter.toString(16)}`);
  assert.ok((next.data?.header.revision ?? 0) >= (released.data?.header.revision ?? Infinity));

  const won = await kv.POST("/v1/elections/{name}/campaign", {
    params: { path: { name: "ts-db" } },
    body: { lease: holder, value: "host-a" },
  });
  assert.equal(won.response.status, 200, JSON.stringify(won.error));
  assert.ok(won.data);
  const leader = won.data.leader;
  assert.equal(leader.key, `ts-db/${holder.toString(16)}`);
  const proclaimed = await kv.POST("/v1/elections/{name}/proclaim", {
    params: { path: { name: "ts-db" } },
    body: { leader, value: "host-a2" },
  });
  assert.equal(proclaimed.response.status, 200);
  const current = await kv.GET("/v1/elections/{name}/leader", { params: { path: { name: "ts-db" } } });
  assert.equal(current.data && valueOf(current.data.kv), "host-a2");
  const resigned = await kv.POST("/v1/elections/{name}/resign", { params: { path: { name: "ts-db" } }, body: { leader } });
  assert.equal(resigned.response.status, 200);
  const notLeader = await kv.POST("/v1/elections/{name}/resign", { params: { path: { name: "ts-db" } }, body: { leader } });
  assert.equal(notLeader.response.status, 412);
  assert.equal(notLeader.error?.error.code, "not_leader");
  const none = await kv.GET("/v1/elections/{name}/leader", { params: { path: { name: "ts-db" } } });
  assert.equal(none.error?.error.code, "no_leader");
});

// readEvents yields the data of each Server-Sent Event of a stream, as
// the typed message it is, with its id.
async function* readEvents(body: ReadableStream<Uint8Array>) {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data !== undefined) yield { id, message: JSON.parse(data) as Schemas["WatchStreamMessage"] };
    }
  }
}

test("many watchers on one stream", async () => {
  const created = await kv.POST("/v1/watch/streams", { body: { watches: [{ key: "ts/s/", prefix: true }] } });
  assert.equal(created.response.status, 201, JSON.stringify(created.error));
  assert.ok(created.data);
  const { stream } = created.data;
  const [first] = created.data.watches;
  assert.ok(first);
  const path = { params: { path: { stream } } };
  const abort = new AbortController();
  const read = await kv.GET("/v1/watch/streams/{stream}", { ...path, parseAs: "stream", signal: abort.signal });
  assert.equal(read.response.status, 200);
  assert.ok(read.response.body);
  const added = await kv.POST("/v1/watch/streams/{stream}/watches", { ...path, body: { key: "ts/t", prev_kv: true } });
  assert.equal(added.response.status, 201, JSON.stringify(added.error));
  const second = added.data?.watch_id;
  assert.ok(second);

  const got: string[] = [];
  let cursor: string | undefined;
  for await (const { id, message: m } of readEvents(read.response.body)) {
    cursor = id;
    // The data says which watcher, and the union narrows on type.
    if (m.type === "created") {
      got.push(`${m.watch_id} created`);
      if (m.watch_id === second) {
        await put("ts/s/1", "one");
        await put("ts/t", "a");
        await put("ts/t", "b");
        const gone: { response: Response } = await kv.DELETE("/v1/watch/streams/{stream}/watches/{watch_id}", {
          params: { path: { stream, watch_id: first.watch_id } },
        });
        assert.equal(gone.response.status, 200);
      }
      continue;
    }
    if (m.type === "events") {
      for (const ev of m.events) got.push(`${m.watch_id} ${ev.type} ${ev.kv.key}=${ev.kv.value} was ${ev.prev_kv?.value}`);
      if (m.watch_id === second && m.events[0]?.kv.value === "b") break;
      continue;
    }
    if (m.type === "canceled") {
      got.push(`${m.watch_id} canceled ${m.reason}`);
      continue;
    }
    assert.fail(`unexpected message ${JSON.stringify(m)}`);
  }
  abort.abort();
  assert.ok(cursor, "every message has an id: the cursor to resume after");
  assert.deepEqual(got, [
    `${first.watch_id} created`,
    `${second} created`,
    `${first.watch_id} put ts/s/1=one was undefined`,
    `${second} put ts/t=a was undefined`,
    `${second} put ts/t=b was a`,
  ]);
  const deleted = await kv.DELETE("/v1/watch/streams/{stream}", path);
  assert.equal(deleted.response.status, 200);
  const again = await kv.DELETE("/v1/watch/streams/{stream}", path);
  assert.equal(again.error?.error.code, "stream_not_found");
});

test("the watch helper", async () => {
  const first = await put("ts/h/a", "one");
  await put("ts/h/a", "two");
  const abort = new AbortController();
  const got: string[] = [];
  for await (const m of watch(baseUrl, { key: "ts/h/", prefix: true, start_revision: first.header.revision, prev_kv: true }, { signal: abort.signal })) {
    if (m.type === "created") {
      assert.equal(m.start_revision, first.header.revision);
      await put("ts/h/b", "three");
      continue;
    }
    assert.equal(m.type, "events");
    for (const ev of m.events) got.push(`${ev.type} ${ev.kv.key}=${ev.kv.value} was ${ev.prev_kv?.value}`);
    if (got.length === 3) abort.abort();
  }
  assert.deepEqual(got, ["put ts/h/a=one was undefined", "put ts/h/a=two was one", "put ts/h/b=three was undefined"]);

  // From below the compact revision: a CompactedError.
  const status = await kv.GET("/v1/status");
  assert.ok(status.data);
  const compacted = await kv.POST("/v1/compact", { body: { revision: status.data.revision } });
  assert.equal(compacted.response.status, 200);
  await assert.rejects(
    async () => {
      for await (const _ of watch(baseUrl, { key: "ts/h/", prefix: true, start_revision: first.header.revision })) {
        // nothing: the first message ends it
      }
    },
    (e: unknown) => e instanceof CompactedError && e.compactRevision === status.data?.revision,
  );
});

test("the stream helper", async () => {
  const abort = new AbortController();
  const { stream, ids } = await WatchStream.create(baseUrl, [{ key: "ts/m/", prefix: true }], { signal: abort.signal });
  const got: string[] = [];
  let second = 0;
  for await (const m of stream.messages()) {
    if (m.type === "created") {
      got.push(`${m.watch_id} created`);
      if (m.watch_id === ids[0]) {
        second = await stream.add({ key: "ts/n" });
      } else {
        await put("ts/m/1", "x");
        await put("ts/n", "y");
      }
      continue;
    }
    if (m.type === "events") {
      for (const ev of m.events) got.push(`${m.watch_id} ${ev.kv.key}=${ev.kv.value}`);
      if (m.watch_id === second) await stream.cancel(second);
      continue;
    }
    if (m.type === "canceled") {
      got.push(`${m.watch_id} canceled ${m.reason}`);
      await stream.close();
    }
  }
  assert.deepEqual(got, [`${ids[0]} created`, `${second} created`, `${ids[0]} ts/m/1=x`, `${second} ts/n=y`, `${second} canceled watch deleted`]);
});
