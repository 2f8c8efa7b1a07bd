// One lock or election, live: who holds it (leads), since which
// revision, and who waits (the other candidates), in the order the
// server will serve them. Read once, then kept by the live feed over
// NAME/; nothing is read again on a timer but the leases' TTLs, which
// keep-alives change out of sight of the feed (leasebadge.js).
//
// Locks and elections keep the same keys, so the keys alone do not say
// which one a name is. The pane guesses from the values (a candidate
// proclaims one, a lock's key has none) and the user can say otherwise.

import { display, text } from "./bytes.js";
import { confirm, notify } from "./dialog.js";
import { h, clear, num, table } from "./dom.js";
import { createLeaseBadge } from "./leasebadge.js";
import { LockQueue, SHOWN, tenureStart } from "./lockqueue.js";
import { href } from "./router.js";
import { describe, ownerRange } from "./store.js";

const WORDS = {
  lock: { thing: "lock", owner: "Holder", queue: "Waiting", none: "Nobody is waiting.", free: "Free: nobody holds it.", held: "Held" },
  election: { thing: "election", owner: "Leader", queue: "Other candidates", none: "No other candidate.", free: "No leader: nobody campaigns.", held: "Led" },
};

/** shownValue renders a value: text as is, other bytes by their size. */
function shownValue(v) {
  if (v.length === 0) return h("span", { class: "absent" }, "(empty)");
  const s = text(v);
  if (s === null) return h("span", { class: "absent" }, `(${num(v.length)} bytes, not text)`);
  return h("code", {}, s.length > 200 ? s.slice(0, 200) + "…" : s);
}

function sinceText(s) {
  if (!s) return "…";
  if (s.from === s.to) return `revision ${num(s.from)}`;
  return `between revision ${num(s.from)} and ${num(s.to)} (the history that would tell is compacted or long)`;
}

/**
 * createLockPane shows the lock or election called name (bytes); kind
 * is "lock", "election", or null to guess. It returns {el, dispose()}.
 */
export function createLockPane(app, { name, kind: chosen }) {
  const { store, live, perms } = app;
  const range = ownerRange(name);
  const shown = display(name);
  const heading = h("h2", { id: "lock-h", class: "key-name" }, shown);
  const kindLine = h("p", { class: "kind" });
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const problem = h("div", { class: "problem", role: "alert", hidden: true });
  const ownerBox = h("div", { class: "owner" });
  const queueBox = h("div", { class: "queue" });
  const el = h("section", { class: "lock-pane", "aria-labelledby": "lock-h" }, heading, kindLine, summary, problem, ownerBox, queueBox);

  const q = new LockQueue();
  const badges = new Map(); // entry id -> lease badge
  let kind = chosen;
  let sub = null;
  let disposed = false;
  let loads = 0;
  let canWrite = false;

  function badge(e) {
    if (!e.lease) return h("span", { class: "absent" }, "no lease");
    let b = badges.get(e.id);
    if (!b || b.lease !== e.lease) {
      if (b) b.dispose();
      b = { ...createLeaseBadge(app, e.lease), lease: e.lease };
      badges.set(e.id, b);
    }
    return b.el;
  }

  function forget(entries) {
    for (const e of entries) {
      badges.get(e.id)?.dispose();
      badges.delete(e.id);
    }
  }

  function renderKind() {
    const k = kind || "lock";
    const other = k === "lock" ? "election" : "lock";
    const why = chosen ? "" : kind ? "Guessed from the values: a candidate's key carries one, a lock's key none."
      : "Locks and elections keep the same keys; with none to go by, this is shown as a lock.";
    clear(kindLine, h("span", { class: "tag" }, k === "lock" ? "Lock" : "Election"), " ",
      why ? h("span", { class: "hint" }, why) : null,
      h("a", { href: href("locks", { name, kind: other }) }, other === "lock" ? "Show as a lock" : "Show as an election"));
  }

  function render(flash) {
    if (!kind) kind = q.entries.length ? q.kind() : null;
    const w = WORDS[kind || "lock"];
    renderKind();
    const o = q.owner;
    const waiting = q.waiting();
    const behind = q.count - (o ? 1 : 0);
    summary.textContent = o
      ? `${w.held} by lease ${o.lease} · ${num(behind)} ${kind === "election" ? "other candidate" + (behind === 1 ? "" : "s") : "waiting"}`
        + (q.truncated ? ` · the first ${num(SHOWN)} keys shown` : "")
      : w.free;
    if (!o) {
      clear(ownerBox, h("h3", {}, w.owner), h("p", { class: "absent" }, w.free));
    } else {
      const rows = [
        ["Key", h("code", { class: "owner-key" }, display(o.key))],
        ["Lease", badge(o)],
        kind === "election" ? ["Value", shownValue(o.value)] : null,
        [kind === "election" ? "Leader since" : "Held since", sinceText(q.since)],
        ["In line since", `revision ${num(o.create)}`],
      ].filter(Boolean);
      const action = !canWrite ? null : kind === "election"
        ? h("button", { type: "button", class: "danger", onclick: () => resign(o) }, "Resign…")
        : h("button", { type: "button", class: "danger", onclick: () => release(o) }, "Release…");
      const dl = h("dl", { class: "status" },
        rows.map(([k, v]) => [h("dt", {}, k), h("dd", { "data-field": k }, v)]));
      if (flash) dl.classList.add("changed");
      clear(ownerBox, h("h3", {}, w.owner), dl, action ? h("div", { class: "actions" }, action) : null);
    }
    const trs = waiting.map((e, i) => h("tr", { "data-key": display(e.key) },
      h("td", {}, String(i + 1)),
      h("th", { scope: "row" }, h("code", {}, display(e.key))),
      h("td", {}, badge(e)),
      kind === "election" ? h("td", {}, shownValue(e.value)) : null,
      h("td", {}, `revision ${num(e.create)}`)));
    const cols = ["#", "Key", "Lease", kind === "election" ? "Value" : null, "In line since"];
    clear(queueBox, h("h3", {}, `${w.queue} (${num(behind)})`),
      trs.length ? table(`${w.queue}, in the order they ${kind === "election" ? "lead" : "hold"} next`, cols, h("tbody", {}, trs))
        : h("p", { class: "absent" }, w.none));
  }

  async function findSince(owner, at) {
    try {
      const s = await tenureStart(store, range, owner, at);
      if (disposed || q.owner !== owner || q.since) return;
      q.since = s;
      render(false);
    } catch {
      // Not readable: the pane says "…", the rest stands.
    }
  }

  function onEvents(events, rev) {
    const { removed, ownerChanged } = q.apply(events, rev);
    forget(removed);
    render(ownerChanged);
  }

  async function load() {
    if (sub) sub.close();
    sub = null;
    const my = ++loads;
    try {
      const what = { action: `read the lock or election ${shown}`, need: "read", on: describe(range) };
      const res = await store.list(range, { sortTarget: "create", sortOrder: "ascend", limit: SHOWN, what });
      if (disposed || my !== loads) return;
      forget(q.entries);
      q.load(res);
      sub = live.subscribe(range, q.revision + 1, { events: onEvents, reset: () => load() });
      problem.hidden = true;
      render(false);
      if (q.owner) findSince(q.owner, q.revision);
    } catch (e) {
      if (disposed || my !== loads) return;
      problem.hidden = false;
      clear(problem, h("p", {}, e.explain ? e.explain() : String(e)));
      summary.textContent = "";
    }
  }

  async function release(o) {
    const next = q.entries[1];
    const ok = await confirm({
      title: `Release the lock ${shown}?`,
      body: [
        `This deletes ${display(o.key)}, the key of lease ${o.lease}, which holds the lock${next ? `; lease ${next.lease} holds it next` : ""}.`,
        "The holder is not told: if it is still at work, it goes on as if it held the lock. Release a holder that is gone or stuck, not one that works.",
      ],
      action: "Release",
      danger: true,
    });
    if (!ok) return;
    if (q.owner !== o) {
      notify(`Nothing was released: the lock ${shown} changed hands meanwhile. Look again.`, "error");
      return;
    }
    try {
      const res = await store.unlock(name, o.key);
      notify(`Released the lock ${shown} at revision ${res.header.revision}.`);
    } catch (e) {
      notify(e.explain(), "error");
    }
  }

  async function resign(o) {
    const next = q.entries[1];
    const ok = await confirm({
      title: `Resign the leader of ${shown}?`,
      body: [
        `This deletes ${display(o.key)}, the key of lease ${o.lease}, if it is still the key that campaigned (created at revision ${o.create})${next ? `; lease ${next.lease} leads next` : "; the office is then empty"}.`,
        "The leader is not told unless it observes the election.",
      ],
      action: "Resign",
      danger: true,
    });
    if (!ok) return;
    try {
      const res = await store.resign(name, { key: o.key, revision: o.create, lease: o.lease });
      notify(`The leader of ${shown} resigned at revision ${res.header.revision}.`);
    } catch (e) {
      notify(e.explain(), "error");
    }
  }

  load();
  perms.canWrite(range).then((ok) => {
    canWrite = ok;
    if (!disposed && q.revision) render(false);
  });

  return {
    el,
    dispose() {
      disposed = true;
      if (sub) sub.close();
      forget(q.entries);
    },
  };
}
