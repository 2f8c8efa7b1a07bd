// End-to-end test of a client that @hey-api/openapi-ts, a generator the
// project does not otherwise use, makes of the OpenAPI document: put, get,
// list, txn, lease, and a watch and a stream of many watchers whose
// Server-Sent Events arrive typed.
// go test ./tests/docs/ -run TestHeyAPIClient generates the client into
// ./client beside a copy of this file, compiles both and runs them under
// node against a real server, whose URL is in HTTPKV_URL.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  addStreamWatch,
  createWatchStream,
  deleteWatchStream,
  getKey,
  grantLease,
  keepAliveLease,
  leaseTimeToLive,
  listKeys,
  putKey,
  readWatchStream,
  revokeLease,
  runTxn,
  watch,
  type KeyValue,
  type WatchMessage,
  type WatchStreamMessage,
} from "./client";
import { client } from "./client/client.gen";

const baseUrl = process.env.HTTPKV_URL;
if (!baseUrl) {
  throw new Error("HTTPKV_URL is not set: run this through go test ./tests/docs/ -run TestHeyAPIClient");
}
client.setConfig({ baseUrl });

async function put(key: string, value: string, lease?: number) {
  const { data, error, response } = await putKey({ path: { key }, query: { lease }, body: value });
  assert.equal(response.status, 200, `PUT ${key}: ${JSON.stringify(error)}`);
  assert.ok(data);
  return data;
}

function valueOf(kv: KeyValue): string | undefined {
  return kv.value ?? (kv.value_base64 === undefined ? undefined : Buffer.from(kv.value_base64, "base64").toString());
}

test("put and get", async () => {
  const first = await put("hey/a/b", "one");
  const second = await put("hey/a/b", "two");
  assert.equal(second.header.revision, first.header.revision + 1);

  const got = await getKey({ path: { key: "hey/a/b" } });
  assert.equal(got.response.status, 200);
  assert.equal(got.data?.kv.key, "hey/a/b");
  assert.equal(got.data?.kv.value, "two");
  assert.equal(got.data?.kv.version, 2);

  const old = await getKey({ path: { key: "hey/a/b" }, query: { revision: first.header.revision } });
  assert.equal(old.data?.kv.value, "one");

  const raw = await getKey({ path: { key: "hey/a/b" }, query: { raw: true }, parseAs: "text" });
  assert.equal(raw.data as unknown, "two");
  assert.equal(raw.response.headers.get("Content-Type"), "application/octet-stream");

  const bytes = await putKey({ path: { key: "hey/bytes" }, body: new Blob([new Uint8Array([0xff, 0x00, 0x01])]) });
  assert.equal(bytes.response.status, 200);
  const gotBytes = await getKey({ path: { key: "hey/bytes" } });
  assert.equal(gotBytes.data?.kv.value_base64, Buffer.from([0xff, 0x00, 0x01]).toString("base64"));

  const missing = await getKey({ path: { key: "hey/none" } });
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error?.error.code, "key_not_found");
});

test("list, page by page", async () => {
  const keys = ["hey/p/0", "hey/p/1", "hey/p/2", "hey/p/3", "hey/p/4"];
  for (const k of keys) await put(k, `v${k}`);
  const seen: string[] = [];
  let page_token: string | undefined;
  let revision: number | undefined;
  for (let page = 0; page < 10; page++) {
    const { data, error } = await listKeys({ query: { key: "hey/p/", prefix: true, limit: 2, page_token } });
    assert.ok(data, JSON.stringify(error));
    assert.equal(data.count, keys.length);
    revision ??= data.header.revision;
    assert.equal(data.header.revision, revision, "every page at the first page's revision");
    for (const kv of data.kvs) {
      seen.push(kv.key ?? "");
      assert.equal(valueOf(kv), `v${kv.key}`);
    }
    if (!data.more) break;
    page_token = data.next_page_token;
  }
  assert.deepEqual(seen, keys);
});

test("txn", async () => {
  const body = {
    compare: [{ key: "hey/leader", target: "create" as const, result: "equal" as const, create_revision: 0 }],
    success: [{ put: { key: "hey/leader", value: "me" } }],
    failure: [{ range: { key: "hey/leader" } }],
  };
  const won = await runTxn({ body });
  assert.equal(won.data?.succeeded, true, JSON.stringify(won.error));
  const lost = await runTxn({ body });
  assert.equal(lost.data?.succeeded, false);
  const holder = lost.data?.responses[0]?.range?.kvs[0];
  assert.ok(holder);
  assert.equal(valueOf(holder), "me");
});

test("lease", async () => {
  const granted = await grantLease({ body: { ttl: 60 } });
  assert.equal(granted.response.status, 201, JSON.stringify(granted.error));
  const id = granted.data?.id;
  assert.ok(id);
  await put("hey/svc/1", "10.0.0.7:8080", id);
  const alive = await keepAliveLease({ path: { id } });
  assert.equal(alive.data?.id, id);
  const ttl = await leaseTimeToLive({ path: { id }, query: { keys: true } });
  assert.deepEqual(ttl.data?.keys, ["hey/svc/1"]);
  const revoked = await revokeLease({ path: { id } });
  assert.equal(revoked.response.status, 200);
  const gone = await getKey({ path: { key: "hey/svc/1" } });
  assert.equal(gone.response.status, 404);
});

test("watch: typed Server-Sent Events", async () => {
  const abort = new AbortController();
  const { stream } = await watch({
    query: { key: "hey/w/", prefix: true, prev_kv: true },
    signal: abort.signal,
    sseMaxRetryAttempts: 1,
  });
  const got: WatchMessage[] = [];
  let startRevision = 0;
  for await (const m of stream) {
    got.push(m);
    // The data alone says which message this is: a client sees no event
    // line, and the union narrows on type.
    if (m.type === "created") {
      startRevision = m.start_revision;
      await put("hey/w/1", "one");
      await put("hey/w/1", "two");
      continue;
    }
    if (m.type === "events") {
      assert.equal(m.events.length, 1);
      const [ev] = m.events;
      assert.equal(ev?.type, "put");
      assert.equal(ev?.kv.key, "hey/w/1");
      if (ev?.kv.value === "two") {
        assert.equal(ev.prev_kv?.value, "one");
        break;
      }
      continue;
    }
    assert.fail(`unexpected message ${JSON.stringify(m)}`);
  }
  abort.abort();
  assert.deepEqual(
    got.map((m) => m.type),
    ["created", "events", "events"],
  );
  const events = got.filter((m): m is Extract<WatchMessage, { type: "events" }> => m.type === "events");
  assert.equal(events[0]?.header.revision, startRevision);
  assert.equal(events[1]?.header.revision, startRevision + 1);
});

test("a stream of many watchers: typed Server-Sent Events", async () => {
  const created = await createWatchStream({ body: { watches: [{ key: "hey/s/", prefix: true }] } });
  assert.equal(created.response.status, 201, JSON.stringify(created.error));
  const stream = created.data?.stream;
  assert.ok(stream);
  const abort = new AbortController();
  const { stream: messages } = await readWatchStream({
    path: { stream },
    signal: abort.signal,
    sseMaxRetryAttempts: 1,
  });
  const got: WatchStreamMessage[] = [];
  for await (const m of messages) {
    got.push(m);
    if (m.type === "created" && m.watch_id === 1) {
      const added: { data?: { watch_id: number }; error?: unknown } = await addStreamWatch({ path: { stream }, body: { key: "hey/t" } });
      assert.equal(added.data?.watch_id, 2, JSON.stringify(added.error));
      continue;
    }
    if (m.type === "created") {
      await put("hey/t", "t");
      await put("hey/s/1", "s");
      continue;
    }
    if (m.type === "events" && m.watch_id === 1) break;
  }
  abort.abort();
  assert.deepEqual(
    got.map((m) => `${m.type} ${m.watch_id}`),
    ["created 1", "created 2", "events 2", "events 1"],
  );
  const deleted = await deleteWatchStream({ path: { stream } });
  assert.equal(deleted.response.status, 200);
});
