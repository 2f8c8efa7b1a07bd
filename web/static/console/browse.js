// The list of a folder's children (or of the keys with a prefix, when
// searching): read a batch at a time by LevelLister, kept live by the
// feed, with the number of keys below each folder counted lazily, only
// for the folders scrolled into view.

import { display, id as idOf, utf8 } from "./bytes.js";
import { Children } from "./children.js";
import { confirm, notify } from "./dialog.js";
import { h, clear, listNav, num } from "./dom.js";
import { LevelLister } from "./level.js";
import { prefix } from "./range.js";
import { href } from "./router.js";
import { describe, selector } from "./store.js";
import { exportRange } from "./transfer.js";

const BATCH = 100;
const COUNTERS = 3; // count requests in flight at once
// Children shown at most: "Load more" stops there, and a folder that
// grows past it live stops being followed (until "Reload"), so that keys
// written by others cannot grow the page without bound.
const MAX_SHOWN = 2000;
const FLASH_MAX = 20; // changes of one revision that flash as they come

/**
 * createBrowse shows the level at loc: {folder, sep, search, revision,
 * open}. search (bytes or null) lists every key with that prefix instead
 * of the folder's children. It returns {el, setOpen(key), dispose()}.
 */
export function createBrowse(app, loc) {
  const { store, live, perms } = app;
  const flat = loc.search !== null;
  const base = flat ? loc.search : loc.folder;
  const sep = flat ? null : utf8(loc.sep);
  const range = prefix(base);
  const headingId = "browse-heading";
  const heading = h("h2", { id: headingId }, flat ? `Keys starting with ${display(base)}` : base.length ? display(base) : "Top level");
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const tools = h("div", { class: "toolbar", role: "group", "aria-label": "Folder actions" });
  const list = h("ul", { class: "children", "aria-labelledby": headingId });
  const more = h("button", { type: "button", class: "more", hidden: true, onclick: () => loadMore() }, "Load more");
  const problem = h("div", { class: "problem", role: "alert", hidden: true });
  const stopped = h("p", { class: "banner", hidden: true },
    `This list holds ${num(MAX_SHOWN)} items or more, and is no longer kept live. `,
    h("button", { type: "button", onclick: () => reload() }, "Reload"));
  const el = h("section", { class: "browse", "aria-labelledby": headingId }, heading, summary, tools, problem, stopped, list, more);
  listNav(list);

  let lister;
  let children;
  let sub = null;
  let disposed = false;
  let open = loc.open;
  const rows = new Map(); // entry id -> li
  const queue = [];
  let counting = 0;
  const observer = new IntersectionObserver((seen) => {
    for (const s of seen) {
      if (!s.isIntersecting) continue;
      observer.unobserve(s.target);
      const e = children.byId.get(s.target.dataset.id);
      if (e && e.folder && e.count === null) queue.push(e);
    }
    pump();
  });

  function linkFor(e) {
    const common = { sep: loc.sep === "/" ? null : loc.sep, rev: loc.revision || null };
    if (e.folder) return href("keys", { f: e.key, ...common });
    return href("keys", { f: loc.folder, q: loc.search, k: e.key, ...common });
  }

  function row(e) {
    const label = flat ? display(e.key) : e.name;
    const count = h("span", { class: "count", "data-count": "" }, e.folder && e.count !== null ? num(e.count) : "");
    const a = h("a", {
      href: linkFor(e),
      class: e.folder ? "folder" : "key",
      "aria-current": !e.folder && open && e.id === idOf(open) ? "true" : null,
      title: display(e.key),
    },
    h("span", { class: "icon", "aria-hidden": "true" }, e.folder ? "▸" : "•"),
    h("span", { class: "name" }, label),
    e.folder ? h("span", { class: "visually-hidden" }, " folder") : null,
    count);
    const li = h("li", { "data-id": e.id, "data-key": display(e.key) }, a);
    if (e.folder) {
      a.setAttribute("aria-label", `${label} folder${e.count !== null ? `, ${e.count} keys` : ""}`);
      observer.observe(li);
    }
    rows.set(e.id, li);
    return li;
  }

  function refreshRow(e, flash) {
    const li = rows.get(e.id);
    if (!li) return;
    observer.unobserve(li);
    const fresh = row(e);
    li.replaceWith(fresh);
    if (flash) fresh.classList.add("changed");
  }

  function place(e, flash) {
    const next = children.after(e);
    list.insertBefore(row(e), next ? rows.get(next.id) || null : null);
    if (flash) rows.get(e.id).classList.add("changed");
  }

  function showSummary() {
    const shown = children.entries.length;
    const total = lister.total === null ? "" : ` · ${num(lister.total)} key${lister.total === 1 ? "" : "s"} below`;
    const full = shown >= MAX_SHOWN;
    summary.textContent = `${num(shown)} ${flat ? "key" : "item"}${shown === 1 ? "" : "s"} shown${lister.done ? "" : full ? `, the most this page lists: use Find to narrow` : " so far"}${total}`
      + (loc.revision ? ` · as of revision ${loc.revision}` : "");
    more.hidden = lister.done || full;
  }

  async function pump() {
    while (counting < COUNTERS && queue.length && !disposed) {
      const e = queue.shift();
      if (e.count !== null || !children.byId.has(e.id)) continue;
      counting++;
      store.list(prefix(e.key), { countOnly: true, revision: loc.revision || 0 })
        .then((res) => {
          if (disposed || !children.byId.has(e.id)) return;
          children.counted(e, res.count, loc.revision || res.header.revision);
          if (e.count === 0 && !loc.revision) {
            children.remove(e);
            rows.get(e.id)?.remove();
            rows.delete(e.id);
          } else refreshRow(e, false);
        })
        .catch(() => {}) // a folder the user may not read keeps no count
        .finally(() => {
          counting--;
          pump();
        });
    }
  }

  async function loadMore() {
    more.disabled = true;
    try {
      const batch = await lister.next(BATCH);
      if (disposed) return;
      for (const e of children.addBatch(batch)) list.append(row(e));
      if (!sub && !loc.revision) {
        sub = live.subscribe(range, batch.revision + 1, { events: onEvents, reset: () => reload() });
      }
      showSummary();
    } catch (e) {
      showProblem(e);
    } finally {
      more.disabled = false;
    }
  }

  function onEvents(events, rev) {
    if (children.entries.length >= MAX_SHOWN) {
      // Stop following: the list stays as it is, bounded.
      if (sub) sub.close();
      sub = null;
      stopped.hidden = false;
      return;
    }
    const ch = children.apply(events, rev);
    for (const e of ch.removed) {
      rows.get(e.id)?.remove();
      rows.delete(e.id);
    }
    // A few changes flash; a burst of them is only shown.
    const flash = ch.added.length + ch.changed.length <= FLASH_MAX;
    for (const e of ch.added) place(e, flash);
    for (const e of ch.changed) refreshRow(e, flash);
    for (const e of ch.recount) {
      e.count = null;
      queue.push(e);
    }
    pump();
    showSummary();
  }

  function showProblem(e) {
    problem.hidden = false;
    clear(problem, h("p", {}, e.explain ? e.explain() : String(e)));
    if (e.status === 403) {
      problem.append(h("p", {}, "Go to a folder you may read with the path field above."));
    }
    summary.textContent = "";
  }

  async function toolbar() {
    clear(tools);
    const common = { f: loc.folder, sep: loc.sep === "/" ? null : loc.sep, rev: loc.revision || null };
    if (!flat) {
      tools.append(h("a", { class: "button", href: href("keys", { ...common, pane: "history" }) }, "History"));
      tools.append(h("a", { class: "button", href: href("keys", { ...common, pane: "deleted" }) }, "Deleted keys"));
    }
    tools.append(h("button", { type: "button", onclick: () => exportRange(app, range, base, loc.revision || 0) }, "Export"));
    if (loc.revision || !(await perms.canWrite(range)) || disposed) return;
    tools.prepend(h("a", { class: "button primary", href: href("keys", { ...common, pane: "new" }) }, "New key"));
    tools.append(h("a", { class: "button", href: href("keys", { ...common, q: loc.search, pane: "import" }) }, "Import…"));
    if (base.length) {
      tools.append(h("button", { type: "button", class: "danger", onclick: deleteAll }, flat ? "Delete these keys…" : "Delete folder…"));
    }
  }

  // deleteAll counts the keys, asks, and deletes them all only if none
  // changed since the count: a txn compares that every key's mod revision
  // is at most the counted revision, so a key created or changed meanwhile
  // stops it.
  async function deleteAll() {
    let res;
    try {
      res = await store.list(range, { countOnly: true });
    } catch (e) {
      notify(e.explain(), "error");
      return;
    }
    const n = res.count;
    const rev = res.header.revision;
    const ok = await confirm({
      title: `Delete ${num(n)} key${n === 1 ? "" : "s"}?`,
      body: [`This deletes ${describe(range)}: ${num(n)} key${n === 1 ? "" : "s"} as of revision ${rev}. Their history stays until it is compacted, so they can be restored from “Deleted keys” until then.`],
      action: `Delete ${num(n)} keys`,
      danger: true,
      typed: n > 1 ? String(n) : null,
    });
    if (!ok) return;
    try {
      const t = await store.txn({
        compare: [{ ...selector(range), target: "mod", result: "less", mod_revision: rev + 1 }],
        success: [{ delete: selector(range) }],
        failure: [],
      }, { action: `delete ${describe(range)}`, need: "write", on: describe(range) });
      if (!t.succeeded) {
        notify(`Nothing was deleted: keys under ${display(base)} changed after they were counted. Count again.`, "error");
        return;
      }
      notify(`Deleted ${num(t.responses[0].delete.deleted)} keys at revision ${t.header.revision}.`);
    } catch (e) {
      notify(e.explain(), "error");
    }
  }

  function reload() {
    if (sub) sub.close();
    sub = null;
    observer.disconnect();
    queue.length = 0;
    rows.clear();
    clear(list);
    problem.hidden = true;
    stopped.hidden = true;
    lister = new LevelLister(store, base, sep, loc.revision || 0);
    children = new Children(base, sep);
    if (flat) children.name = (k) => display(k);
    loadMore();
  }

  reload();
  toolbar();

  return {
    el,
    setOpen(key) {
      open = key;
      for (const li of rows.values()) {
        const a = li.firstChild;
        if (a.classList.contains("key")) a.setAttribute("aria-current", String(!!key && li.dataset.id === idOf(key)));
      }
    },
    dispose() {
      disposed = true;
      if (sub) sub.close();
      observer.disconnect();
    },
  };
}

