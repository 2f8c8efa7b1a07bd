// The queue of a lock or an election as the server serves it: the keys
// under NAME/, oldest create revision first. The first key holds the lock
// (leads the election); the others wait in that order. The queue is read
// once, sorted by create revision, and then kept by the live events of
// the prefix: a put of a new key joins the end, a delete leaves, a put of
// a key already there changes its value (a proclaim).
//
// Since which revision the first key holds: when the view saw the change
// live, the revision of that change. Otherwise it is found in the
// history: the holder took over when the last key older than its own was
// deleted, or when its own key was created if that was later.
//
// Worked example: keys created at 5 (lease a), 7 (b), 9 (c); a is
// released at 12 and c gives up waiting at 15. Read at 20, b holds, in
// line since 7. The deletes under the prefix from 7 on, newest first, are
// 15 (c's key, created at 9: younger than b's, not what made b the
// holder) and 12 (a's key, created at 5: older). b holds since 12.

import { fromWire, id } from "./bytes.js";

/** SHOWN bounds the keys of one queue held and shown. */
export const SHOWN = 1000;

/** HISTORY bounds the deletes read to find when the holder took over. */
const HISTORY = 200;

/** entryOf reads a KeyValue off the wire into what the queue keeps. */
export function entryOf(kv) {
  const key = fromWire(kv, "key");
  return {
    id: id(key),
    key,
    value: fromWire(kv, "value"),
    create: kv.create_revision,
    mod: kv.mod_revision,
    lease: kv.lease || 0,
  };
}

export class LockQueue {
  constructor() {
    this.entries = []; // oldest create revision first
    this.count = 0; // keys under the prefix, shown or not
    this.truncated = false; // more keys than SHOWN: the newest are not held
    this.revision = 0; // the revision the queue was read at
    // Since when the holder holds: {from, to}, the revisions it took over
    // between (equal when known exactly); null while unknown.
    this.since = null;
  }

  /** load takes an answer of GET /v1/kv over the prefix, sorted by create revision. */
  load(res) {
    this.entries = (res.kvs || []).map(entryOf);
    this.count = typeof res.count === "number" ? res.count : this.entries.length;
    this.truncated = !!res.more;
    this.revision = res.header.revision;
    this.since = null;
  }

  /** owner is the key that holds the lock or leads, or null. */
  get owner() {
    return this.entries[0] || null;
  }

  /** waiting returns the keys behind the owner, in order. */
  waiting() {
    return this.entries.slice(1);
  }

  /**
   * apply takes the events of one revision (live.js's, with key as
   * bytes). It returns {removed, ownerChanged}: the entries that left,
   * and whether another key holds now (then since is that revision).
   */
  apply(events, rev) {
    const before = this.owner;
    const removed = [];
    for (const ev of events) {
      const k = id(ev.key);
      const i = this.entries.findIndex((e) => e.id === k);
      if (ev.type === "delete") {
        // A watch reports deletes of keys that existed only.
        this.count = Math.max(0, this.count - 1);
        if (i >= 0) removed.push(...this.entries.splice(i, 1));
        continue;
      }
      const e = entryOf(ev.kv);
      if (i >= 0) {
        // The same key: a new value, kept in place (the same object, so
        // that who holds is still the same entry).
        Object.assign(this.entries[i], e);
        continue;
      }
      if (ev.kv.version === 1) this.count++;
      if (!this.truncated) this.insert(e);
    }
    const now = this.owner;
    const ownerChanged = now !== before;
    if (ownerChanged) this.since = now ? { from: rev, to: rev } : null;
    return { removed, ownerChanged };
  }

  insert(e) {
    let at = this.entries.length;
    while (at > 0 && this.entries[at - 1].create > e.create) at--;
    this.entries.splice(at, 0, e);
  }

  /** kind guesses what the keys are for: an election's candidates carry values, a lock's keys none. */
  kind() {
    return this.entries.some((e) => e.value.length > 0) ? "election" : "lock";
  }
}

/**
 * tenureStart finds since when owner holds, as read at revision at, from
 * the history of range (the prefix): {from, to}, equal when found
 * exactly. When the history is compacted or too long to read, it is
 * only known to lie between the owner's creation and at.
 */
export async function tenureStart(store, range, owner, at) {
  const unknown = { from: owner.create, to: at };
  let res;
  try {
    res = await store.history(range, {
      order: "descend", filters: "noput", prevKV: true,
      startRevision: owner.create, endRevision: at, limit: HISTORY,
    });
  } catch (e) {
    if (e.status === 410) return unknown;
    throw e;
  }
  for (const ev of res.events || []) {
    if (ev.prev_kv && ev.prev_kv.create_revision < owner.create) {
      return { from: ev.kv.mod_revision, to: ev.kv.mod_revision };
    }
  }
  return res.more ? unknown : { from: owner.create, to: owner.create };
}
