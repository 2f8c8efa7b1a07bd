// The Users and roles section, for root: turning auth on and off, users
// (add, delete, password, roles granted) and roles (add, delete, the key
// ranges each may read or write).

import { confirm, notify } from "./dialog.js";
import { h, clear, field, focusHeading } from "./dom.js";
import { renderRole } from "./roles.js";
import { go, href } from "./router.js";

export function mountAccess(container, app, params) {
  const { store, session } = app;
  const state = h("div", { class: "auth-state" });
  const users = h("section", { class: "users", "aria-labelledby": "users-h" });
  const roles = h("section", { class: "roles", "aria-labelledby": "roles-h" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  clear(container, h("section", { class: "access", "aria-labelledby": "access-h" },
    h("h2", { id: "access-h" }, "Users and roles"), problem, state,
    h("div", { class: "access-grid" }, users, roles)));
  focusHeading(container);
  const selUser = params.get("user");
  const selRole = params.get("role");
  let disposed = false;

  const nav = (p) => go("access", { user: selUser, role: selRole, ...p });
  const act = async (fn, done) => {
    try {
      await fn();
      if (done) notify(done);
      load();
      return true;
    } catch (e) {
      notify(e.explain(), "error");
      return false;
    }
  };

  function renderState() {
    clear(state, h("p", {}, session.enabled ? "Auth is on: every call needs a token." : "Auth is off: anyone who reaches the server may do anything."),
      h("button", { type: "button", class: session.enabled ? "danger" : "primary", onclick: async () => {
        const on = !session.enabled;
        const ok = await confirm(on
          ? { title: "Turn auth on?", body: "From then on every call needs a token, this console's too: you will sign in as root. A user named root with the root role must exist.", action: "Turn auth on" }
          : { title: "Turn auth off?", body: "Anyone who reaches the server may then read and change everything.", action: "Turn auth off", danger: true });
        if (!ok) return;
        if (await act(() => store.setAuth(on), on ? "Auth is on." : "Auth is off.")) await session.refresh();
      } }, session.enabled ? "Turn auth off…" : "Turn auth on…"));
  }

  async function renderUsers(names, roleNames) {
    const name = h("input", { type: "text", required: true, autocomplete: "off" });
    const pw = h("input", { type: "password", required: true, autocomplete: "new-password" });
    const list = h("ul", { class: "picks", "aria-label": "Users" }, names.map((n) => h("li", {},
      h("a", { href: href("access", { user: n, role: selRole }), "aria-current": n === selUser ? "true" : null }, n))));
    clear(users, h("h3", { id: "users-h" }, "Users"), list,
      h("form", { class: "inline", onsubmit: (e) => {
        e.preventDefault();
        act(() => store.addUser(name.value, pw.value), `Added the user ${name.value}.`).then((ok) => ok && nav({ user: name.value }));
      } }, field("New user", name), field("Password", pw), h("button", { type: "submit" }, "Add user")));
    if (!selUser || !names.includes(selUser)) return;
    const u = await store.user(selUser);
    if (disposed) return;
    const grant = h("select", {}, roleNames.filter((r) => !u.roles.includes(r)).map((r) => h("option", { value: r }, r)));
    const newPw = h("input", { type: "password", required: true, autocomplete: "new-password" });
    users.append(h("section", { class: "detail", "aria-labelledby": "user-h" },
      h("h4", { id: "user-h" }, `User ${u.name}`),
      u.roles.length
        ? h("ul", { "aria-label": `Roles of ${u.name}` }, u.roles.map((r) => h("li", {}, r, " ",
          h("button", { type: "button", onclick: () => act(() => store.revokeRole(u.name, r), `Revoked ${r} from ${u.name}.`) }, `Revoke ${r}`))))
        : h("p", {}, "No roles."),
      grant.options.length ? h("form", { class: "inline", onsubmit: (e) => {
        e.preventDefault();
        act(() => store.grantRole(u.name, grant.value), `Granted ${grant.value} to ${u.name}.`);
      } }, field("Role", grant), h("button", { type: "submit" }, "Grant role")) : null,
      h("form", { class: "inline", onsubmit: (e) => {
        e.preventDefault();
        act(() => store.setPassword(u.name, newPw.value), `Changed the password of ${u.name}.`);
      } }, field("New password", newPw), h("button", { type: "submit" }, "Change password")),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (await confirm({ title: `Delete the user ${u.name}?`, body: "Its tokens stop working at once.", action: "Delete user", danger: true })) {
          act(() => store.deleteUser(u.name), `Deleted the user ${u.name}.`).then((ok) => ok && nav({ user: null }));
        }
      } }, "Delete user…")));
  }

  async function renderRoles(names) {
    const name = h("input", { type: "text", required: true, autocomplete: "off" });
    const list = h("ul", { class: "picks", "aria-label": "Roles" }, names.map((n) => h("li", {},
      h("a", { href: href("access", { user: selUser, role: n }), "aria-current": n === selRole ? "true" : null }, n))));
    clear(roles, h("h3", { id: "roles-h" }, "Roles"), list,
      h("form", { class: "inline", onsubmit: (e) => {
        e.preventDefault();
        act(() => store.addRole(name.value), `Added the role ${name.value}.`).then((ok) => ok && nav({ role: name.value }));
      } }, field("New role", name), h("button", { type: "submit" }, "Add role")));
    if (!selRole || !names.includes(selRole)) return;
    const role = await store.role(selRole);
    if (disposed) return;
    roles.append(renderRole(role, { store, act, nav }));
  }

  async function load() {
    renderState();
    try {
      const [u, r] = await Promise.all([store.users(), store.roles()]);
      if (disposed) return;
      problem.hidden = true;
      await Promise.all([renderUsers(u.users, r.roles), renderRoles(r.roles)]);
    } catch (e) {
      problem.hidden = false;
      problem.textContent = e.explain();
    }
  }

  load();
  return { dispose: () => { disposed = true; } };
}
