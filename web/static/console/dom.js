// Building the page. Every element is made with h(), which sets text as
// text: nothing is ever parsed as HTML (the page's CSP forbids it).

/**
 * h makes an element. attrs: "class", "text", on<event> handlers, boolean
 * and value properties (hidden, disabled, checked, value, selected), and
 * any other attribute. Children: nodes, strings, arrays; null and false
 * are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (name.startsWith("on") && typeof v === "function") {
      el.addEventListener(name.slice(2), v);
    } else if (name === "class") {
      el.className = v;
    } else if (name === "text") {
      el.textContent = v;
    } else if (["hidden", "disabled", "checked", "value", "selected", "required", "readOnly", "open"].includes(name)) {
      el[name] = v;
    } else {
      el.setAttribute(name, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** clear replaces an element's children. */
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let ids = 0;
/** uid returns an id unique in the page, for label for= and aria references. */
export function uid(prefix = "c") {
  return `${prefix}-${++ids}`;
}

/** field is a labelled input: a label wrapping its text and the control. */
export function field(labelText, control, hint) {
  const id = control.id || (control.id = uid("f"));
  const hintEl = hint ? h("span", { class: "hint", id: id + "-hint" }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: id }, labelText), control, hintEl);
}

/** focusHeading moves focus to the first heading of el, so that a screen reader announces the new view. */
export function focusHeading(el) {
  const hd = el.querySelector("h2, h3");
  if (hd) {
    hd.tabIndex = -1;
    hd.focus({ preventScroll: false });
  }
}

const numberFormat = new Intl.NumberFormat("en");
export function num(n) {
  return numberFormat.format(n);
}

export function bytesSize(n) {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = -1;
  do {
    v /= 1024;
    u++;
  } while (v >= 1024 && u < units.length - 1);
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function duration(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const hr = Math.floor(m / 60);
  return `${hr} h ${m % 60} min`;
}

/** listNav lets Up and Down (and Home and End) move focus between the links or buttons of a list. */
export function listNav(list, selector = "a, button") {
  list.addEventListener("keydown", (e) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key)) return;
    const items = [...list.querySelectorAll(selector)].filter((x) => !x.disabled && x.offsetParent !== null);
    const i = items.indexOf(document.activeElement);
    if (i < 0) return;
    e.preventDefault();
    const next = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 }[e.key];
    items[Math.max(0, Math.min(items.length - 1, next))].focus();
  });
}

/**
 * tabs makes a tab list: choices [{id, label, disabled}], onSelect(id).
 * Arrow keys move between the tabs, as the ARIA tabs pattern has it.
 */
export function tabs(label, choices, selected, onSelect) {
  const list = h("div", { role: "tablist", "aria-label": label, class: "tabs" });
  const buttons = choices.map((c) =>
    h("button", {
      type: "button",
      role: "tab",
      id: uid("tab"),
      "aria-selected": String(c.id === selected),
      tabindex: c.id === selected ? "0" : "-1",
      disabled: c.disabled,
      title: c.title,
      "data-tab": c.id,
      onclick: () => select(c.id, true),
    }, c.label));
  function select(id, focus) {
    for (const b of buttons) {
      const on = b.dataset.tab === id;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
      if (on && focus) b.focus();
    }
    onSelect(id);
  }
  list.addEventListener("keydown", (e) => {
    const enabled = buttons.filter((b) => !b.disabled);
    const i = enabled.indexOf(document.activeElement);
    if (i < 0) return;
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (!step) return;
    e.preventDefault();
    select(enabled[(i + step + enabled.length) % enabled.length].dataset.tab, true);
  });
  list.append(...buttons);
  return list;
}

/**
 * table makes a scrollable table of rows (a tbody) under a caption read
 * only by screen readers. columns are header texts; a column written as
 * "(Actions)" is named for screen readers only.
 */
export function table(caption, columns, rows) {
  const th = (c) => h("th", { scope: "col" }, /^\(.*\)$/.test(c) ? h("span", { class: "visually-hidden" }, c.slice(1, -1)) : c);
  return h("div", { class: "table-wrap" },
    h("table", { class: "events" },
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, columns.filter((c) => c !== null).map(th))),
      rows));
}
