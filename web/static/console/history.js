// The history of a key or of every key under a prefix, newest first, a
// page at a time (GET /v1/history, order=descend), kept live: every
// version, deletes included; what each change did as a diff (field by
// field for JSON, compare.js); any two versions compared; any version
// restored as a new one (POST /v1/restore of the key as of its
// revision); and the whole range restored as of a revision. A restore
// shows its dry run first.
//
// A long history costs the page at most MAX_ROWS rows: loading older
// changes past it drops the newest rows and stops following live (until
// "Show the newest"); live changes past it drop the oldest rows, whole
// revisions at a time, and "Load older" reads them again from there.

import { display, fromWire, preview } from "./bytes.js";
import { renderCompare } from "./compare.js";
import { explain } from "./api.js";
import { h, clear, field, num, table, uid } from "./dom.js";
import { single } from "./range.js";
import { href } from "./router.js";
import { restoreAt } from "./restore.js";
import { describe } from "./store.js";

const PAGE = 50;
const MAX_ROWS = 500;

export function createHistory(app, ctx) {
  const { store, live, perms } = app;
  const r = ctx.range;
  const oneKey = r.end === null;
  const headingId = uid("hist");
  const summary = h("p", { class: "summary" });
  const compareBtn = h("button", { type: "button", disabled: true, onclick: compareSelected }, "Compare selected");
  const diffArea = h("div", { class: "diff-area", "aria-live": "polite" });
  const rows = h("tbody");
  const more = h("button", { type: "button", class: "more", hidden: true, onclick: () => loadOlder() }, "Load older");
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const newest = h("p", { class: "banner", hidden: true },
    `Older changes are shown, and the newest are not followed live: the page shows at most ${num(MAX_ROWS)} changes. `,
    h("button", { type: "button", onclick: () => restart() }, "Show the newest"));
  const back = oneKey
    ? h("a", { class: "button", href: href("keys", { f: ctx.folder, q: ctx.search, k: r.key, ...ctx.common }) }, "Back to the key")
    : h("a", { class: "button", href: href("keys", { f: ctx.folder, ...ctx.common }) }, "Close");
  // The whole range as of a revision: offered once the user may write it.
  const asOf = h("input", { type: "number", min: "1", step: "1", inputmode: "numeric", required: true, name: "restore-rev" });
  const rangeRestore = h("form", { class: "range-restore", hidden: true, onsubmit: (e) => {
    e.preventDefault();
    restoreAt(app, r, Number(asOf.value));
  } },
  field(`Restore ${oneKey ? "the key" : "all of it"} as of revision`, asOf, `Makes ${describe(r)} hold what it held then, in one new revision, after a preview.`),
  h("button", { type: "submit" }, "Restore as of…"));
  const el = h("section", { class: "history", "aria-labelledby": headingId },
    h("h2", { id: headingId }, oneKey ? ["History of ", h("code", {}, display(r.key))] : `History of ${describe(r)}`),
    summary,
    h("div", { class: "toolbar" }, back, compareBtn),
    rangeRestore,
    problem,
    newest,
    diffArea,
    table("Changes, newest first", ["(Compare)", "Revision", "Change", oneKey ? null : "Key", "Version", "Value", "(Actions)"], rows),
    more);

  let token = ""; // the next older page, or...
  let olderFrom = 0; // ...when the oldest rows were dropped, the revision to read again from
  let started = false;
  let loads = 0; // the latest loadOlder: an earlier one, overtaken by a restart, adds nothing
  let sub = null;
  let writable = false;
  let disposed = false;
  const selected = new Set();
  const events = new Map(); // row id -> event

  function row(ev, rev, live) {
    const key = fromWire(ev.kv, "key");
    const put = ev.type === "put";
    const rid = `${rev}:${display(key)}`;
    events.set(rid, ev);
    const change = put ? (ev.kv.version === 1 ? "created" : "updated") : "deleted";
    const value = put ? fromWire(ev.kv, "value") : null;
    const before = ev.prev_kv ? fromWire(ev.prev_kv, "value") : null;
    const pick = put
      ? h("input", { type: "checkbox", "aria-label": `Compare revision ${rev}`, onchange: (e) => {
        if (e.target.checked) selected.add(rid);
        else selected.delete(rid);
        updateCompare();
      } })
      : null;
    // A put's version is the key as of its revision; a delete's "as
    // before" is the key as of the revision before it.
    const restoreRev = put ? rev : before ? rev - 1 : 0;
    const tr = h("tr", { class: `${ev.type}${live ? " changed" : ""}`, "data-revision": String(rev), "data-row": rid },
      h("td", {}, pick),
      h("th", { scope: "row" }, String(rev)),
      h("td", {}, change),
      oneKey ? null : h("td", {}, h("a", { href: href("keys", { f: ctx.folder, k: key, ...ctx.common }) }, display(key))),
      h("td", {}, put ? String(ev.kv.version) : "—"),
      h("td", { class: "code" }, put ? preview(value) : before ? `(deleted; was ${preview(before)})` : "(deleted)"),
      h("td", { class: "row-actions" },
        h("button", { type: "button", onclick: () => showChange(key, rev, ev) }, "Changes"),
        writable && restoreRev
          ? h("button", { type: "button", onclick: () => restoreAt(app, single(key), restoreRev) },
            put ? "Restore this version" : "Restore as before")
          : null));
    return tr;
  }

  // showChange diffs one event against the version before it, read from
  // prev_kv, or fetched when the event came live without it.
  async function showChange(key, rev, ev) {
    let prev = ev.prev_kv;
    if (prev === undefined) {
      try {
        const res = await store.history(single(key), { startRevision: rev, endRevision: rev, prevKV: true });
        const same = (res.events || []).find((e) => e.kv.mod_revision === rev);
        prev = same ? same.prev_kv || null : null;
        ev.prev_kv = prev;
      } catch (e) {
        clear(diffArea, h("p", { class: "problem" }, explain(e)));
        return;
      }
    }
    const a = prev ? fromWire(prev, "value") : null;
    const b = ev.type === "put" ? fromWire(ev.kv, "value") : null;
    const from = prev ? `revision ${prev.mod_revision}` : "nothing";
    const to = ev.type === "put" ? `revision ${rev}` : `deleted at ${rev}`;
    clear(diffArea, renderCompare(a, b, `${display(key)}: ${from} → ${to}`));
  }

  function compareSelected() {
    const [x, y] = [...selected].map((id) => events.get(id)).sort((a, b) => a.kv.mod_revision - b.kv.mod_revision);
    clear(diffArea, renderCompare(fromWire(x.kv, "value"), fromWire(y.kv, "value"),
      `${oneKey ? "" : display(fromWire(x.kv, "key")) + " "}revision ${x.kv.mod_revision} → ${oneKey ? "" : display(fromWire(y.kv, "key")) + " "}revision ${y.kv.mod_revision}`));
  }

  function updateCompare() {
    compareBtn.disabled = selected.size !== 2;
    compareBtn.textContent = `Compare selected (${selected.size} of 2)`;
  }

  // drop removes a row and forgets its event.
  function drop(tr) {
    const rid = tr.dataset.row;
    tr.remove();
    if (!rid) return;
    events.delete(rid);
    selected.delete(rid);
  }

  // dropNewest keeps MAX_ROWS rows by dropping the newest; the list no
  // longer starts at the present, so it stops following it.
  function dropNewest() {
    if (rows.children.length <= MAX_ROWS) return;
    while (rows.children.length > MAX_ROWS) drop(rows.firstElementChild);
    if (sub) sub.close();
    sub = null;
    newest.hidden = false;
    updateCompare();
  }

  // dropOldest keeps MAX_ROWS rows by dropping the oldest revisions whole;
  // "Load older" reads again from the newest revision dropped.
  function dropOldest() {
    if (rows.children.length <= MAX_ROWS) return;
    let rev = 0;
    while (rows.children.length > MAX_ROWS || (rev && rows.lastElementChild && Number(rows.lastElementChild.dataset.revision) === rev)) {
      rev = Number(rows.lastElementChild.dataset.revision);
      drop(rows.lastElementChild);
    }
    olderFrom = rev;
    token = "";
    loads++; // a page on its way would continue from a dropped row
    more.hidden = false;
    updateCompare();
  }

  async function loadOlder() {
    more.disabled = true;
    const my = ++loads;
    let got = 0;
    try {
      do {
        const res = await store.history(r, { order: "descend", limit: PAGE, prevKV: true, pageToken: token, endRevision: token ? 0 : olderFrom });
        if (disposed || my !== loads) return;
        if (!started) {
          started = true;
          summary.textContent = res.compact_revision > 1
            ? `Newest first. Held from revision ${res.compact_revision} on; older changes were compacted.`
            : "Newest first, since the first revision.";
          sub = live.subscribe(r, res.header.revision + 1, { events: onEvents, reset: () => restart() });
        }
        olderFrom = 0;
        for (const ev of res.events || []) rows.append(row(ev, ev.kv.mod_revision, false));
        got += (res.events || []).length;
        token = res.more ? res.next_page_token : "";
      } while (token && got < PAGE);
      dropNewest();
      more.hidden = !token;
      if (!rows.children.length) rows.append(h("tr", { class: "empty" }, h("td", { colspan: "7" }, "No changes held.")));
    } catch (e) {
      if (my !== loads) return;
      problem.hidden = false;
      problem.textContent = e.code === "compacted" ? "Older history was compacted meanwhile." : explain(e);
      more.hidden = true;
    } finally {
      more.disabled = false;
    }
  }

  function onEvents(evs, rev) {
    if (evs.length > MAX_ROWS) {
      // One revision larger than the list: read it a page at a time.
      restart();
      return;
    }
    // Newest first: a revision's events go on top, in their own order.
    rows.querySelector("tr.empty")?.remove();
    const first = rows.firstChild;
    for (const ev of evs) rows.insertBefore(row(ev, rev, true), first);
    dropOldest();
  }

  function restart() {
    if (sub) sub.close();
    sub = null;
    started = false;
    token = "";
    olderFrom = 0;
    newest.hidden = true;
    clear(rows);
    events.clear();
    selected.clear();
    updateCompare();
    loadOlder();
  }

  (async () => {
    writable = ctx.revision ? false : await perms.canWrite(r);
    rangeRestore.hidden = !writable;
    if (!disposed) restart();
  })();

  return {
    el,
    dispose() {
      disposed = true;
      if (sub) sub.close();
    },
  };
}
