// The Cluster section: the server's status, read again every few seconds,
// and maintenance: compaction (with a confirmation, since history below
// the revision is gone for good), defragmentation and disarming alarms.
// All of it needs the root role when auth is on.

import { confirm, notify } from "./dialog.js";
import { h, clear, bytesSize, field, focusHeading, num } from "./dom.js";

const REFRESH = 5000;

export function mountCluster(container, app) {
  const { store } = app;
  const statusBox = h("div", { class: "status-box", "aria-live": "off" });
  const alarmsBox = h("div", { class: "alarms" });
  const rev = h("input", { type: "number", min: "1", step: "1", required: true, inputmode: "numeric" });
  const physical = h("input", { type: "checkbox" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  let current = null;

  const compactForm = h("form", { class: "compact", onsubmit: async (e) => {
    e.preventDefault();
    const r = Number(rev.value);
    const ok = await confirm({
      title: `Compact the history up to revision ${r}?`,
      body: [
        `Every version older than revision ${r} that is not a key's current value is dropped for good: history, restore and time travel before ${r} stop working, and watches that resume from before it are told to list again.`,
        current ? `The current revision is ${current.revision}; the history is held from revision ${current.compact_revision || 1}.` : "",
      ].filter(Boolean),
      action: "Compact",
      danger: true,
      typed: String(r),
    });
    if (!ok) return;
    try {
      await store.compact(r, physical.checked);
      notify(`Compacted the history up to revision ${r}.`);
      refresh();
    } catch (err) {
      notify(err.explain(), "error");
    }
  } },
  field("Compact up to revision", rev),
  h("label", { class: "check-label" }, physical, " Wait until the space is reclaimed on disk"),
  h("button", { type: "submit", class: "danger" }, "Compact…"));

  const defrag = h("button", { type: "button", onclick: async () => {
    const ok = await confirm({
      title: "Defragment the backend?",
      body: "The backend file is rewritten without its free pages. Writes wait while it runs.",
      action: "Defragment",
    });
    if (!ok) return;
    try {
      const res = await store.defrag();
      notify(`Defragmented: the backend is now ${bytesSize(res.db_size)}.`);
      refresh();
    } catch (err) {
      notify(err.explain(), "error");
    }
  } }, "Defragment…");

  clear(container, h("section", { class: "cluster", "aria-labelledby": "cluster-h" },
    h("h2", { id: "cluster-h" }, "Cluster"),
    problem,
    statusBox,
    h("h3", {}, "Alarms"), alarmsBox,
    h("h3", {}, "Compaction"), compactForm,
    h("h3", {}, "Defragmentation"), h("p", {}, "Gives the space of deleted and compacted data back to the file system. ", defrag)));
  focusHeading(container);

  function renderStatus(s) {
    const used = s.db_size ? s.db_size_in_use / s.db_size : 0;
    const items = [
      ["Version", s.version],
      ["Revision", num(s.revision)],
      ["Compact revision", s.compact_revision ? num(s.compact_revision) : "none"],
      ["Keys", num(s.keys)],
      ["Leases", num(s.leases)],
      ["Backend size", bytesSize(s.db_size)],
      ["In use", [h("meter", { min: "0", max: "1", value: String(used), "aria-label": "Share of the backend in use" }), ` ${bytesSize(s.db_size_in_use)} (${Math.round(used * 100)}%)`]],
      ["Watchers synced", num(s.watchers.synced)],
      ["Watchers catching up", num(s.watchers.unsynced)],
      ["Watchers too slow (victims)", num(s.watchers.victims)],
    ];
    clear(statusBox, h("dl", { class: "status" }, items.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])));
    clear(alarmsBox, s.alarms.length
      ? [h("ul", {}, s.alarms.map((a) => h("li", { class: "alarm" }, a))),
        h("button", { type: "button", onclick: disarm }, "Disarm alarms"),
        h("p", { class: "hint" }, "Disarm NOSPACE only once space is back (compact and defragment first).")]
      : h("p", {}, "No alarms."));
    if (!rev.value) rev.value = String(s.revision);
  }

  async function disarm() {
    try {
      await store.disarm();
      notify("Alarms disarmed.");
      refresh();
    } catch (e) {
      notify(e.explain(), "error");
    }
  }

  async function refresh() {
    try {
      current = await store.status();
      problem.hidden = true;
      renderStatus(current);
    } catch (e) {
      problem.hidden = false;
      problem.textContent = e.explain();
    }
  }

  refresh();
  const timer = setInterval(refresh, REFRESH);
  return { dispose: () => clearInterval(timer) };
}
