// The API, call by call: every endpoint the console uses, with keys and
// values as bytes, and with what each call is for, so that a refusal can
// say which permission was missing.

import { display, fromBase64, pathOf, segment, text, toBase64, utf8 } from "./bytes.js";
import { TO_END, isPrefix, param, prefix, rangeQuery } from "./range.js";

/** ownerRange is the range of a lock or an election called name: every key under name/. */
export function ownerRange(name) {
  const p = new Uint8Array(name.length + 1);
  p.set(name);
  p[name.length] = 0x2f; // "/"
  return prefix(p);
}

/** describe names a range in words: "the key a", "every key under a/", "every key". */
export function describe(r) {
  if (r.end === null) return `the key ${display(r.key)}`;
  const toEnd = r.end.length === 1 && r.end[0] === 0;
  if (toEnd && r.key.length === 0) return "every key";
  if (isPrefix(r)) return `every key under ${display(r.key)}`;
  if (toEnd) return `every key from ${display(r.key)} on`;
  return `the keys from ${display(r.key)} to ${display(r.end)}`;
}

/** leaseKeys returns the keys of an answer of GET /v1/leases/{id}?keys=true, as bytes. */
export function leaseKeys(l) {
  if (l.keys_base64) return l.keys_base64.map(fromBase64);
  return (l.keys || []).map(utf8);
}

/** wire sets name (or name_base64 for bytes that are not UTF-8) on a JSON object. */
export function wire(obj, name, bytes) {
  const s = text(bytes);
  if (s !== null) obj[name] = s;
  else obj[name + "_base64"] = toBase64(bytes);
  return obj;
}

/** selector is the JSON form of a range, as txn ops and permissions take it. */
export function selector(r) {
  const o = wire({}, "key", r.key.length ? r.key : TO_END);
  if (r.end === null) return o;
  if (r.end.length === 1 && r.end[0] === 0) {
    if (r.key.length === 0) o.key = "\u0000";
    o.from_key = true;
    return o;
  }
  if (isPrefix(r)) {
    o.prefix = true;
    return o;
  }
  return wire(o, "range_end", r.end);
}

function options(q, opts) {
  for (const [k, v] of Object.entries(opts)) {
    if (v === undefined || v === null || v === false || v === 0 || v === "") continue;
    q.set(k, String(v));
  }
  return q;
}

export function createStore(call) {
  const read = (r) => ({ action: `read ${describe(r)}`, need: "read", on: describe(r) });
  const write = (r, verb = "change") => ({ action: `${verb} ${describe(r)}`, need: "write", on: describe(r) });
  const admin = (action) => ({ action, admin: true });
  const enc = encodeURIComponent;

  return {
    /** get reads one key; null when it does not exist. */
    async get(key, { revision } = {}) {
      const q = options(new URLSearchParams(), { revision });
      try {
        return await call("GET", pathOf(key), { query: q, what: read({ key, end: null }) });
      } catch (e) {
        if (e.code === "key_not_found") return null;
        throw e;
      }
    },
    list(r, { revision, limit, keysOnly, countOnly, pageToken, sortTarget, sortOrder, what } = {}) {
      const q = options(rangeQuery(r), {
        revision, limit, keys_only: keysOnly, count_only: countOnly, page_token: pageToken,
        sort_target: sortTarget, sort_order: sortOrder,
      });
      return call("GET", "/v1/kv", { query: q, what: what || read(r) });
    },
    /**
     * put writes a key. ttl (seconds) gives it a lease of its own (PUT
     * ?ttl); ignoreLease keeps the lease it has.
     */
    put(key, value, { ifMatch, ifNoneMatch, lease, ttl, ignoreLease, verb = "save" } = {}) {
      const headers = {};
      if (ifMatch) headers["If-Match"] = `"${ifMatch}"`;
      if (ifNoneMatch) headers["If-None-Match"] = "*";
      const q = options(new URLSearchParams(), { lease, ttl, ignore_lease: ignoreLease });
      return call("PUT", pathOf(key), { query: q, body: value, headers, what: write({ key, end: null }, verb) });
    },
    del(key, { ifMatch } = {}) {
      const headers = ifMatch ? { "If-Match": `"${ifMatch}"` } : {};
      return call("DELETE", pathOf(key), { headers, what: write({ key, end: null }, "delete") });
    },
    txn(body, what) {
      return call("POST", "/v1/txn", { json: body, what });
    },
    history(r, { order, limit, pageToken, prevKV, filters, startRevision, endRevision } = {}) {
      const q = options(rangeQuery(r), {
        order, limit, page_token: pageToken, prev_kv: prevKV, filters,
        start_revision: startRevision, end_revision: endRevision,
      });
      return call("GET", "/v1/history", { query: q, what: { action: `read the history of ${describe(r)}`, need: "read", on: describe(r) } });
    },
    /** exportURL is the address of GET /v1/export of the range at revision (0: the current one). */
    exportURL(r, revision) {
      const q = options(rangeQuery(r), { revision });
      return `/v1/export?${q}`;
    },
    /** exportStream asks for the export of r at revision, and resolves to the Response, its NDJSON body unread. */
    exportStream(r, revision) {
      return call.stream("GET", "/v1/export", { query: options(rangeQuery(r), { revision }), what: read(r) });
    },
    /**
     * importFile sends file (a File or Blob, streamed from disk by the
     * browser) to POST /v1/import for the range r. ifMatch: apply only
     * if nothing in r changed after that revision.
     */
    importFile(r, file, { mode, dryRun, ifMatch } = {}) {
      const q = options(rangeQuery(r), { mode, dry_run: dryRun });
      const headers = { "Content-Type": "application/x-ndjson" };
      if (ifMatch) headers["If-Match"] = `"${ifMatch}"`;
      const what = dryRun
        ? { action: `preview an import into ${describe(r)}`, need: "read and write", on: describe(r) }
        : write(r, "import into");
      return call("POST", "/v1/import", { query: q, body: file, headers, what });
    },
    /** restoreRange makes r hold what it held at revision (POST /v1/restore); dryRun only says what would change. */
    restoreRange(r, revision, dryRun) {
      const what = { action: `restore ${describe(r)} as of revision ${revision}`, need: "read and write", on: describe(r) };
      return call("POST", "/v1/restore", { json: { ...selector(r), revision, dry_run: dryRun || undefined }, what });
    },
    // The page's stream of live updates (live.js): one watcher per range
    // it follows, each from its revision.
    createStream: (watches) =>
      call("POST", "/v1/watch/streams", {
        json: { watches: watches.map((w) => ({ ...selector(w.range), start_revision: w.from })) },
        what: { action: "follow the page live", need: "read", on: watches.map((w) => describe(w.range)).join(", ") },
      }),
    addWatch: (stream, r, from) =>
      call("POST", `/v1/watch/streams/${enc(stream)}/watches`, {
        json: { ...selector(r), start_revision: from },
        what: { action: `follow ${describe(r)} live`, need: "read", on: describe(r) },
      }),
    cancelWatch: (stream, id) => call("DELETE", `/v1/watch/streams/${enc(stream)}/watches/${id}`),
    dropStream: (stream) => call("DELETE", `/v1/watch/streams/${enc(stream)}`),
    streamURL(stream, token) {
      const q = new URLSearchParams();
      if (token) q.set("access_token", token);
      return `/v1/watch/streams/${enc(stream)}` + (token ? "?" + q : "");
    },

    /** leases reads one page of the lease IDs, from pageToken (none: the first). */
    leases: ({ limit, pageToken } = {}) =>
      call("GET", "/v1/leases", { query: options(new URLSearchParams(), { limit, page_token: pageToken }), what: { action: "list the leases" } }),
    lease: (id, keys = false) =>
      call("GET", `/v1/leases/${id}`, { query: keys ? "keys=true" : "", what: { action: `read lease ${id}` } }),
    grantLease: (ttl, id = 0) =>
      call("POST", "/v1/leases", { json: { ttl, id }, what: { action: "grant a lease" } }),
    keepAlive: (id) => call("POST", `/v1/leases/${id}/keepalive`, { what: { action: `keep lease ${id} alive` } }),
    revokeLease: (id) =>
      call("DELETE", `/v1/leases/${id}`, { what: { action: `revoke lease ${id}`, need: "write", on: "every key attached to it" } }),

    /** unlock releases the lock called name held (or waited for) by the owner key key. */
    unlock(name, key) {
      const q = new URLSearchParams();
      param(q, "key", key);
      const what = { action: `release the lock ${display(name)}`, need: "write", on: describe(ownerRange(name)) };
      return call("DELETE", `/v1/locks/${segment(name)}`, { query: q, what });
    },
    /** resign ends the leadership of leader {key, revision (its create revision), lease} in the election called name. */
    resign(name, { key, revision, lease }) {
      const leader = wire(wire({ revision, lease }, "name", name), "key", key);
      const what = { action: `resign the leader of ${display(name)}`, need: "write", on: describe(ownerRange(name)) };
      return call("POST", `/v1/elections/${segment(name)}/resign`, { json: { leader }, what });
    },

    status: () => call("GET", "/v1/status", { what: admin("read the cluster status") }),
    compact: (revision, physical) =>
      call("POST", "/v1/compact", { json: { revision, physical }, what: admin("compact the history") }),
    defrag: () => call("POST", "/v1/defrag", { what: admin("defragment the backend") }),
    alarms: () => call("GET", "/v1/alarms", { what: admin("list the alarms") }),
    disarm: () => call("DELETE", "/v1/alarms", { what: admin("disarm the alarms") }),

    authStatus: () => call("GET", "/v1/auth/status"),
    token: (name, password) => call("POST", "/v1/auth/token", { json: { name, password } }),
    setAuth: (on) => call("POST", `/v1/auth/${on ? "enable" : "disable"}`, { what: admin(`${on ? "enable" : "disable"} auth`) }),
    users: () => call("GET", "/v1/auth/users", { what: admin("list the users") }),
    user: (name) => call("GET", `/v1/auth/users/${enc(name)}`, { what: admin(`read the user ${name}`) }),
    addUser: (name, password) =>
      call("POST", "/v1/auth/users", { json: { name, password }, what: admin("add a user") }),
    deleteUser: (name) => call("DELETE", `/v1/auth/users/${enc(name)}`, { what: admin(`delete the user ${name}`) }),
    setPassword: (name, password) =>
      call("PUT", `/v1/auth/users/${enc(name)}/password`, { json: { password }, what: admin(`change the password of ${name}`) }),
    grantRole: (name, role) =>
      call("PUT", `/v1/auth/users/${enc(name)}/roles/${enc(role)}`, { what: admin(`grant ${role} to ${name}`) }),
    revokeRole: (name, role) =>
      call("DELETE", `/v1/auth/users/${enc(name)}/roles/${enc(role)}`, { what: admin(`revoke ${role} from ${name}`) }),
    roles: () => call("GET", "/v1/auth/roles", { what: admin("list the roles") }),
    role: (name) => call("GET", `/v1/auth/roles/${enc(name)}`, { what: admin(`read the role ${name}`) }),
    addRole: (name) => call("POST", "/v1/auth/roles", { json: { name }, what: admin("add a role") }),
    deleteRole: (name) => call("DELETE", `/v1/auth/roles/${enc(name)}`, { what: admin(`delete the role ${name}`) }),
    grantPermission: (role, r, type) =>
      call("POST", `/v1/auth/roles/${enc(role)}/permissions`, {
        json: { ...selector(r), type }, what: admin(`grant a permission to ${role}`),
      }),
    revokePermission(role, r) {
      const q = new URLSearchParams();
      param(q, "key", r.key);
      if (r.end !== null) param(q, "range_end", r.end);
      return call("DELETE", `/v1/auth/roles/${enc(role)}/permissions`, { query: q, what: admin(`revoke a permission of ${role}`) });
    },
  };
}
