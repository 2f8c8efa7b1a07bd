// End-to-end test of the generated TypeScript client against a real
// server, whose URL is in HTTPKV_URL. go test ./tests/ -run
// TestTypeScriptClient starts the server, builds this and runs it, and
// checks every answer the client receives against the OpenAPI document.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createHttpkvClient, rawBody, type Schemas } from "../src/index.js";

const baseUrl = process.env.HTTPKV_URL;
if (!baseUrl) {
  throw new Error("HTTPKV_URL is not set: run this through go test ./tests/ -run TestTypeScriptClient");
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
