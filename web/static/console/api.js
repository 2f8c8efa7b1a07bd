// The transport: every call to the /v1 API goes through call(), which
// adds the session's token and turns an error answer into an ApiError
// that knows what the user was trying to do.

/**
 * ApiError is a failed call. what describes the attempt, for messages:
 * {action: "save the key a/b", need: "write", on: "the key a/b"}.
 */
export class ApiError extends Error {
  constructor(status, code, message, detail, what) {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = detail || {};
    this.what = what || null;
  }

  /** explain says what went wrong in words for the user; a 403 names the permission that is missing. */
  explain() {
    const w = this.what;
    if (this.status === 403 && w && w.need) {
      return `Permission denied: to ${w.action} you need ${w.need} permission on ${w.on}, which your roles do not grant.`;
    }
    if (this.status === 403 && w && w.admin) {
      return `Permission denied: to ${w.action} you need the root role.`;
    }
    if (this.status === 401) return "Your session has ended: sign in again.";
    if (this.status === 0) return `${w ? "Could not " + w.action + ": " : ""}${this.message}`;
    return `${w ? "Could not " + w.action + ": " : ""}${this.message} (${this.code}).`;
  }
}

/**
 * explain says in words what went wrong for any error a view catches: an
 * ApiError's own explanation, or the message of anything else (a fault
 * of the page), which a view shows as text too, and never throws.
 */
export function explain(e) {
  if (e instanceof ApiError) return e.explain();
  return `Something went wrong in the page: ${e && e.message !== undefined ? e.message : String(e)}`;
}

/**
 * createApi returns call(method, path, options) over fetch. token() gives
 * the current bearer token or ""; unauthenticated(err) is told of every
 * 401 so that the session can ask for a new sign-in.
 */
export function createApi({ token, unauthenticated }) {
  // send makes the request and returns the answer when it is a success;
  // an error answer (the contract's JSON error) is thrown as an ApiError.
  async function send(method, path, { query, json, body, headers = {}, what } = {}) {
    const hd = { ...headers };
    const t = token();
    if (t) hd.Authorization = "Bearer " + t;
    let payload = body;
    if (json !== undefined) {
      payload = JSON.stringify(json);
      hd["Content-Type"] = "application/json";
    } else if (body !== undefined && !hd["Content-Type"]) {
      hd["Content-Type"] = "application/octet-stream";
    }
    const qs = query ? String(query) : "";
    let res;
    try {
      res = await fetch(qs ? `${path}?${qs}` : path, { method, headers: hd, body: payload, cache: "no-store" });
    } catch (e) {
      throw new ApiError(0, "network", "the server did not answer", null, what);
    }
    if (!res.ok) {
      const isJSON = (res.headers.get("Content-Type") || "").includes("json");
      const data = isJSON ? await res.json().catch(() => null) : null;
      const e = data && data.error ? data.error : {};
      const err = new ApiError(res.status, e.code || `http_${res.status}`, e.message || res.statusText, e, what);
      if (res.status === 401) unauthenticated(err);
      throw err;
    }
    return res;
  }

  async function call(method, path, options) {
    const res = await send(method, path, options);
    const isJSON = (res.headers.get("Content-Type") || "").includes("json");
    return isJSON ? res.json().catch(() => null) : null;
  }
  /** call.stream is call for an answer read as it comes: it resolves to the Response, its body unread. */
  call.stream = send;
  return call;
}
