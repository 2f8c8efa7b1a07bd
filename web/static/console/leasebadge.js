// A lease as a key shows it: its ID, linking to the Leases view, and the
// time it has left, counted down in the page from what the server said.
// Keep-alives are not seen from here, so when the countdown runs out the
// lease is read once more: one kept alive counts down again from its new
// TTL; one that expired says so. That is one read per TTL at most.

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
  let gone = false;

  function read() {
    app.store.lease(id).then((l) => {
      if (gone) return;
      const at = Date.now();
      const granted = l.granted_ttl ? ` (TTL ${duration(l.granted_ttl)})` : "";
      const tick = () => {
        const left = remaining(l.ttl, at);
        if (left > 0) {
          ttl.textContent = `expires in ${duration(left)}${granted}`;
          return;
        }
        clearInterval(timer);
        ttl.textContent = "expired";
        if (l.ttl > 0) read();
      };
      clearInterval(timer);
      tick();
      timer = setInterval(tick, 1000);
    }, (e) => {
      if (!gone) ttl.textContent = e.code === "lease_not_found" ? "expired or revoked" : "TTL unknown";
    });
  }

  read();
  return {
    el,
    dispose() {
      gone = true;
      clearInterval(timer);
    },
  };
}
