// A lease as a key shows it: its ID, linking to the Leases view, and the
// time it has left, counted down in the page from what the server said.

import { h, duration } from "./dom.js";
import { href } from "./router.js";

/** remaining returns the seconds a lease has left, from ttl read at the time at (ms). */
export function remaining(ttl, at) {
  return ttl - (Date.now() - at) / 1000;
}

export function createLeaseBadge(app, id) {
  const ttl = h("span", { class: "ttl" }, "…");
  const el = h("span", { class: "lease-badge" }, h("a", { href: href("leases", { id }) }, `lease ${id}`), " · ", ttl);
  let timer = 0;
  app.store.lease(id).then((l) => {
    const at = Date.now();
    const tick = () => {
      const left = remaining(l.ttl, at);
      ttl.textContent = left > 0 ? `expires in ${duration(left)}` : "expired";
      if (left <= 0) clearInterval(timer);
    };
    tick();
    timer = setInterval(tick, 1000);
  }, (e) => {
    ttl.textContent = e.code === "lease_not_found" ? "expired or revoked" : "TTL unknown";
  });
  return { el, dispose: () => clearInterval(timer) };
}
