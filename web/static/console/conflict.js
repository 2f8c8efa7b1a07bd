// The answer to a lost compare-and-swap: the value another writer saved
// since this one was loaded, beside the one the user tried to save, as a
// diff, and the user's choice of what to keep.

import { asText, fromWire } from "./bytes.js";
import { renderCompare } from "./compare.js";
import { h, uid } from "./dom.js";
import { cut } from "./formats.js";

// side shows one value in full, up to the views' limit.
function side(bytes) {
  const { text, note } = cut(asText(bytes));
  return [note ? h("p", { class: "value-note" }, note) : null, h("pre", { class: "code", tabindex: "0" }, text)];
}

/**
 * renderConflict shows theirs (the key's current KeyValue, or null once
 * deleted) against mine (bytes) with three choices: onOverwrite (save
 * mine over theirs), onTheirs (drop mine) and onKeep (go on editing, now
 * on top of theirs).
 */
export function renderConflict({ theirs, mine, base, onOverwrite, onTheirs, onKeep }) {
  const titleId = uid("conflict");
  const theirBytes = theirs ? fromWire(theirs, "value") : new Uint8Array(0);
  const what = theirs
    ? `Another writer saved this key at revision ${theirs.mod_revision} (version ${theirs.version}) after you loaded revision ${base}. Your save was not applied.`
    : `Another writer deleted this key after you loaded revision ${base}. Your save was not applied.`;
  return h("section", { class: "conflict", "aria-labelledby": titleId },
    h("h3", { id: titleId, tabindex: "-1" }, "Conflict: the key changed while you edited it"),
    h("p", {}, what),
    renderCompare(theirs ? theirBytes : null, mine, theirs ? `Theirs (revision ${theirs.mod_revision}) → yours` : "Deleted → yours"),
    h("div", { class: "sides" },
      h("figure", {}, h("figcaption", {}, theirs ? `Theirs, revision ${theirs.mod_revision}` : "Theirs: deleted"),
        theirs ? side(theirBytes) : h("pre", { class: "code", tabindex: "0" }, "(no value: the key was deleted)")),
      h("figure", {}, h("figcaption", {}, "Yours, not saved"), side(mine))),
    h("div", { class: "actions", role: "group", "aria-label": "Resolve the conflict" },
      h("button", { type: "button", class: "danger", onclick: onOverwrite }, theirs ? "Save mine over theirs" : "Save mine, recreating the key"),
      h("button", { type: "button", onclick: onTheirs }, theirs ? "Use theirs, drop mine" : "Drop mine"),
      h("button", { type: "button", onclick: onKeep }, "Keep editing")));
}
