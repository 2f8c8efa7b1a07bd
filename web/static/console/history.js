// The history of a key or of every key under a prefix, newest first, a
// page at a time (GET /v1/history, order=descend), kept live: every
// version, deletes included; what each change did as a diff; any two
// versions compared; and any version restored as a new one.

import { display, fromWire } from "./bytes.js";
import { asText } from "./conflict.js";
import { h, clear, table, uid } from "./dom.js";
import { diffLines, renderDiff } from "./diff.js";
import { single } from "./range.js";
import { href } from "./router.js";
import { restore } from "./restore.js";
import { describe } from "./store.js";

const PAGE = 50;
const PREVIEW = 80;

function preview(bytes) {
  const s = asText(bytes).replace(/\s+/g, " ");
  return s.length > PREVIEW ? s.slice(0, PREVIEW) + "…" : s;
}

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
  const back = oneKey
    ? h("a", { class: "button", href: href("keys", { f: ctx.folder, q: ctx.search, k: r.key, ...ctx.common }) }, "Back to the key")
    : h("a", { class: "button", href: href("keys", { f: ctx.folder, ...ctx.common }) }, "Close");
  const el = h("section", { class: "history", "aria-labelledby": headingId },
    h("h2", { id: headingId }, oneKey ? ["History of ", h("code", {}, display(r.key))] : `History of ${describe(r)}`),
    summary,
    h("div", { class: "toolbar" }, back, compareBtn),
    problem,
    diffArea,
    table("Changes, newest first", ["(Compare)", "Revision", "Change", oneKey ? null : "Key", "Version", "Value", "(Actions)"], rows),
    more);

  let token = "";
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
        compareBtn.disabled = selected.size !== 2;
        compareBtn.textContent = `Compare selected (${selected.size} of 2)`;
      } })
      : null;
    const restoreValue = put ? value : before;
    const tr = h("tr", { class: `${ev.type}${live ? " changed" : ""}`, "data-revision": String(rev) },
      h("td", {}, pick),
      h("th", { scope: "row" }, String(rev)),
      h("td", {}, change),
      oneKey ? null : h("td", {}, h("a", { href: href("keys", { f: ctx.folder, k: key, ...ctx.common }) }, display(key))),
      h("td", {}, put ? String(ev.kv.version) : "—"),
      h("td", { class: "code" }, put ? preview(value) : before ? `(deleted; was ${preview(before)})` : "(deleted)"),
      h("td", { class: "row-actions" },
        h("button", { type: "button", onclick: () => showChange(key, rev, ev) }, "Changes"),
        writable && restoreValue
          ? h("button", { type: "button", onclick: () => restore(app, key, restoreValue, put ? `of revision ${rev}` : `it had before it was deleted at revision ${rev}`) },
            put ? "Restore" : "Restore as before")
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
        clear(diffArea, h("p", { class: "problem" }, e.explain()));
        return;
      }
    }
    const a = prev ? asText(fromWire(prev, "value")) : "";
    const b = ev.type === "put" ? asText(fromWire(ev.kv, "value")) : "";
    const from = prev ? `revision ${prev.mod_revision}` : "nothing";
    const to = ev.type === "put" ? `revision ${rev}` : `deleted at ${rev}`;
    clear(diffArea, renderDiff(diffLines(a, b), `${display(key)}: ${from} → ${to}`));
  }

  function compareSelected() {
    const [x, y] = [...selected].map((id) => events.get(id)).sort((a, b) => a.kv.mod_revision - b.kv.mod_revision);
    clear(diffArea, renderDiff(
      diffLines(asText(fromWire(x.kv, "value")), asText(fromWire(y.kv, "value"))),
      `${oneKey ? "" : display(fromWire(x.kv, "key")) + " "}revision ${x.kv.mod_revision} → ${oneKey ? "" : display(fromWire(y.kv, "key")) + " "}revision ${y.kv.mod_revision}`));
  }

  async function loadOlder() {
    more.disabled = true;
    let got = 0;
    try {
      do {
        const res = await store.history(r, { order: "descend", limit: PAGE, prevKV: true, pageToken: token });
        if (disposed) return;
        if (!sub) {
          summary.textContent = res.compact_revision > 1
            ? `Newest first. Held from revision ${res.compact_revision} on; older changes were compacted.`
            : "Newest first, since the first revision.";
          sub = live.subscribe(r, res.header.revision + 1, { events: onEvents, reset: () => restart() });
        }
        for (const ev of res.events || []) rows.append(row(ev, ev.kv.mod_revision, false));
        got += (res.events || []).length;
        token = res.more ? res.next_page_token : "";
      } while (token && got < PAGE);
      more.hidden = !token;
      if (!rows.children.length) rows.append(h("tr", {}, h("td", { colspan: "7" }, "No changes held.")));
    } catch (e) {
      problem.hidden = false;
      problem.textContent = e.code === "compacted" ? "Older history was compacted meanwhile." : e.explain();
      more.hidden = true;
    } finally {
      more.disabled = false;
    }
  }

  function onEvents(evs, rev) {
    // Newest first: a revision's events go on top, in their own order.
    const first = rows.firstChild;
    for (const ev of evs) rows.insertBefore(row(ev, rev, true), first);
  }

  function restart() {
    if (sub) sub.close();
    sub = null;
    token = "";
    clear(rows);
    selected.clear();
    loadOlder();
  }

  (async () => {
    writable = ctx.revision ? false : await perms.canWrite(r);
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
