// Signing in, when auth is on: a name and password traded for a token.

import { h, clear, field } from "./dom.js";

export function mountLogin(container, app) {
  const name = h("input", { type: "text", required: true, autocomplete: "username", value: app.session.name || "" });
  const pw = h("input", { type: "password", required: true, autocomplete: "current-password" });
  const problem = h("p", { class: "problem", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Sign in");
  clear(container, h("section", { class: "login", "aria-labelledby": "login-h" },
    h("h2", { id: "login-h" }, "Sign in"),
    h("p", {}, "Auth is on: sign in as a user of this server. The token is kept for this tab only."),
    h("form", { onsubmit: async (e) => {
      e.preventDefault();
      submit.disabled = true;
      problem.hidden = true;
      try {
        await app.session.signIn(name.value, pw.value);
      } catch (err) {
        problem.hidden = false;
        problem.textContent = err.status === 401 ? "Wrong name or password."
          : err.status === 429 ? "Too many failed attempts: wait a while and try again." : err.explain();
        pw.select();
      } finally {
        submit.disabled = false;
      }
    } }, field("Name", name), field("Password", pw), problem, submit)));
  (name.value ? pw : name).focus();
  return { dispose() {} };
}
