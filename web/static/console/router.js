// Where the console is: the URL fragment, #/<view>?<params>, so that a
// view can be bookmarked, shared and reached with Back. Keys in params are
// text, or base64 under the name with "64" added when not UTF-8.

import { fromBase64, text, toBase64 } from "./bytes.js";

export const VIEWS = ["keys", "leases", "cluster", "access"];

/** parse reads a location hash: {view, params}. */
export function parse(hash) {
  const s = hash.replace(/^#\/?/, "");
  const [path, query = ""] = s.split(/\?(.*)/s);
  const view = VIEWS.includes(path) ? path : "keys";
  return { view, params: new URLSearchParams(query) };
}

/** href makes a hash from a view and params (an object or URLSearchParams). */
export function href(view, params = {}) {
  const q = params instanceof URLSearchParams ? params : new URLSearchParams();
  if (!(params instanceof URLSearchParams)) {
    for (const [k, v] of Object.entries(params)) {
      if (v === null || v === undefined || v === "" || v === false) continue;
      if (v instanceof Uint8Array) setKey(q, k, v);
      else q.set(k, String(v));
    }
  }
  const qs = q.toString();
  return `#/${view}${qs ? "?" + qs : ""}`;
}

/** getKey reads a key param; null when absent or not valid base64. */
export function getKey(params, name) {
  if (params.has(name)) return new TextEncoder().encode(params.get(name));
  if (params.has(name + "64")) {
    try {
      return fromBase64(params.get(name + "64"));
    } catch {
      return null;
    }
  }
  return null;
}

export function setKey(params, name, bytes) {
  params.delete(name);
  params.delete(name + "64");
  const s = text(bytes);
  if (s !== null) params.set(name, s);
  else params.set(name + "64", toBase64(bytes));
}

/** go navigates to a view; the hashchange event renders it. */
export function go(view, params) {
  location.hash = href(view, params);
}
