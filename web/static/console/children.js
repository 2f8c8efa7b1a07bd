// The children of a listed level, kept in key order, and the live events
// applied to them. Each batch of children was read at a revision; an
// event changes a child only if the child lies in a batch already read
// and the event is newer than that batch (older events are in what was
// read). Children beyond the last batch are not shown yet, and the next
// batch, read at a newer revision, will hold them as they are then.

import { compare, display, id, indexOf } from "./bytes.js";

export class Children {
  constructor(folder, sep) {
    this.folder = folder;
    this.sep = sep && sep.length ? sep : null;
    this.entries = []; // {id, key, folder, name, count, countRev, deltas}
    this.byId = new Map();
    this.batches = []; // {from, to (null: the end), revision}
  }

  /** name is what a child is called in its folder. */
  name(key) {
    return display(key.subarray(this.folder.length));
  }

  /** addBatch takes a batch from LevelLister.next and returns the entries added. */
  addBatch({ children, from, to, revision }) {
    this.batches.push({ from, to, revision });
    const added = [];
    for (const c of children) {
      if (this.byId.has(id(c.key))) continue;
      added.push(this.insert(c.key, c.folder, null, 0));
    }
    return added;
  }

  insert(key, folder, count, countRev) {
    const e = { id: id(key), key, folder, name: this.name(key), count, countRev, deltas: [] };
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compare(this.entries[mid].key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.entries.splice(lo, 0, e);
    this.byId.set(e.id, e);
    return e;
  }

  remove(e) {
    this.entries.splice(this.entries.indexOf(e), 1);
    this.byId.delete(e.id);
  }

  /** after returns the entry following e, or null. */
  after(e) {
    return this.entries[this.entries.indexOf(e) + 1] || null;
  }

  batchOf(key) {
    for (const b of this.batches) {
      if (compare(key, b.from) >= 0 && (b.to === null || compare(key, b.to) < 0)) return b;
    }
    return null;
  }

  /** childOf returns the child a key below the folder belongs to: itself, or its folder. */
  childOf(key) {
    const i = this.sep ? indexOf(key, this.sep, this.folder.length) : -1;
    return i < 0 ? { key, folder: false } : { key: key.slice(0, i + this.sep.length), folder: true };
  }

  /**
   * apply takes the events of one revision and returns what changed:
   * {added, removed, changed, recount} as lists of entries.
   */
  apply(events, rev) {
    const out = { added: [], removed: [], changed: [], recount: [] };
    for (const ev of events) {
      const child = this.childOf(ev.key);
      const b = this.batchOf(child.key);
      if (!b || rev <= b.revision) continue;
      let e = this.byId.get(id(child.key));
      const put = ev.type === "put";
      if (!child.folder) {
        if (put && !e) out.added.push(this.insert(child.key, false, null, 0));
        else if (put) out.changed.push(e);
        else if (e) {
          this.remove(e);
          out.removed.push(e);
        }
        continue;
      }
      const created = put && ev.kv.version === 1;
      const delta = created ? 1 : put ? 0 : -1;
      if (!e) {
        // A folder not listed has no key below it as of its batch: only a
        // create can bring it.
        if (created) out.added.push(this.insert(child.key, true, 1, rev));
        continue;
      }
      if (e.count === null) {
        e.deltas.push({ rev, delta });
        if (delta < 0) out.recount.push(e);
      } else if (rev > e.countRev) {
        e.count += delta;
        e.countRev = rev;
      }
      if (e.count === 0) {
        this.remove(e);
        out.removed.push(e);
      } else {
        out.changed.push(e);
      }
    }
    return out;
  }

  /** counted records a folder's count read at countRev, with the changes seen since. */
  counted(e, count, countRev) {
    e.count = count + e.deltas.filter((d) => d.rev > countRev).reduce((n, d) => n + d.delta, 0);
    e.countRev = Math.max(countRev, ...e.deltas.map((d) => d.rev));
    e.deltas = [];
  }
}
