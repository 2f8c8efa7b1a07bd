// The key pane: a key's value and metadata, its renderings, and editing
// with compare-and-swap. A save sends If-Match with the mod revision the
// edit started from; a 412 shows the other writer's value beside the
// user's (conflict.js). The pane follows the key live: while not editing
// it shows each change; while editing it says that saving will conflict.

import { explain } from "./api.js";
import { EMPTY, display, fromWire, utf8 } from "./bytes.js";
import { renderConflict } from "./conflict.js";
import { confirm, notify } from "./dialog.js";
import { h, clear, field, tabs, bytesSize, uid } from "./dom.js";
import { createEditor } from "./editor.js";
import { analyze, renderings } from "./formats.js";
import { createLeaseBadge } from "./leasebadge.js";
import { single } from "./range.js";
import { restore } from "./restore.js";
import { go, href } from "./router.js";

export function createKeyPane(app, ctx) {
  return ctx.create ? createNew(app, ctx) : createView(app, ctx);
}

function createNew(app, ctx) {
  const { store } = app;
  const headingId = uid("new");
  const keyInput = h("input", { type: "text", required: true, autocomplete: "off", spellcheck: "false", value: display(ctx.folder) });
  const lease = h("input", { type: "number", min: "0", step: "1", inputmode: "numeric", placeholder: "none" });
  const ttl = ttlInput();
  const editor = createEditor(EMPTY);
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const form = h("form", { class: "new-key", onsubmit: async (e) => {
    e.preventDefault();
    const key = utf8(keyInput.value);
    if (!key.length) return;
    if (editor.problem() && !(await confirm({ title: "Save a value that does not check?", body: `The value is ${editor.problem()}.`, action: "Create anyway" }))) return;
    try {
      const res = await store.put(key, editor.bytes(), { ifNoneMatch: true, lease: Number(lease.value) || 0, ttl: ttlOf(ttl), verb: "create" });
      notify(`Created ${display(key)} at revision ${res.header.revision}.`);
      go("keys", { f: ctx.folder, k: key, ...ctx.common });
    } catch (err) {
      problem.hidden = false;
      if (err.status === 412) {
        clear(problem, `${display(key)} exists already: `, h("a", { href: href("keys", { f: ctx.folder, k: key, ...ctx.common }) }, "open it"), ".");
      } else clear(problem, explain(err));
    }
  } },
  field("Key", keyInput, "Created only if no key by this name exists."),
  field("Lease ID", lease, "Optional: the key is deleted when the lease expires."),
  field("Expires after (seconds)", ttl, "Optional, instead of a lease ID: the key gets a lease of its own, granted for this long, and is deleted when it expires."),
  editor.el,
  problem,
  h("div", { class: "actions" },
    h("button", { type: "submit", class: "primary" }, "Create"),
    h("a", { class: "button", href: href("keys", { f: ctx.folder, ...ctx.common }) }, "Cancel")));
  const el = h("section", { class: "key-pane", "aria-labelledby": headingId }, h("h2", { id: headingId }, "New key"), form);
  queueMicrotask(() => keyInput.focus());
  return { el, dispose() {} };
}

// ttlInput is the field of a put's ttl: whole seconds, empty for none.
function ttlInput() {
  return h("input", { type: "number", min: "1", step: "1", inputmode: "numeric", placeholder: "never", class: "ttl-input" });
}

// ttlOf reads a ttl field: the seconds, or undefined when empty. What is
// not a whole number of seconds, at least 1, goes to the server as typed,
// which refuses it in its own words.
function ttlOf(input) {
  const v = input.value.trim();
  return v === "" ? undefined : v;
}

function createView(app, ctx) {
  const { store, live, perms } = app;
  const key = ctx.key;
  const headingId = uid("key");
  const head = h("h2", { id: headingId, class: "key-name" }, display(key));
  const notice = h("p", { class: "notice", role: "status", "aria-live": "polite" });
  const meta = h("div", { class: "meta" });
  const actions = h("div", { class: "toolbar", role: "group", "aria-label": "Key actions" });
  const body = h("div", { class: "key-body" });
  const el = h("section", { class: "key-pane", "aria-labelledby": headingId }, head, notice, meta, actions, body);

  let kv = null; // what is shown: the key as of loaded revision or the last live event
  let loadedAt = 0;
  let writable = false;
  let restorable = false;
  let editor = null;
  let base = 0; // mod revision the edit is based on (0: the key did not exist)
  let baseLease = 0; // the lease of that version
  let ttl = null; // the edit's ttl field
  let conflict = null;
  let view = "auto";
  let sub = null;
  let badge = null;
  let disposed = false;

  async function load() {
    try {
      const [res, canWrite] = await Promise.all([
        store.get(key, { revision: ctx.revision || 0 }),
        perms.canWrite(single(key)),
      ]);
      if (disposed) return;
      kv = res ? res.kv : null;
      loadedAt = ctx.revision || (res ? res.header.revision : await currentRevision());
      // As of a past revision nothing is edited, but a version can be
      // restored by those who may write the key.
      writable = canWrite && !ctx.revision;
      restorable = canWrite;
      render();
      if (!ctx.revision && !sub) sub = live.subscribe(single(key), loadedAt + 1, { events: onEvents, reset: () => reload() });
    } catch (e) {
      if (disposed) return;
      clear(body, h("p", { class: "problem", role: "alert" }, explain(e)));
    }
  }

  async function currentRevision() {
    const r = await store.list(single(key), { countOnly: true });
    return r.header.revision;
  }

  function reload() {
    if (sub) sub.close();
    sub = null;
    load();
  }

  function onEvents(events, rev) {
    const ev = events[events.length - 1];
    const next = ev.type === "put" ? ev.kv : null;
    if (editor) {
      notice.textContent = next
        ? `Another writer saved this key at revision ${rev}: saving will show you both versions.`
        : `Another writer deleted this key at revision ${rev}: saving will show you both versions.`;
      return;
    }
    kv = next;
    notice.textContent = next ? `Updated live: revision ${rev}.` : `Deleted at revision ${rev}.`;
    renderSoon();
  }

  // renderSoon renders the newest value after a pause four times as long
  // as the last render took: a key rewritten faster than its value can
  // be shown takes at most a fifth of the page's time, and the values in
  // between are skipped.
  let renderTimer = 0;
  let renderCost = 0;
  let renderedAt = 0;
  function renderSoon() {
    if (renderTimer) return;
    const wait = Math.max(0, renderedAt + 4 * renderCost - performance.now());
    renderTimer = setTimeout(() => {
      renderTimer = 0;
      if (disposed) return;
      const t = performance.now();
      render();
      renderedAt = performance.now();
      renderCost = renderedAt - t;
    }, wait);
  }

  function renderMeta(value, info) {
    if (badge) badge.dispose();
    badge = null;
    if (!kv) {
      clear(meta);
      return;
    }
    const rows = [
      ["Created at revision", String(kv.create_revision)],
      ["Modified at revision", String(kv.mod_revision)],
      ["Version", String(kv.version)],
      ["Size", bytesSize(value.length)],
      ["Looks like", { binary: "binary", json: "JSON", yaml: "YAML", text: "text" }[info.kind]],
    ];
    const dl = h("dl", {}, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    if (kv.lease) {
      badge = createLeaseBadge(app, kv.lease);
      dl.append(h("dt", {}, "Lease"), h("dd", {}, badge.el));
    }
    clear(meta, dl);
  }

  function renderActions() {
    clear(actions);
    const hist = href("keys", { f: ctx.folder, q: ctx.search, k: key, pane: "history", ...ctx.common });
    if (kv && writable && !editor) actions.append(h("button", { type: "button", class: "primary", onclick: startEdit }, "Edit"));
    if (!kv && writable && !editor) actions.append(h("button", { type: "button", class: "primary", onclick: startEdit }, "Create this key"));
    actions.append(h("a", { class: "button", href: hist }, "History"));
    if (kv && writable && !editor) actions.append(h("button", { type: "button", class: "danger", onclick: remove }, "Delete…"));
    if (ctx.revision && kv) actions.append(h("button", { type: "button", onclick: restoreThis, hidden: !restorable }, "Restore this version"));
  }

  function renderValue(value, info) {
    if (!kv) {
      clear(body, h("p", { class: "absent" }, ctx.revision
        ? `This key did not exist at revision ${ctx.revision}.`
        : "This key does not exist. Its history may still hold its past values."));
      return;
    }
    const forms = renderings(value, info);
    const kind = info.kind;
    // A value too large for its pretty views opens as text, with a note.
    if (view === "auto") view = kind === "binary" ? "base64" : (kind === "json" || kind === "yaml") && info.value !== undefined ? kind : "text";
    const panel = h("div", { class: "value", role: "tabpanel", tabindex: "0" });
    let list = null;
    const show = (id) => {
      view = id;
      const { content, note } = forms.find((x) => x.id === id).show();
      clear(panel,
        note ? h("p", content === null ? { class: "check", "data-ok": "false" } : { class: "value-note" }, note) : null,
        content === null ? null : h("pre", { class: "code" }, content));
      if (list) panel.setAttribute("aria-labelledby", list.querySelector(`[data-tab="${id}"]`).id);
    };
    list = tabs("Show the value as", forms.map((f) => ({ id: f.id, label: f.label, title: f.error || null })), view, show);
    show(view);
    clear(body, list, panel);
  }

  function render() {
    const value = kv ? fromWire(kv, "value") : EMPTY;
    const info = analyze(value);
    renderMeta(value, info);
    renderActions();
    if (editor) return;
    renderValue(value, info);
  }

  function startEdit() {
    base = kv ? kv.mod_revision : 0;
    baseLease = kv ? kv.lease : 0;
    ttl = ttlInput();
    editor = createEditor(kv ? fromWire(kv, "value") : EMPTY);
    conflict = null;
    notice.textContent = "";
    renderEditor();
    renderActions();
    editor.focus();
  }

  function renderEditor() {
    const form = h("form", { class: "edit", onsubmit: (e) => {
      e.preventDefault();
      save(false);
    } },
    editor.el,
    field("Expires after (seconds)", ttl, baseLease && base
      ? `Optional: the key gets a new lease of its own, granted for this long. Empty: it keeps lease ${baseLease}.`
      : "Optional: the key gets a lease of its own, granted for this long, and is deleted when it expires. Empty: it never expires."),
    h("p", { class: "hint" }, base ? `Saving replaces revision ${base} only if nobody changed the key since.` : "Saving creates the key only if nobody did meanwhile."),
    h("div", { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", onclick: stopEdit }, "Cancel")));
    clear(body, conflict, form);
  }

  function stopEdit() {
    editor = null;
    conflict = null;
    reload();
  }

  async function save(force, over) {
    let bytes;
    try {
      bytes = editor.bytes();
    } catch {
      notify("The value is not valid base64.", "error");
      return;
    }
    if (!force && editor.problem() && !(await confirm({ title: "Save a value that does not check?", body: `The value is ${editor.problem()}.`, action: "Save anyway" }))) return;
    const cas = over === undefined ? base : over;
    // Without a ttl, a key that exists keeps its lease (ignore_lease):
    // editing a value does not take its expiry away.
    const t = ttlOf(ttl);
    try {
      const res = await store.put(key, bytes, cas ? { ifMatch: cas, ttl: t, ignoreLease: t === undefined } : { ifNoneMatch: true, ttl: t });
      notify(`Saved ${display(key)} at revision ${res.header.revision}.`);
      editor = null;
      conflict = null;
      notice.textContent = `Saved at revision ${res.header.revision}.`;
      reload();
    } catch (e) {
      if (e.status !== 412) {
        notify(explain(e), "error");
        return;
      }
      showConflict(e.detail.kv || null, bytes);
    }
  }

  function showConflict(theirs, mine) {
    const loadedBase = base;
    conflict = renderConflict({
      theirs, mine, base: loadedBase,
      onOverwrite: () => save(true, theirs ? theirs.mod_revision : 0),
      onTheirs: () => {
        editor = null;
        conflict = null;
        kv = theirs;
        notice.textContent = theirs ? `Showing their version, revision ${theirs.mod_revision}.` : "The key was deleted.";
        reload();
      },
      onKeep: () => {
        // Go on editing on top of theirs: the next save checks against it.
        base = theirs ? theirs.mod_revision : 0;
        baseLease = theirs ? theirs.lease : 0;
        editor.setOriginal(theirs ? fromWire(theirs, "value") : EMPTY);
        notice.textContent = theirs
          ? `Editing on top of revision ${theirs.mod_revision}. Their value is shown above.`
          : "Editing; saving will create the key again.";
        renderEditor();
        editor.focus();
      },
    });
    renderEditor();
    conflict.querySelector("h3").focus();
  }

  async function remove() {
    const ok = await confirm({
      title: "Delete this key?",
      body: [h("p", {}, "Delete ", h("code", {}, display(key)), ` (revision ${kv.mod_revision})? Its past values stay in its history until compaction.`)],
      action: "Delete",
      danger: true,
    });
    if (!ok) return;
    try {
      const res = await store.del(key, { ifMatch: kv.mod_revision });
      notify(`Deleted ${display(key)} at revision ${res.header.revision}.`);
    } catch (e) {
      notify(e.status === 412 ? `${display(key)} changed since you loaded it, and was not deleted: look at it again.` : explain(e), "error");
      reload();
    }
  }

  // restoreThis writes the value shown, as of a past revision, as the
  // key's new value.
  function restoreThis() {
    restore(app, key, fromWire(kv, "value"), `it had at revision ${ctx.revision}`);
  }

  load();
  return {
    el,
    dispose() {
      disposed = true;
      clearTimeout(renderTimer);
      if (sub) sub.close();
      if (badge) badge.dispose();
    },
  };
}
