// One level of the tree over a flat key space. A folder F lists its
// children: the keys F+name where name holds no separator, and the
// folders F+name+sep below which some key exists.
//
// A range over F with keys_only still returns every key below F, so
// listing a level by reading all of them costs as much as the whole
// subtree. Instead the lister reads a page of keys and, when a key lies
// in a child folder, emits the folder and starts the next read at
// PrefixEnd(folder), jumping over everything inside it. A level with few
// folders and 100,000 keys below them costs one small read per folder.
// Runs of plain keys are read page by page with the page token. The page
// size adapts: it shrinks while pages are mostly inside folders (wasted)
// and grows while they are mostly keys of this level.
//
// Worked example, F = "app/", sep = "/", keys app/a, app/b/1, app/b/2,
// app/b/3, app/c, app/d/x:
//   read [app/, app0) limit 4 -> app/a, app/b/1, app/b/2, app/b/3 (more)
//     emits key app/a, folder app/b/; the page ends inside app/b/
//   read [app/b0, app0)       -> app/c, app/d/x
//     emits key app/c, folder app/d/; done.
//
// A batch of reads (one call to next()) is consistent: its first read
// fixes the revision and the others read at it. Each batch reports its
// revision and the key range it covered, so that live events can be
// applied to what was read at an older revision only (see children.js).

import { compare, concat, fromWire, indexOf, prefixEnd, startsWith } from "./bytes.js";
import { TO_END } from "./range.js";

const MIN_PAGE = 16;
const MAX_PAGE = 1000;

export class LevelLister {
  /**
   * store: createStore(); folder: the folder's prefix (bytes, may be
   * empty); sep: the separator (bytes), or null for a flat list of every
   * key under the prefix; revision: read at this revision (time travel),
   * or 0 for the current one.
   */
  constructor(store, folder, sep, revision = 0) {
    this.store = store;
    this.folder = folder;
    this.sep = sep && sep.length ? sep : null;
    this.pinned = revision;
    this.end = prefixEnd(folder) || TO_END;
    this.cursor = folder; // where the next fresh read starts
    this.token = ""; // page token continuing a run of plain keys...
    this.tokenRange = null; // ...issued for this range
    this.limit = 100;
    this.done = false;
    this.total = null; // keys below the folder, from the first read
    this.reads = 0;
  }

  /**
   * next reads at least want children (fewer at the end) and returns
   * {children, from, to, revision}: the children in key order, the key
   * range [from, to) they cover (to null: the rest of the folder), and
   * the revision they were read at.
   */
  async next(want) {
    const out = [];
    const from = this.cursor;
    // A token belongs to the batch that got it: a new batch reads afresh.
    this.token = "";
    let revision = this.pinned;
    while (!this.done && out.length < want) {
      const res = await this.read(revision, want - out.length);
      if (!revision) revision = res.header.revision;
      if (this.total === null) this.total = res.count;
      this.take(res, out);
    }
    return { children: out, from, to: this.done ? null : this.cursor, revision };
  }

  read(revision, wanted) {
    this.reads++;
    const limit = Math.min(this.limit, Math.max(MIN_PAGE, wanted));
    const what = {
      action: `list ${this.folder.length ? "the folder" : "the top level"}`,
      need: "read",
      on: this.folder.length ? "every key under it" : "every key",
    };
    if (this.token) {
      return this.store.list(this.tokenRange, { limit, keysOnly: true, pageToken: this.token, what });
    }
    this.tokenRange = { key: this.cursor.length ? this.cursor : TO_END, end: this.end };
    return this.store.list(this.tokenRange, { revision, limit, keysOnly: true, what });
  }

  // take sorts one page into children and decides where the next read
  // starts: past the folder the page ended in, or by the page token.
  take(res, out) {
    const kvs = res.kvs || [];
    let folder = null; // the last folder emitted, to skip its keys
    let wasted = 0;
    let lastKey = null;
    for (const kv of kvs) {
      const key = fromWire(kv, "key");
      lastKey = key;
      if (folder && startsWith(key, folder)) {
        wasted++;
        continue;
      }
      const i = this.sep ? indexOf(key, this.sep, this.folder.length) : -1;
      if (i < 0) {
        out.push({ key, folder: false });
        folder = null;
      } else {
        folder = key.slice(0, i + this.sep.length);
        out.push({ key: folder, folder: true });
      }
    }
    if (!res.more || lastKey === null) {
      this.done = true;
      return;
    }
    if (folder && startsWith(lastKey, folder)) {
      // The page ended inside a folder: jump past it.
      const next = prefixEnd(folder);
      if (!next || (!isToEnd(this.end) && compare(next, this.end) >= 0)) {
        this.done = true;
        return;
      }
      this.cursor = next;
      this.token = "";
    } else {
      this.cursor = concat(lastKey, new Uint8Array([0]));
      this.token = res.next_page_token || "";
    }
    this.limit = wasted * 2 > kvs.length ? Math.max(MIN_PAGE, this.limit >> 1) : Math.min(MAX_PAGE, this.limit * 2);
  }
}

function isToEnd(end) {
  return end.length === 1 && end[0] === 0;
}
