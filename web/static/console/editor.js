// The value editor: a text area holding the value as UTF-8 text or as
// base64 (for bytes that are not text), a syntax to check it against
// (plain, JSON or YAML) with the result shown as one types, and a button
// that pretty-prints it.

import { fromBase64, text, toBase64, utf8 } from "./bytes.js";
import { h, field, uid } from "./dom.js";
import { check, detect, format } from "./formats.js";

/**
 * createEditor edits initial (bytes). It returns {el, bytes(), problem(),
 * changed(), load(bytes), focus()}: bytes() throws when base64 does not
 * decode; problem() is the syntax error, or "".
 */
export function createEditor(initial, { label = "Value" } = {}) {
  let original = initial;
  const kind = detect(initial);
  const area = h("textarea", { rows: "14", spellcheck: "false", autocomplete: "off", class: "code", wrap: "off" });
  const encoding = h("select", {},
    h("option", { value: "text" }, "UTF-8 text"),
    h("option", { value: "base64" }, "Base64"));
  const syntax = h("select", {},
    h("option", { value: "text" }, "Plain"),
    h("option", { value: "json" }, "JSON"),
    h("option", { value: "yaml" }, "YAML"));
  const status = h("p", { class: "check", id: uid("check"), role: "status", "aria-live": "polite" });
  area.setAttribute("aria-describedby", status.id);
  const formatButton = h("button", { type: "button", onclick: reformat }, "Pretty-print");

  function show(bytes) {
    const s = text(bytes);
    if (s === null) {
      encoding.value = "base64";
      area.value = toBase64(bytes);
    } else {
      encoding.value = "text";
      area.value = s;
    }
    validate();
  }

  function current() {
    return encoding.value === "base64" ? fromBase64(area.value) : utf8(area.value);
  }

  function problem() {
    if (encoding.value === "base64") {
      try {
        fromBase64(area.value);
        return "";
      } catch {
        return "not valid base64";
      }
    }
    const r = check(syntax.value, area.value);
    return r.ok ? "" : r.message;
  }

  // validate checks what is in the area once per change: within the
  // parse limits of formats.js, so typing in a large value stays cheap.
  function validate() {
    let p;
    let message;
    if (encoding.value === "base64") {
      p = problem();
      message = p || "valid base64";
    } else {
      const r = check(syntax.value, area.value);
      p = r.ok ? "" : r.message;
      message = r.message;
    }
    syntax.disabled = formatButton.disabled = encoding.value === "base64";
    status.textContent = message;
    status.dataset.ok = String(!p);
    area.setAttribute("aria-invalid", String(!!p));
  }

  function reformat() {
    const r = format(syntax.value, area.value);
    if (r.ok) area.value = r.text;
    validate();
    if (!r.ok) {
      status.textContent = r.message;
      status.dataset.ok = "false";
    }
  }

  // Switching the encoding converts what is in the area, when it can.
  encoding.addEventListener("change", () => {
    try {
      const bytes = encoding.value === "base64" ? utf8(area.value) : fromBase64(area.value);
      const s = text(bytes);
      if (encoding.value === "text" && s === null) {
        encoding.value = "base64";
        status.textContent = "these bytes are not UTF-8 text: keep editing them as base64";
        return;
      }
      area.value = encoding.value === "base64" ? toBase64(bytes) : s;
    } catch {
      encoding.value = encoding.value === "base64" ? "text" : "base64";
    }
    validate();
  });
  syntax.addEventListener("change", validate);
  area.addEventListener("input", validate);

  syntax.value = kind === "json" || kind === "yaml" ? kind : "text";
  show(initial);

  const el = h("div", { class: "editor" },
    h("div", { class: "editor-opts" }, field("Edit as", encoding), field("Check as", syntax), formatButton),
    field(label, area),
    status);

  return {
    el,
    bytes: current,
    problem,
    syntax: () => syntax.value,
    changed() {
      try {
        const b = current();
        return b.length !== original.length || b.some((x, i) => x !== original[i]);
      } catch {
        return true;
      }
    },
    load(bytes) {
      original = bytes;
      show(bytes);
    },
    setOriginal(bytes) {
      original = bytes;
    },
    focus() {
      area.focus();
    },
  };
}
