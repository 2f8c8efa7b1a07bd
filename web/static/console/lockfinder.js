// Finding the locks and elections in the store. Every holder, waiter or
// candidate of the lock or election NAME owns the key NAME/<its lease ID
// in lowercase hex>, attached to that lease; so the names are found in
// the keys of the leases, without reading the key space: a key K of
// lease L is an owner key when K ends with "/" and L in hex, and the name
// is what comes before. The key "jobs/nightly/4d2" of lease 1234 (0x4d2)
// belongs to "jobs/nightly".
//
// A user who may read every key (root, or anyone with auth off) also
// follows the whole key space live, so that new names appear as they are
// made; anyone else looks again with a button. The names are read from
// the keys of the first MAX_LEASES leases, a few at a time.

import { compare, id, utf8 } from "./bytes.js";
import { EMPTY, prefix } from "./range.js";
import { leaseKeys } from "./store.js";

const MAX_LEASES = 1000;
const READERS = 4; // lease reads in flight at once, leaving the browser connections for the live stream
const EVERY = prefix(EMPTY);

/** ownerName returns the name of the lock or election that key, attached to lease, owns a place in; null if none. */
export function ownerName(key, lease) {
  if (!(lease > 0)) return null;
  const suffix = utf8("/" + lease.toString(16));
  if (key.length <= suffix.length) return null;
  const at = key.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) {
    if (key[at + i] !== suffix[i]) return null;
  }
  return key.slice(0, at);
}

/** nameOfKey returns the name an owner key would belong to: what comes before its last "/". */
function nameOfKey(key) {
  const i = key.lastIndexOf(0x2f);
  return i > 0 ? key.subarray(0, i) : null;
}

export class LockFinder {
  /** onChange() is told whenever the names or their keys change. */
  constructor(app, onChange) {
    this.app = app;
    this.onChange = onChange;
    this.names = new Map(); // id(name) -> {name, keys: Set of id(key)}
    this.leases = 0; // leases read at the last scan
    this.more = false; // whether there were more
    this.read = 0; // leases whose keys were read
    this.live = false; // new names appear by themselves
    this.scanning = false;
    this.problem = null; // the ApiError of the last scan
    this.sub = null;
    this.scans = 0;
  }

  /** list returns the names found, in key order: [{name, keys (a count)}]. */
  list() {
    return [...this.names.values()]
      .map((n) => ({ name: n.name, keys: n.keys.size }))
      .sort((a, b) => compare(a.name, b.name));
  }

  /** has reports whether name was found. */
  has(name) {
    return this.names.has(id(name));
  }

  /**
   * scan reads the names again. Live events from the revision before the
   * reads are held back until the reads are done, then applied in order:
   * what changed while the leases were read is not lost.
   */
  async scan() {
    const my = ++this.scans;
    this.stopLive();
    this.scanning = true;
    this.problem = null;
    this.onChange();
    const { store, live, perms } = this.app;
    const held = [];
    let ready = false;
    if (perms.unlimited()) {
      try {
        const rev = (await store.list(EVERY, { countOnly: true })).header.revision;
        if (my !== this.scans) return;
        this.sub = live.subscribe(EVERY, rev + 1, {
          events: (evs) => (ready ? this.apply(evs) : held.push(evs)),
          reset: () => this.scan(),
        });
      } catch {
        // Not readable after all: look again by hand.
      }
    }
    const found = new Map();
    try {
      // The first page of MAX_LEASES (GET /v1/leases is paged, by ID).
      const page = await store.leases({ limit: MAX_LEASES });
      const todo = page.leases.map((l) => l.id);
      let next = 0;
      const reader = async () => {
        while (next < todo.length && my === this.scans) {
          const lease = todo[next++];
          const l = await store.lease(lease, true).catch(() => null); // gone meanwhile
          for (const k of l ? leaseKeys(l) : []) add(found, k, lease);
        }
      };
      await Promise.all(Array.from({ length: READERS }, reader));
      if (my !== this.scans) return;
      this.leases = todo.length;
      this.more = !!page.more;
      this.read = todo.length;
    } catch (e) {
      if (my !== this.scans) return;
      this.problem = e;
    }
    this.names = found;
    ready = true;
    for (const evs of held) this.apply(evs, true);
    this.live = this.sub !== null;
    this.scanning = false;
    this.onChange();
  }

  /** apply follows the names through one revision's events of the whole key space. */
  apply(events, quiet = false) {
    let changed = false;
    for (const ev of events) {
      const name = ev.type === "put" ? ownerName(ev.key, ev.kv.lease) : null;
      if (name) {
        changed = add(this.names, ev.key, ev.kv.lease, name) || changed;
        continue;
      }
      // A delete, or a put that is no owner key (any more).
      const of = nameOfKey(ev.key);
      const n = of && this.names.get(id(of));
      if (n && n.keys.delete(id(ev.key))) changed = true;
    }
    if (changed && !quiet) this.onChange();
  }

  stopLive() {
    if (this.sub) this.sub.close();
    this.sub = null;
    this.live = false;
  }

  close() {
    this.scans++;
    this.stopLive();
  }

  /** describe says what the list is made of, for the page. */
  describe() {
    const n = this.names.size;
    const what = `${n} name${n === 1 ? "" : "s"} found in the keys of ${this.more ? "the first " : ""}${this.leases} lease${this.leases === 1 ? "" : "s"}`;
    const part = this.more ? " (there are more)" : "";
    return `${what}${part}${this.live ? ", kept live" : ""}.`;
  }
}

// add records key as an owner key of its name; it reports whether that is new.
function add(names, key, lease, name = ownerName(key, lease)) {
  if (!name) return false;
  const k = id(name);
  let n = names.get(k);
  if (!n) names.set(k, (n = { name, keys: new Set() }));
  if (n.keys.has(id(key))) return false;
  n.keys.add(id(key));
  return true;
}

