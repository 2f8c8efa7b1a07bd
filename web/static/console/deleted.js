// The keys deleted under a folder that do not exist now, latest deletion
// first, with the value each had before: found in the history of the
// prefix (deletes only, with prev_kv), each key once, and checked against
// the present with one txn of count-only ranges per page. Restoring one
// puts that value back, only if the key is still absent.

import { display, fromWire, id, preview } from "./bytes.js";
import { h, clear, table, uid } from "./dom.js";
import { prefix, single } from "./range.js";
import { href } from "./router.js";
import { restore } from "./restore.js";
import { describe, selector } from "./store.js";

const WANT = 25; // rows to find per "look further back"
const EXISTS_BATCH = 100; // ranges per txn, below --max-txn-ops' default of 128
const MAX_PAGES = 10; // pages of history read per "look further back", whatever they find

export function createDeleted(app, ctx) {
  const { store, perms } = app;
  const r = prefix(ctx.folder);
  const headingId = uid("del");
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const rows = h("tbody");
  const more = h("button", { type: "button", class: "more", hidden: true, onclick: () => lookBack() }, "Look further back");
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const el = h("section", { class: "deleted", "aria-labelledby": headingId },
    h("h2", { id: headingId }, `Deleted keys: ${describe(r)}`),
    summary,
    h("div", { class: "toolbar" }, h("a", { class: "button", href: href("keys", { f: ctx.folder, ...ctx.common }) }, "Close")),
    problem,
    table("Keys deleted and not created again, latest deletion first", ["Key", "Deleted at revision", "Last value", "(Actions)"], rows),
    more);

  const seen = new Set();
  let token = "";
  let started = false;
  let writable = false;
  let found = 0;
  let disposed = false;

  // absent returns which of the keys do not exist now.
  async function absent(keys) {
    const out = [];
    for (let i = 0; i < keys.length; i += EXISTS_BATCH) {
      const chunk = keys.slice(i, i + EXISTS_BATCH);
      const t = await store.txn({
        compare: [],
        success: chunk.map((k) => ({ range: { ...selector(single(k)), count_only: true } })),
        failure: [],
      }, { action: "check which deleted keys exist again", need: "read", on: describe(r) });
      t.responses.forEach((res, j) => {
        if (res.range.count === 0) out.push(chunk[j]);
      });
    }
    return out;
  }

  function row(ev) {
    const key = fromWire(ev.kv, "key");
    const before = ev.prev_kv ? fromWire(ev.prev_kv, "value") : null;
    const rev = ev.kv.mod_revision;
    const cell = h("td", { class: "row-actions" });
    const tr = h("tr", { "data-key": display(key) },
      h("th", { scope: "row" }, h("a", { href: href("keys", { f: ctx.folder, k: key, pane: "history", ...ctx.common }) }, display(key))),
      h("td", {}, String(rev)),
      h("td", { class: "code" }, before ? preview(before) : "(not held: the value before was compacted)"),
      cell);
    if (writable && before) {
      cell.append(h("button", { type: "button", onclick: async () => {
        const at = await restore(app, key, before, `it had before it was deleted at revision ${rev}`);
        if (at) clear(cell, "Restored at revision ", String(at), " · ", h("a", { href: href("keys", { f: ctx.folder, k: key, ...ctx.common }) }, "open"));
      } }, "Restore"));
    }
    return tr;
  }

  async function lookBack() {
    more.disabled = true;
    let got = 0;
    let pages = 0;
    try {
      do {
        const res = await store.history(r, { order: "descend", filters: "noput", prevKV: true, limit: 200, pageToken: token });
        if (disposed) return;
        if (!started) {
          started = true;
          summary.textContent = `Keys deleted since revision ${res.compact_revision || 1} that do not exist now, latest deletion first.`;
        }
        token = res.more ? res.next_page_token : "";
        const fresh = [];
        for (const ev of res.events || []) {
          const k = id(fromWire(ev.kv, "key"));
          if (seen.has(k)) continue;
          seen.add(k);
          fresh.push(ev);
        }
        const gone = new Set((await absent(fresh.map((ev) => fromWire(ev.kv, "key")))).map(id));
        for (const ev of fresh) {
          if (!gone.has(id(fromWire(ev.kv, "key")))) continue;
          rows.append(row(ev));
          got++;
          found++;
        }
        pages++;
      } while (token && got < WANT && pages < MAX_PAGES);
      more.hidden = !token;
      if (!found) rows.replaceChildren(h("tr", {}, h("td", { colspan: "4" }, "No deleted keys in the history held.")));
    } catch (e) {
      problem.hidden = false;
      problem.textContent = e.code === "compacted" ? "Older history was compacted meanwhile." : e.explain();
    } finally {
      more.disabled = false;
    }
  }

  (async () => {
    writable = ctx.revision ? false : await perms.canWrite(r);
    if (!disposed) lookBack();
  })();

  return { el, dispose: () => { disposed = true; } };
}
