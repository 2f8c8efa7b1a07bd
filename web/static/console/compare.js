// Comparing two values of a key, for the CAS conflict and for history:
// field by field when both are JSON documents (objects or arrays), line
// by line otherwise.
//
// Two JSON values are compared as data, not as text: compact JSON is one
// line, and a reordered object is the same object. The paths that
// changed are listed as JSON Pointers (RFC 6901, as JSON Patch names
// them), and both values are shown pretty-printed with their keys sorted,
// so that the line diff below the list shows only what changed. Arrays
// are compared index by index.
//
// What a comparison costs is bounded: JSON is compared only within the
// limits of its pretty views (formats.js LIMITS), text line by line only
// up to MAX_TEXT_BYTES (binary values, as hex dumps, up to
// MAX_BINARY_BYTES); beyond, the page says where the two first differ.

import { asText } from "./bytes.js";
import { h, bytesSize, num } from "./dom.js";
import { diffLines, renderDiff } from "./diff.js";
import { analyze } from "./formats.js";

const MAX_TEXT_BYTES = 1 << 20;
const MAX_BINARY_BYTES = 64 << 10; // what a hex dump shows (bytes.js hexDump)
const MAX_PATHS = 100; // paths listed; the rest are counted
const MAX_SHOWN = 80; // characters of a value shown beside its path

const EMPTY = new Uint8Array(0);
const kindOf = (v) => (Array.isArray(v) ? "array" : v !== null && typeof v === "object" ? "object" : "scalar");

/** pointer appends one reference token to a JSON Pointer. */
function pointer(path, token) {
  return `${path}/${String(token).replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

/**
 * jsonChanges compares two parsed JSON values and returns every path
 * where they differ, in document order with object keys sorted:
 * [{op: "added" | "removed" | "changed", path, before, after}].
 */
export function jsonChanges(a, b) {
  const out = [];
  (function walk(x, y, path) {
    const kx = kindOf(x);
    const ky = kindOf(y);
    if (kx !== ky || kx === "scalar") {
      if (x !== y) out.push({ op: "changed", path, before: x, after: y });
      return;
    }
    if (kx === "array") {
      for (let i = 0; i < Math.max(x.length, y.length); i++) {
        if (i >= x.length) out.push({ op: "added", path: pointer(path, i), after: y[i] });
        else if (i >= y.length) out.push({ op: "removed", path: pointer(path, i), before: x[i] });
        else walk(x[i], y[i], pointer(path, i));
      }
      return;
    }
    const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].sort();
    for (const k of keys) {
      const inX = Object.hasOwn(x, k);
      const inY = Object.hasOwn(y, k);
      if (!inY) out.push({ op: "removed", path: pointer(path, k), before: x[k] });
      else if (!inX) out.push({ op: "added", path: pointer(path, k), after: y[k] });
      else walk(x[k], y[k], pointer(path, k));
    }
  })(a, b, "");
  return out;
}

/** canonical pretty-prints a parsed JSON value with every object's keys sorted. */
export function canonical(v) {
  const sorted = (x) => {
    if (Array.isArray(x)) return x.map(sorted);
    if (x === null || typeof x !== "object") return x;
    // fromEntries defines each key as data, "__proto__" included.
    return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])]));
  };
  return JSON.stringify(sorted(v), null, 2);
}

function shown(v) {
  const s = JSON.stringify(v);
  return s.length > MAX_SHOWN ? s.slice(0, MAX_SHOWN) + "…" : s;
}

function describeChange(c) {
  if (c.op === "added") return ["added: ", h("code", {}, shown(c.after))];
  if (c.op === "removed") return ["removed (was ", h("code", {}, shown(c.before)), ")"];
  return [h("code", {}, shown(c.before)), " → ", h("code", {}, shown(c.after))];
}

/** firstDifference returns the offset of the first byte where a and b differ, or -1 when they are equal. */
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/**
 * renderCompare shows how b differs from a (bytes; null for a key that
 * did not exist): label names the two sides ("revision 4 → revision 7").
 */
export function renderCompare(a, b, label) {
  const ia = a ? analyze(a) : null;
  const ib = b ? analyze(b) : null;
  if (ia && ib && ia.syntax === "json" && ib.syntax === "json" && ia.value !== undefined && ib.value !== undefined) {
    return renderJSON(ia.value, ib.value, label);
  }
  const x = a || EMPTY;
  const y = b || EMPTY;
  const limit = ia?.text === null || ib?.text === null ? MAX_BINARY_BYTES : MAX_TEXT_BYTES;
  if (x.length > limit || y.length > limit) {
    const at = firstDifference(x, y);
    return h("div", { class: "diff-wrap" },
      h("p", { class: "diff-summary" }, `${label}: ${bytesSize(x.length)} and ${bytesSize(y.length)}, too large to compare line by line (the page does so up to ${bytesSize(limit)}); `,
        at < 0 ? "they are equal." : `they first differ at byte ${num(at)}.`));
  }
  return renderDiff(diffLines(a ? asText(x) : "", b ? asText(y) : ""), label);
}

function renderJSON(va, vb, label) {
  const changes = jsonChanges(va, vb);
  const n = changes.length;
  const summary = n ? `${num(n)} path${n > 1 ? "s" : ""} changed` : "no difference";
  const list = n
    ? h("ul", { class: "changed-paths", "aria-label": "Paths changed" },
      changes.slice(0, MAX_PATHS).map((c) => h("li", { "data-op": c.op },
        h("code", { class: "path" }, c.path || "(the whole value)"), " ", describeChange(c))),
      n > MAX_PATHS ? h("li", {}, `… and ${num(n - MAX_PATHS)} more`) : null)
    : null;
  return h("div", { class: "json-diff" },
    list,
    renderDiff(diffLines(canonical(va), canonical(vb)), label, `${summary} (compared as JSON, keys sorted)`));
}
