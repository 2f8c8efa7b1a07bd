// A range as a file, and back: export a folder to an NDJSON file (GET
// /v1/export), and import one (POST /v1/import) after a dry run that shows
// what it would change.
//
// The export is never held by the page. Without a token the browser
// downloads it itself, from a link. With one (a link cannot carry the
// Authorization header, and the server takes a token in the query on
// streams only), the answer is piped into a file the user picks
// (showSaveFilePicker), a chunk at a time; a browser without that API
// gets the file through a Blob of at most MAX_HELD bytes. The import's
// body is the chosen File, which the browser streams from disk.

import { explain } from "./api.js";
import { display, fromBase64, utf8 } from "./bytes.js";
import { notify } from "./dialog.js";
import { h, clear, bytesSize, field, num, uid } from "./dom.js";
import { href } from "./router.js";
import { describe } from "./store.js";

const MAX_HELD = 64 << 20; // an export held in memory, where the browser cannot stream it to a file
const TAIL = 4096; // the end of an export kept to find an error line
const KEYS_SHOWN = 50; // keys of each kind a preview lists

/** fileName is the name an export of the range with prefix p is saved as. */
function fileName(p, revision) {
  const s = display(p).replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
  return `${s || "httpkv"}-r${revision}.ndjson`;
}

// download has the browser save what url answers as a file called name.
function download(url, name) {
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
}

/**
 * exportRange saves the export of the range r (every key under p) as of
 * revision (0: now) as a file. It counts the keys first, at one
 * revision, which the export then reads at: the count and any refusal
 * (permission, compaction) show before a file is made.
 */
export async function exportRange(app, r, p, revision) {
  const { store, session } = app;
  let counted;
  try {
    counted = await store.list(r, { countOnly: true, revision });
  } catch (e) {
    notify(explain(e), "error");
    return;
  }
  const rev = revision || counted.header.revision;
  const name = fileName(p, rev);
  const what = `${num(counted.count)} key${counted.count === 1 ? "" : "s"} (${describe(r)}) as of revision ${rev}`;
  if (!session.token()) {
    // The browser's own download: streamed to disk, no token needed.
    download(store.exportURL(r, rev), name);
    notify(`Exporting ${what} to ${name}.`);
    return;
  }
  let handle = null;
  if (window.showSaveFilePicker) {
    try {
      handle = await window.showSaveFilePicker({
        suggestedName: name,
        types: [{ description: "NDJSON", accept: { "application/x-ndjson": [".ndjson"] } }],
      });
    } catch (e) {
      if (e.name === "AbortError") return; // the user closed the picker
      handle = null;
    }
  }
  try {
    const res = await store.exportStream(r, rev);
    const seen = { bytes: 0, tail: "" };
    const counter = new TransformStream({
      transform(chunk, c) {
        seen.bytes += chunk.length;
        seen.tail = (seen.tail + new TextDecoder().decode(chunk.subarray(Math.max(0, chunk.length - TAIL)))).slice(-TAIL);
        c.enqueue(chunk);
      },
    });
    if (handle) {
      await res.body.pipeThrough(counter).pipeTo(await handle.createWritable());
    } else {
      const parts = [];
      const reader = res.body.pipeThrough(counter).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (seen.bytes > MAX_HELD) {
          await reader.cancel();
          notify(`The export is larger than ${bytesSize(MAX_HELD)}, which is as much as this browser can save with a token (it cannot stream a download to a file): export a narrower folder, or use “httpkv export”.`, "error");
          return;
        }
        parts.push(value);
      }
      const url = URL.createObjectURL(new Blob(parts, { type: "application/x-ndjson" }));
      download(url, name);
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    }
    const last = seen.tail.trimEnd().split("\n").pop();
    if (last.startsWith('{"error":')) {
      let message = last;
      try {
        const e = JSON.parse(last).error;
        message = `${e.message} (${e.code})`;
      } catch {
        // shown as it is
      }
      notify(`The export of ${describe(r)} stopped before its end, and the file is incomplete: ${message}.`, "error");
      return;
    }
    notify(`Exported ${what} to ${handle ? handle.name : name} (${bytesSize(seen.bytes)}).`);
  } catch (e) {
    notify(explain(e), "error");
  }
}

// keyList returns the keys of one kind of an import's or restore's
// answer, as bytes.
function keyList(keys, kind) {
  if (keys[kind + "_base64"]) return keys[kind + "_base64"].map(fromBase64);
  return (keys[kind] || []).map(utf8);
}

/**
 * renderChanges shows what an import or a restore changed, or would
 * change: the counts, exact, and the first keys of each kind.
 */
export function renderChanges(res, would) {
  const kinds = [
    ["created", would ? "would be created" : "created"],
    ["updated", would ? "would be changed" : "changed"],
    ["deleted", would ? "would be deleted" : "deleted"],
  ];
  const keys = res.keys || {};
  return h("div", { class: "changes" },
    h("ul", { class: "counts" },
      kinds.map(([k, label]) => h("li", { "data-kind": k }, `${num(res[k])} ${label}`)),
      h("li", { "data-kind": "unchanged" }, `${num(res.unchanged)} unchanged`)),
    kinds.map(([k, label]) => {
      const list = keyList(keys, k);
      if (!list.length) return null;
      return h("details", { class: "change-keys", "data-kind": k },
        h("summary", {}, `Keys that ${label}`),
        h("ul", {}, list.slice(0, KEYS_SHOWN).map((key) => h("li", {}, h("code", {}, display(key)))),
          res[k] > KEYS_SHOWN ? h("li", {}, `… and ${num(res[k] - KEYS_SHOWN)} more`) : null));
    }));
}

/** changes says what a rewrite's answer counts, in one line. */
export function changesText(res) {
  return `${num(res.created)} created, ${num(res.updated)} changed, ${num(res.deleted)} deleted, ${num(res.unchanged)} unchanged`;
}

/**
 * createImport is the import pane of the Keys section: a file for the
 * range r, a dry run of it, then the import, which applies only if
 * nothing in r changed since the dry run (If-Match its revision).
 */
export function createImport(app, ctx, r) {
  const { store } = app;
  const headingId = uid("imp");
  const file = h("input", { type: "file", accept: ".ndjson,.jsonl,.json,application/x-ndjson" });
  const mode = h("select", {},
    h("option", { value: "merge" }, "Merge: put the keys that differ or are missing"),
    h("option", { value: "replace" }, `Replace: also delete the keys the file lacks`));
  const previewBtn = h("button", { type: "submit", class: "primary" }, "Preview");
  const result = h("div", { class: "import-result", "aria-live": "polite" });
  const form = h("form", { class: "import", onsubmit: (e) => {
    e.preventDefault();
    preview();
  } },
  field("NDJSON file", file, `One JSON object a line, with key and value, as an export writes it. Every key must be under ${display(r.key) || "the top"}.`),
  field("Mode", mode, `Replace deletes the keys of ${describe(r)} that the file does not hold.`),
  h("div", { class: "actions" }, previewBtn,
    h("a", { class: "button", href: href("keys", { f: ctx.folder, q: ctx.search, ...ctx.common }) }, "Close")));
  const el = h("section", { class: "import-pane", "aria-labelledby": headingId },
    h("h2", { id: headingId }, `Import into ${describe(r)}`),
    h("p", {}, "Nothing changes until you have seen the preview and chosen Import; then every change is one revision."),
    form, result);
  let runs = 0; // the latest preview: a change of file or mode forgets the one before

  const reset = () => {
    runs++;
    clear(result);
  };
  file.addEventListener("change", reset);
  mode.addEventListener("change", reset);

  async function preview() {
    const f = file.files[0];
    if (!f) {
      clear(result, h("p", { class: "problem", role: "alert" }, "Choose a file first."));
      return;
    }
    const my = ++runs;
    const m = mode.value;
    previewBtn.disabled = true;
    clear(result, h("p", {}, `Reading ${f.name} (${bytesSize(f.size)})…`));
    try {
      const res = await store.importFile(r, f, { mode: m, dryRun: true });
      if (my !== runs) return;
      const rev = res.header.revision;
      const nothing = !res.created && !res.updated && !res.deleted;
      const go = h("button", { type: "button", class: "primary", onclick: () => apply(f, m, rev, go) }, "Import");
      clear(result,
        h("h3", {}, nothing ? "Nothing would change" : `Preview: as of revision ${rev}`),
        renderChanges(res, true),
        nothing ? null : h("p", { class: "hint" }, `Import applies these changes only if no key of ${describe(r)} changed after revision ${rev}.`),
        nothing ? null : h("div", { class: "actions" }, go));
    } catch (e) {
      if (my === runs) clear(result, h("p", { class: "problem", role: "alert" }, explain(e)));
    } finally {
      previewBtn.disabled = false;
    }
  }

  async function apply(f, m, rev, button) {
    const my = runs;
    button.disabled = true;
    try {
      const res = await store.importFile(r, f, { mode: m, ifMatch: rev });
      if (my !== runs) return;
      clear(result, h("h3", {}, `Imported at revision ${res.header.revision}`), renderChanges(res, false));
      notify(`Imported ${f.name} into ${describe(r)}: ${changesText(res)}.`);
    } catch (e) {
      if (my !== runs) return;
      clear(result, h("p", { class: "problem", role: "alert" }, e.status === 412
        ? `Nothing was imported: keys of ${describe(r)} changed after the preview (revision ${rev}). Preview again.`
        : explain(e)));
    }
  }

  return { el, dispose() { runs++; } };
}
