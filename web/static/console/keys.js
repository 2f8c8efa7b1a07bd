// The Keys section: the path bar, the list of a folder's children on the
// left and, on the right, the pane of what is selected: a key, a history,
// the deleted keys of the folder, or a new key.

import { EMPTY, display, equal, indexOf, utf8 } from "./bytes.js";
import { createBrowse } from "./browse.js";
import { createDeleted } from "./deleted.js";
import { h, clear, field, focusHeading } from "./dom.js";
import { createHistory } from "./history.js";
import { createKeyPane } from "./keyview.js";
import { prefix, single } from "./range.js";
import { getKey, go, href } from "./router.js";
import { restoreAt } from "./restore.js";
import { describe } from "./store.js";
import { createImport } from "./transfer.js";

function locate(params) {
  const rev = Number(params.get("rev")) || 0;
  return {
    folder: getKey(params, "f") || EMPTY,
    sep: params.get("sep") || "/",
    search: getKey(params, "q"),
    key: getKey(params, "k"),
    pane: params.get("pane") || "",
    revision: rev > 0 ? rev : 0,
  };
}

const sameBytes = (a, b) => (a === null || b === null ? a === b : equal(a, b));

export function mountKeys(container, app, params) {
  let loc = locate(params);
  let browse = null;
  let pane = null;
  const bar = h("div", { class: "keys-bar" });
  const left = h("div", { class: "keys-list" });
  const right = h("div", { class: "pane", id: "pane" });
  clear(container, h("div", { class: "keys" }, bar, h("div", { class: "keys-main" }, left, right)));

  function common() {
    return { sep: loc.sep === "/" ? null : loc.sep, rev: loc.revision || null };
  }

  function crumbs() {
    const sep = utf8(loc.sep);
    const items = [h("li", {}, h("a", { href: href("keys", common()), "aria-current": loc.folder.length ? null : "page" }, "Top"))];
    let at = 0;
    while (at < loc.folder.length) {
      const i = indexOf(loc.folder, sep, at);
      const end = i < 0 ? loc.folder.length : i + sep.length;
      const part = loc.folder.subarray(0, end);
      items.push(h("li", {}, h("a", {
        href: href("keys", { f: part, ...common() }),
        "aria-current": end === loc.folder.length ? "page" : null,
      }, display(loc.folder.subarray(at, end)))));
      at = end;
    }
    return h("nav", { class: "crumbs", "aria-label": "Folder path" }, h("ol", {}, items));
  }

  function renderBar() {
    const find = h("input", { type: "search", name: "find", autocomplete: "off", spellcheck: "false", placeholder: `e.g. app${loc.sep}config${loc.sep}`, value: loc.search ? display(loc.search) : "" });
    const findForm = h("form", { class: "find", role: "search", onsubmit: (e) => {
      e.preventDefault();
      const v = find.value;
      if (v === "" || v.endsWith(loc.sep)) go("keys", { f: utf8(v), ...common() });
      else go("keys", { f: loc.folder, q: utf8(v), ...common() });
    } },
    field("Find", find, `A path ending in “${loc.sep}” opens that folder; anything else lists the keys starting with it.`),
    h("button", { type: "submit" }, "Find"));

    const rev = h("input", { type: "number", min: "1", step: "1", name: "rev", inputmode: "numeric", value: loc.revision ? String(loc.revision) : "" });
    const travel = h("form", { class: "travel", onsubmit: (e) => {
      e.preventDefault();
      go("keys", { f: loc.folder, q: loc.search, k: loc.key, sep: common().sep, rev: Number(rev.value) || null });
    } },
    field("As of revision", rev, "Read the whole tree as it was then."),
    h("button", { type: "submit" }, "View"),
    loc.revision ? h("a", { class: "button", href: href("keys", { f: loc.folder, q: loc.search, k: loc.key, sep: common().sep }) }, "Back to now") : null);

    const sepInput = h("input", { type: "text", name: "sep", size: "3", maxlength: "8", value: loc.sep, autocomplete: "off" });
    const sepForm = h("form", { class: "sep", onsubmit: (e) => {
      e.preventDefault();
      go("keys", { f: loc.folder, sep: sepInput.value && sepInput.value !== "/" ? sepInput.value : null, rev: loc.revision || null });
    } }, field("Separator", sepInput), h("button", { type: "submit" }, "Apply"));

    const options = h("details", { class: "options", open: !!loc.revision || loc.sep !== "/" },
      h("summary", {}, "Time travel and separator"), h("div", { class: "options-body" }, travel, sepForm));
    clear(bar, crumbs(), findForm, options,
      loc.revision ? h("p", { class: "banner", role: "note" }, `Viewing the store as of revision ${loc.revision}: read-only, not live. `, restoreButton()) : null);
  }

  // restoreButton offers, as of a past revision, to make what the list
  // shows hold again what it held then (POST /v1/restore, after its dry
  // run), to those who may write it.
  function restoreButton() {
    const r = prefix(loc.search || loc.folder);
    const rev = loc.revision;
    const b = h("button", { type: "button", hidden: true, onclick: async () => {
      if (await restoreAt(app, r, rev)) go("keys", { f: loc.folder, q: loc.search, k: loc.key, sep: common().sep });
    } }, `Restore ${describe(r)} as of revision ${rev}…`);
    app.perms.canWrite(r).then((ok) => { b.hidden = !ok; });
    return b;
  }

  function renderPane(focus) {
    if (pane) pane.dispose();
    pane = null;
    const ctx = { ...loc, common: common() };
    if (loc.pane === "new") pane = createKeyPane(app, { ...ctx, create: true });
    else if (loc.pane === "history") pane = createHistory(app, { ...ctx, range: loc.key ? single(loc.key) : prefix(loc.search || loc.folder) });
    else if (loc.pane === "deleted") pane = createDeleted(app, ctx);
    else if (loc.pane === "import") pane = createImport(app, ctx, prefix(loc.search || loc.folder));
    else if (loc.key) pane = createKeyPane(app, ctx);
    if (pane) clear(right, pane.el);
    else {
      clear(right, h("section", { class: "empty", "aria-labelledby": "pane-empty" },
        h("h2", { id: "pane-empty" }, "Nothing selected"),
        h("p", {}, "Choose a key to see its value, metadata and history. Up and Down move through the list.")));
    }
    if (focus) {
      focusHeading(right);
      if (window.matchMedia("(max-width: 900px)").matches) right.scrollIntoView({ block: "start" });
    }
  }

  function render(focusPane) {
    renderBar();
    if (browse) browse.dispose();
    browse = createBrowse(app, { folder: loc.folder, sep: loc.sep, search: loc.search, revision: loc.revision, open: loc.key });
    clear(left, browse.el);
    renderPane(focusPane);
  }

  render(false);

  return {
    // update keeps the list (and its scroll position) when only the pane changes.
    update(params) {
      const next = locate(params);
      const sameList = sameBytes(next.folder, loc.folder) && next.sep === loc.sep &&
        sameBytes(next.search, loc.search) && next.revision === loc.revision;
      loc = next;
      if (!sameList) {
        render(false);
        return;
      }
      renderBar();
      browse.setOpen(loc.key);
      renderPane(true);
    },
    dispose() {
      if (browse) browse.dispose();
      if (pane) pane.dispose();
    },
  };
}
