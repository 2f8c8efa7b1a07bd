// One role: the key ranges it may read or write, granted and revoked.

import { fromWire, prefixEnd, utf8 } from "./bytes.js";
import { confirm } from "./dialog.js";
import { h, field } from "./dom.js";
import { TO_END } from "./range.js";
import { describe } from "./store.js";

/** permissionRange returns the range of a permission as the API lists it. */
export function permissionRange(p) {
  const key = fromWire(p, "key");
  const hasEnd = p.range_end !== undefined || p.range_end_base64 !== undefined;
  return { key, end: hasEnd ? fromWire(p, "range_end") : null };
}

/** renderRole shows a role; store: createStore(); act(fn, message) runs a change and reloads; nav(params) moves. */
export function renderRole(role, { store, act, nav }) {
  const perms = role.permissions || [];
  const key = h("input", { type: "text", required: true, autocomplete: "off", spellcheck: "false" });
  const match = h("select", {},
    h("option", { value: "prefix" }, "every key starting with it"),
    h("option", { value: "key" }, "this key only"),
    h("option", { value: "range" }, "keys up to a range end"),
    h("option", { value: "from" }, "every key from it on"));
  const end = h("input", { type: "text", autocomplete: "off", spellcheck: "false" });
  const endField = field("Range end (exclusive)", end);
  endField.hidden = true;
  match.addEventListener("change", () => {
    endField.hidden = match.value !== "range";
    end.required = match.value === "range";
  });
  const type = h("select", {},
    h("option", { value: "read" }, "read"),
    h("option", { value: "write" }, "write"),
    h("option", { value: "readwrite" }, "read and write"));

  function range() {
    const k = utf8(key.value);
    switch (match.value) {
      case "prefix":
        return { key: k, end: prefixEnd(k) || TO_END };
      case "range":
        return { key: k, end: utf8(end.value) };
      case "from":
        return { key: k, end: TO_END };
      default:
        return { key: k, end: null };
    }
  }

  return h("section", { class: "detail", "aria-labelledby": "role-h" },
    h("h4", { id: "role-h" }, `Role ${role.name}`),
    role.name === "root" ? h("p", {}, "The root role may do everything, whatever its permissions.") : null,
    perms.length
      ? h("table", { class: "perms" },
        h("caption", {}, `Permissions of ${role.name}`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Keys"), h("th", { scope: "col" }, "Access"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
        h("tbody", {}, perms.map((p) => {
          const r = permissionRange(p);
          return h("tr", {},
            h("td", {}, describe(r)),
            h("td", {}, p.type),
            h("td", {}, h("button", { type: "button", onclick: () => act(() => store.revokePermission(role.name, r), `Revoked ${p.type} on ${describe(r)} from ${role.name}.`) }, "Revoke")));
        })))
      : h("p", {}, "No permissions."),
    h("form", { class: "grant-perm", onsubmit: (e) => {
      e.preventDefault();
      const r = range();
      act(() => store.grantPermission(role.name, r, type.value), `Granted ${type.value} on ${describe(r)} to ${role.name}.`);
    } },
    h("fieldset", {}, h("legend", {}, "Grant a permission"),
      field("Key", key), field("Which keys", match), endField, field("Access", type),
      h("button", { type: "submit" }, "Grant permission"))),
    h("button", { type: "button", class: "danger", onclick: async () => {
      if (await confirm({ title: `Delete the role ${role.name}?`, body: "It is revoked from every user that has it.", action: "Delete role", danger: true })) {
        act(() => store.deleteRole(role.name), `Deleted the role ${role.name}.`).then((ok) => ok && nav({ role: null }));
      }
    } }, "Delete role…"));
}
