// The Locks and elections section: on the left the names found (or
// typed), on the right the one chosen, live: its holder or leader and
// who waits behind it. #/locks?name=NAME&kind=lock|election.

import { display, equal, utf8 } from "./bytes.js";
import { h, clear, field, focusHeading, listNav, num } from "./dom.js";
import { LockFinder } from "./lockfinder.js";
import { createLockPane } from "./lockpane.js";
import { getKey, go, href } from "./router.js";

function locate(params) {
  const kind = params.get("kind");
  return { name: getKey(params, "name"), kind: kind === "lock" || kind === "election" ? kind : null };
}

const sameName = (a, b) => (a === null || b === null ? a === b : equal(a, b));

export function mountLocks(container, app, params) {
  let loc = locate(params);
  let pane = null;
  const nameIn = h("input", { type: "text", name: "name", autocomplete: "off", spellcheck: "false", placeholder: "e.g. jobs/nightly", required: true });
  const open = h("form", { class: "find", onsubmit: (e) => {
    e.preventDefault();
    go("locks", { name: utf8(nameIn.value) });
  } }, field("Name", nameIn), h("button", { type: "submit" }, "Open"));
  const hint = h("p", { class: "hint" }, "Open any lock or election by its name, found or not: its keys are under the name and a slash.");
  const summary = h("p", { class: "summary", "aria-live": "polite" });
  const again = h("button", { type: "button", onclick: () => finder.scan() }, "Look again");
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const list = h("ul", { class: "children lock-list", "aria-labelledby": "locks-h" });
  listNav(list);
  const right = h("div", { class: "pane", id: "pane" });
  clear(container, h("div", { class: "locks" }, h("div", { class: "keys-main" },
    h("section", { class: "lock-names", "aria-labelledby": "locks-h" },
      h("h2", { id: "locks-h" }, "Locks and elections"), summary, open, hint,
      h("div", { class: "toolbar" }, again), problem, list),
    right)));

  const finder = new LockFinder(app, renderList);

  function renderList() {
    again.disabled = finder.scanning;
    summary.textContent = finder.scanning ? "Looking through the leases…" : finder.describe();
    problem.hidden = !finder.problem;
    if (finder.problem) problem.textContent = finder.problem.explain();
    const items = finder.list();
    if (loc.name && !finder.has(loc.name)) items.unshift({ name: loc.name, keys: null });
    clear(list, items.map((n) => {
      const current = loc.name !== null && equal(n.name, loc.name);
      const count = n.keys === null ? "typed" : n.keys === 0 ? "empty" : `${num(n.keys)} key${n.keys === 1 ? "" : "s"}`;
      return h("li", { "data-name": display(n.name) },
        h("a", { href: href("locks", { name: n.name }), class: "key", "aria-current": current ? "true" : null },
          h("span", { class: "name" }, display(n.name)),
          h("span", { class: "count" }, count)));
    }));
    if (!items.length && !finder.scanning) list.append(h("li", { class: "absent" }, "No lock or election found. Type a name to open one."));
  }

  function renderPane(focus) {
    if (pane) pane.dispose();
    pane = null;
    if (loc.name && loc.name.length) {
      pane = createLockPane(app, loc);
      clear(right, pane.el);
    } else {
      clear(right, h("section", { class: "empty", "aria-labelledby": "pane-empty" },
        h("h2", { id: "pane-empty" }, "Nothing selected"),
        h("p", {}, "Choose a lock or an election to see who holds it and who waits, live.")));
    }
    if (focus) focusHeading(right);
  }

  renderList();
  renderPane(false);
  focusHeading(container);
  finder.scan();

  return {
    update(params) {
      const next = locate(params);
      if (sameName(next.name, loc.name) && next.kind === loc.kind) return;
      loc = next;
      renderList();
      renderPane(true);
    },
    dispose() {
      finder.close();
      if (pane) pane.dispose();
    },
  };
}
