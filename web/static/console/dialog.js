// Confirmations and notices. A confirmation is a modal <dialog>: it traps
// focus, closes on Escape, and gives focus back to where it was.

import { h, uid } from "./dom.js";

/**
 * confirm asks a question and resolves to true when the user confirms.
 * With typed set, the confirm button stays disabled until that text is
 * typed, for the changes that cannot be undone.
 */
export function confirm({ title, body, action = "Confirm", danger = false, typed = null }) {
  return new Promise((resolve) => {
    const titleId = uid("dlg");
    const input = typed ? h("input", { type: "text", autocomplete: "off", spellcheck: "false", "aria-label": `Type ${typed} to confirm` }) : null;
    const ok = h("button", { type: "submit", class: danger ? "danger" : "primary", disabled: !!typed, value: "ok" }, action);
    const dlg = h("dialog", { "aria-labelledby": titleId, class: "confirm" },
      h("form", { method: "dialog" },
        h("h2", { id: titleId }, title),
        ...(Array.isArray(body) ? body : [body]).map((p) => (p instanceof Node ? p : h("p", {}, p))),
        input ? h("p", {}, "Type ", h("code", {}, typed), " to confirm: ", input) : null,
        h("div", { class: "actions" },
          h("button", { type: "submit", value: "cancel" }, "Cancel"),
          ok)));
    if (input) input.addEventListener("input", () => { ok.disabled = input.value !== typed; });
    dlg.addEventListener("close", () => {
      dlg.remove();
      resolve(dlg.returnValue === "ok");
    });
    document.body.append(dlg);
    dlg.showModal();
    (input || ok).focus();
  });
}

let noticeTimer = 0;
/**
 * notify tells the user of an outcome: in the status region, gone after a
 * while; errors in the alert region, until dismissed or the next error.
 */
export function notify(message, kind = "info") {
  if (kind === "error") {
    document.getElementById("alert-text").textContent = message;
    document.getElementById("alert").hidden = false;
    return;
  }
  const region = document.getElementById("notice");
  region.textContent = message;
  region.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { region.hidden = true; }, 8000);
}

/** clearAlert hides the error region. */
export function clearAlert() {
  document.getElementById("alert-text").textContent = "";
  document.getElementById("alert").hidden = true;
}
