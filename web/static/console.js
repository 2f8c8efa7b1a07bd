// The httpkv console: the page's shell. It wires the session, the API, the
// live feed and the router, and mounts one section at a time into <main>.
// Each section is a module under console/ with mount(container, app,
// params) returning {dispose(), update?(params)}.
//
// The section list is the nav in index.html; a new section is one more
// entry there and in sections below.

import { mountAccess } from "./console/access.js";
import { createApi } from "./console/api.js";
import { mountCluster } from "./console/cluster.js";
import { clearAlert } from "./console/dialog.js";
import { h, clear } from "./console/dom.js";
import { mountKeys } from "./console/keys.js";
import { mountLeases } from "./console/leases.js";
import { Live } from "./console/live.js";
import { mountLocks } from "./console/locks.js";
import { mountLogin } from "./console/login.js";
import { Permissions } from "./console/permissions.js";
import { parse } from "./console/router.js";
import { Session } from "./console/session.js";
import { createStore } from "./console/store.js";

const sections = {
  keys: { mount: mountKeys, title: "Keys" },
  leases: { mount: mountLeases, title: "Leases" },
  locks: { mount: mountLocks, title: "Locks and elections" },
  cluster: { mount: mountCluster, title: "Cluster", admin: true },
  access: { mount: mountAccess, title: "Users and roles", admin: true },
};

const session = new Session();
const call = createApi({
  token: () => session.token(),
  unauthenticated: () => session.rejected(),
});
const store = createStore(call);
const perms = new Permissions(session, store);
const live = new Live({
  streams: {
    create: (watches) => store.createStream(watches),
    add: (stream, r, from) => store.addWatch(stream, r, from),
    cancel: (stream, id) => store.cancelWatch(stream, id),
    drop: (stream) => store.dropStream(stream),
  },
  url: (stream) => store.streamURL(stream, session.token()),
});
const app = { store, session, perms, live };

const main = document.getElementById("main");
let mounted = null; // {view, section}

const liveText = {
  idle: () => "Live: idle",
  connecting: () => "Live: connecting…",
  live: (s) => `Live · revision ${s.revision || "…"}`,
  reconnecting: (s) => `Live: reconnecting${s.detail ? ` (${s.detail})` : ""}…`,
  reloading: () => "Live: history compacted, reloading…",
  stopped: (s) => `Live: stopped: ${s.detail}`,
};
live.onState((s) => {
  const box = document.getElementById("live");
  box.dataset.state = s.name;
  document.getElementById("live-text").textContent = liveText[s.name](s);
  document.getElementById("live-retry").hidden = s.name !== "stopped";
});
document.getElementById("live-retry").addEventListener("click", () => live.restart());
document.getElementById("alert-close").addEventListener("click", clearAlert);
document.getElementById("skip").addEventListener("click", (e) => {
  e.preventDefault();
  main.focus();
});

function renderWho() {
  const who = document.getElementById("who");
  if (!session.enabled) {
    clear(who, h("span", { class: "muted" }, "Auth off"));
  } else if (session.token()) {
    clear(who, h("span", {}, `Signed in as ${session.name}${session.root ? " (root)" : ""}`), " ",
      h("button", { type: "button", onclick: () => session.signOut() }, "Sign out"));
  } else {
    clear(who, h("span", { class: "muted" }, "Signed out"));
  }
  for (const li of document.querySelectorAll("#sections [data-admin]")) li.hidden = !perms.unlimited();
  document.getElementById("sections").hidden = !session.signedIn();
}

function route() {
  const { view, params } = parse(location.hash);
  const wanted = session.signedIn() ? view : "login";
  for (const a of document.querySelectorAll("#sections a")) {
    a.setAttribute("aria-current", a.dataset.view === view ? "page" : "false");
  }
  if (mounted && mounted.view === wanted && mounted.section.update) {
    mounted.section.update(params);
    return;
  }
  if (mounted) mounted.section.dispose();
  clearAlert();
  const s = sections[wanted];
  document.title = `${s ? s.title : "Sign in"} · httpkv console`;
  if (wanted === "login") {
    mounted = { view: wanted, section: mountLogin(main, app) };
  } else if (s.admin && !perms.unlimited()) {
    clear(main, h("section", { class: "denied", "aria-labelledby": "denied-h" },
      h("h2", { id: "denied-h" }, s.title),
      h("p", { class: "problem" }, `Permission denied: the ${s.title} section needs the root role, and ${session.name} does not have it.`)));
    mounted = { view: wanted, section: { dispose() {} } };
  } else {
    mounted = { view: wanted, section: s.mount(main, app, params) };
  }
}

// Who may do what changed: everything is mounted again. A renewed token
// changes nothing the page shows, and keeps the page as it is.
let identity = null;
session.onChange(() => {
  renderWho();
  const now = [session.enabled, session.name, session.signedIn(), session.root].join("|");
  if (now === identity) return;
  identity = now;
  if (mounted) mounted.section.dispose();
  mounted = null;
  route();
});
window.addEventListener("hashchange", route);
session.start(store);
