// The Leases section: the leases a page at a time (GET /v1/leases is
// paged: a store may hold a million), each with the time it has left,
// counted down in the page and read again from the server every few
// seconds; its keys; grant, keep-alive and revoke.
//
// The page holds one page of PAGE leases, the page tokens that lead back
// to the pages before it (at most MAX_BACK), and the lease opened by the
// URL when it is not on the page: the cost of the view is bounded
// however many leases there are.

import { display } from "./bytes.js";
import { confirm, notify } from "./dialog.js";
import { h, clear, duration, field, focusHeading, num, table } from "./dom.js";
import { remaining } from "./leasebadge.js";
import { href } from "./router.js";
import { leaseKeys } from "./store.js";

const PAGE = 100; // leases shown at once; each is read on its own
const MAX_BACK = 1000; // pages "Previous" can go back
const KEYS_SHOWN = 200; // keys of a lease listed; the rest are counted
const REFRESH = 10000;

/** folderOf returns the folder a key is in, by the default separator. */
function folderOf(k) {
  const i = k.lastIndexOf(0x2f); // "/"
  return k.subarray(0, i + 1);
}

export function mountLeases(container, app, params) {
  const { store } = app;
  const ttlIn = h("input", { type: "number", min: "1", step: "1", value: "60", required: true, inputmode: "numeric" });
  const idIn = h("input", { type: "number", min: "0", step: "1", placeholder: "chosen by the server", inputmode: "numeric" });
  const grant = h("form", { class: "grant", onsubmit: async (e) => {
    e.preventDefault();
    try {
      const res = await store.grantLease(Number(ttlIn.value), Number(idIn.value) || 0);
      notify(`Granted lease ${res.id} with a TTL of ${duration(res.ttl)}.`);
      idIn.value = "";
      refresh();
    } catch (err) {
      notify(err.explain(), "error");
    }
  } }, field("TTL in seconds", ttlIn), field("Lease ID", idIn, "Optional."), h("button", { type: "submit", class: "primary" }, "Grant lease"));
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const rows = h("tbody");
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const first = h("button", { type: "button", onclick: () => turn(() => { back.length = 0; return ""; }) }, "First page");
  const prev = h("button", { type: "button", onclick: () => turn(() => back.pop()) }, "Previous page");
  const next = h("button", { type: "button", onclick: () => turn(() => {
    back.push(token);
    if (back.length > MAX_BACK) back.shift();
    return nextToken;
  }) }, "Next page");
  const pager = h("div", { class: "toolbar pager", role: "group", "aria-label": "Pages of leases" }, first, prev, next);
  clear(container, h("section", { class: "leases", "aria-labelledby": "leases-h" },
    h("h2", { id: "leases-h" }, "Leases"),
    grant, summary, problem,
    table("Leases and the time they have left", ["Lease ID", "Time left", "Granted TTL", "(Actions)"], rows),
    pager));
  focusHeading(container);

  const leases = new Map(); // id -> {ttl, granted, at, tr, left, meter, keys}
  const pinned = Number(params.get("id")) || 0; // the lease the URL opens, shown even when not on the page
  const open = new Set(pinned ? [pinned] : []);
  let token = ""; // the page shown: "" is the first
  let nextToken = ""; // the page after it, if any
  const back = []; // the tokens of the pages before it
  let pageNo = 1;
  let disposed = false;
  let reads = 0; // the latest refresh: an earlier one, overtaken, shows nothing
  let reading = false; // the latest refresh has not finished

  function tick() {
    for (const l of leases.values()) {
      const left = remaining(l.ttl, l.at);
      l.left.textContent = left > 0 ? duration(left) : "expired";
      l.meter.value = Math.max(0, left);
    }
  }

  function render(id, l) {
    const left = h("span", { class: "ttl" });
    const meter = h("meter", { min: "0", max: String(l.granted || 1), value: String(l.ttl), "aria-label": `Time left of lease ${id}` });
    const keysCell = h("td", { colspan: "4", class: "lease-keys" });
    const keysRow = h("tr", { class: "detail", hidden: !open.has(id) }, keysCell);
    const tr = h("tr", { "data-lease": String(id) },
      h("th", { scope: "row" }, String(id), h("span", { class: "hex" }, ` (0x${id.toString(16)})`)),
      h("td", {}, meter, " ", left),
      h("td", {}, duration(l.granted)),
      h("td", { class: "row-actions" },
        h("button", { type: "button", "aria-expanded": String(open.has(id)), onclick: (e) => toggleKeys(id, e.target) }, "Keys"),
        h("button", { type: "button", onclick: () => keepAlive(id) }, "Keep alive"),
        h("button", { type: "button", class: "danger", onclick: () => revoke(id) }, "Revoke…")));
    Object.assign(l, { tr, keysRow, keysCell, left, meter });
    if (open.has(id)) showKeys(id);
    return [tr, keysRow];
  }

  async function showKeys(id) {
    const l = leases.get(id);
    try {
      const res = await store.lease(id, true);
      const keys = leaseKeys(res);
      clear(l.keysCell, keys.length
        ? h("ul", { "aria-label": `Keys of lease ${id}` }, keys.slice(0, KEYS_SHOWN).map((k) => h("li", {}, h("a", { href: href("keys", { f: folderOf(k), k }) }, display(k)))),
          keys.length > KEYS_SHOWN ? h("li", {}, `… and ${num(keys.length - KEYS_SHOWN)} more`) : null)
        : h("p", {}, "No keys (or none you may read) are attached."));
    } catch (e) {
      clear(l.keysCell, e.explain());
    }
  }

  function toggleKeys(id, button) {
    const l = leases.get(id);
    const show = l.keysRow.hidden;
    l.keysRow.hidden = !show;
    button.setAttribute("aria-expanded", String(show));
    if (show) {
      open.add(id);
      showKeys(id);
    } else open.delete(id);
  }

  async function keepAlive(id) {
    try {
      const res = await store.keepAlive(id);
      const l = leases.get(id);
      Object.assign(l, { ttl: res.ttl, at: Date.now() });
      tick();
      notify(`Lease ${id} renewed: ${duration(res.ttl)} left.`);
    } catch (e) {
      notify(e.explain(), "error");
      refresh();
    }
  }

  async function revoke(id) {
    let keys = [];
    try {
      keys = leaseKeys(await store.lease(id, true));
    } catch (e) {
      notify(e.explain(), "error");
      refresh();
      return;
    }
    const ok = await confirm({
      title: `Revoke lease ${id}?`,
      body: [keys.length
        ? `Revoking deletes the ${num(keys.length)} key${keys.length === 1 ? "" : "s"} attached to it, in one revision:`
        : "No keys you may read are attached to it.",
      keys.length ? h("ul", {}, keys.slice(0, 20).map((k) => h("li", {}, h("code", {}, display(k)))), keys.length > 20 ? h("li", {}, `… and ${keys.length - 20} more`) : null) : null].filter(Boolean),
      action: "Revoke",
      danger: true,
    });
    if (!ok) return;
    try {
      const res = await store.revokeLease(id);
      notify(`Revoked lease ${id} at revision ${res.header.revision}.`);
      refresh();
    } catch (e) {
      notify(e.explain(), "error");
    }
  }

  // turn shows another page: move() updates the tokens and returns the
  // token of the page to show.
  function turn(move) {
    const to = move() || "";
    pageNo = to === "" ? 1 : pageNo + (to === nextToken ? 1 : -1);
    token = to;
    nextToken = ""; // known once the page is read
    for (const b of [first, prev, next]) b.disabled = true;
    refresh();
  }

  async function refresh() {
    const my = ++reads;
    reading = true;
    try {
      const list = await store.leases({ limit: PAGE, pageToken: token });
      if (disposed || my !== reads) return;
      const ids = list.leases.map((l) => l.id);
      const shownIds = pinned && !ids.includes(pinned) ? [pinned, ...ids] : ids;
      const got = await Promise.all(shownIds.map((id) => store.lease(id).catch(() => null)));
      if (disposed || my !== reads) return;
      nextToken = list.more ? list.next_page_token || "" : "";
      const at = Date.now();
      const kept = new Map();
      const trs = [];
      shownIds.forEach((id, i) => {
        if (!got[i]) return;
        const old = leases.get(id);
        const l = old || {};
        Object.assign(l, { ttl: got[i].ttl, granted: got[i].granted_ttl, at });
        kept.set(id, l);
        if (old) {
          l.meter.max = l.granted || 1;
          trs.push(l.tr, l.keysRow);
        } else {
          leases.set(id, l);
          trs.push(...render(id, l));
        }
        l.tr.classList.toggle("pinned", !ids.includes(id));
      });
      leases.clear();
      for (const [id, l] of kept) leases.set(id, l);
      rows.replaceChildren(...trs);
      if (!trs.length) rows.append(h("tr", {}, h("td", { colspan: "4" }, pageNo === 1 ? "No leases." : "No leases on this page.")));
      const from = (pageNo - 1) * PAGE;
      summary.textContent = ids.length
        ? `Leases ${num(from + 1)} to ${num(from + ids.length)}, by ID${nextToken ? "; more follow" : ""}.`
        : pageNo === 1 ? "No leases." : "No more leases.";
      problem.hidden = true;
      tick();
    } catch (e) {
      if (my !== reads) return;
      problem.hidden = false;
      problem.textContent = e.explain();
    } finally {
      if (my === reads) {
        reading = false;
        first.disabled = prev.disabled = token === "";
        next.disabled = !nextToken;
        pager.hidden = !nextToken && token === "";
      }
    }
  }

  refresh();
  const ticker = setInterval(tick, 1000);
  // A timed refresh waits for the one in flight: on a loaded server a
  // page of reads can take longer than REFRESH, and refreshes that each
  // overtook the last would never show anything.
  const refresher = setInterval(() => reading || refresh(), REFRESH);
  return {
    dispose() {
      disposed = true;
      clearInterval(ticker);
      clearInterval(refresher);
    },
  };
}
